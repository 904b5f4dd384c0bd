#!/usr/bin/env bash
# How often an A/A stored gate fails when its current run shares the CPUs with busy processes,
# with the conditions check (the committed ci/gate-thresholds.json) and without it (the same
# config with a bound of 100 points: the gate as it was before conditions were recorded). Each
# repeat: a quiet baseline run, then one busy process per CPU during the current run and both
# gates (each may re-run the current side to confirm). Prints the exit codes and their counts.
#   scripts/bench_conditions_gate.sh [REPEATS] [TIPBENCH_BINARY]     # about 25 s per repeat, 2 cores
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
repeats=${1:-10} bin=${2:-$root/build/tipbench}
work=$(mktemp -d)
# shellcheck source=scripts/busy_cpus.sh
source "$root/scripts/busy_cpus.sh"
trap 'stop_busy_cpus; rm -rf "$work"' EXIT
export OMP_NUM_THREADS=1
"$root/.venv/bin/python" - "$root/ci/gate-thresholds.json" "$work/unbounded.json" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
config["conditions"] = {"foreign_cpu_pct": 100, "steal_pct": 100}
json.dump(config, open(sys.argv[2], "w"))
PY
run=("$bin" run --suite zero_grad --model small_cnn --quick --blocks 3)
with=() without=()
for i in $(seq "$repeats"); do
  "${run[@]}" --seed "$i" --out "$work/base.json" > /dev/null 2>&1
  start_busy_cpus
  "${run[@]}" --seed "$((i + 100))" --out "$work/cur.json" > /dev/null 2>&1
  set +e
  "$bin" gate --baseline "$work/base.json" --current "$work/cur.json" --config "$root/ci/gate-thresholds.json" \
    --out-dir "$work/g1" > /dev/null 2>&1
  with+=($?)
  "$bin" gate --baseline "$work/base.json" --current "$work/cur.json" --config "$work/unbounded.json" \
    --out-dir "$work/g2" > /dev/null 2>&1
  without+=($?)
  set -e
  stop_busy_cpus
  foreign=$("$root/.venv/bin/python" -c "import json,sys; print(json.load(open(sys.argv[1]))['context']['conditions']['foreign_cpu'], json.load(open(sys.argv[2]))['context']['conditions']['foreign_cpu'])" "$work/base.json" "$work/cur.json")
  echo "repeat $i: foreign_cpu base/current $foreign; exit with conditions ${with[-1]}, without ${without[-1]}"
done
count() { local c=$1; shift; local n=0; for x in "$@"; do [[ $x == "$c" ]] && n=$((n + 1)); done; echo $n; }
for name in with without; do
  declare -n codes=$name
  echo "$name the conditions check: FAIL (1) $(count 1 "${codes[@]}"), INCONCLUSIVE (3) $(count 3 "${codes[@]}"), PASS (0) $(count 0 "${codes[@]}") of $repeats"
done
