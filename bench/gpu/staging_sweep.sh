#!/usr/bin/env bash
# Whole-batch wall time (ms, --stats) of the transfer-heavy GPU rows by
# staging piece size (WW_STAGING_MIB), three runs each, compiled tier:
# Mandelbrot with its image, bench/gpu's SHA-256 at 1M, hash-wasm's sha256
# and crc32 (--init) at 16M, the Rust thread-id module at 10M. A first
# pass warms the code cache; 4 MiB runs again last, for the drift.
# usage: bench/gpu/staging_sweep.sh WASMWARP BENCH_BUILD RUST_GUESTS   env: SIZES ["4 8 16 32 4"]
set -uo pipefail
W=${1:?usage: staging_sweep.sh WASMWARP BENCH_BUILD RUST_GUESTS}
N=${2:?usage: staging_sweep.sh WASMWARP BENCH_BUILD RUST_GUESTS}
G=${3:?usage: staging_sweep.sh WASMWARP BENCH_BUILD RUST_GUESTS}
T=$(mktemp -d "${TMPDIR:-/tmp}/ww-staging.XXXXXX")
trap 'rm -rf "$T"' EXIT
"$N/gpu_ref" gen-messages "$T/m1.bin" 1000000 >/dev/null || exit 2
"$N/gpu_ref" gen-messages "$T/m16.bin" 16777216 >/dev/null || exit 2
wall() {
  "$W" run --backend gpu --tier compiled -q --stats "$T/s.json" "$@" >/dev/null 2>"$T/err" || { echo "failed: $(tail -n 1 "$T/err")"; return; }
  python3 -c "import json, sys; print('%.2f' % (json.load(open(sys.argv[1]))['wall_s'] * 1000))" "$T/s.json"
}
three() { for _ in 1 2 3; do wall "$@"; done | tr '\n' ' '; }
rows() {
  echo "mandel: $(three -n 8294400 --image 3840x2160="$T/m.png" --output "$T/o.npy" --invoke render "$N/mandel.wasm" 3840 2160 1)"
  echo "sha256 1M: $(three -n 1000000 --mem-in input_ptr="$T/m1.bin" --mem-in-size 64 --mem-out output_ptr:32="$T/d.bin" --invoke hash "$N/sha256.wasm")"
  echo "hash-wasm sha256 16M: $(three -n 16777216 --mem-in Hash_GetBuffer="$T/m16.bin" --mem-in-size 64 --mem-out Hash_GetBuffer:32="$T/d.bin" --invoke Hash_Calculate "$N/hashwasm_sha256.wasm" 64 256)"
  echo "hash-wasm crc32 16M: $(three -n 16777216 --init Hash_Init:3988292384 --mem-in Hash_GetBuffer="$T/m16.bin" --mem-in-size 64 --mem-out Hash_GetBuffer:4="$T/d.bin" --invoke Hash_Calculate "$N/hashwasm_crc32.wasm" 64 3988292384)"
  echo "thread-id 10M: $(three -n 10000000 --invoke main "$G/04_thread_id.wasm")"
}
WW_STAGING_MIB=4 rows >/dev/null
for s in ${SIZES:-4 8 16 32 4}; do
  echo "== WW_STAGING_MIB=$s"
  WW_STAGING_MIB=$s rows
done
