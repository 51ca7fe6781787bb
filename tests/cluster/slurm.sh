#!/bin/bash
# slurm.sh: scripts/papa_sweep.sh on a real Slurm cluster of one node, started here and stopped at the end
# (also on failure): munged, slurmctld and slurmd on localhost with a configuration written below and a state
# folder of their own (no system file is read or written), on free ports.
#   1. a tiny PAPA sweep in one process gives the reference digest;
#   2. `papa_sweep.sh submit` runs it and a second sweep (task definition) as a job array of 2 x 4 shards and a
#      merge job (afterok): each merged digest is its one-process run's, and one combined result (JSON, CSV,
#      table) lists both;
#   3. a shard killed while it runs leaves no part, the merge job never runs, `papa_sweep.sh merge` names the
#      missing part, and the same submission again recomputes only that shard and merges to the same digest.
# Skips (exit 77, with the reason) only when Slurm's or munge's programs are not installed or this user cannot
# run slurmd (it must be root to launch jobs).
#
#   tests/cluster/slurm.sh [WORK_DIR]      (default: a new folder under /tmp, removed at the end)
# Environment: AL_BUILD_DIR (the native build, default build/native), SLURM_TEST_TIMEOUT (seconds per wait,
# default 300), SLURM_TEST_FLAGS (papa flags of another sweep than the test's tiny one, to measure).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cli="$root/${AL_BUILD_DIR:-build/native}/attnlab"
timeout=${SLURM_TEST_TIMEOUT:-300}

skip() { echo "slurm test: SKIPPED: $*"; exit 77; }
fail() { echo "slurm test: FAILED: $*" >&2; exit 1; }
for p in munged slurmctld slurmd sbatch squeue scontrol scancel jq python3; do
  command -v "$p" >/dev/null || skip "no '$p' on PATH (scripts/setup.sh installs slurm-wlm, munge and jq)"
done
[ "$(id -u)" = 0 ] || skip "slurmd must run as root to start jobs as their user; this is uid $(id -u)"
[ -x "$cli" ] || fail "no native CLI at $cli"
[ -f "$root/build/data/tasks/pos.jsonl" ] || fail "no built-in tasks in build/data/tasks (scripts/setup.sh)"

state=${1:-$(mktemp -d /tmp/attnlab-slurm.XXXXXX)}
mkdir -p "$state"
chmod 700 "$state"
state=$(cd "$state" && pwd)
export SLURM_CONF="$state/slurm.conf"
cluster_up=0

