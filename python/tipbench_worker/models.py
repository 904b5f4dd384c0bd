"""The models a worker trains: tipbench's reference models as Python builds them (torchvision's
ResNets and ViTs, whose parameter names and shapes tipbench's C++ models share, and a mirror of
models/src/small_cnn.cpp), or a user's torch.export archive (.pt2, its train program)."""

import torch

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
# name -> (hidden, heads, MLP width) of the ViTs tipbench names (torchvision has no Ti/16, S/16)
VIT_WIDTHS = {"vit_ti_16": (192, 3, 768), "vit_s_16": (384, 6, 1536), "vit_b_16": (768, 12, 3072)}


class ModelUnavailable(Exception):
    """A model this worker cannot train (a TorchScript file): the arm is skipped with the reason."""


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


def build_reference(name):
    """A reference model by tipbench's name (torchvision is imported only for the ResNets and ViTs)."""
    if name == "small_cnn":
        return small_cnn()
    try:
        import torchvision
    except ImportError as e:  # the arm cannot run in this Python: skipped with the reason
        raise ModelUnavailable(f"{name} comes from torchvision, which the worker's Python cannot import ({e})") from e

    if name in VIT_WIDTHS:
        hidden, heads, mlp = VIT_WIDTHS[name]
        return torchvision.models.VisionTransformer(
            image_size=224, patch_size=16, num_layers=12, num_heads=heads, hidden_dim=hidden, mlp_dim=mlp
        )
    if name in REFERENCE:
        return getattr(torchvision.models, name)()
    raise ModelUnavailable(f"{name} is not one of tipbench's reference models ({', '.join(REFERENCE)})")


def load_model_file(path, file_format, device):
    """A user's model file as the C++ harness checked it (its ops, its metadata): a .pt2's train
    program as a module on `device`. TorchScript is skipped: it would run in TorchScript's
    interpreter, not Python eager, and torch.compile cannot compile it."""
    if file_format != "pt2":
        raise ModelUnavailable(
            "a TorchScript file runs in TorchScript's interpreter, not Python eager, and torch.compile cannot "
            "compile it; export the model as a .pt2 (scripts/export_model.py MODULE:FACTORY ... -o net.pt2)"
        )
    from torch.export.pt2_archive._package import load_pt2

    programs = load_pt2(path).exported_programs
    if "train" not in programs:
        raise ModelUnavailable(f"{path} holds no train program (programs: {', '.join(sorted(programs))})")
    program = programs["train"]
    # A program exported on the CPU has its device baked into the graph too (factory ops'
    # device=, aten.to.device, tensor metadata asserts): moving the module's parameters alone
    # would leave those on the CPU. torch.export's own pass rewrites them, as the C++ reader does
    # (models/src/exported_program.cpp).
    from torch.export.passes import move_to_device_pass

    return move_to_device_pass(program, device).module()
