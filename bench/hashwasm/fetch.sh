#!/usr/bin/env bash
# Fetches npm's hash-wasm 4.13.0 (a real third-party WebAssembly library)
# and extracts its SHA-256 module, which the package embeds as base64 in
# dist/sha256.umd.min.js, to OUTDIR/hashwasm_sha256.wasm. Nothing of it is
# committed; the GPU benchmarks (bench/gpu/run.sh) use it when it is there.
# usage: bench/hashwasm/fetch.sh OUTDIR     (needs npm and node)
set -euo pipefail
out=${1:?usage: fetch.sh OUTDIR}
mkdir -p "$out"
[[ -f $out/hashwasm_sha256.wasm ]] && exit 0
command -v npm >/dev/null && command -v node >/dev/null ||
  { echo "fetch.sh: needs npm and node (Debian: apt-get install npm nodejs)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent hash-wasm@4.13.0 >/dev/null && tar xzf hash-wasm-4.13.0.tgz)
node -e '
const fs = require("fs");
const js = fs.readFileSync(process.argv[1], "utf8");
const m = js.match(/name:"sha256",data:"([^"]+)"/);
if (!m) { console.error("fetch.sh: no sha256 module in " + process.argv[1]); process.exit(2); }
fs.writeFileSync(process.argv[2], Buffer.from(m[1], "base64"));
' "$tmp/package/dist/sha256.umd.min.js" "$out/hashwasm_sha256.wasm.tmp"
mv "$out/hashwasm_sha256.wasm.tmp" "$out/hashwasm_sha256.wasm"
echo "fetch.sh: $out/hashwasm_sha256.wasm ($(stat -c %s "$out/hashwasm_sha256.wasm") bytes) from hash-wasm 4.13.0"
