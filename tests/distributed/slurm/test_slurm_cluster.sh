#!/usr/bin/env bash
# Issue 33 on a real Slurm cluster, here: munged, slurmctld and two slurmd nodes, each node in its
# own network and UTS namespace (local_cluster.sh). Runs the committed job files as a user runs
# them:
#   1. ci/slurm/ddp.sbatch on 2 nodes x 1 rank: world size 2 across 2 nodes (hosts node1, node2),
#      the ddp arms ok with their ratios, one result written by rank 0;
#   2. ci/slurm/campaign.sh: a 2-task array (one result per host) and the comparing job after it,
#      which compares them and ingests them into a history store;
#   3. srun -N 2 with MASTER_ADDR=localhost: every task refuses, one line, exit 2.
# Everything it starts it stops (a second run passes too). Needs root (namespaces), or sudo -n.
# Usage: test_slurm_cluster.sh SOURCE_DIR TIPBENCH PYTHON
set -uo pipefail
src=$(cd "$1" && pwd -P) tipbench=$(realpath "$2") python=$(realpath -s "$3")
here=$(cd "$(dirname "$0")" && pwd -P)
fail() { echo "FAIL: $*"; exit 1; }
if [[ $(id -u) -ne 0 ]]; then
  sudo -n true 2>/dev/null || fail "the cluster needs root for its namespaces (or passwordless sudo)"
  exec sudo -n -E bash "$0" "$@"
fi
for tool in munged slurmctld slurmd sbatch srun scontrol sinfo ip nsenter unshare python3; do
  command -v "$tool" >/dev/null || fail "$tool not found (scripts/bootstrap.sh --test installs slurmctld slurmd slurm-client munge)"
done
started=$SECONDS
work=$(mktemp -d /tmp/tipbench-slurm.XXXXXX)
chmod 755 "$work"
# shellcheck source=tests/distributed/slurm/local_cluster.sh disable=SC1091
source "$here/local_cluster.sh"
trap 'cluster_stop; rm -rf "$work"' EXIT
cluster_start "$work/cluster" || fail "the cluster did not start (logs above)"
cd "$work" || fail "no $work"
export TIPBENCH=$tipbench

show_log() { echo "--- $1"; tail -n 30 "$1" 2>/dev/null; }

# 1. Multi-node DDP through the committed sbatch file.
TIPBENCH_OUT=$work/ddp.json sbatch --wait --nodes 2 --ntasks-per-node 1 --output "$work/ddp.log" \
  "$src/ci/slurm/ddp.sbatch" --quick --blocks 3 --bucket-mb 0.25 >/dev/null ||
  { show_log "$work/ddp.log"; fail "ddp.sbatch failed"; }
"$python" - "$work/ddp.json" $((SECONDS - started)) <<'PY' || { show_log "$work/ddp.log"; fail "the DDP result is not 2 ranks on 2 nodes"; }
import json, sys
doc = json.load(open(sys.argv[1]))
suite = doc["suites"][0]
assert suite["name"] == "data_parallel", suite["name"]
case = suite["cases"][0]
arms = {a["arm"]: a for a in case["arms"]}
for name in ("ddp", "ddp_no_overlap"):
    a = arms[name]
    assert a["status"] == "ok", (name, a.get("reason"))
    info = a["info"]
    assert info["world_size"] == 2 and info["nodes"] == 2, info
    assert info["ranks_per_node"] == [1, 1], info
    assert info["hosts"] == ["node1", "node2"], info
    assert info["launcher"] == "slurm" and info["backend"] == "gloo", info
    assert "rank1_step_ms" in a["summary"]["metrics"], sorted(a["summary"])
ratios = [c for c in case["comparisons"] if c["treatment"] == "ddp" and c["metric"] == "throughput_samples_per_s"]
assert ratios and ratios[0]["ratio"] > 0 and ratios[0]["ci95_low"] <= ratios[0]["ci95_high"], case["comparisons"]
assert any("over 2 rank(s) on 2 node(s)" in n for n in suite["notes"]), suite["notes"]
print(f"PASS: ddp.sbatch ({sys.argv[2]} s in): world size 2 on nodes {info['hosts']}, ddp vs single x{ratios[0]['ratio']:.3f}, "
      f"transport {info['transport']}")
PY

# 2. A fleet campaign: 2 array tasks, then the comparison and the ingest.
TIPBENCH_CAMPAIGN=$work/campaign TIPBENCH_HISTORY_STORE=$work/history.db \
  "$src/ci/slurm/campaign.sh" --tasks 2 --wait -- --suite zero_grad --quick --blocks 3 >"$work/campaign.out" 2>&1 ||
  { cat "$work/campaign.out"; show_log "$work/campaign/task-0.log"; show_log "$work/campaign/compare.log"; fail "campaign failed"; }
"$python" - "$work/campaign" $((SECONDS - started)) <<'PY' || { show_log "$work/campaign/compare.log"; fail "the campaign's results"; }
import glob, json, os, sys
folder = sys.argv[1]
results = sorted(f for f in glob.glob(os.path.join(folder, "*.json")) if not f.endswith("compare.json"))
assert len(results) == 2, results
hosts = sorted(json.load(open(f))["context"]["hostname"] for f in results)
assert hosts == ["node1", "node2"], hosts
compare = open(os.path.join(folder, "compare.md")).read()
assert "zero_grad" in compare, compare[:500]
json.load(open(os.path.join(folder, "compare.json")))
print(f"PASS: campaign ({sys.argv[2]} s in): one result per host {hosts}, compared ({len(compare)} bytes of markdown)")
PY
runs=$("$tipbench" history --store "$work/history.db" runs 2>&1) || fail "history runs: $runs"
[[ $(grep -c ' sha256 ' <<<"$runs") -eq 2 ]] || fail "the store does not hold the two runs: $runs"
echo "PASS: campaign: both results ingested into the history store"

# 3. A loopback MASTER_ADDR across nodes: each task refuses at once, one line, exit 2.
srun --nodes 2 --ntasks-per-node 1 --output "$work/loopback-%t.out" --error "$work/loopback-%t.err" \
  env MASTER_ADDR=localhost MASTER_PORT=29999 "$tipbench" run --suite data_parallel --quick
code=$?
((code == 2)) || fail "srun with MASTER_ADDR=localhost exited $code, not 2: $(cat "$work"/loopback-*.err)"
for t in 0 1; do
  err=$(cat "$work/loopback-$t.err")
  [[ $(wc -l <<<"$err") -eq 1 && $err == *"is a loopback address on node $t, but the job spans 2 nodes"* ]] ||
    fail "task $t did not refuse in one line: $err"
done
echo "PASS: srun -N 2 with MASTER_ADDR=localhost: both tasks refused, exit 2"
echo "PASS: the Slurm cluster test took $((SECONDS - started)) s"
