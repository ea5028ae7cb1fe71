#!/usr/bin/env bash
# Whole-batch wall time (ms, --stats) of the transfer-heavy GPU rows by
# the way the staging pieces are used, three runs each, compiled tier:
# Mandelbrot with its image, bench/gpu's SHA-256 at 1M, hash-wasm's sha256
# and crc32 (--init) at 16M, the Rust thread-id module at 10M. A first
# pass warms the code cache; the first configuration runs again last, for
# the drift. Then the process's wall time for one instance (the pieces are
# pinned at start-up), three runs each.
# A configuration is MIB:PIECES (WW_STAGING_MIB, WW_STAGING_PIECES).
# usage: bench/gpu/staging_sweep.sh WASMWARP BENCH_BUILD RUST_GUESTS   env: CONFIGS ["4:8 4:2 8:4 16:4 4:8"]
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
configs=(${CONFIGS:-4:8 4:2 8:4 16:4 4:8})
use() { IFS=: read -r WW_STAGING_MIB WW_STAGING_PIECES <<<"$1"; export WW_STAGING_MIB WW_STAGING_PIECES; }
use "${configs[0]}"
rows >/dev/null
for c in "${configs[@]}"; do
  use "$c"
  echo "== $c (MiB:pieces)"
  rows
done
TIMEFORMAT=%R
for c in "${configs[@]}"; do
  use "$c"
  echo "one instance, process wall s, $c: $(for _ in 1 2 3; do { time "$W" run --backend gpu -q -n 1 --invoke main "$G/04_thread_id.wasm" >/dev/null 2>&1; } 2>&1; done | tr '\n' ' ')"
done
