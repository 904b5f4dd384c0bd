"""Which implementation Python's torch.optim steps with by default, per device and optimizer.

    python pytorch_optimizer_choice.py OUT.json

Builds torch.optim.SGD(momentum=0.9) and torch.optim.AdamW with neither foreach nor fused given,
as a user's script does, steps each once on a parameter of every device this machine has (the
CPU; CUDA where there is one), and records which of the module's three step functions ran:
  {"devices": {"cpu": {"sgd": "loop", "adamw": "loop"}, ...}, "foreach_devices": ["cuda", ...]}
The C++ rule (suites/common/optimizers.h, pytorch_default_impl) is tested against this.
"""

import importlib
import json
import sys

import torch
from torch.utils._foreach_utils import _get_foreach_kernels_supported_devices

# The module functions each optimizer's functional form picks from by name at call time
# (torch/optim/__init__.py deletes the submodules' names from torch.optim: import them by path).
SGD_MODULE = importlib.import_module("torch.optim.sgd")
ADAM_MODULE = importlib.import_module("torch.optim.adam")
STEP_FUNCTIONS = {
    "sgd": (SGD_MODULE, {"_single_tensor_sgd": "loop", "_multi_tensor_sgd": "foreach", "_fused_sgd": "fused"}),
    "adamw": (
        ADAM_MODULE,
        {"_single_tensor_adam": "loop", "_multi_tensor_adam": "foreach", "_fused_adam": "fused"},
    ),
}


def implementation_used(kind, device):
    module, names = STEP_FUNCTIONS[kind]
    used = []
    originals = {name: getattr(module, name) for name in names}

    def spy(name):
        def call(*args, **kwargs):
            used.append(names[name])
            return originals[name](*args, **kwargs)

        return call

    p = torch.zeros(4, device=device, requires_grad=True)
    p.grad = torch.ones_like(p)
    optimizer = torch.optim.SGD([p], lr=0.01, momentum=0.9) if kind == "sgd" else torch.optim.AdamW([p])
    try:
        for name in names:
            setattr(module, name, spy(name))
        optimizer.step()
    finally:
        for name, original in originals.items():
            setattr(module, name, original)
    if len(used) != 1:
        raise SystemExit(f"{kind} on {device}: expected one step function to run, saw {used}")
    return used[0]


def main():
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    out = {
        "devices": {d: {kind: implementation_used(kind, d) for kind in STEP_FUNCTIONS} for d in devices},
        "foreach_devices": list(_get_foreach_kernels_supported_devices()),
    }
    with open(sys.argv[1], "w", encoding="utf-8") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
