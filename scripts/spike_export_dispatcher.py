#!/usr/bin/env python3
"""Spike of issue 30 (docs/own-model.md, "Beyond TorchScript"): run torch.export's training IR op by
op through the dispatcher — each node's OpOverload called with its arguments, what a C++
interpreter would do with c10::Dispatcher::findSchemaOrThrow + callBoxed — with autograd on and the
parameters as leaf tensors; compare logits and gradients with eager (float64), then time a float32
training step both ways on the CPU, interleaved.

    .venv/bin/python scripts/spike_export_dispatcher.py     # about 20 s on 2 cores
"""
import time, statistics, warnings
warnings.simplefilter("ignore")
import torch, torchvision
from torch import nn

class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        chans = [3, 32, 64, 128, 256]
        layers = []
        for a, b in zip(chans, chans[1:]):
            layers += [nn.Conv2d(a, b, 3, 2, 1, bias=False), nn.BatchNorm2d(b), nn.ReLU(inplace=True)]
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(256, 10)
    def forward(self, x):
        return self.fc(self.features(x).mean(dim=(2, 3)))

def interpret(ep, params, buffers, x):
    sig = ep.graph_signature
    env = {}
    inputs = iter([x])
    mutated = {}
    for node in ep.graph.nodes:
        if node.op == "placeholder":
            name = node.name
            if name in sig.inputs_to_parameters: env[name] = params[sig.inputs_to_parameters[name]]
            elif name in sig.inputs_to_buffers: env[name] = buffers[sig.inputs_to_buffers[name]]
            else: env[name] = next(inputs)
        elif node.op == "call_function":
            load = lambda a: env[a.name] if isinstance(a, torch.fx.Node) else a
            args = torch.fx.node.map_aggregate(node.args, load)
            kwargs = torch.fx.node.map_aggregate(node.kwargs, load)
            env[node.name] = node.target(*args, **kwargs)
        elif node.op == "output":
            outs = torch.fx.node.map_aggregate(node.args[0], lambda a: env[a.name] if isinstance(a, torch.fx.Node) else a)
            # buffer mutations (functional BatchNorm's new running stats) come first in the outputs
            n_mut = len(sig.buffers_to_mutate)
            for spec_out, val in zip(list(sig.buffers_to_mutate.values()), outs[:n_mut]):
                mutated[spec_out] = val
            return outs[n_mut:], mutated

def run(name, model, size, dtype):
    torch.manual_seed(0)
    model = model.to(dtype).train()
    x = torch.randn(4, 3, size, size, dtype=dtype)
    labels = torch.randint(10 if name == "small_cnn" else 1000, (4,))
    ep = torch.export.export(model, (x,))
    ops = sorted({str(n.target) for n in ep.graph.nodes if n.op == "call_function"})
    # eager
    eager_params = {k: v.detach().clone().requires_grad_(True) for k, v in model.named_parameters()}
    buffers = {k: v.detach().clone() for k, v in model.named_buffers()}
    out = torch.func.functional_call(model, {**eager_params, **buffers}, (x,))
    nn.functional.cross_entropy(out, labels).backward()
    # interpreted
    params = {k: v.detach().clone().requires_grad_(True) for k, v in model.named_parameters()}
    buffers2 = {k: v.detach().clone() for k, v in model.named_buffers()}
    outs, mutated = interpret(ep, params, buffers2, x)
    nn.functional.cross_entropy(outs[0], labels).backward()
    gdiff = max((params[k].grad - eager_params[k].grad).abs().max().item() for k in params)
    odiff = (outs[0] - out).abs().max().item()
    print(f"{name} {dtype}: {len(ops)} distinct ops, logits max|diff| {odiff:.3g}, grads max|diff| {gdiff:.3g}, "
          f"buffers returned as outputs {len(mutated)} (the rest mutated in place)")
    print("  ops:", ", ".join(o.replace("aten.", "") for o in ops))
    return ep, params, buffers2, x, labels

def main():
    for name, make, size in [("small_cnn", SmallCNN, 32), ("resnet18", torchvision.models.resnet18, 224)]:
        run(name, make(), size, torch.float64)
    # step time, float32 CPU, interleaved: eager forward+backward vs interpreted
    torch.set_num_threads(2)
    for name, make, size, batch in [("small_cnn", SmallCNN, 32, 32), ("resnet18", torchvision.models.resnet18, 224, 8)]:
        torch.manual_seed(0)
        model = make().train()
        x = torch.randn(batch, 3, size, size)
        labels = torch.randint(10, (batch,))
        ep = torch.export.export(model, (x,))
        params = {k: v.detach().clone().requires_grad_(True) for k, v in model.named_parameters()}
        buffers = {k: v.detach().clone() for k, v in model.named_buffers()}
        scripted = torch.jit.script(make().train())
        scripted.load_state_dict(model.state_dict())
        def eager():
            model.zero_grad(set_to_none=True)
            nn.functional.cross_entropy(model(x), labels).backward()
        def script():  # TorchScript's profiling executor: what `run --model-file` trains
            scripted.zero_grad(set_to_none=True)
            nn.functional.cross_entropy(scripted(x), labels).backward()
        def interp():
            for p in params.values(): p.grad = None
            outs, _ = interpret(ep, params, buffers, x)
            nn.functional.cross_entropy(outs[0], labels).backward()
        arms = (("eager", eager), ("interp", interp), ("script", script))
        for _, f in arms:
            for _ in range(5): f()  # the script's executor profiles, then optimises
        t = {label: [] for label, _ in arms}
        for block in range(7):
            for label, f in arms:
                t0 = time.perf_counter(); f(); t0 = time.perf_counter() - t0
                t[label].append(t0)
        for label in ("interp", "script"):
            ratios = [b / a for a, b in zip(t["eager"], t[label])]
            print(f"{name} b{batch} float32 CPU: {label} {statistics.median(t[label])*1e3:.1f} ms vs eager "
                  f"{statistics.median(t['eager'])*1e3:.1f} ms: ratio median {statistics.median(ratios):.3f} "
                  f"[{min(ratios):.3f}, {max(ratios):.3f}] over 7 interleaved blocks")
        train_flags = {n.args[5] for n in ep.graph.nodes if n.op == "call_function" and "batch_norm" in str(n.target)}
        print(f"  batch_norm's training argument in the exported graph: {train_flags} (baked in at export)")


if __name__ == "__main__":
    main()
