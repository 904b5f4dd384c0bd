#!/usr/bin/env bash
# ctest's check that the device bundle is self-contained (tests/bundle/CMakeLists.txt):
#   bundle_test.sh SOURCE_DIR BUILD_DIR PYTHON
# Packs the bundle from BUILD_DIR (no rebuild), moves it to a fresh folder and runs it with
# `env -i` and only PATH (PYTHON's folder first: its python3 holds torch), as on a GPU machine
# that has PyTorch but none of our build dependencies: libs (also through TIPBENCH_TORCH_LIB, and
# exit 2 without LibTorch), check (CUDA parts skipped with the reason), quick, micro.
set -euo pipefail
src=$1 build=$2 python=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tipbench-bundle-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { printf '\n=== %s\n' "$*"; }

step "pack from $build, then move"
"$src/scripts/bundle.sh" --no-build --build-dir "$build" --out "$tmp/packed"
mv "$tmp/packed" "$tmp/moved"
b=$tmp/moved
path="$(dirname "$python"):/usr/bin:/bin"
scrubbed=(env -i "PATH=$path")
torch_lib=$("$python" -c 'import torch,os;print(os.path.dirname(torch.__file__))')/lib
# shellcheck source=/dev/null
sha=$(source "$b/share/build-info.sh" && echo "$TIPBENCH_GIT_SHA")

step "libs: through python3, and through TIPBENCH_TORCH_LIB without Python"
"${scrubbed[@]}" "$b/run.sh" libs "$tmp/out-libs"
env -i PATH=/usr/bin:/bin TIPBENCH_PYTHON=/nonexistent TIPBENCH_TORCH_LIB="$torch_lib" "$b/run.sh" libs "$tmp/out-libs2"

step "libs: no LibTorch is exit 2 with the reason"
rc=0
env -i PATH=/usr/bin:/bin TIPBENCH_PYTHON=/nonexistent "$b/run.sh" libs "$tmp/out-nolib" 2>"$tmp/nolib.err" || rc=$?
cat "$tmp/nolib.err"
((rc == 2)) || fail "run.sh without torch: exit $rc, expected 2"
grep -q "TIPBENCH_TORCH_LIB" "$tmp/nolib.err" || fail "the message does not say how to point at LibTorch"
# Missing CUDA libraries: only testable where the system's loader cache has none of its own.
# grep reads all of ldconfig's output: with -q it exits at the first match, and under pipefail
# ldconfig's SIGPIPE then fails the pipeline (the cache seen as empty, now and then).
if ! /sbin/ldconfig -p 2>/dev/null | grep 'libcudart\.so' >/dev/null; then
  rc=0
  env -i PATH=/usr/bin:/bin TIPBENCH_TORCH_LIB="$torch_lib" TIPBENCH_CUDA_LIB="$tmp" "$b/run.sh" libs "$tmp/out-nocuda" \
    2>"$tmp/nocuda.err" || rc=$?
  cat "$tmp/nocuda.err"
  ((rc == 2)) || fail "missing libcudart: exit $rc, expected 2"
  grep -q 'libcudart' "$tmp/nocuda.err" || fail "the message does not name libcudart"
else
  echo "(missing-CUDA case not checked: this machine's loader cache has its own libcudart)"
fi

step "check"
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
"${scrubbed[@]}" "$b/run.sh" check "$tmp/out-check" || fail "run.sh check failed"
summary=$tmp/out-check/check-summary.txt
[[ -f $tmp/out-check/check-logs.tar.gz ]] || fail "no check-logs.tar.gz"
if ((gpus == 0)); then
  grep -Eq '^SKIP +cuda-test_' "$summary" || fail "no CUDA test reported skipped"
  grep -E '^(PASS|FAIL) +(cuda-|smoke-|slowdown)' "$summary" && fail "a CUDA step was not skipped without a GPU"
  grep -Eq '^SKIP +smoke-zero_grad +needs a GPU: ' "$summary" || fail "the smoke runs do not say why they were skipped"
  grep -Eq '^SKIP +fresh-arms +needs a GPU: ' "$summary" || fail "the fresh-process arms do not say why they were skipped"
  grep -Eq '^PASS +env ' "$summary" || fail "tipbench env did not pass"
fi

