#!/bin/bash
# Device call 2 of session 2026-11-27 (issue 34): more suites at the full budget, limit from $1.
set -u
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
B=$PWD/.bundle; R=/tmp/r2; mkdir -p $R; export PYTHONUNBUFFERED=1
pack() { tar czf $OUT/all2.tgz.tmp -C /tmp r2 && mv $OUT/all2.tgz.tmp $OUT/all2.tgz; }
TIPBENCH_STAGE_LIMIT_S=$1 $B/run.sh full $R/f ${2:-sync alignment determinism grad_accumulation debug_apis} 2>&1 | tail -12
pack; echo "== done $(el) s"
