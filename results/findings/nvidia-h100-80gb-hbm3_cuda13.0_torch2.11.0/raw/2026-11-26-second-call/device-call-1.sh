#!/bin/bash
# Device call 1 of session 2026-11-26 (issue 34): CUDA tests of this build, a fresh channels_last
# gated against the committed H100 baseline, own model files (.pt, .pt2) on the GPU, more full suites.
set -u
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
B=$PWD/.bundle; R=$OUT/r; mkdir -p $R; export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit,clocks.max.sm,clocks.sm,temperature.gpu,power.draw,clocks_throttle_reasons.active --format=csv > $R/nvidia-smi-start.csv 2>&1
echo "== tests $(el)"; TIPBENCH_STAGE_LIMIT_S=90 $B/run.sh tests $R/t '*_CUDA*' 2>&1 | tail -12
echo "== channels_last $(el)"; TIPBENCH_STAGE_LIMIT_S=160 $B/run.sh full $R/cl channels_last 2>&1 | tail -3
echo "== gate auto $(el)"; $B/run.sh tipbench $R/g gate --baseline auto --current $R/cl/full-channels_last.json --out-dir $R/g/gate --no-rerun 2>&1 | tail -25
echo "== export $(el)"
python3 scripts/export_model.py torchvision.models:resnet18 --input 3,224,224 --classes 1000 --name tv_resnet18 -o /tmp/r18.pt > $R/export-pt.log 2>&1; echo "pt exit $?"
python3 scripts/export_model.py torchvision.models:resnet18 --input 3,224,224 --classes 1000 --name tv_resnet18 -o /tmp/r18.pt2 > $R/export-pt2.log 2>&1; echo "pt2 exit $?"
for f in pt pt2; do echo "== model-file $f $(el)"; timeout 60 $B/run.sh tipbench $R/m-$f run --model-file /tmp/r18.$f --suite zero_grad --device cuda --quick --blocks 3 --out $R/m-$f/r18-$f.json 2>&1 | tail -8; done
echo "== model gate $(el)"; timeout 130 $B/run.sh tipbench $R/mg gate --base-model-file /tmp/r18.pt --head-model-file /tmp/r18.pt2 --suite zero_grad --device cuda --blocks 4 --out-dir $R/mg/gate 2>&1 | tail -14
left=$(( 555 - $(el) )); echo "== full suites, limit $left s"
TIPBENCH_STAGE_LIMIT_S=$left $B/run.sh full $R/f zero_grad cudnn_benchmark conv_bias inplace grad_accumulation device_creation preallocate 2>&1 | tail -10
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw,clocks_throttle_reasons.active --format=csv > $R/nvidia-smi-end.csv 2>&1
tar czf $OUT/all.tgz -C $OUT r; echo "== done $(el) s"; ls -la $OUT
