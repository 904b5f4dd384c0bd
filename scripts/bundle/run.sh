#!/usr/bin/env bash
# The device bundle's one entry point (made by scripts/bundle.sh; docs/gpu.md). Runs tipbench on
# a machine with an NVIDIA driver and PyTorch but none of tipbench's build dependencies.
#   run.sh STAGE OUTDIR [ARGS...]
# Stages:
#   check             tipbench env, nvidia-smi, every suite's first arm in a fresh process, every
#                     *_CUDA test, then a one-block smoke run of every suite on the GPU and one
#                     of the --inject-slowdown knob
#   first-call        the first call on a GPU kind (docs/gpu.md): env, every *_CUDA test, then
#                     one short run of each CUDA path no GPU has run yet, each checked (PASS/FAIL
#                     with the reason), then one-block smokes of the suites while time is left;
#                     the fixtures the runs record (profiled events, allocator readings) and
#                     their results go back in first-call-fixtures.tar.gz
#   quick [SUITE...]  tipbench run --quick: every suite, or those named
#   full SUITE...     tipbench run with the full budget, one result per suite
#   all [PARTIAL]     tipbench run of every suite, one result (all.json), under --time-budget
#                     TIPBENCH_TIME_BUDGET (default 15m); stopped at the stage's limit it leaves
#                     all.json.partial (finished cases and the blocks of the case in progress),
#                     which `all OUT all.json.partial` resumes in the next call with what is left
#   micro [ARG...]    tipbench_micro with JSON out (default on a GPU: its CUDA rows only); ARGs go
#                     to Google Benchmark, e.g. --benchmark_filter=ZeroGrad
#   tests [FILTER]    every bundled test binary, all its tests or those matching the gtest FILTER
#   libs              only find LibTorch and the CUDA libraries (every stage starts with this)
#   tipbench ARG...   any tipbench command with those libraries (e.g. baseline save, gate
#                     --baseline auto); its output on stdout, PASS when it exits 0
# quick/full/micro run on the GPU when nvidia-smi lists one, else on the CPU (TIPBENCH_DEVICE
# overrides). One line per step on stdout: PASS, SKIP (with the reason) or FAIL. OUTDIR gets
# STAGE-summary.txt, STAGE-logs.tar.gz and the stage's results (quick.json, full-SUITE.json,
# micro.json): few files, so several stages can share one OUTDIR of at most 8.
# Environment:
#   TIPBENCH_PYTHON          the Python that holds torch (default python3)
#   TIPBENCH_TORCH_LIB       LibTorch's lib folder, instead of asking Python
#   TIPBENCH_CUDA_LIB        folders holding libcudart & co, colon-separated, instead of the torch
#                            wheel's nvidia/*/lib (or else $CUDA_HOME/lib64, /usr/local/cuda/lib64)
#   TIPBENCH_DEVICE          cuda, cuda:N or cpu for quick/full/micro and check's smoke runs
#                            (cpu rehearses them where there is no GPU)
#   TIPBENCH_STAGE_LIMIT_S   the stage's time budget in seconds (default 540): a step still running
#                            then is stopped (tipbench keeps its finished cases in RESULT.partial)
#   TIPBENCH_TIME_BUDGET     all: the wall time the cases share (tipbench run --time-budget: 15m,
#                            900s; default 15m; resuming, give what is left of it)
#   TIPBENCH_EXPECTED_TIMES  full: earlier full-summary.txt files, colon-separated; a suite whose
#                            earlier time there (the longest PASS, or more than a time-limit stop)
#                            does not fit in what is left of the stage is skipped before it starts,
#                            and the next suite, which may fit, gets the time
# Exit: 0 every step passed or was skipped; 1 a step failed; 2 usage error, or LibTorch or a
# library not found; 130 interrupted.
set -uo pipefail
bundle=$(cd "$(dirname "$0")" && pwd -P)
started=$SECONDS

# The header above, without the comment marks.
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2; exit "${1:-2}"; }
say() { printf '[run.sh] %s\n' "$*" >&2; }
die() {
  local code=$1
  shift
  printf '[run.sh] error: %s\n' "$*" >&2
  [[ -n ${summary:-} ]] && printf 'error: %s\n' "$*" >>"$summary"
  exit "$code"
}

