#!/usr/bin/env bash
# ctest's rehearsal of the first call on a GPU kind (tests/bundle/CMakeLists.txt, docs/gpu.md):
#   first_call_test.sh SOURCE_DIR BUILD_DIR PYTHON
# Packs the bundle from BUILD_DIR (no rebuild) and runs `run.sh first-call` as on the GPU machine
# (`env -i`, only PATH): without a GPU every path step says it needs one; with TIPBENCH_DEVICE=cpu
# every step runs end to end on the CPU (the CUDA-only ones skipped with the reason, the checks
# that need CUDA saying so), passes, and the fixtures come back in one tarball that the CPU tests
# can replay (scripts/import_fixtures.py).
set -euo pipefail
src=$1 build=$2 python=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tipbench-first-call.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { printf '\n=== %s\n' "$*"; }

"$src/scripts/bundle.sh" --no-build --build-dir "$build" --out "$tmp/b" >/dev/null
scrubbed=(env -i "PATH=$(dirname "$python"):/usr/bin:/bin" "TMPDIR=$tmp")
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)

if ((gpus == 0)); then
  step "no GPU: every path step says it needs one"
  "${scrubbed[@]}" "$tmp/b/run.sh" first-call "$tmp/out-none" || fail "first-call without a GPU failed"
  summary=$tmp/out-none/first-call-summary.txt
  for path in kept-memory explain graph-explain calibration cupti budget amp preallocate worker; do
    grep -Eq "^SKIP +path-$path +needs a GPU: " "$summary" || fail "path-$path is not skipped with the reason"
  done
fi

step "rehearsed on the CPU: every step runs, none fails"
rc=0
"${scrubbed[@]}" TIPBENCH_DEVICE=cpu "$tmp/b/run.sh" first-call "$tmp/out" || rc=$?
summary=$tmp/out/first-call-summary.txt
cat "$summary"
((rc == 0)) || fail "first-call rehearsal exit $rc"
grep -E '^FAIL' "$summary" && fail "a step failed"
for path in kept-memory explain calibration budget amp preallocate worker; do
  grep -Eq "^PASS +path-$path " "$summary" || fail "path-$path did not pass"
done
for path in graph-explain cupti; do
  grep -Eq "^SKIP +path-$path +.+" "$summary" || fail "path-$path is not skipped with the reason"
done
files=$(find "$tmp/out" -type f | wc -l)
((files <= 8)) || fail "first-call left $files files in OUTDIR"

step "the fixtures: profiled events and results, replayable by the CPU tests"
tar -tzf "$tmp/out/first-call-fixtures.tar.gz" >"$tmp/listing"
grep -q '^fixtures/profiled\.channels_last\..*\.json$' "$tmp/listing" || fail "no profiled events of the explain run"
grep -q '^fixtures/results/explain\.json$' "$tmp/listing" || fail "the explain run's result is not with its fixtures"
"$python" "$src/scripts/import_fixtures.py" --check "$tmp/out/first-call-fixtures.tar.gz" \
  || fail "the fixtures do not reduce to the breakdowns their runs recorded"
echo "PASS: the first call rehearses on the CPU"
