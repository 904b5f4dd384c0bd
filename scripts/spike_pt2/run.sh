#!/usr/bin/env bash
# The .pt2 spike of issue 30 (docs/own-model.md section 4): torch.export's training IR run from
# C++ op by op through c10::Dispatcher, autograd on. Not part of the build; needs build/ (the
# models and core libraries) and the fixture tv_resnet18.pt of tests/models/make_model_files.py:
#   scripts/spike_pt2/run.sh MODEL_FILES_DIR      # about 2 minutes on 2 cores
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
files=${1:?give the folder that holds tv_resnet18.pt (tests/models/make_model_files.py SOURCE OUT)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
torch=$("$root/.venv/bin/python" -c 'import torch,os;print(os.path.dirname(torch.__file__))')
(cd "$work" && "$root/.venv/bin/python" "$root/scripts/spike_pt2/make_programs.py")
g++ -std=c++20 -O2 -DTV_RESNET18="\"$files/tv_resnet18.pt\"" -I"$torch/include" \
  -I"$torch/include/torch/csrc/api/include" -I"$root/models/include" -I"$root/harness/include" \
  "$root/scripts/spike_pt2/interp.cpp" -o "$work/interp" "$root/build/models/libtipbench_models.a" \
  "$root/build/harness/libtipbench_core.a" -lssl -lcrypto -L"$torch/lib" -Wl,-rpath,"$torch/lib" \
  -ltorch -ltorch_cpu -lc10 -lfmt
(cd "$work" && ./interp)
