#!/usr/bin/env bash
# `make quick`: installs what is missing, builds the tipbench binary and only what it links (not
# the tests), runs the quick suite on the best device present and prints each stage's time.
#   scripts/quick.sh [tipbench run arguments...]     e.g. scripts/quick.sh --suite zero_grad
# Exit: tipbench run's (0 written; docs/cli.md), or the failing stage's.
set -euo pipefail
cd "$(dirname "$0")/.."
export TIPBENCH_MAKE_TARGET=${TIPBENCH_MAKE_TARGET:-quick}
# shellcheck source=scripts/stage_times.sh
source scripts/stage_times.sh
scripts/bootstrap.sh --target tipbench
rc=0
timed_stage "quick run" build/tipbench run --quick "$@" || rc=$?
scripts/ci-times.py --last >&2
exit "$rc"