# Stops what this test started: the jobs first (slurmctld must be up to cancel them and see them go, and
# slurmd to end their steps), then slurmd, slurmctld and munged, each by the pid it wrote, waiting for it to
# exit (a daemon removes its pid file as it stops, so the pids are read first). The state folder goes last,
# unless the caller gave it, to read the logs.
cleanup() {
  local rc=$? pids=() pid i
  for name in slurmd slurmctld munged; do
    pid=$(cat "$state/$name.pid" 2>/dev/null || true)
    [ -n "$pid" ] && pids+=("$pid")
  done
  if [ $cluster_up = 1 ]; then
    scancel --quiet --user "$(id -un)" 2>/dev/null || true
    for ((i = 0; i < 60; i++)); do
      [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
      sleep 0.5
    done
  fi
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || continue
    for ((i = 0; i < 40; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -9 "$pid" 2>/dev/null || true
  done
  if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
    for log in "$state"/*.log "$state"/out*/logs/*.log; do
      [ -f "$log" ] && { echo "--- $log"; tail -n 20 "$log"; }
    done >&2
  fi
  [ -z "${keep_state:-}" ] && rm -rf "$state"
  exit $rc
}
[ $# -ge 1 ] && keep_state=1
trap cleanup EXIT
trap 'exit 1' INT TERM

# Two free TCP ports, from the kernel.
read -r port_ctld port_d < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')

# munge: a key of our own and a socket in the state folder
mkdir -p "$state/munge"
chmod 700 "$state/munge"
dd if=/dev/urandom of="$state/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$state/munge/munge.key"
munged --force --key-file="$state/munge/munge.key" --socket="$state/munge/munge.sock" \
  --pid-file="$state/munged.pid" --log-file="$state/munged.log" --seed-file="$state/munge/munged.seed" \
  || fail "munged did not start ($state/munged.log)"

node=attnlab-node
cpus=$(nproc)
mem_mb=$(awk '/MemTotal/ {print int($2 / 1024 / 2)}' /proc/meminfo)
mkdir -p "$state/ctld" "$state/spool"
cat > "$SLURM_CONF" <<EOF
# one-node cluster for tests/cluster/slurm.sh
ClusterName=attnlab
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=$(id -un)
SlurmdUser=root
SlurmctldPort=$port_ctld
SlurmdPort=$port_d
AuthType=auth/munge
AuthInfo=socket=$state/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MinJobAge=3600
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
PlugStackConfig=$state/plugstack.conf
NodeName=$node NodeHostname=$(hostname -s) NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
: > "$state/plugstack.conf"
slurmctld -i || fail "slurmctld did not start ($state/slurmctld.log)"
slurmd -N "$node" || fail "slurmd did not start ($state/slurmd.log)"
cluster_up=1

# wait_for SECONDS WHAT COMMAND...: polls COMMAND until it succeeds, or fails naming WHAT.
wait_for() {
  local limit=$1 what=$2 start=$SECONDS
  shift 2
  until "$@"; do
    [ $((SECONDS - start)) -lt "$limit" ] || fail "timed out after $limit s waiting for $what"
    sleep 0.5
  done
}
node_idle() { sinfo -h -n "$node" -o %t 2>/dev/null | grep -qx idle; }
wait_for 60 "the node to register" node_idle
echo "slurm test: one-node cluster up (slurm $(slurmctld -V | cut -d' ' -f2), $cpus CPUs, state $state)"

job_state() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -n1; }
job_done() { case "$(job_state "$1")" in COMPLETED | FAILED | CANCELLED | TIMEOUT | OUT_OF_MEMORY | NODE_FAIL) return 0 ;; esac; return 1; }

source "$root/tests/cluster/tiny_sweep.sh"
flags=("${tiny_sweep_flags[@]}")
# SLURM_TEST_FLAGS: another sweep's papa flags (a measurement: the times below are printed side by side)
# shellcheck disable=SC2206
[ -n "${SLURM_TEST_FLAGS:-}" ] && flags=(${SLURM_TEST_FLAGS})
model="$root/models/attnlab-mini-bert"
export ATTNLAB="$cli" ATTNLAB_TASKS="$root/build/data/tasks" SWEEP_CPUS=1

start=$SECONDS
"$cli" --threads "$cpus" papa "$model" --task pos --tasks-dir "$ATTNLAB_TASKS" "${flags[@]}" > "$state/whole.json"
reference=$(jq -r .digest "$state/whole.json")
echo "slurm test: one process on $cpus threads: $((SECONDS - start)) s wall, digest $reference"
# a second sweep (another task) in the same submission: one combined table of both
second=$("$cli" --threads "$cpus" papa "$model" --task definition --tasks-dir "$ATTNLAB_TASKS" "${flags[@]}" | jq -r .digest)

# 1. the job array and the merge job
start=$SECONDS
out="$state/out"
"$root/scripts/papa_sweep.sh" submit "$out" "$model" pos,definition quick 4 "${flags[@]}" > "$state/jobs.txt"
array=$(awk '$1 == "array" {print $2}' "$state/jobs.txt")
merge_job=$(awk '$1 == "merge" {print $2}' "$state/jobs.txt")
wait_for "$timeout" "merge job $merge_job" job_done "$merge_job"
[ "$(job_state "$merge_job")" = COMPLETED ] || fail "merge job $merge_job ended $(job_state "$merge_job")"
for i in 0 1 2 3 4 5 6 7; do
  [ "$(job_state "${array}_$i")" = COMPLETED ] || fail "array task ${array}_$i ended $(job_state "${array}_$i")"
done
merged=$(jq -r .digest "$out/attnlab-mini-bert_pos/sweep.json")
[ "$merged" = "$reference" ] || fail "merged digest $merged is not the one-process digest $reference"
[ "$(jq -r '.merged_parts' "$out/attnlab-mini-bert_pos/sweep.json")" = 4 ] || fail "the sweep did not merge 4 parts"
merged2=$(jq -r .digest "$out/attnlab-mini-bert_definition/sweep.json")
[ "$merged2" = "$second" ] || fail "the definition sweep's merged digest $merged2 is not the one-process digest $second"
[ "$(jq -r '[.sweeps[].digest] | join(" ")' "$out/combined.json")" = "$reference $second" ] ||
  fail "combined.json does not hold both sweeps' digests"
grep -q "$reference" "$out/combined.csv" && grep -q "$second" "$out/combined.csv" || fail "combined.csv lacks a sweep's digest"
grep -q '| pos | attnlab-mini-bert |' "$out/combined.md" && grep -q '| definition | attnlab-mini-bert |' "$out/combined.md" ||
  fail "combined.md lacks a sweep's row"
echo "slurm test: job array $array (2 sweeps x 4 shards, 1 CPU each) + merge job $merge_job: $((SECONDS - start)) s wall from submit to merged, digests $merged (pos), $merged2 (definition) (= one process); one combined table"
# a part changed after it was written no longer matches its digests: the merge names it instead of merging
echo ' ' >> "$out/attnlab-mini-bert_pos/part-1.json"
if "$root/scripts/papa_sweep.sh" merge "$out" 2> "$state/merge-changed.txt"; then fail "merge took a changed part"; fi
grep -q 'part-1.json (shard 1/4) does not match its digests' "$state/merge-changed.txt" || fail "merge did not name the changed part: $(cat "$state/merge-changed.txt")"

# 2. a shard killed while it runs: no part, no merge; the merge names the part; resubmitting completes it
out="$state/out-killed"
"$root/scripts/papa_sweep.sh" submit "$out" "$model" pos quick 4 "${flags[@]}" > "$state/jobs.txt"
array=$(awk '$1 == "array" {print $2}' "$state/jobs.txt")
merge_job=$(awk '$1 == "merge" {print $2}' "$state/jobs.txt")
victim="${array}_2"
running() { [ "$(job_state "$victim")" = RUNNING ] || job_done "$victim"; }
wait_for "$timeout" "array task $victim to start" running
[ "$(job_state "$victim")" = RUNNING ] || fail "array task $victim finished before it could be killed"
scancel --signal=KILL "$victim"
wait_for "$timeout" "merge job $merge_job to be dropped" job_done "$merge_job"
[ "$(job_state "$victim")" != COMPLETED ] || fail "the killed task $victim completed"
[ "$(job_state "$merge_job")" != COMPLETED ] || fail "merge job $merge_job ran although shard 2 failed"
[ ! -e "$out/attnlab-mini-bert_pos/part-2.json" ] || fail "the killed shard left a part-2.json"
[ ! -e "$out/attnlab-mini-bert_pos/sweep.json" ] || fail "a sweep was merged without shard 2"
wait_for "$timeout" "the array's other tasks" job_done "${array}_3"
if "$root/scripts/papa_sweep.sh" merge "$out" 2> "$state/merge-missing.txt"; then fail "merge succeeded without part 2"; fi
grep -q 'part-2.json (shard 2/4) is missing' "$state/merge-missing.txt" || fail "merge did not name the missing part: $(cat "$state/merge-missing.txt")"
echo "slurm test: killed $victim ($(job_state "$victim")), merge job $(job_state "$merge_job"); merge says: $(head -n1 "$state/merge-missing.txt")"
"$root/scripts/papa_sweep.sh" submit "$out" "$model" pos quick 4 "${flags[@]}" > "$state/jobs.txt"
merge_job=$(awk '$1 == "merge" {print $2}' "$state/jobs.txt")
wait_for "$timeout" "the resubmitted merge job $merge_job" job_done "$merge_job"
[ "$(job_state "$merge_job")" = COMPLETED ] || fail "resubmitted merge job $merge_job ended $(job_state "$merge_job")"
for i in 0 1 3; do
  grep -q "shard $i/4: part verified, skipped" "$out/logs/shard-$i.log" || fail "the rerun recomputed shard $i, which was complete"
done
grep -q "shard 2/4 done" "$out/logs/shard-2.log" || fail "the rerun did not recompute shard 2"
merged=$(jq -r .digest "$out/attnlab-mini-bert_pos/sweep.json")
[ "$merged" = "$reference" ] || fail "after the rerun the merged digest is $merged, not $reference"
echo "slurm test: resubmitted: shards 0, 1, 3 skipped (verified), shard 2 recomputed, digest $merged (= one process)"
echo "slurm test: passed"
