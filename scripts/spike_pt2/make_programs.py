#!/usr/bin/env python3
"""Programs for the .pt2 spike (interp.cpp; docs/own-model.md section 4), written into the current
folder: small_cnn.pt2 and resnet18.pt2 (float64, training IR of torch.export.export, batch 4) with
their eager reference (input, labels, logits, every parameter's grad: *_ref.pt), and
resnet18_f32.pt2 (float32, batch 8) for the step-time comparison."""
import warnings; warnings.simplefilter("ignore")
import torch, torchvision
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from spike_export_dispatcher import SmallCNN  # noqa: E402  the Python spike's small CNN

for name, make, size, classes in [("small_cnn", SmallCNN, 32, 10), ("resnet18", torchvision.models.resnet18, 224, 1000)]:
    torch.manual_seed(0)
    m = make().double().train()
    x = torch.randn(4, 3, size, size, dtype=torch.float64)
    labels = torch.randint(classes, (4,))
    ep = torch.export.export(m, (x,))
    torch.export.save(ep, f"{name}.pt2")
    out = m(x)
    torch.nn.functional.cross_entropy(out, labels).backward()
    d = {"input": x, "labels": labels, "logits": out.detach()}
    for k, p in m.named_parameters(): d["grad." + k] = p.grad
    torch.save(d, f"{name}_ref.pt")

torch.manual_seed(0)
m = torchvision.models.resnet18().train()
ep = torch.export.export(m, (torch.randn(8, 3, 224, 224),))
torch.export.save(ep, "resnet18_f32.pt2")