[[ ${1:-} == -h || ${1:-} == --help ]] && usage 0
(($# >= 2)) || usage
stage=$1 outdir=$2
shift 2
case $stage in
  check|libs|first-call) (($# == 0)) || die 2 "$stage takes no arguments" ;;
  quick|micro) ;;
  full) (($#)) || die 2 "full needs at least one SUITE (tipbench list names them)" ;;
  all) (($# <= 1)) || die 2 "all takes at most one PARTIAL file to resume" ;;
  tests) (($# <= 1)) || die 2 "tests takes at most one gtest FILTER" ;;
  tipbench) (($#)) || die 2 "tipbench needs a command, e.g. run.sh tipbench OUT gate --baseline auto --current R.json" ;;
  *) die 2 "unknown stage '$stage' (check, first-call, quick, full, all, micro, tests, libs, tipbench)" ;;
esac
mkdir -p "$outdir" || die 2 "cannot create $outdir"
outdir=$(cd "$outdir" && pwd -P)
limit_s=${TIPBENCH_STAGE_LIMIT_S:-540}
[[ $limit_s =~ ^[0-9]+$ ]] || die 2 "TIPBENCH_STAGE_LIMIT_S must be whole seconds"
deadline=$((started + limit_s))

work=$(mktemp -d "${TMPDIR:-/tmp}/tipbench-$stage.XXXXXX") || die 2 "cannot make a work folder"
logs=$work/logs
mkdir -p "$logs" "$work/test-data"
summary=$logs/$stage-summary.txt
pass=0 skip=0 fail=0

# The logs travel as one tarball, rewritten after every step so that a stage stopped from outside
# still leaves the steps it finished.
pack_logs() {
  cp "$summary" "$outdir/" 2>/dev/null
  tar -C "$work" -czf "$outdir/.$stage-logs.tar.gz" logs && mv "$outdir/.$stage-logs.tar.gz" "$outdir/$stage-logs.tar.gz"
}
finish() {
  pack_logs
  rm -rf "$work"
}
trap finish EXIT
trap 'say "interrupted"; exit 130' INT TERM

# result STATUS NAME DETAIL: one summary line.
result() {
  local status=$1 name=$2 detail=$3
  case $status in PASS) ((pass++)) ;; SKIP) ((skip++)) ;; *) ((fail++)) ;; esac
  printf '%-4s  %-30s %s\n' "$status" "$name" "$detail" | tee -a "$summary"
  pack_logs
}
note() { printf '      %s\n' "$*" | tee -a "$summary"; }

# run_step NAME CAP_S CMD...: CMD with its output in logs/NAME.log, stopped (SIGINT, then KILL)
# after CAP_S or when the stage's time is up. Sets rc (124: stopped) and secs. Returns 1 without
# running when no time is left (the step is then reported as skipped).
run_step() {
  local name=$1 cap=$2 left
  shift 2
  left=$((deadline - SECONDS))
  if ((left < 10)); then
    result SKIP "$name" "stage time limit (${limit_s} s) reached"
    return 1
  fi
  ((cap < left)) || cap=$left
  local t0=$SECONDS
  timeout --signal=INT --kill-after=30 "$cap" "$@" >"$logs/$name.log" 2>&1
  rc=$?
  secs=$((SECONDS - t0))
  ((rc == 124 || rc == 137)) && echo "run.sh: stopped after ${cap} s" >>"$logs/$name.log"
  return 0
}
# The last error-looking line of a log, for a FAIL line.
last_error() { grep -E 'error|Error|FAILED|what\(\)|Abort' "$1" | tail -n 1 | cut -c1-200; }

# --- libraries: LibTorch and CUDA from the target, the rest from lib/ ---------------------------
TIPBENCH_GIT_SHA='' TIPBENCH_GIT_DIRTY=0 bundle_torch_version='' bundle_build_type=''
# shellcheck source=/dev/null  # written by scripts/bundle.sh: the build's git state and torch version
source "$bundle/share/build-info.sh" || die 2 "$bundle/share/build-info.sh missing: not a bundle made by scripts/bundle.sh"
export TIPBENCH_GIT_SHA TIPBENCH_GIT_DIRTY

python=
if [[ -n ${TIPBENCH_TORCH_LIB:-} ]]; then
  torch_lib=$TIPBENCH_TORCH_LIB
  torch_how="TIPBENCH_TORCH_LIB"
  python=$(command -v "${TIPBENCH_PYTHON:-python3}" || true)
else
  py=${TIPBENCH_PYTHON:-python3}
  python=$(command -v "$py") || die 2 "no '$py' on PATH to ask where torch is: set TIPBENCH_PYTHON to the Python that holds torch, or TIPBENCH_TORCH_LIB to LibTorch's lib folder"
  torch_dir=$("$python" -c 'import torch,os;print(os.path.dirname(torch.__file__))' 2>"$logs/torch-import.log") ||
    die 2 "cannot import torch with $python ($(tail -n 1 "$logs/torch-import.log")): set TIPBENCH_PYTHON to the Python that holds torch, or TIPBENCH_TORCH_LIB to LibTorch's lib folder"
  torch_lib=$torch_dir/lib
  torch_how="$python"
fi
[[ -f $torch_lib/libtorch.so ]] || die 2 "no libtorch.so in $torch_lib (from $torch_how)"
torch_lib=$(cd "$torch_lib" && pwd -P)
torch_version=$(sed -n "s/^__version__ = '\(.*\)'.*/\1/p" "$torch_lib/../version.py" 2>/dev/null)
# LibTorch's C++ ABI is only stable within one release: 2.11.0 with 2.11.0.
if [[ ${torch_version%%+*} != "${bundle_torch_version%%+*}" ]]; then
  die 2 "the bundle was built against torch $bundle_torch_version; $torch_lib is torch ${torch_version:-of unknown version}"
fi

cuda_dirs=()
if [[ -n ${TIPBENCH_CUDA_LIB:-} ]]; then
  IFS=: read -ra cuda_dirs <<<"$TIPBENCH_CUDA_LIB"
  cuda_how="TIPBENCH_CUDA_LIB"
else
  for d in "$torch_lib"/../../nvidia/*/lib; do [[ -d $d ]] && cuda_dirs+=("$(cd "$d" && pwd -P)"); done
  cuda_how="the torch wheel's nvidia packages"
  if ((${#cuda_dirs[@]} == 0)); then
    for d in ${CUDA_HOME:+"$CUDA_HOME"} ${CUDA_PATH:+"$CUDA_PATH"} /usr/local/cuda; do
      if [[ -d $d/lib64 ]]; then cuda_dirs=("$(cd "$d/lib64" && pwd -P)"); cuda_how="the CUDA toolkit in $d"; break; fi
    done
  fi
fi
libpath=$torch_lib
for d in "${cuda_dirs[@]}"; do libpath+=:$d; done
export LD_LIBRARY_PATH=$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# Every bundled binary must resolve every library now: say which are missing, and where we looked.
missing=$(for f in "$bundle"/bin/* "$bundle"/tests/*; do ldd "$f" 2>&1 | grep -F 'not found' | sed 's/^[[:space:]]*//'; done | sort -u)
if [[ -n $missing ]]; then
  die 2 "libraries not found with LibTorch from $torch_how ($torch_lib) and CUDA libraries from $cuda_how (${cuda_dirs[*]:-none found}):"$'\n'"$missing"$'\n'"set TIPBENCH_TORCH_LIB or TIPBENCH_CUDA_LIB (docs/gpu.md)"
fi
# NAME => PATH for each library of bin/tipbench whose name starts with one of the arguments.
resolved() {
  local prefix
  for prefix in "$@"; do
    ldd "$bundle/bin/tipbench" | sed -n "s/^[[:space:]]*\(${prefix}[^ ]*\) => \([^ ]*\).*/\1 => \2/p"
  done | tr '\n' ' '
}
say "bundle: $bundle (git ${TIPBENCH_GIT_SHA:0:12}$([[ $TIPBENCH_GIT_DIRTY == 1 ]] && echo ' dirty'), $bundle_build_type, torch $bundle_torch_version)"
say "LibTorch: $torch_lib (torch $torch_version, from $torch_how)"
say "CUDA libraries: from $cuda_how: $(resolved libcudart libnvrtc)"
bundled_libs=("$bundle"/lib/*)
say "bundled (lib/): ${bundled_libs[*]##*/}"

# Where the tests find what the build tree held (tests/support/test_paths.h).
export TIPBENCH_BINARY=$bundle/bin/tipbench
export TIPBENCH_SOURCE_DIR=$bundle/share/source
export TIPBENCH_MAKE_REFERENCE=$bundle/share/make_reference.py
export TIPBENCH_CHARTJS=$bundle/share/chart.min.js
export TIPBENCH_TEST_DATA=$work/test-data
export TIPBENCH_WORKER_DIR=$bundle/share/source/python  # the Python worker (docs/python-worker.md)
if [[ -n $python ]]; then
  export TIPBENCH_PYTHON=$python
  torchrun=$(dirname "$python")/torchrun
  [[ -x $torchrun ]] || torchrun=$(command -v torchrun || true)
  [[ -n $torchrun ]] && export TIPBENCH_TORCHRUN=$torchrun
fi
tipbench=$bundle/bin/tipbench
check_py() { [[ -n $python ]] && "$python" "$bundle/share/bundle_check.py" "$@"; }

# GPUs the driver shows. (LibTorch's own count comes from `tipbench env`.)
gpu_count=0
if command -v nvidia-smi >/dev/null; then
  gpu_count=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
  ((gpu_count)) || no_gpu="nvidia-smi lists no GPU"
else
  no_gpu="no NVIDIA driver here (nvidia-smi not found)"
fi
device=${TIPBENCH_DEVICE:-}
if [[ -z $device ]]; then
  if ((gpu_count)); then device=cuda; else device=cpu; fi
fi
{
  echo "tipbench bundle stage '$stage' on ${HOSTNAME:-$(uname -n)}, $(date -u +%FT%TZ); git $TIPBENCH_GIT_SHA"
  echo "LibTorch $torch_lib (torch $torch_version); CUDA libraries from $cuda_how"
  echo "GPUs (nvidia-smi): $gpu_count${no_gpu:+ ($no_gpu)}; device for runs: $device"
} >"$summary"
[[ $stage == libs ]] && { result PASS libs "every library resolves"; exit 0; }

# --- steps ----------------------------------------------------------------------------------
# A tipbench run: PASS when it exits 0 and its result checks out (bundle_check.py); the result
# (and a .partial one, when stopped) stays where --out put it.
run_result() {
  local name=$1 cap=$2 out=$3 dev=$4
  shift 4
  run_step "$name" "$cap" "$tipbench" run --device "$dev" --out "$out" "$@" || return 0
  if ((rc == 124 || rc == 137)); then
    result FAIL "$name" "stopped after ${secs} s (time limit); finished cases in $(basename "$out").partial"
  elif ((rc != 0 && rc != 1)); then
    result FAIL "$name" "exit $rc in ${secs} s: $(last_error "$logs/$name.log")"
  elif ! "$tipbench" compare "$out" "$out" >"$logs/$name-compare.log" 2>&1; then
    result FAIL "$name" "tipbench cannot read its own result: $(tail -n 1 "$logs/$name-compare.log")"
  elif [[ -z $python ]]; then
    result "$( ((rc == 0)) && echo PASS || echo FAIL)" "$name" "exit $rc in ${secs} s (no Python: result not checked)"
  else
    local facts status=PASS
    facts=$(check_py result "$out" "${dev%%:*}" 2>>"$logs/$name.log") || status=FAIL
    ((rc == 0)) || status=FAIL
    result "$status" "$name" "${secs} s: $facts"
  fi
}

# gtest binary BIN with FILTER as step NAME. With a GPU present a skipped test is a failure: the
# CUDA path it guards did not run.
run_gtest() {
  local name=$1 bin=$2 filter=$3 cap=$4
  run_step "$name" "$cap" "$bin" --gtest_filter="$filter" --gtest_color=no || return 0
  local log=$logs/$name.log passed skipped failed failed_list why
  passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log")
  skipped=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log")
  # GoogleTest names a failed test twice: when it ends, "(N ms)", and in the closing list; count the list.
  failed_list=$(grep '^\[  FAILED  \] [A-Za-z]' "$log" | grep -v ' ms)$' | sed 's/^\[  FAILED  \] //')
  failed=$(grep -c . <<<"$failed_list")
  why=$(grep -A1 ': Skipped$' "$log" | grep -v -e ': Skipped$' -e '^--$' | sort -u | head -n 1 | cut -c1-120)
  if ((rc == 124 || rc == 137)); then
    result FAIL "$name" "stopped after ${secs} s (time limit)"
  elif ((rc != 0)); then
    result FAIL "$name" "exit $rc in ${secs} s: ${failed} failed: $(head -n 3 <<<"$failed_list" | tr '\n' ' ')"
  elif ((${skipped:-0} > 0 && gpu_count > 0)) && [[ $device != cpu && $filter == *CUDA* ]]; then
    result FAIL "$name" "${skipped} skipped although nvidia-smi lists ${gpu_count} GPU(s): ${why}"
  elif ((${skipped:-0} > 0 && ${passed:-0} == 0)); then
    result SKIP "$name" "${skipped} skipped: ${why}"
  else
    result PASS "$name" "${passed:-0} passed${skipped:+, $skipped skipped} in ${secs} s"
  fi
}

# Test binaries holding tests that match FILTER (asked of each binary, never listed by hand).
binaries_with() {
  local t
  for t in "$bundle"/tests/test_*; do
    # grep reads the whole list (with -q it would stop at the first test, and under pipefail the
    # binary's SIGPIPE would drop it from the list now and then).
    "$t" --gtest_list_tests --gtest_filter="$1" 2>>"$logs/test-lists.log" | grep '^  ' >/dev/null && echo "$t"
  done
}

# tipbench env: the fingerprint, and how many GPUs LibTorch sees next to the driver's count.
# stdout (the JSON) to env.json, the warnings to env.log.
step_env() {
  # shellcheck disable=SC2016  # expanded by the inner bash
  if run_step env 60 bash -c '"$0" env >"$1"' "$tipbench" "$logs/env.json"; then
    if ((rc != 0)); then
      result FAIL env "exit $rc: $(last_error "$logs/env.log")"
    else
      local torch_gpus slug
      torch_gpus=$(check_py gpus "$logs/env.json" 2>/dev/null || echo "?")
      slug=$(sed -n 's/.*"fingerprint_slug": *"\([^"]*\)".*/\1/p' "$logs/env.json" | head -n 1)
      if ((gpu_count > 0)) && [[ $torch_gpus == 0 ]]; then
        result FAIL env "$slug: nvidia-smi lists $gpu_count GPU(s) but LibTorch sees none (driver too old for CUDA 13?)"
      else
        result PASS env "$slug; LibTorch sees ${torch_gpus} GPU(s)"
      fi
    fi
  fi
}

# Every *_CUDA test, one step per binary that holds any.
step_cuda_tests() {
  local t
  while IFS= read -r t; do
    run_gtest "cuda-$(basename "$t")" "$t" '*_CUDA*' "$1"
  done < <(binaries_with '*_CUDA*')
}

# The suites in the order of how much a failure would teach, then any suite added later.
smoke_suites() {
  local suites=(zero_grad conv_bias cudnn_benchmark jit_fusion data_parallel dataloader checkpointing batch_size)
  local listed s
  listed=$("$tipbench" list 2>/dev/null | sed -n '/^Models/q; s/^  \([a-z][a-z_0-9]*\) \{2,\}.*/\1/p')
  for s in $listed; do [[ " ${suites[*]} " == *" $s "* ]] || suites+=("$s"); done
  printf '%s\n' "${suites[@]}"
}

# One block of SUITE on DEVICE: data_parallel with one rank per visible GPU (NCCL); with one GPU,
# a world of 1 still builds the NCCL process group and all-reduces through it.
smoke() {
  local s=$1 dev=$2 cap=$3 extra=() torch_gpus
  torch_gpus=$(check_py gpus "$logs/env.json" 2>/dev/null || echo 1)
  [[ $dev == cuda* && $s == data_parallel && $torch_gpus =~ ^[0-9]+$ && $torch_gpus -gt 1 ]] &&
    extra=(--nproc "$torch_gpus")
  run_result "smoke-$s" "$cap" "$logs/smoke-$s.json" "$dev" --suite "$s" --quick --blocks 1 "${extra[@]}"
}

# Every suite's first arm, one short trial each in a new process where nothing has touched the
# device before the trial: how a fresh-process trial or a DDP follower starts. Quick, and it tells
# the most per second; each failure's first line is printed.
step_fresh_arms() {
  if [[ ${TIPBENCH_DEVICE:-cuda} == cuda* ]] && ((gpu_count == 0)); then
    result SKIP fresh-arms "needs a GPU: $no_gpu"
  elif run_step fresh-arms 300 "$tipbench" __fresh-arms "${TIPBENCH_DEVICE:-cuda}"; then
    local totals
    totals=$(tail -n 1 "$logs/fresh-arms.log")
    if ((rc == 0)); then
      result PASS fresh-arms "${secs} s: ${totals#*: }"
    elif ((rc == 1)); then
      result FAIL fresh-arms "${secs} s: ${totals#*: }"
      grep '^failed ' "$logs/fresh-arms.log" | cut -c1-220 | while IFS= read -r line; do note "$line"; done
    else
      result FAIL fresh-arms "exit $rc in ${secs} s: $(last_error "$logs/fresh-arms.log")"
    fi
  fi
}

stage_check() {
  step_env

  if ((gpu_count == 0)); then
    result SKIP nvidia-smi "$no_gpu"
  elif run_step nvidia-smi 60 nvidia-smi; then
    nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv \
      >>"$logs/nvidia-smi.log" 2>&1
    local gpu_line
    gpu_line=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -n 1)
    if ((rc == 0)); then result PASS nvidia-smi "$gpu_count GPU(s): $gpu_line (driver)"; else result FAIL nvidia-smi "exit $rc"; fi
  fi

  step_fresh_arms

  step_cuda_tests 300

  # One block of every suite on the GPU; TIPBENCH_DEVICE=cpu rehearses these steps on the CPU (the
  # allocator check aside).
  local smoke_device=${TIPBENCH_DEVICE:-cuda} s
  local suites
  mapfile -t suites < <(smoke_suites)
  if [[ $smoke_device == cuda* ]] && ((gpu_count == 0)); then
    for s in "${suites[@]}"; do result SKIP "smoke-$s" "needs a GPU: $no_gpu"; done
    result SKIP slowdown-zero_grad "needs a GPU: $no_gpu"
    return
  fi
  for s in "${suites[@]}"; do smoke "$s" "$smoke_device" 240; done
  # The slowdown knob (CUDA: a spin kernel): the same run with 50% injected must be ~1.5x slower.
  run_result slowdown-zero_grad 240 "$logs/slowdown-zero_grad.json" "$smoke_device" --suite zero_grad --quick \
    --blocks 1 --inject-slowdown 50
  if [[ -f $logs/smoke-zero_grad.json && -f $logs/slowdown-zero_grad.json && -n $python ]]; then
    local ratio
    if ratio=$(check_py slowdown "$logs/smoke-zero_grad.json" "$logs/slowdown-zero_grad.json" 50); then
      result PASS slowdown-effect "$ratio"
    else
      result FAIL slowdown-effect "$ratio"
    fi
  fi
}

# --- the first call on a GPU kind (docs/gpu.md, "The first call") ------------------------------
# The checks of the path steps (first_call_check.py): one line, exit 0 or 1.
first_check() { [[ -n $python ]] && "$python" "$bundle/share/first_call_check.py" "$@"; }

# path_step NAME CAP CHECK [CHECK_ARGS...] -- COMMAND...: COMMAND (a tipbench run or gate, whose
# output goes to logs/NAME.log), then `first_call_check.py CHECK CHECK_ARGS`: PASS or FAIL with
# the check's line. A run exits 0 or 1 (1: a verdict or an arm's failure, which the check judges).
path_step() {
  local name=$1 cap=$2 check_args=()
  shift 2
  while (($#)) && [[ $1 != -- ]]; do check_args+=("$1"); shift; done
  shift
  run_step "$name" "$cap" "$@" || return 0
  if ((rc == 124 || rc == 137)); then
    result FAIL "$name" "stopped after ${secs} s (its cap or the stage's limit)"
  elif ((rc != 0 && rc != 1)); then
    result FAIL "$name" "exit $rc in ${secs} s: $(last_error "$logs/$name.log")"
  elif [[ -z $python ]]; then
    result FAIL "$name" "no Python here to check what it wrote"
  else
    local line
    if line=$(first_check "${check_args[@]}" 2>>"$logs/$name.log"); then
      result PASS "$name" "${secs} s: $line"
    else
      result FAIL "$name" "${secs} s: $line"
    fi
  fi
}

# On the GPU each path's own model (ResNet-50 where the review's question is about it, ResNet-18
# for speed); TIPBENCH_DEVICE=cpu rehearses every step on the CPU with small_cnn, the checks that
# need CUDA saying so, and skips the steps that exist only on a GPU.
stage_first_call() {
  local dev=${TIPBENCH_DEVICE:-cuda} big=resnet50 small=resnet18 budget=60
  local fixtures=$work/fixtures
  mkdir -p "$fixtures/results"
  export TIPBENCH_FIXTURE_DIR=$fixtures
  step_env
  step_cuda_tests 120
  if [[ $dev == cuda* ]] && ((gpu_count == 0)); then
    local s
    for s in kept-memory explain graph-explain calibration cupti budget amp preallocate worker; do
      result SKIP "path-$s" "needs a GPU: $no_gpu"
    done
    return
  fi
  [[ $dev == cpu ]] && big=small_cnn small=small_cnn budget=20
  local r=$fixtures/results
  # Expected on an H100 (docs/gpu.md): about 20, 40, 15, 45, 25, 70, 40, 10 and 150 s.
  path_step path-kept-memory 90 kept-memory "$r/kept-memory.json" -- \
    "$tipbench" run --device "$dev" --suite zero_grad --model "$big" --blocks 3 --out "$r/kept-memory.json"
  if [[ $dev == cuda* ]]; then
    local line
    if line=$(first_check mfu "$logs/path-kept-memory.log"); then result PASS path-mfu "$line"; else result FAIL path-mfu "$line"; fi
  fi
  path_step path-explain 120 explain "$r/explain.json" -- \
    "$tipbench" run --device "$dev" --suite channels_last --model "$big" --blocks 3 --explain --out "$r/explain.json"
  if [[ $dev == cuda* ]]; then
    path_step path-graph-explain 60 graph-explain "$r/graph-explain.json" -- \
      "$tipbench" run --device "$dev" --suite cuda_graphs --model "$small" --quick --blocks 2 --explain \
      --out "$r/graph-explain.json"
  else
    result SKIP path-graph-explain "a CUDA graph needs a GPU (rehearsed on the CPU)"
  fi
  # A batch-8 step: on a GPU launch-bound, where host time matters most.
  path_step path-calibration 150 calibration "$r/calibration-gate.json" aten::addmm -- \
    "$tipbench" gate --base-binary "$tipbench" --head-binary "$tipbench" --suite zero_grad --model "$small" \
    --device "$dev" --run-arg=--batch-size=8 --blocks 3 --head-inject-slowdown 20 \
    --head-inject-slowdown-op aten::addmm --explain --no-rerun --out-dir "$work/gate" --json "$r/calibration-gate.json"
  if [[ $dev == cuda* ]]; then
    run_step path-cupti-plain 60 "$tipbench" run --device "$dev" --suite zero_grad --model "$small" --batch-size 8 \
      --quick --blocks 3 --out "$r/cupti-plain.json"
    path_step path-cupti 60 cupti "$r/cupti-plain.json" "$r/cupti-explained.json" -- \
      "$tipbench" run --device "$dev" --suite zero_grad --model "$small" --batch-size 8 --quick --blocks 3 --explain \
      --out "$r/cupti-explained.json"
  else
    result SKIP path-cupti "CUPTI is a GPU's (rehearsed on the CPU)"
  fi
  path_step path-budget $((budget * 2 + 30)) budget "$r/budget.json" "$budget" -- \
    "$tipbench" run --device "$dev" --suite inference --model "$small" --time-budget "${budget}s" --out "$r/budget.json"
  path_step path-amp 120 amp "$r/amp.json" -- \
    "$tipbench" run --device "$dev" --suite amp --model "$small" --quick --blocks 2 --out "$r/amp.json"
  path_step path-preallocate 90 preallocate "$r/preallocate.json" -- \
    "$tipbench" run --device "$dev" --suite preallocate --quick --blocks 2 --out "$r/preallocate.json"
  path_step path-worker 240 worker "$r/worker.json" -- \
    "$tipbench" run --device "$dev" --suite compile --model "$small" --quick --compile-quick-cpu run --blocks 1 \
      --out "$r/worker.json"
  # What is left of the stage: one block of every suite, the first-call paths' suites last.
  local s
  while IFS= read -r s; do
    case $s in zero_grad|channels_last|cuda_graphs|inference|amp|preallocate|compile) continue ;; esac
    smoke "$s" "$dev" 120
  done < <(smoke_suites)
}

# The first call's fixtures, one tarball: what the CPU tests replay (profiled events, allocator
# readings) and the path steps' results. Over 48 MiB (a call carries 64 MiB back and forth), the
# largest profiled-event files go first, said in the summary.
pack_fixtures() {
  local fixtures=$work/fixtures tarball=$outdir/first-call-fixtures.tar.gz
  [[ -d $fixtures ]] || return 0
  local limit=$((48 * 1024 * 1024)) dropped=0
  while :; do
    tar -C "$work" -czf "$tarball" fixtures || { note "warning: cannot pack the fixtures"; return 0; }
    (($(stat -c %s "$tarball") <= limit)) && break
    local largest
    largest=$(find "$fixtures" -name 'profiled.*.json' -printf '%s %p\n' | sort -rn | head -n 1 | cut -d' ' -f2-)
    [[ -n $largest ]] || break
    rm -f "$largest"
    ((dropped++))
  done
  local left_out=""
  ((dropped)) && left_out=" ($dropped largest profiled-event files left out to stay under 48 MiB)"
  note "fixtures: $(find "$fixtures" -type f | wc -l) file(s), $(($(stat -c %s "$tarball") / 1024)) KiB packed$left_out"
}

stage_quick() {
  local args=(--quick) s
  for s in "$@"; do args+=(--suite "$s"); done
  [[ $device == cpu && -n ${no_gpu:-} ]] && note "on the CPU: $no_gpu"
  run_result quick "$limit_s" "$outdir/quick.json" "$device" "${args[@]}"
}

# The seconds SUITE took in earlier full stages (TIPBENCH_EXPECTED_TIMES' summary lines): the
# longest "PASS  full-SUITE  N s", or N + 1 for "FAIL  full-SUITE  stopped after N s"; empty when
# none says.
expected_seconds() {
  local files=${TIPBENCH_EXPECTED_TIMES:-} f
  [[ -n $files ]] || return 0
  local IFS=:
  for f in $files; do [[ -r $f ]] && cat "$f"; done | awk -v step="full-$1" '
    $2 == step && $1 == "PASS" && $4 == "s:" && $3 > most { most = $3 }
    $2 == step && $1 == "FAIL" && $3 == "stopped" && $5 + 1 > most { most = $5 + 1 }
    END { if (most) print most }'
}

stage_full() {
  (($# <= 6)) || note "warning: $# results and 2 more files exceed the 8 a device call brings back"
  [[ $device == cpu && -n ${no_gpu:-} ]] && note "on the CPU: $no_gpu"
  local s expected left
  for s in "$@"; do
    expected=$(expected_seconds "$s")
    left=$((deadline - SECONDS))
    if [[ -n $expected ]] && ((expected + 10 > left)); then
      result SKIP "full-$s" "took ${expected} s before (TIPBENCH_EXPECTED_TIMES), ${left} s of the stage left"
      continue
    fi
    run_result "full-$s" "$limit_s" "$outdir/full-$s.json" "$device" --suite "$s"
  done
}

# Every suite in one run under a time budget. The run writes under a fixed folder, not OUTDIR: a
# resumed run must name the --out it started with, and the next call's OUTDIR is another one.
stage_all() {
  local home=${TMPDIR:-/tmp}/tipbench-all args
  mkdir -p "$home" || die 2 "cannot create $home"
  args=(--time-budget "${TIPBENCH_TIME_BUDGET:-15m}")
  if (($#)); then
    [[ -r $1 ]] || die 2 "all: cannot read the partial file $1"
    cp "$1" "$home/all.json.partial" || die 2 "all: cannot copy $1 to $home"
    args+=(--resume "$home/all.json.partial")
  else
    rm -f "$home/all.json" "$home/all.json.partial"
    args+=(--suite all)
  fi
  [[ $device == cpu && -n ${no_gpu:-} ]] && note "on the CPU: $no_gpu"
  run_result all "$limit_s" "$home/all.json" "$device" "${args[@]}"
  local f
  for f in "$home/all.json" "$home/all.json.partial"; do [[ -e $f ]] && cp "$f" "$outdir/"; done
}

stage_micro() {
  local micro=$bundle/bin/tipbench_micro
  [[ -x $micro ]] || { result FAIL micro "this bundle has no tipbench_micro (built with TIPBENCH_BUILD_MICRO=OFF)"; return; }
  # The GPU's time is scarce: by default only the CUDA rows there, the CPU rows elsewhere.
  local filter=cuda:0
  [[ $device == cuda* ]] && filter=cuda:1
  run_step micro "$limit_s" "$micro" --benchmark_filter="$filter" --benchmark_out="$outdir/micro.json" \
    --benchmark_out_format=json "$@" || return 0
  local rows errors
  rows=$(grep -c '"run_name"' "$outdir/micro.json" 2>/dev/null)
  errors=$(grep -c '"error_occurred": true' "$outdir/micro.json" 2>/dev/null)
  if ((rc == 0)); then
    result PASS micro "${rows:-0} rows (${errors:-0} error rows) in ${secs} s"
  else
    result FAIL micro "exit $rc in ${secs} s: $(last_error "$logs/micro.log")"
  fi
}

stage_tests() {
  local filter=${1:-*} t
  while IFS= read -r t; do
    run_gtest "test-$(basename "$t")" "$t" "$filter" "$limit_s"
  done < <(binaries_with "$filter")
}

# Any tipbench command (baseline save, gate, report, ...) with the libraries found above; relative
# paths in ARGs are taken from the caller's folder.
stage_tipbench() {
  run_step "tipbench-$1" "$limit_s" "$tipbench" "$@" || return 0
  cat "$logs/tipbench-$1.log"
  if ((rc == 0)); then result PASS "tipbench-$1" "exit 0 in ${secs} s"; else result FAIL "tipbench-$1" "exit $rc in ${secs} s: $(tail -n 1 "$logs/tipbench-$1.log" | cut -c1-160)"; fi
}

"stage_${stage//-/_}" "$@"
[[ $stage == first-call ]] && pack_fixtures
total=$((SECONDS - started))
printf '%s: %d passed, %d skipped, %d failed in %d s; logs in %s\n' "$stage" "$pass" "$skip" "$fail" "$total" \
  "$outdir/$stage-logs.tar.gz" | tee -a "$summary"
files=$(find "$outdir" -type f | wc -l)
((files <= 8)) || say "warning: $outdir holds $files files; a device call brings back at most 8"
((fail == 0))