# The quick stage on the suites that use what the bundle brings beyond tipbench itself: libjpeg
# and libcrypto (dataloader: dataset made, JPEGs decoded by worker threads), c10d's Gloo
# (data_parallel), and the baseline case of every run (zero_grad). The other suites load no other
# library or file; all eight cost minutes more on two cores (README: about 80 s idle).
step "quick"
"${scrubbed[@]}" "$b/run.sh" quick "$tmp/out-quick" zero_grad dataloader data_parallel || fail "run.sh quick failed"
result=$tmp/out-quick/quick.json
[[ -f $result ]] || fail "no quick.json"
"$build/tipbench" compare "$result" "$result" >/dev/null || fail "tipbench cannot read quick.json"
"$python" - "$result" "$sha" "$gpus" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
want_device = "cuda" if int(sys.argv[3]) else "cpu"
assert doc["context"]["device"].startswith(want_device), doc["context"]["device"]
assert doc["context"]["git"]["sha"] == sys.argv[2], (doc["context"]["git"], sys.argv[2])
suites = [s["name"] for s in doc["suites"]]
bad = [a["name"] for s in doc["suites"] for c in s["cases"] for a in c["arms"] if a["status"] not in ("ok", "skipped")]
assert not bad, bad
print(f"quick.json: {len(suites)} suites ({', '.join(suites)}) on {doc['context']['device']}, git {sys.argv[2][:12]}")
EOF
files=$(find "$tmp/out-quick" -type f | wc -l)
((files <= 8)) || fail "quick left $files files in OUTDIR"

step "full: a suite that took longer before than the stage has left is skipped before it starts"
printf '%s\n' 'PASS  full-zero_grad                 900 s: 2 ok' 'PASS  full-zero_grad                 65 s: 2 ok' \
  'FAIL  full-conv_bias                 stopped after 700 s (time limit); finished cases in x.partial' >"$tmp/earlier.txt"
"${scrubbed[@]}" TIPBENCH_STAGE_LIMIT_S=600 TIPBENCH_EXPECTED_TIMES="$tmp/none.txt:$tmp/earlier.txt" \
  "$b/run.sh" full "$tmp/out-full" zero_grad conv_bias || fail "run.sh full with expected times failed"
grep -qE '^SKIP  full-zero_grad +took 900 s before \(TIPBENCH_EXPECTED_TIMES\), [0-9]+ s of the stage left$' \
  "$tmp/out-full/full-summary.txt" || fail "zero_grad not skipped by its earlier time: $(cat "$tmp/out-full/full-summary.txt")"
grep -qE '^SKIP  full-conv_bias +took 701 s before' "$tmp/out-full/full-summary.txt" \
  || fail "conv_bias not skipped by its earlier stop: $(cat "$tmp/out-full/full-summary.txt")"
[[ ! -e $tmp/out-full/full-zero_grad.json && ! -e $tmp/out-full/full-conv_bias.json ]] || fail "a skipped suite ran"

step "all: every suite in one result under a time budget; the cases it has no time for say why"
"${scrubbed[@]}" TIPBENCH_TIME_BUDGET=4s TMPDIR="$tmp" "$b/run.sh" all "$tmp/out-all" || fail "run.sh all failed"
[[ -f $tmp/out-all/all.json ]] || fail "no all.json: $(ls "$tmp/out-all")"
"$python" - "$tmp/out-all/all.json" <<'PY' || fail "all.json is not one cut run of every suite"
import json, sys
doc = json.load(open(sys.argv[1]))
cases = [c for s in doc["suites"] for c in s["cases"]]
cut = [c for c in cases if c.get("budget_cut")]
assert doc["context"]["settings"]["time_budget_s"] == 4, doc["context"]["settings"]
assert len(doc["suites"]) >= 20 and cut, (len(doc["suites"]), len(cut))
print(f"all.json: {len(doc['suites'])} suites, {len(cases)} cases, {len(cut)} cut by the 4 s budget")
PY

step "tipbench stage: baseline save, then gate --baseline auto finds it (as on a GPU machine)"
"${scrubbed[@]}" "$b/run.sh" tipbench "$tmp/out-tb" baseline --dir "$tmp/store" save "$result" --name q \
  || fail "run.sh tipbench baseline save failed"
"${scrubbed[@]}" "$b/run.sh" tipbench "$tmp/out-tb" gate --baseline auto --baselines-dir "$tmp/store" \
  --current "$result" --out-dir "$tmp/out-tb/gate" --no-rerun >"$tmp/tb-gate.log" 2>&1 || true
grep -q "baseline for .*: $tmp/store/.*/q.json" "$tmp/tb-gate.log" || fail "gate --baseline auto did not find the baseline: $(tail -n 3 "$tmp/tb-gate.log")"
grep -qE '^(PASS|FAIL)  tipbench-gate ' "$tmp/out-tb/tipbench-summary.txt" || fail "no tipbench-gate line in the summary"

step "micro: one row (libbenchmark from lib/), JSON out"
"${scrubbed[@]}" "$b/run.sh" micro "$tmp/out-micro" --benchmark_filter='BM_ZeroGrad/set_to_none:1/cuda:0' \
  --benchmark_min_time=0.05 || fail "run.sh micro failed"
grep -q '"BM_ZeroGrad/set_to_none:1/cuda:0' "$tmp/out-micro/micro.json" || fail "micro.json lacks the row"
echo "PASS: the bundle is self-contained"
