#!/bin/sh
# The image's `tipbench`: the bundle's binary with LibTorch and the torch wheel's CUDA libraries
# on the library path, found as the bundle's run.sh finds them (docs/gpu.md). torchrun runs it
# as `torchrun --no-python tipbench run ...`.
set -eu
torch_lib=$("${TIPBENCH_PYTHON:-python3}" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
libpath=$torch_lib
for d in "$torch_lib"/../../nvidia/*/lib; do [ -d "$d" ] && libpath=$libpath:$d; done
export LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
exec /opt/tipbench/bin/tipbench "$@"
