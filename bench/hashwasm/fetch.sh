#!/usr/bin/env bash
# Fetches npm's hash-wasm 4.13.0 (a real third-party WebAssembly library)
# and extracts its SHA-256 and CRC32 modules, which the package embeds as
# base64 in dist/NAME.umd.min.js, to OUTDIR/hashwasm_NAME.wasm. Nothing of
# it is committed; the benchmarks (bench/gpu/run.sh, bench/hashwasm/
# run-cpu.sh) use them when they are there.
# usage: bench/hashwasm/fetch.sh OUTDIR     (needs npm and node)
set -euo pipefail
out=${1:?usage: fetch.sh OUTDIR}
mkdir -p "$out"
[[ -f $out/hashwasm_sha256.wasm && -f $out/hashwasm_crc32.wasm ]] && exit 0
command -v npm >/dev/null && command -v node >/dev/null ||
  { echo "fetch.sh: needs npm and node (Debian: apt-get install npm nodejs)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent hash-wasm@4.13.0 >/dev/null && tar xzf hash-wasm-4.13.0.tgz)
for name in sha256 crc32; do
  node -e '
const fs = require("fs");
const [file, name, dest] = process.argv.slice(1);
const js = fs.readFileSync(file, "utf8");
const m = js.match(new RegExp("name:\"" + name + "\",data:\"([^\"]+)\""));
if (!m) { console.error("fetch.sh: no " + name + " module in " + file); process.exit(2); }
fs.writeFileSync(dest, Buffer.from(m[1], "base64"));
' "$tmp/package/dist/$name.umd.min.js" "$name" "$out/hashwasm_$name.wasm.tmp"
  mv "$out/hashwasm_$name.wasm.tmp" "$out/hashwasm_$name.wasm"
  echo "fetch.sh: $out/hashwasm_$name.wasm ($(stat -c %s "$out/hashwasm_$name.wasm") bytes) from hash-wasm 4.13.0"
done
