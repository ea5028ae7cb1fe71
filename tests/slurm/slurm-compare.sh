#!/usr/bin/env bash
# wasmwarp under a real Slurm: starts a one-host cluster from Debian's
# slurm-wlm (slurmctld and slurmd on this machine, its own configuration,
# ports and state under WORKDIR, stopped on exit: nothing is left
# running), then `srun --mpi=pmix -n R wasmwarp run ...` (MPI ranks
# through Slurm's own launcher and PMIx) against one process: the same
# output files byte for byte and the same exit code, for R = 2 and 3.
# The cluster trusts its host (auth/none), which only a test may do.
#   usage: tests/slurm/slurm-compare.sh WASMWARP CLI_MODULES_DIR [WORKDIR]
# Exits 77 (skipped) without slurm-wlm, without root (slurmd runs jobs as
# their users), or when the cluster does not come up here (its log says
# why).
set -uo pipefail
ww=$(realpath "${1:?usage: slurm-compare.sh WASMWARP CLI_MODULES_DIR [WORKDIR]}")
mods=$(realpath "${2:?usage: slurm-compare.sh WASMWARP CLI_MODULES_DIR [WORKDIR]}")
here=$(cd "$(dirname "$0")" && pwd)
work=$(realpath -m "${3:-$(mktemp -d)}")
for t in slurmctld slurmd srun sinfo; do
  command -v $t >/dev/null || { echo "slurm-compare: no $t (Debian: slurm-wlm): skipped"; exit 77; }
done
[[ $(id -u) == 0 ]] || { echo "slurm-compare: slurmd needs root: skipped"; exit 77; }
rm -rf "$work" && mkdir -p "$work"/{state,spool,log} && cd "$work" || exit 1
host=$(hostname -s)
export SLURM_CONF=$work/slurm.conf
cat >"$SLURM_CONF" <<CONF
ClusterName=wwtest
SlurmctldHost=$host
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/none
CredType=cred/none
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
SlurmUser=root
SlurmdUser=root
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
CONF
stop() {
  for p in slurmd slurmctld; do
    [[ -f $work/$p.pid ]] && kill "$(cat "$work/$p.pid")" 2>/dev/null
  done
  sleep 1
  for p in slurmd slurmctld; do
    [[ -f $work/$p.pid ]] && kill -9 "$(cat "$work/$p.pid")" 2>/dev/null
  done
}
trap stop EXIT
slurmctld -f "$SLURM_CONF" -i >"$work/log/start.log" 2>&1
slurmd -f "$SLURM_CONF" >>"$work/log/start.log" 2>&1
up=0
for _ in $(seq 1 30); do
  if sinfo -h -o %t 2>/dev/null | grep -qx idle; then up=1; break; fi
  sleep 1
done
((up)) || { echo "slurm-compare: the one-host cluster did not come up here: skipped"; tail -n 5 "$work"/log/*.log; exit 77; }

bad=0
fail() { echo "slurm-compare: FAILED: $*"; bad=1; }
label=slurm-compare
launch() {
  local r=$1
  shift
  timeout 120 srun --overcommit --mpi=pmix -n "$r" "$@"
}
source "$here/../mpi/compare-lib.sh"
basic=$mods/basic.wasm
compare csv 0 -n 1000 --invoke mixed --output out.csv "$basic" @index 2.5
compare npy 0 -n 1000 --invoke pair --output out.npy "$basic" @index
compare traps 1 -n 1000 --invoke odd_traps --output out.csv "$basic" @index
compare wasi 1 -n 300 "$here/../mpi/argv.wat" @index x
# The ranks split the batch (not each running it whole): --stats from
# rank 0 has a figure per rank.
timeout 120 srun --overcommit --mpi=pmix -n 3 "$ww" run -q -n 999 --stats s.json --invoke pair "$basic" @index \
  >/dev/null 2>&1 && python3 - s.json <<'PY' || fail "--stats under srun (s.json: $(head -c 300 s.json 2>/dev/null))"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["instances"] == 999 and j["completed"] == 999, j
m = j["mpi"]
assert m["ranks"] == 3 and [r["instances"] for r in m["per_rank"]] == [333, 333, 333], m
assert [r["first"] for r in m["per_rank"]] == [0, 333, 666], m
PY
[[ $bad == 0 ]] && echo "slurm-compare: srun -n 3 splits the batch between its ranks"
exit $bad
