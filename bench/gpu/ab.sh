#!/usr/bin/env bash
# Two wasmwarp binaries on the same GPU batches, alternating run by run,
# for a before/after table (docs/performance.md): the bench/gpu rows on
# both tiers, hash-wasm's sha256 (1M, 16M) and crc32, the scale rows and
# SQLite on the interpreter at 100K. Each row: per binary, the median of
# RUNS batch walls (--stats wall_s, with the set-up older binaries made
# beside the GPU's start-up and left out of it) and of RUNS whole processes (start to
# exit, as a user times it), their ratios (new / old), and the walls'
# run-to-run spread ((max - min) / median), so that a change smaller than
# the spread reads as noise.
#
# usage: bench/gpu/ab.sh OLD NEW BUNDLE [RUNS]   (BUNDLE: scripts/gpu-prepare.sh's)
# env: ROWS (a subset of the row names below), WORK (a scratch folder),
#      BACKEND (default gpu; cpu runs the same rows on the CPU, to try the
#      script on a machine without a GPU)
set -uo pipefail
old=$(realpath "${1:?usage: ab.sh OLD NEW BUNDLE [RUNS]}")
new=$(realpath "${2:?usage: ab.sh OLD NEW BUNDLE [RUNS]}")
B=$(realpath "${3:?usage: ab.sh OLD NEW BUNDLE [RUNS]}")
runs=${4:-5}
work=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/ww-ab.XXXXXX")}
mkdir -p "$work"
N=$B/bench
G=$B/guests/rust
S=$(cd "$(dirname "$0")/../scale" && pwd)  # bench/scale's text-format modules
cd "$B/wasi/fx" 2>/dev/null || cd "$work" || exit 1  # SQLite's --dir db::db is relative
"$N/gpu_ref" gen-messages "$work/msgs.bin" 16777216 >/dev/null

# A row's wasmwarp arguments (after `run --backend "${BACKEND:-gpu}" -q`), into A.
row_args() {
  local w=$work
  case $1 in
    mandel) A=(-n 8294400 --image "3840x2160=$w/m.png" --output "$w/o.npy" --invoke render "$N/mandel.wasm" 3840 2160 1) ;;
    sha256) A=(-n 1000000 --mem-in "input_ptr=$w/msgs.bin" --mem-in-size 64 --mem-out "output_ptr:32=$w/d.bin"
      --invoke hash "$N/sha256.wasm") ;;
    montecarlo) A=(-n 1048576 --output "$w/o.npy" --invoke price "$N/montecarlo.wasm" @index 256) ;;
    collatz) A=(-n 4194304 --output "$w/o.npy" --invoke collatz "$N/collatz.wasm" 1000000000000 @index) ;;
    hashwasm-1M | hashwasm-16M)
      A=(-n "$([[ $1 == *16M ]] && echo 16777216 || echo 1000000)" --mem-in "Hash_GetBuffer=$w/msgs.bin" --mem-in-size 64
        --mem-out "Hash_GetBuffer:32=$w/d.bin" --invoke Hash_Calculate "$N/hashwasm_sha256.wasm" 64 256) ;;
    crc32-1M | crc32-16M)
      A=(-n "$([[ $1 == *16M ]] && echo 16777216 || echo 1000000)" --init Hash_Init:3988292384
        --mem-in "Hash_GetBuffer=$w/msgs.bin" --mem-in-size 64 --mem-out "Hash_GetBuffer:4=$w/d.bin"
        --invoke Hash_Calculate "$N/hashwasm_crc32.wasm" 64 3988292384) ;;
    tid-1M) A=(-n 1000000 --output "$w/o.npy" --invoke main "$G/04_thread_id.wasm") ;;
    tid-10M) A=(-n 10000000 --invoke main "$G/04_thread_id.wasm") ;;
    stackmix-100M) A=(-n 100000000 --invoke mix "$N/stack_mix.wasm" @index) ;;
    collatz-100M) A=(-n 100000000 --invoke collatz "$N/collatz.wasm" 1000000000000 @index) ;;
    heap) A=(-n 2000 --invoke heap_sum "$N/heap_sum.wasm" 1000000 @index) ;;
    dirty-waves) A=(-n 200000 --gpu-max-wave 4096 --invoke probe "$S/dirty.wat" @index) ;;
    ackermann) A=(--invoke ack "$S/ackermann.wat" 3 5) ;;
    # bench/wasi/run-gpu.sh's query, from its folder.
    sqlite-100K) A=(-n 100000 --dir db::db "$B/wasi/bin/sqlite.wasm" db/t.db
      "select id, name, v * 3, length(name) from t where id % 97 = @index % 97 order by v desc limit 5") ;;
  esac
}
rows=${ROWS:-mandel sha256 montecarlo collatz hashwasm-1M hashwasm-16M crc32-1M crc32-16M tid-1M tid-10M stackmix-100M
  collatz-100M heap dirty-waves ackermann sqlite-100K}

