#!/usr/bin/env bash
# make test-slurm: the Slurm job-array recipe of docs/sweeps.md, run for real on a one-node
# cluster started on this machine (munged, slurmctld, slurmd), checked byte for byte against a
# single-process sweep of the same grid. What it checks and its measured time: docs/slurm.md.
#
#   run 1  an array of N1 tasks, each `sweep GRID --shard K/N1 -o part.K.jsonl`; `report merge`;
#          cmp with the single-process results.
#   run 2  an array of N2 tasks into fresh files; one task is scancel'ed while it runs (after
#          its first cell is written), then resubmitted with the same command (it resumes from
#          its partial file); `report merge`; cmp again.
#
# Needs root (Debian packages, daemons as root). Everything it writes is under one scratch
# directory in /tmp (removed on success, kept on failure). Every daemon it starts is stopped
# on exit, failure included. Environment:
#   ELK_OPT     the binary (default: target/release/elk-opt; copied into the scratch dir
#               so a rebuild during the test cannot change it halfway)
#   KEEP_SCRATCH=1  keep the scratch directory after a successful run
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
t0=$EPOCHREALTIME

# Each step is printed with the seconds since the script started.
step() { awk -v t="$EPOCHREALTIME" -v t0="$t0" -v m="$*" 'BEGIN { printf "== test-slurm [%6.1f s] %s\n", t - t0, m }'; }
die() {
  echo "error: test-slurm: $*" >&2
  exit 1
}

[ "$(id -u)" -eq 0 ] || die "must run as root (installs packages and starts slurm and munge as root)"

# --- packages ------------------------------------------------------------------------------
step "packages: slurm-wlm munge"
missing=""
for p in slurm-wlm munge; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  echo "installing:$missing"
  apt-get update -qq || die "apt-get update failed"
  # shellcheck disable=SC2086 # word splitting of the package list is intended
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing \
    >/dev/null || die "apt-get install$missing failed"
fi
for c in munged mungekey slurmctld slurmd sbatch squeue scancel scontrol sinfo; do
  command -v "$c" >/dev/null || die "$c not found after installing slurm-wlm and munge"
done
step "packages ready: $(slurmctld -V), munge $(dpkg-query -W -f='${Version}' munge)"

# --- scratch directory, binary, grid ---------------------------------------------------------
S=$(mktemp -d /tmp/elk-slurm.XXXXXX)
chmod 755 "$S" # munged runs as the munge user and must reach $S/munge
pids=()        # daemons started here, stopped by cleanup()
# PIDs of the live (non-zombie) slurm and munge processes, one a line.
slurm_procs() { ps -eo pid=,stat=,comm= | awk '$2 !~ /^Z/ && $3 ~ /^(munged|slurmctld|slurmd|slurmstepd)$/ { print $1 }'; }
mapfile -t before < <(slurm_procs) # already running before this script: not ours
ok=0

