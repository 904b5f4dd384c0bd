#!/usr/bin/env bash
# `make test` (and so CI, .ci/run): installs what the tests need, builds everything, builds the
# stack A/B test's second tipbench, runs ctest, then prints each stage's time.
#   scripts/test.sh [ctest arguments...]     e.g. scripts/test.sh -R GateCli
# Order: Debian packages; then, in the background, stack B's torch wheel (a download and an
# unpack, which overlap the main venv's and the CPU-bound main build); the main venv and build;
# stack B's tipbench; ctest with the longest tests first (tests/ctest-costs.txt). Exit: ctest's,
# or the failing stage's.
set -euo pipefail
cd "$(dirname "$0")/.."
export TIPBENCH_MAKE_TARGET=${TIPBENCH_MAKE_TARGET:-test}
# shellcheck source=scripts/stage_times.sh
source scripts/stage_times.sh

stack_b=$(sed -n 's/^torch==//p' requirements-stack-b.txt)
[[ $stack_b =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "requirements-stack-b.txt pins no torch==X.Y.Z" >&2; exit 2; }

scripts/bootstrap.sh --test --debian-only  # before the background install, which then needs none
mkdir -p .times
stack_b_log=.times/stack-b-install.log
TIPBENCH_STAGE_BACKGROUND=1 scripts/bootstrap.sh --torch "$stack_b" --no-build >"$stack_b_log" 2>&1 &
stack_b_install=$!
# A failed stage ends the run: the background install (bootstrap and its pip) goes with it.
stop_background() {
  pkill -TERM -P "$stack_b_install" 2>/dev/null || true
  kill "$stack_b_install" 2>/dev/null || true
}
trap stop_background EXIT

scripts/bootstrap.sh --test
wait_for_stack_b() {
  wait "$stack_b_install" || { cat "$stack_b_log" >&2; echo "stack B's torch $stack_b did not install" >&2; return 1; }
}
timed_stage "wait for stack B's wheel" wait_for_stack_b
trap - EXIT
scripts/bootstrap.sh --torch "$stack_b" --target tipbench

rc=0
(cd build && timed_stage "ctest" ctest --output-on-failure --timeout 900 -j2 "$@") || rc=$?
scripts/ci-times.py --last
exit "$rc"