# "median spread" of the numbers on stdin.
stats() { sort -g | awk '{ v[NR] = $1 } END { m = v[int((NR + 1) / 2)]; printf "%.4f %.3f\n", m, (m > 0 ? (v[NR] - v[1]) / m : 0) }'; }

printf '%-15s %-8s %10s %10s %8s %7s %7s %10s %10s %8s\n' row tier "old wall" "new wall" new/old "spr old" "spr new" \
  "old proc" "new proc" new/old
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { print (b > 0 ? a / b : 0) }'; }
for r in $rows; do
  tiers="interp compiled"
  [[ $r == sqlite-100K ]] && tiers=interp  # its compiled code takes an hour of NVRTC to build
  for tier in $tiers; do
    row_args "$r"
    set -- "${A[@]}"
    # Warm runs: the code caches filled, the files read once.
    for bin in "$old" "$new"; do "$bin" run --backend "${BACKEND:-gpu}" --tier $tier -q "$@" >/dev/null 2>&1 </dev/null; done
    for f in old new old-proc new-proc; do : >"$work/$f.txt"; done
    for ((k = 0; k < runs; ++k)); do
      for side in old new; do
        bin=$old && [[ $side == new ]] && bin=$new
        # The batch's wall (--stats) and the whole process, as a user times it.
        t0=$(date +%s.%N)
        "$bin" run --backend "${BACKEND:-gpu}" --tier $tier -q --stats "$work/s.json" "$@" >/dev/null 2>&1 </dev/null
        t1=$(date +%s.%N)
        awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", (b - a) * 1000 }' >>"$work/$side-proc.txt"
        # Binaries before 9607671 made part of a batch's set-up beside the
        # GPU's start-up and left it out of wall_s ("set-up beside the
        # start-up"); it is the batch's work all the same, so it counts.
        awk '/"wall_s"/ { gsub(/[^0-9.eE+-]/, "", $NF); w = $NF }
             /"set-up beside the start-up"/ { gsub(/[^0-9.eE+-]/, "", $NF); a = $NF }
             END { printf "%.6f\n", w * 1000 + a }' "$work/s.json" >>"$work/$side.txt"
      done
    done
    read -r om os < <(stats <"$work/old.txt")
    read -r nm ns < <(stats <"$work/new.txt")
    read -r op _ < <(stats <"$work/old-proc.txt")
    read -r np _ < <(stats <"$work/new-proc.txt")
    printf '%-15s %-8s %10.3f %10.3f %8.3f %7.3f %7.3f %10.1f %10.1f %8.3f\n' "$r" "$tier" "$om" "$nm" "$(ratio "$nm" "$om")" \
      "$os" "$ns" "$op" "$np" "$(ratio "$np" "$op")"
  done
done
rm -f "$work"/*.npy "$work"/*.bin "$work"/*.png
