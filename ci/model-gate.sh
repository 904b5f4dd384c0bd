#!/usr/bin/env bash
# The PR gate for a team's own model (docs/own-model.md). Run it from the root of the repository
# that holds the model, with tipbench checked out and built elsewhere:
#   /path/to/tipbench/ci/model-gate.sh --factory MODULE:FACTORY --input C,H,W --classes K \
#       [--name NAME] [--format script|pt2] [--base-ref REF] [--out DIR] [--python PY] [--tipbench BIN] \
#       [--inconclusive-ok] \
#       [-- more `tipbench gate` flags, e.g. --suite zero_grad --suite amp --full]
# Exports the model at the merge-base of HEAD and REF (default origin/main; a git worktree under
# .cache/tipbench-model-base) and at HEAD with scripts/export_model.py (both as NAME, default
# "model", so their cases pair), then runs `tipbench gate --base-model-file --head-model-file`:
# one binary trains both versions here, interleaved block by block.
# --format pt2 exports torch.export archives instead of TorchScript (docs/own-model.md section 4).
# Writes DIR (default results/model-gate) /base.pt, head.pt (.pt2 with --format pt2), gate.md (for
# a PR comment), gate.json.
# Exit: the gate's (0 pass, 1 confirmed regression, 2 usage/input — a model that does not export is
# one, 3 inconclusive, 4 a run failed); with --inconclusive-ok, 3 becomes 0.
set -euo pipefail
tipbench_root=$(cd "$(dirname "$0")/.." && pwd)
factory='' input='' classes='' name=model format=script base_ref=origin/main out=results/model-gate
python=$tipbench_root/.venv/bin/python
bin=$tipbench_root/build/tipbench
inconclusive_ok=0
gate_args=()
usage() { echo "ci/model-gate.sh: $1 (see the header of ci/model-gate.sh)" >&2; exit 2; }
while (($#)); do
  case $1 in
    --factory) factory=$2; shift 2 ;;
    --input) input=$2; shift 2 ;;
    --classes) classes=$2; shift 2 ;;
    --name) name=$2; shift 2 ;;
    --format) format=$2; shift 2 ;;
    --base-ref) base_ref=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --python) python=$2; shift 2 ;;
    --tipbench) bin=$2; shift 2 ;;
    --inconclusive-ok) inconclusive_ok=1; shift ;;
    --) shift; gate_args=("$@"); break ;;
    *) usage "unknown argument '$1'" ;;
  esac
done
[[ -n $factory && -n $input && -n $classes ]] || usage "--factory, --input and --classes are required"
[[ $format == script || $format == pt2 ]] || usage "--format $format: want script or pt2"
ext=$([[ $format == pt2 ]] && echo pt2 || echo pt)
[[ -x $bin ]] || usage "no tipbench binary at $bin (build tipbench: scripts/bootstrap.sh, or pass --tipbench)"
[[ -x $python ]] || usage "no Python at $python (pass --python, one with the pinned torch)"
git rev-parse --git-dir >/dev/null 2>&1 || usage "run it from the model's git repository"
log() { printf '[model-gate.sh] %s\n' "$*" >&2; }

repo=$PWD
mkdir -p "$out"
out=$(cd "$out" && pwd)
base_sha=$(git merge-base HEAD "$base_ref") || usage "cannot find the merge-base of HEAD and $base_ref"
worktree=$repo/.cache/tipbench-model-base
if [[ -d $worktree ]]; then git -C "$worktree" checkout -q --detach "$base_sha"; else
  git worktree add -q --detach "$worktree" "$base_sha"; fi

export_at() {  # DIR FILE: the model as the code in DIR defines it
  (cd "$1" && "$python" "$tipbench_root/scripts/export_model.py" "$factory" --input "$input" --classes "$classes" \
    --name "$name" --format "$format" -o "$2") >&2
}
log "exporting the base ($base_sha) and the head"
export_at "$worktree" "$out/base.$ext" || { log "the base model does not export"; exit 2; }
export_at "$repo" "$out/head.$ext" || { log "the head model does not export"; exit 2; }

set +e
"$bin" gate --base-model-file "$out/base.$ext" --head-model-file "$out/head.$ext" \
  --config "$tipbench_root/ci/gate-thresholds.json" --out-dir "$out/session" \
  --markdown "$out/gate.md" --json "$out/gate.json" "${gate_args[@]}"
code=$?
set -e
if ((code == 3 && inconclusive_ok)); then
  log "INCONCLUSIVE treated as a pass (--inconclusive-ok)"
  exit 0
fi
exit "$code"