# Stops every daemon this script started, even on failure: first the jobs (so no slurmstepd
# is left behind), then slurmd, slurmctld and munged, each by its own PID (TERM, then KILL).
cleanup() {
  local rc=$?
  set +e
  if [ ${#pids[@]} -gt 0 ]; then
    step "stopping the cluster"
    if [ -n "${SLURM_CONF:-}" ] && kill -0 "${pids[1]:-0}" 2>/dev/null; then
      timeout 5 scancel --quiet --user=root 2>/dev/null
      local queued
      for _ in $(seq 1 60); do # up to 30 s; a failing squeue ends the wait
        queued=$(timeout 5 squeue -h -o %i 2>/dev/null) || break
        [ -z "$queued" ] && break
        sleep 0.5
      done
    fi
    # Reverse start order: slurmd, slurmctld, munged.
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
      local p=${pids[i]}
      kill -TERM "$p" 2>/dev/null
      for _ in $(seq 1 40); do
        kill -0 "$p" 2>/dev/null || break
        sleep 0.25
      done
      if kill -0 "$p" 2>/dev/null; then
        echo "warning: PID $p did not stop on TERM; sending KILL" >&2
        kill -KILL "$p" 2>/dev/null
      fi
      wait "$p" 2>/dev/null
    done
    local left=""
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && left="$left $p"; done
    # Any slurm or munge process that was not there before the script started (job steps
    # included) is a stray; zombies waiting for init to reap them are not counted.
    for _ in $(seq 1 20); do
      left="$left$(slurm_procs | grep -vxF -f <(printf '%s\n' "${before[@]}" x) | tr '\n' ' ')"
      [ -z "${left// /}" ] && break
      left=""
      sleep 0.5
    done
    if [ -n "${left// /}" ]; then
      echo "error: test-slurm: processes left running: $left" >&2
      [ "$rc" -ne 0 ] || rc=1
    fi
    step "cluster stopped (PIDs ${pids[*]}), no slurm or munge process left"
  fi
  if [ "$ok" = 1 ] && [ "${KEEP_SCRATCH:-0}" != 1 ]; then
    rm -rf "$S"
  else
    echo "scratch directory kept: $S" >&2
    if [ "$ok" != 1 ]; then
      for f in "$S"/log/*.log; do
        [ -f "$f" ] && { echo "--- last lines of $f" >&2; tail -n 15 "$f" >&2; }
      done
    fi
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The binary: another engineer may be relinking it; wait for a runnable one (up to 5 min).
src=${ELK_OPT:-$repo/target/release/elk-opt}
for i in $(seq 1 30); do
  if [ -x "$src" ] && cp "$src" "$S/elk-opt.tmp" 2>/dev/null && "$S/elk-opt.tmp" --version >/dev/null 2>&1; then
    mv "$S/elk-opt.tmp" "$S/elk-opt"
    break
  fi
  [ "$i" -eq 30 ] && die "no runnable $src (build it: cargo build --release -j2 --bin elk-opt)"
  echo "waiting for $src (being rebuilt?)"
  sleep 10
done
elk="$S/elk-opt"

# Eight cells of about 1 s each (two small models x two batches x two KV lengths, four
# methods). Shards of run 2 hold four cells, so a task can be caught after its first.
cat >"$S/grid.toml" <<'EOF'
figure = "bars"
models = ["bert-base", "opt-1.3b"]
modes = ["decode"]
batches = [1, 8]
kvs = [512, 1024]
chips = ["ipu-pod4"]
methods = ["basic", "static", "elk-dyn", "elk-full"]
EOF
cells=8
N1=4 # run 1: four tasks on two CPUs, so tasks also wait in the queue
N2=2 # run 2: two tasks of four cells each, one of them cancelled midway

# The plan cache lives in the scratch dir, shared by the straight run and every array task
# (like a shared home on a real cluster); the results must not depend on it.
export XDG_CACHE_HOME="$S/cache"

step "single-process sweep ($cells cells)"
"$elk" sweep "$S/grid.toml" -o "$S/straight.jsonl" 2>"$S/straight.log" ||
  die "single-process sweep failed: $(tail -n 1 "$S/straight.log")"
[ "$(wc -l <"$S/straight.jsonl")" -eq "$cells" ] || die "straight.jsonl has not $cells lines"
step "single-process sweep done: $(wc -c <"$S/straight.jsonl") bytes"

# --- the cluster -----------------------------------------------------------------------------
node=$(hostname -s)
cpus=$(nproc)
mem_mb=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2)) # half the RAM, in MB
mkdir -p "$S/munge" "$S/state" "$S/spool" "$S/log" "$S/run"
chown munge:munge "$S/munge"
chmod 755 "$S/munge" # munged: the socket directory must be searchable by all

# Munge: a fresh key and a private socket in the scratch dir, so a munged already running on
# the machine (and /etc/munge) is left alone.
step "munged"
if ! mungekey --create --keyfile="$S/munge/munge.key" 2>/dev/null; then
  dd if=/dev/urandom of="$S/munge/munge.key" bs=1024 count=1 status=none
fi
chown munge:munge "$S/munge/munge.key"
chmod 400 "$S/munge/munge.key"
setpriv --reuid=munge --regid=munge --init-groups \
  munged --foreground --key-file="$S/munge/munge.key" --socket="$S/munge/munge.socket" \
  --pid-file="$S/munge/munged.pid" --log-file="$S/munge/munged.log" \
  --seed-file="$S/munge/munged.seed" >"$S/log/munged.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 40); do [ -S "$S/munge/munge.socket" ] && break; sleep 0.25; done
[ -S "$S/munge/munge.socket" ] || die "munged did not create its socket (see $S/munge/munged.log)"
munge --socket="$S/munge/munge.socket" -n | unmunge --socket="$S/munge/munge.socket" >/dev/null ||
  die "munge/unmunge round trip failed"

# A minimal slurm.conf: one node (this machine, on the loopback address), one partition,
# no cgroups, no accounting, every path in the scratch dir.
cat >"$S/slurm.conf" <<EOF
ClusterName=elk-test
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$S/munge/munge.socket
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/run/slurmctld.pid
SlurmdPidFile=$S/run/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
ReturnToService=2
KillWait=5
MinJobAge=600
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$S/slurm.conf" # every client below runs under `timeout 20`: a hung client fails the test

step "slurmctld"
slurmctld -D -i -f "$SLURM_CONF" >"$S/log/slurmctld.out" 2>&1 &
pids+=($!)
for _ in $(seq 1 60); do timeout 20 scontrol ping 2>/dev/null | grep -q UP && break; sleep 0.5; done
timeout 20 scontrol ping | grep -q UP || die "slurmctld did not come up (see $S/log/slurmctld.log)"

step "slurmd"
slurmd -D -N "$node" -f "$SLURM_CONF" >"$S/log/slurmd.out" 2>&1 &
pids+=($!)
for _ in $(seq 1 60); do
  state=$(timeout 20 sinfo -h -n "$node" -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.5
done
[ "$state" = idle ] || die "node $node is '$state', not idle (see $S/log/slurmd.log)"
step "cluster up: node $node idle, $cpus CPUs"

# --- the recipe ------------------------------------------------------------------------------
# The job script of docs/sweeps.md, for a grid file and N shards, run from the run's directory.
write_job() { # DIR N
  cat >"$1/job.sh" <<EOF
#!/bin/bash
#SBATCH --job-name=elk-test
#SBATCH --cpus-per-task=1
#SBATCH --time=00:10:00
#SBATCH --output=$1/slurm-%A_%a.out
"$elk" sweep "$S/grid.toml" --shard \${SLURM_ARRAY_TASK_ID}/$2 -o "$1/part.\${SLURM_ARRAY_TASK_ID}.jsonl"
EOF
}

# Submits DIR/job.sh as an array over INDICES (e.g. 0-3); prints the job id.
submit() { # DIR INDICES
  timeout 20 sbatch --parsable --array="$2" --chdir="$1" "$1/job.sh" | cut -d';' -f1
}

# Waits until job JOBID has left the queue (at most 300 s).
wait_gone() { # JOBID
  for _ in $(seq 1 600); do
    [ -z "$(timeout 20 squeue -h -j "$1" -o %i 2>/dev/null)" ] && return 0
    sleep 0.5
  done
  die "job $1 still queued after 300 s"
}

# The final state of array task JOBID_K (scontrol keeps finished jobs for MinJobAge).
task_state() { # JOBID K
  timeout 20 scontrol -o show job "$1_$2" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | head -n 1 | cut -d= -f2 || true
}

# Checks that every task in INDICES... of JOBID completed with exit code 0.
check_completed() { # JOBID INDICES...
  local jid=$1 k st
  shift
  for k in "$@"; do
    st=$(task_state "$jid" "$k")
    [ "$st" = COMPLETED ] || die "array task ${jid}_$k ended $st (output: $(tail -n 2 "$dir"/slurm-"${jid}"_"$k".out 2>/dev/null))"
  done
}

# Merges DIR/part.*.jsonl and compares the bytes with the single-process results.
merge_and_cmp() { # DIR N
  local parts=() k
  for ((k = 0; k < $2; k++)); do parts+=("$1/part.$k.jsonl"); done
  "$elk" report merge "${parts[@]}" -o "$1/merged.jsonl" >"$1/merge.log" 2>&1 ||
    die "report merge failed: $(tail -n 1 "$1/merge.log")"
  cmp "$S/straight.jsonl" "$1/merged.jsonl" ||
    die "merged results differ from the single-process run ($1/merged.jsonl)"
  step "cmp: merged = single-process, $(wc -c <"$1/merged.jsonl") bytes, $(wc -l <"$1/merged.jsonl") lines"
}

# Run 1: the recipe as it stands.
dir="$S/run1"
mkdir -p "$dir"
write_job "$dir" "$N1"
step "run 1: sbatch --array=0-$((N1 - 1)) ($N1 shards)"
jid=$(submit "$dir" "0-$((N1 - 1))") || die "sbatch failed"
wait_gone "$jid"
mapfile -t all1 < <(seq 0 $((N1 - 1)))
check_completed "$jid" "${all1[@]}"
step "run 1: job $jid done, all $N1 tasks COMPLETED"
merge_and_cmp "$dir" "$N1"

# Run 2: cancel task K midway, resubmit it, then merge.
dir="$S/run2"
mkdir -p "$dir"
write_job "$dir" "$N2"
K=$((N2 - 1))
per_shard=$((cells / N2))
step "run 2: sbatch --array=0-$((N2 - 1)) ($N2 shards of $per_shard cells)"
jid=$(submit "$dir" "0-$((N2 - 1))") || die "sbatch failed"
part="$dir/part.$K.jsonl"
caught=0
for _ in $(seq 1 1200); do # up to 120 s
  st=$(timeout 20 squeue -h -j "${jid}_$K" -o %T 2>/dev/null || true)
  if [ "$st" = RUNNING ] && [ -f "$part" ] && [ "$(wc -l <"$part")" -ge 1 ]; then
    timeout 20 scancel "${jid}_$K"
    caught=1
    break
  fi
  [ -z "$st" ] && [ -n "$(task_state "$jid" "$K")" ] && break # gone before we saw it run
  sleep 0.1
done
[ "$caught" = 1 ] || die "task ${jid}_$K was never seen RUNNING with a finished cell"
wait_gone "$jid"
st=$(task_state "$jid" "$K")
[ "$st" = CANCELLED ] || die "task ${jid}_$K ended $st, not CANCELLED (it finished before scancel?)"
done_lines=$(wc -l <"$part")
[ "$done_lines" -lt "$per_shard" ] ||
  die "task ${jid}_$K had written all $per_shard cells before scancel: not a midway cancel"
mapfile -t others < <(seq 0 $((N2 - 1)) | grep -vx "$K")
check_completed "$jid" "${others[@]}"
step "run 2: task ${jid}_$K CANCELLED after $done_lines of $per_shard cells; the other tasks COMPLETED"

step "run 2: resubmit task $K (same command)"
jid2=$(submit "$dir" "$K") || die "sbatch failed"
wait_gone "$jid2"
check_completed "$jid2" "$K"
resumed=$(grep -o '[0-9]* already done' "$dir/slurm-${jid2}_$K.out" | cut -d' ' -f1 || true)
if [ -z "$resumed" ] || [ "$resumed" -lt 1 ]; then
  die "the resubmitted task did not resume from its partial file ($(tail -n 1 "$dir/slurm-${jid2}_$K.out"))"
fi
step "run 2: resubmitted task ${jid2}_$K COMPLETED, resumed: $resumed of $per_shard cells already done"
merge_and_cmp "$dir" "$N2"

ok=1
step "passed: both runs merge to the single-process bytes"
