#!/usr/bin/env python3
"""Counts the model FLOPs of one training step per sample for tipbench's reference models.

    count_flops.py                   prints the table (JSON) on stdout
    count_flops.py --write FILE      writes it as the C++ table (harness/src/model_flop_table.cpp)
    count_flops.py --check FILE      exits 1 when FILE is not what --write would write now, or when
                                     the CPU's default attention kernel does not miss exactly the
                                     attention term (4 N^2 D per layer) the table names

Counted by torch.utils.flop_counter.FlopCounterMode (matrix products and convolutions; the
elementwise work, normalisation and the loss are not counted, by the convention MFU uses) over
torchvision's ResNets and ViTs (tipbench's C++ models have their parameter names and shapes: the
parameter counts are checked against the C++ table) and a mirror of small_cnn, on the meta device
at batch 1, forward and backward of cross-entropy. Attention runs on PyTorch's math backend
(torch.nn.attention.sdpa_kernel(SDPBackend.MATH)): its two matrix products per layer are then
counted. Without it, on a CPU, torch 2.11's counter has no formula for the fused kernel that
scaled_dot_product_attention dispatches to (_scaled_dot_product_flash_attention_for_cpu) and
leaves them out: 4 N^2 D per layer forward (N tokens, D hidden), 1.43 GFLOP of ViT-B/16's 35.13.
"""

import argparse
import contextlib
import json
import sys

import torch
import torchvision
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode

# name -> (image size, classes, parameters as tipbench's models/src/model.cpp counts them)
REFERENCE = {
    "small_cnn": (32, 10, 391_466),
    "resnet18": (224, 1000, 11_689_512),
    "resnet34": (224, 1000, 21_797_672),
    "resnet50": (224, 1000, 25_557_032),
    "vit_ti_16": (224, 1000, 5_717_416),
    "vit_s_16": (224, 1000, 22_050_664),
    "vit_b_16": (224, 1000, 86_567_656),
}
VIT_WIDTHS = {"vit_ti_16": (192, 3, 768), "vit_s_16": (384, 6, 1536), "vit_b_16": (768, 12, 3072)}


def small_cnn():
    """tipbench's small_cnn (models/src/small_cnn.cpp): 4 stride-2 conv-BN-ReLU stages, GAP, linear."""
    layers, channels = [], 3
    for out in (32, 64, 128, 256):
        layers += [
            torch.nn.Conv2d(channels, out, 3, stride=2, padding=1, bias=False),
            torch.nn.BatchNorm2d(out),
            torch.nn.ReLU(inplace=True),
        ]
        channels = out
    return torch.nn.Sequential(
        *layers, torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(channels, 10)
    )


def build(name):
    if name == "small_cnn":
        return small_cnn()
    if name in VIT_WIDTHS:
        hidden, heads, mlp = VIT_WIDTHS[name]
        return torchvision.models.VisionTransformer(
            image_size=224, patch_size=16, num_layers=12, num_heads=heads, hidden_dim=hidden, mlp_dim=mlp
        )
    return getattr(torchvision.models, name)()


def attention_forward_flops(name):
    """The attention's two matrix products per forward: 2 N^2 D each per layer (N tokens, D hidden)."""
    if name not in VIT_WIDTHS:
        return 0
    hidden = VIT_WIDTHS[name][0]
    tokens = (224 // 16) ** 2 + 1
    return 12 * 4 * tokens * tokens * hidden


def count(name, math_attention=True):
    """(forward, forward + backward) FLOPs of one sample."""
    size, classes, _ = REFERENCE[name]
    with torch.device("meta"):
        model = build(name)
        x = torch.randn(1, 3, size, size)
        y = torch.zeros(1, dtype=torch.long)
    counter = FlopCounterMode(display=False)
    backend = sdpa_kernel([SDPBackend.MATH]) if math_attention else contextlib.nullcontext()
    with backend, counter:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        forward = counter.get_total_flops()
        loss.backward()
    return forward, counter.get_total_flops()


def table():
    rows = []
    for name, (size, classes, parameters) in REFERENCE.items():
        model = build(name)
        counted = sum(p.numel() for p in model.parameters())
        if counted != parameters:
            raise SystemExit(f"{name}: the Python model has {counted} parameters, tipbench's {parameters}")
        forward, training = count(name)
        rows.append(
            {
                "model": name,
                "family": "vit" if name in VIT_WIDTHS else "cnn",
                "image_size": size,
                "parameters": parameters,
                "forward_flops": forward,
                "training_flops": training,
                "attention_forward_flops": attention_forward_flops(name),
            }
        )
    local = lambda version: version.split("+")[0]  # noqa: E731 - the build tag is not the release
    return {"torch": local(torch.__version__), "torchvision": local(torchvision.__version__), "models": rows}


def check_missing_attention(t):
    """On a CPU, with attention on its default (fused) kernel, the counter misses exactly the
    attention's matrix products: what the math backend adds back."""
    problems = []
    for r in t["models"]:
        if not r["attention_forward_flops"]:
            continue
        size = r["image_size"]
        torch.manual_seed(0)
        model = build(r["model"])
        x, y = torch.randn(1, 3, size, size), torch.zeros(1, dtype=torch.long)
        counter = FlopCounterMode(display=False)
        with counter:
            torch.nn.functional.cross_entropy(model(x), y)
        missing = r["forward_flops"] - counter.get_total_flops()
        if missing != r["attention_forward_flops"]:
            problems.append(
                f"{r['model']}: the CPU's default attention left out {missing} FLOPs, "
                f"not the attention's {r['attention_forward_flops']}"
            )
    return problems


def cpp(t):
    lines = [
        "// Generated by scripts/count_flops.py --write harness/src/model_flop_table.cpp; do not edit. Model",
        "// FLOPs per sample of one training step, counted by torch.utils.flop_counter.FlopCounterMode",
        f"// (torch {t['torch']}, torchvision {t['torchvision']}, attention on the math backend): the script",
        "// says how. ModelFlops.TheTableIsWhatPyTorchsCounterCounts counts them again.",
        '#include "tipbench/model_flops.h"',
        "",
        "namespace tipbench {",
        "",
        "const std::vector<ModelFlops>& reference_flop_table() {",
        "  static const std::vector<ModelFlops> table = {",
    ]
    for r in t["models"]:
        lines.append(
            f'      {{"{r["model"]}", "{r["family"]}", {r["image_size"]}, {r["parameters"]}, {r["forward_flops"]}, '
            f'{r["training_flops"]}, {r["attention_forward_flops"]}}},'
        )
    lines += ["  };", "  return table;", "}", "", "}  // namespace tipbench", ""]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", metavar="FILE")
    parser.add_argument("--check", metavar="FILE")
    args = parser.parse_args()
    t = table()
    if args.write:
        with open(args.write, "w", encoding="utf-8") as f:
            f.write(cpp(t))
    elif args.check:
        with open(args.check, encoding="utf-8") as f:
            if f.read() != cpp(t):
                print(f"{args.check} is not what count_flops.py counts now:\n{cpp(t)}", file=sys.stderr)
                return 1
        problems = check_missing_attention(t)
        for p in problems:
            print(p, file=sys.stderr)
        if problems:
            return 1
        print(f"{args.check}: {len(t['models'])} models as counted; the CPU's fused attention misses exactly the "
              "attention term")
    else:
        json.dump(t, sys.stdout, indent=2)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
