#!/usr/bin/env bash
# The tipbench regression gate for any CI system (docs/gate.md). From a checkout of the head:
#   ci/gate.sh [--base-ref REF] [--stored] [--out DIR] [--inconclusive-ok] [-- more `tipbench gate` flags]
# Interleaved (default): builds the head here (scripts/bootstrap.sh) and the base (merge-base of
# HEAD and REF, default origin/main) in a git worktree, then runs `tipbench gate --base-binary
# --head-binary` on this machine: same-machine interleaved blocks, no stored-baseline noise.
# --stored: runs the gate suite once with the head and gates it against the stored baseline for
# this machine's fingerprint (results/baselines/<slug>/), exit 3 when there is none.
# Writes DIR/gate.md (for a PR comment), DIR/gate.json and DIR/report/report.html.
# Exit: the gate's (0 pass, 1 confirmed regression, 2 usage/input, 3 inconclusive); with
# --inconclusive-ok, 3 becomes 0 (a warning, not a failure).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
base_ref=origin/main
mode=interleaved
out=results/gate/ci
inconclusive_ok=0
gate_args=()
while (($#)); do
  case $1 in
    --base-ref) base_ref=$2; shift 2 ;;
    --stored) mode=stored; shift ;;
    --out) out=$2; shift 2 ;;
    --inconclusive-ok) inconclusive_ok=1; shift ;;
    --) shift; gate_args=("$@"); break ;;
    *) echo "ci/gate.sh: unknown argument '$1' (see the header of ci/gate.sh)" >&2; exit 2 ;;
  esac
done
log() { printf '[gate.sh] %s\n' "$*" >&2; }

scripts/bootstrap.sh --target tipbench  # the binary alone: the gate runs nothing else
head_bin=$root/build/tipbench
mkdir -p "$out"
config=(--config ci/gate-thresholds.json)

set +e
if [[ $mode == interleaved ]]; then
  base_sha=$(git merge-base HEAD "$base_ref") || { log "cannot find the merge-base of HEAD and $base_ref"; exit 2; }
  worktree=$root/.cache/gate-base
  if [[ -d $worktree ]]; then git -C "$worktree" checkout -q --detach "$base_sha"; else
    git worktree add -q --detach "$worktree" "$base_sha"; fi
  log "building the base $base_sha in $worktree"
  # The base reuses the head's .venv (the same pinned LibTorch) and builds only the binary.
  PATH=/usr/local/cuda/bin:$PATH cmake -S "$worktree" -B "$worktree/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DTIPBENCH_PYTHON="$root/.venv/bin/python" \
    -DTIPBENCH_BUILD_TESTS=OFF -DTIPBENCH_BUILD_MICRO=OFF >&2 &&
    cmake --build "$worktree/build" --target tipbench >&2 || { log "the base does not build"; exit 2; }
  "$head_bin" gate --base-binary "$worktree/build/tipbench" --head-binary "$head_bin" "${config[@]}" \
    --out-dir "$out" "${gate_args[@]}"
  code=$?
  if [[ -f $out/head.json ]]; then
    "$head_bin" report "$out/head.json" --baseline "$out/base.json" --paired --out "$out/report" >&2
  fi
else
  # 8 blocks, not --quick's 6: the gate's sample size stays what its calibration used.
  "$head_bin" run --quick --blocks 8 --out "$out/current.json" >&2
  "$head_bin" gate --baseline auto --current "$out/current.json" "${config[@]}" --out-dir "$out" \
    --markdown "$out/gate.md" --json "$out/gate.json" "${gate_args[@]}"
  code=$?
  "$head_bin" report "$out/current.json" --out "$out/report" >&2
fi
set -e

log "gate exit code $code; verdict in $out/gate.md, report in $out/report/report.html"
if ((code == 3 && inconclusive_ok)); then
  log "INCONCLUSIVE treated as a warning (--inconclusive-ok)"
  exit 0
fi
exit "$code"
