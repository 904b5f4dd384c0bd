#!/bin/bash
# Device call 1 of session 2026-11-27 (run from the checkout root as .gpu/call1.sh) (issue 34): the *_CUDA tests of this build (3bd9e50), amp on
# ViT-B/16 (4 blocks, for the fp32/bf16 throughput and MFU), then more suites at the full budget.
set -u
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
B=$PWD/.bundle; R=/tmp/r; mkdir -p $R; export PYTHONUNBUFFERED=1
pack() { tar czf $OUT/all.tgz.tmp -C /tmp r && mv $OUT/all.tgz.tmp $OUT/all.tgz; }
q='name,driver_version,memory.total,power.limit,clocks.max.sm,clocks.sm,temperature.gpu,power.draw,clocks_throttle_reasons.active'
nvidia-smi --query-gpu=$q --format=csv > $R/nvidia-smi-start.csv 2>&1; nvidia-smi > $R/nvidia-smi.txt 2>&1
echo "== tests $(el)"; TIPBENCH_STAGE_LIMIT_S=90 $B/run.sh tests $R/t '*_CUDA*' 2>&1 | tail -14; pack
echo "== amp vit_b_16 $(el)"; TIPBENCH_STAGE_LIMIT_S=200 $B/run.sh tipbench $R/a run --suite amp --model vit_b_16 --device cuda --blocks 4 --out $R/a/amp-vit_b_16-blocks4.json 2>&1 | tail -8; pack
left=$(( 568 - $(el) )); echo "== full, limit $left s"
TIPBENCH_STAGE_LIMIT_S=$left $B/run.sh full $R/f data_parallel cpu_threads device_creation preallocate allocator grad_accumulation sync 2>&1 | tail -12
nvidia-smi --query-gpu=$q --format=csv > $R/nvidia-smi-end.csv 2>&1
pack; echo "== done $(el) s"; ls -la $OUT
