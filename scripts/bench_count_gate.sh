#!/usr/bin/env bash
# The count gate's benchmark (docs/gate.md, "Counted work"): REPEATS A/A `gate --counts` sessions
# and REPEATS whose head makes EXTRA more aten::add calls a step (`--head-inject-extra-ops`), taken
# in turn, all with one busy process per CPU beside them. An A/A must PASS (exit 0) and a head with
# more work must FAIL (exit 1) every time: counts do not depend on the machine's load. Prints each
# session's exit code and wall time, then the tallies.
#   scripts/bench_count_gate.sh [REPEATS] [EXTRA] [TIPBENCH_BINARY] [-- GATE_ARGS...]
# Defaults: 20 repeats, 1 extra op, build/tipbench, `--suite zero_grad --suite inplace`. Give
# `-- --run-arg=--instructions=callgrind` to gate Callgrind's instruction counts too (a CPU run,
# minutes per session). Exit: 0 when every A/A passed and every head with more work failed, 1 else.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
repeats=${1:-20} extra=${2:-1} bin=${3:-$root/build/tipbench}
shift $(($# < 3 ? $# : 3))
[[ ${1:-} == -- ]] && shift
gate_args=("$@")
((${#gate_args[@]})) || gate_args=(--suite zero_grad --suite inplace)
work=$(mktemp -d)
# shellcheck source=scripts/busy_cpus.sh
source "$root/scripts/busy_cpus.sh"
trap 'stop_busy_cpus; rm -rf "$work"' EXIT
gate=("$bin" gate --base-binary "$bin" --head-binary "$bin" --counts --config "$root/ci/gate-thresholds.json"
  "${gate_args[@]}")
aa=() knob=()
start_busy_cpus
for i in $(seq "$repeats"); do
  for side in aa knob; do
    extra_args=()
    [[ $side == knob ]] && extra_args=(--head-inject-extra-ops "$extra")
    started=$(date +%s.%N)
    set +e
    "${gate[@]}" "${extra_args[@]}" --seed "$i" --out-dir "$work/$side-$i" --json "$work/$side-$i.json" \
      > "$work/$side-$i.log" 2>&1
    code=$?
    set -e
    wall=$(echo "$(date +%s.%N) - $started" | bc)
    checks=$("$root/.venv/bin/python" -c "
import json, sys
try:
    v = json.load(open(sys.argv[1]))
    fails = [c for c in v['count_checks'] if c['status'] == 'FAIL']
    print(len(v['count_checks']) + v['count_checks_equal'], 'checks,', len(fails), 'FAIL', sorted({c['metric'] for c in fails}))
except Exception as e:
    print('no verdict:', e)
" "$work/$side-$i.json")
    printf '%-4s %2d: exit %d, %5.1f s, %s\n' "$side" "$i" "$code" "$wall" "$checks"
    if [[ $side == aa ]]; then aa+=("$code"); else knob+=("$code"); fi
  done
done
stop_busy_cpus
count() { local c=$1; shift; local n=0; for x in "$@"; do [[ $x == "$c" ]] && n=$((n + 1)); done; echo "$n"; }
aa_pass=$(count 0 "${aa[@]}") knob_fail=$(count 1 "${knob[@]}")
echo "A/A under load: PASS $aa_pass of $repeats (FAIL $(count 1 "${aa[@]}"))"
echo "head with $extra more op(s) a step: FAIL $knob_fail of $repeats (PASS $(count 0 "${knob[@]}"))"
[[ $aa_pass == "$repeats" && $knob_fail == "$repeats" ]]
