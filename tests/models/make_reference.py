#!/usr/bin/env python3
"""Reference data from torchvision for test_models (the oracle the C++ models are checked against).

  make_reference.py OUT_DIR        writes, per model (resnet18, resnet50, vit_b_16):
                                   OUT_DIR/<model>_state.pt  torch.save(model.state_dict())
                                   OUT_DIR/<model>_io.pt     torch.save({"input": x, "output": y})
                                   and OUT_DIR/done last. Eval mode, fixed seed, weights=None.
  make_reference.py --check-load FILE
                                   torch.load(FILE, weights_only=True) and print
                                   "<tensors> <elements> <sum>" (checks a C++-written state dict).

Exit status 3 means torchvision (or torch) cannot be imported: the C++ test skips.
"""
import os
import sys

try:
    import torch
    import torchvision
except Exception as e:  # noqa: BLE001 - any import failure means "no oracle here"
    print(f"cannot import torch/torchvision: {e!r}", file=sys.stderr)
    sys.exit(3)

# model name -> input shape (batch, channels, height, width)
MODELS = {
    "resnet18": (2, 3, 224, 224),
    "resnet50": (1, 3, 224, 224),
    "vit_b_16": (1, 3, 224, 224),
}


def randomized(model: torch.nn.Module) -> torch.nn.Module:
    """Moves every tensor off torchvision's constant init (zero ViT head and class token, unit
    LayerNorm/BN weights, zero biases, fresh BN statistics) so that each one matters."""
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.02)
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
                m.num_batches_tracked.fill_(7)
    return model.eval()


def generate(out_dir: str) -> None:
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(min(2, os.cpu_count() or 1))
    for name, shape in MODELS.items():
        torch.manual_seed(0)
        model = randomized(getattr(torchvision.models, name)(weights=None))
        x = torch.randn(shape)
        with torch.no_grad():
            y = model(x)
        torch.save(model.state_dict(), os.path.join(out_dir, f"{name}_state.pt"))
        torch.save({"input": x, "output": y}, os.path.join(out_dir, f"{name}_io.pt"))
        print(f"{name}: input {list(x.shape)} output {list(y.shape)} max|y| {y.abs().max().item():.4g}")
    with open(os.path.join(out_dir, "done"), "w") as f:
        f.write(f"torch {torch.__version__} torchvision {torchvision.__version__}\n")


def check_load(path: str) -> None:
    sd = torch.load(path, weights_only=True)
    tensors = list(sd.values())
    total = sum(float(t.double().sum()) for t in tensors)
    print(len(tensors), sum(t.numel() for t in tensors), repr(total))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--check-load":
        check_load(sys.argv[2])
    elif len(sys.argv) == 2:
        generate(sys.argv[1])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
