# Sourced by tests/mpi/mpi-compare.sh and tests/slurm/slurm-compare.sh.
# compare NAME EXPECTED_RC ARGS...: `wasmwarp run -q ARGS...` as one
# process into one/NAME, then as 2 and 3 ranks into r2/NAME and r3/NAME
# through the caller's `launch R COMMAND...`; the same files byte for byte
# (stderr aside) and the same exit code. Uses the caller's $ww (the binary),
# $bad and fail(), and prints "LABEL: NAME: ..." with the caller's $label.
compare() {
  local name=$1 want=$2 before=$bad r f b
  shift 2
  mkdir -p one/$name
  (cd one/$name && "$ww" run -q "$@" >stdout 2>stderr; echo $? >rc)
  for r in 2 3; do
    mkdir -p r$r/$name
    (cd r$r/$name && launch $r "$ww" run -q "$@" >stdout 2>stderr; echo $? >rc)
    [[ $(cat r$r/$name/rc) == "$want" ]] || fail "$name, $r ranks: exit $(cat r$r/$name/rc), want $want ($(head -c 300 r$r/$name/stderr))"
    for f in one/$name/*; do
      b=$(basename "$f")
      [[ $b == stderr ]] && continue
      cmp -s "$f" "r$r/$name/$b" || fail "$name, $r ranks: $b differs from one process's"
    done
    [[ $(ls one/$name | wc -l) == $(ls r$r/$name | wc -l) ]] || fail "$name, $r ranks: other files ($(ls r$r/$name | tr '\n' ' '))"
  done
  [[ $(cat one/$name/rc) == "$want" ]] || fail "$name: one process exited $(cat one/$name/rc), want $want"
  [[ $bad == "$before" ]] && echo "$label: $name: 2 and 3 ranks = one process"
}
