#!/usr/bin/env bash
# Measures `--explain` against a known cause (docs/explain.md): N interleaved gates of the quick
# zero_grad suite on small_cnn whose head spends PCT% of a step inside OP (--head-inject-slowdown-op;
# the base carries the same RecordFunction callback without the delay), each explained, and every
# K-th gate run again without --explain for the cost. Prints one line per gate and a summary:
# how often OP was named first, the explained shares, the verdicts, the wall times.
#   OMP_NUM_THREADS=1 scripts/bench_explain.sh -n 20 -p 5 -b build/tipbench
set -euo pipefail
n=20 pct=5 op=aten::addmm bin=build/tipbench blocks=8 every=4 out=""
while getopts "n:p:o:b:B:k:d:" flag; do
  case "$flag" in
    n) n=$OPTARG ;; p) pct=$OPTARG ;; o) op=$OPTARG ;; b) bin=$OPTARG ;; B) blocks=$OPTARG ;;
    k) every=$OPTARG ;; d) out=$OPTARG ;;
    *) echo "usage: $0 [-n gates] [-p pct] [-o op] [-b binary] [-B blocks] [-k every] [-d dir]" >&2; exit 2 ;;
  esac
done
out=${out:-$(mktemp -d -t tipbench-explain-XXXXXX)}
mkdir -p "$out"
gate() {  # dir, extra flags...
  local dir=$1; shift
  local start=$(date +%s.%N)
  local code=0
  "$bin" gate --base-binary "$bin" --head-binary "$bin" --suite zero_grad --model small_cnn \
    --head-inject-slowdown "$pct" --head-inject-slowdown-op "$op" --blocks "$blocks" --no-rerun \
    --out-dir "$dir" "$@" >"$dir.log" 2>&1 || code=$?
  echo "$code $(echo "$(date +%s.%N) - $start" | bc)"
}
for i in $(seq 1 "$n"); do
  read -r code wall < <(gate "$out/explained-$i" --explain)
  echo "explained $i exit $code wall_s $wall" | tee -a "$out/walls.txt"
  if (( i % every == 0 )); then
    read -r code wall < <(gate "$out/plain-$i")
    echo "plain $i exit $code wall_s $wall" | tee -a "$out/walls.txt"
  fi
done
python3 - "$out" "$op" "$n" <<'PY'
import json, statistics, sys
out, op, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
checks = first = resolved = resolved_first = 0
shares = []
for i in range(1, n + 1):
    g = json.load(open(f"{out}/explained-{i}/gate.json"))
    for c in g["checks"]:
        why = c.get("why", {})
        causes = why.get("causes", [])
        top = causes[0]["op"] if causes else "-"
        cmp = c.get("comparison", {})
        checks += 1
        first += top == op
        is_resolved = c["status"] != "INCONCLUSIVE"
        resolved += is_resolved
        resolved_first += is_resolved and top == op
        if "explained_share" in why: shares.append(why["explained_share"])
        print(f"gate {i} {c['arm']}: {c['status']} x{cmp.get('ratio', 0):.3f} top {top} "
              f"share {why.get('explained_share', 0):.2f} unexplained {why.get('unexplained')}")
walls = {"explained": [], "plain": []}
for line in open(f"{out}/walls.txt"):
    kind, _, _, _, _, wall = line.split()
    walls[kind].append(float(wall))
print(f"{op} named first in {first} of {checks} checks ({n} gates); in {resolved_first} of {resolved} checks the gate resolved")
if shares: print(f"explained share: median {statistics.median(shares):.2f}, range {min(shares):.2f}-{max(shares):.2f}")
for kind, w in walls.items():
    if w: print(f"{kind} gates: median wall {statistics.median(w):.1f} s over {len(w)}")
PY
