#!/usr/bin/env bash
# Test: the C guests (examples/, bench/ at SCALE=1) built to wasm32 give
# exactly the results of the same C built natively, when run by wasmwarp in
# single and batch mode, with per-instance memory input (--mem-in) and
# output (--mem-out) and CSV/JSON output.
#   usage: bench/check-guests.sh WASMWARP WORKDIR
# Exit 77 (ctest: skipped) when clang cannot target wasm32.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
ww=${1:?usage: check-guests.sh WASMWARP WORKDIR}
work=${2:?usage: check-guests.sh WASMWARP WORKDIR}
g=$work/guests
mkdir -p "$work"

if ! command -v clang >/dev/null ||
  ! echo 'int f(void){return 1;}' | clang --target=wasm32 -nostdlib -Wl,--no-entry -Wl,--export=f \
    -x c - -o "$work/probe.wasm" 2>/dev/null; then
  echo "SKIP: clang cannot build wasm32 (install clang and lld)"
  exit 77
fi
SCALE=1 bash "$root/examples/build.sh" "$g" >/dev/null

fails=0
check() {  # name expected actual
  if [[ $2 == "$3" ]]; then
    echo "ok   $1"
  else
    echo "FAIL $1"
    diff <(echo "$2") <(echo "$3") | head -n 10
    fails=$((fails + 1))
  fi
}

# Single runs: the benchmarks' checksums, integer and float.
for b in int_bench_small float_bench_small; do
  check "$b: wasm == native" "$("$g/$b.native")" "$("$ww" run --invoke run "$g/$b.wasm")"
done

# A batch: one instance per image row, results to CSV, each row's pixels
# read back from memory.
rows=768
"$ww" run --invoke row -n $rows --output "$work/rows.csv" \
  --mem-out "pixels:2048=$work/pixels.bin" "$g/mandelbrot.wasm" @index >/dev/null
check "mandelbrot: $rows row results" "$("$g/mandelbrot.native" 0 $rows)" \
  "$(tail -n +2 "$work/rows.csv" | cut -d, -f2)"
check "mandelbrot: csv has no traps" "$(yes , | head -n $rows | tr -d '\n')" \
  "$(tail -n +2 "$work/rows.csv" | sed 's/^[0-9]*,[-0-9]*//' | tr -d '\n')"
"$g/mandelbrot.native" pixels 0 $rows >"$work/pixels.expected"
if cmp -s "$work/pixels.expected" "$work/pixels.bin"; then
  echo "ok   mandelbrot: --mem-out pixels of $rows instances"
else
  echo "FAIL mandelbrot: --mem-out pixels differ from native"
  fails=$((fails + 1))
fi

# The same rows through the gpu.set_pixel import into a PNG (CPU backend).
"$ww" run --backend cpu --invoke row -n $rows --output "$work/rows-image.csv" \
  --image "1024x768=$work/mandelbrot.png" "$g/mandelbrot-image.wasm" @index >/dev/null
check "mandelbrot-image: $rows row results with gpu.set_pixel" "$("$g/mandelbrot.native" 0 $rows)" \
  "$(tail -n +2 "$work/rows-image.csv" | cut -d, -f2)"
if [[ $(head -c 8 "$work/mandelbrot.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]]; then
  echo "ok   mandelbrot-image: PNG written"
else
  echo "FAIL mandelbrot-image: no PNG at $work/mandelbrot.png"
  fails=$((fails + 1))
fi

# Per-instance inputs: instance i gets record i of the file in its memory.
n=48
"$g/hash.native" inputs 0 $n >"$work/inputs.bin"
expected=$("$g/hash.native" 0 $n)
"$ww" run --invoke hash_input -n $n --mem-in "input=$work/inputs.bin" \
  --output "$work/hash_input.json" "$g/hash.wasm" 65536 >/dev/null
check "hash: --mem-in, $n instances (JSON)" "$expected" \
  "$(grep -o '"results":\[[-0-9]*\]' "$work/hash_input.json" | tr -dc '0-9\n-')"
check "hash: hash_seed(@index), $n instances" "$expected" \
  "$("$ww" run --invoke hash_seed -n $n --output - "$g/hash.wasm" @index | cut -f2)"

echo "$fails failure(s)"
((fails == 0))
