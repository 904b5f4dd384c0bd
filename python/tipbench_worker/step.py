"""PyTorch's default training step, as tipbench's C++ step runs it (suites/common/training.cpp):
synthetic images and labels staged on the device, zero_grad() (set_to_none), forward and
cross-entropy under autocast for bf16/fp16, backward (fp16 through GradScaler), SGD with momentum
0.9 and lr 0.01 stepped by torch.optim's default implementation for the device. With `compile`,
the model runs through torch.compile: forward and backward (AOTAutograd's joint graph) compiled,
the loss and the optimizer step eager, as PyTorch's tutorials write the loop."""

import copy
import math
import os
import time

import torch

from . import models

PRECISIONS = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}
COMPILE_MODES = ("default", "max-autotune-no-cudagraphs", "reduce-overhead")
# The numerics check's relative tolerance: 8 units in the last place of the narrowest format the
# step's matrix work may run in (TF32's 10-bit mantissa for fp32: cuDNN allows it by default).
TOLERANCE = {"fp32": 8 * 2.0**-10, "bf16": 8 * 2.0**-7, "fp16": 8 * 2.0**-10}


def dynamo_counts():
    """Graphs compiled and graph breaks so far in this process (torch._dynamo's counters)."""
    from torch._dynamo.utils import counters

    return {
        "graphs": int(counters["stats"]["unique_graphs"]),
        "graph_breaks": int(sum(counters["graph_break"].values())),
        "graph_break_reasons": sorted(counters["graph_break"])[:5],
        # reduce-overhead that ran plain kernels: Inductor skipped its CUDA graphs (a mutated
        # input, a CPU tensor, dynamic shapes) and only counted it (cudagraph_utils.py,
        # output_code.py: counters["inductor"]["cudagraph_skips"]).
        "cudagraph_skips": int(counters["inductor"]["cudagraph_skips"]),
    }


class TrainingStep:
    def __init__(self, spec):
        self.device = torch.device(spec["device"])
        self.precision = spec["precision"]
        self.autocast_dtype = PRECISIONS[self.precision]
        self.channels_last = spec["channels_last"]
        recipe = spec.get("recipe")
        # A recipe's lines run where recipe.py runs them, with the names it gives them.
        names = {"torch": torch, "nn": torch.nn, "os": os, "device": self.device}
        for line in recipe["setup"] if recipe else ():
            exec(line, names)
        torch.manual_seed(spec["seed"])
        if spec.get("model_file"):  # its train program: in training mode already (the export baked it in)
            self.model = models.load_model_file(spec["model_file"], spec["model_file_format"], self.device)
        else:
            self.model = models.build_reference(spec["model"]).to(self.device).train()
        if self.channels_last:
            self.model = self.model.to(memory_format=torch.channels_last)
        side, classes = spec["image_size"], spec["classes"]
        self.images = torch.randn(spec["batch"], 3, side, side, device=self.device)
        if self.channels_last:
            self.images = self.images.contiguous(memory_format=torch.channels_last)
        self.labels = torch.randint(classes, (spec["batch"],), device=self.device)
        self.parameters = sum(p.numel() for p in self.model.parameters() if p.requires_grad)
        self.forward = self.model
        self.optimizer_kwargs = {}
        self.grad_scaler = self.precision == "fp16"
        if recipe:
            self._apply_recipe(recipe, names)
        self.optimizer, self.scaler = self._optimizer_for(self.model)
        self.compile_mode = spec.get("compile")

    def _apply_recipe(self, recipe, names):
        """recipe.py's lines: the model's after it is built (the forward is what they leave in
        `model`, a compiled one too; the parameters stay the module's), the optimizer's keyword
        arguments, the batch's once on the staged inputs (as the C++ step converts its input once),
        autocast's dtype and the GradScaler."""
        names["model"] = self.model
        for line in recipe["model"]:
            exec(line, names)
        self.forward = names["model"]
        for line in recipe["optimizer_kwargs"]:
            self.optimizer_kwargs.update(eval(f"dict({line})", names))
        names.update(images=self.images, labels=self.labels)
        for line in recipe["batch"]:
            exec(line, names)
        self.images, self.labels = names["images"], names["labels"]
        if recipe["autocast_dtype"]:
            self.autocast_dtype = eval(recipe["autocast_dtype"], names)
        self.grad_scaler = self.grad_scaler or recipe["grad_scaler"]

    def _optimizer_for(self, model):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, **self.optimizer_kwargs)
        scaler = torch.amp.GradScaler(self.device.type) if self.grad_scaler else None
        return optimizer, scaler

    def optimizer_impl(self):
        """The implementation torch.optim steps these parameters with: the recipe's, else its own
        rule's (asked of it)."""
        from torch.optim.optimizer import _default_to_fused_or_foreach

        if self.optimizer_kwargs.get("fused"):
            return "fused"
        if "foreach" in self.optimizer_kwargs:
            return "foreach" if self.optimizer_kwargs["foreach"] else "loop"
        params = [p for p in self.model.parameters()]
        fused, foreach = _default_to_fused_or_foreach(params, differentiable=False, use_fused=False)
        return "fused" if fused else "foreach" if foreach else "loop"

    def run(self, parts=None):
        """One step of (forward, optimizer, scaler), by default the arm's own; returns the loss,
        detached (not read: reading it would synchronize)."""
        forward, optimizer, scaler = parts or (self.forward, self.optimizer, self.scaler)
        optimizer.zero_grad()
        dtype = self.autocast_dtype
        with torch.autocast(self.device.type, dtype=dtype, enabled=dtype is not None):
            loss = torch.nn.functional.cross_entropy(forward(self.images), self.labels)
        if scaler is None:
            loss.backward()
            optimizer.step()
        else:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        return loss.detach()

    def synchronize(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def compile(self, numerics_steps):
        """Compiles the model and checks k compiled steps against k eager steps of a copy made
        before them (same weights, same inputs). Returns what it measured."""
        twin = copy.deepcopy(self.model)
        twin_optimizer, twin_scaler = self._optimizer_for(twin)
        stochastic = self._draws_random_numbers(twin)
        mode = None if self.compile_mode == "default" else self.compile_mode
        self.forward = torch.compile(self.model, mode=mode)
        compiled_losses = []
        started = time.perf_counter()
        for k in range(numerics_steps):
            compiled_losses.append(self.run())
            self.synchronize()
            if k == 0:
                first_step_s = time.perf_counter() - started
                after_first = dynamo_counts()
        compiled_grad_norm = grad_norm(self.model)
        eager_losses = [self.run((twin, twin_optimizer, twin_scaler)) for _ in range(numerics_steps)]
        eager_grad_norm = grad_norm(twin)
        del twin, twin_optimizer, twin_scaler
        counts = dynamo_counts()
        return {
            "compile_s": first_step_s,
            "graphs": counts["graphs"],
            "graphs_after_first_step": after_first["graphs"],
            "graph_breaks": counts["graph_breaks"],
            "graph_break_reasons": counts["graph_break_reasons"],
            "cudagraph_skips": counts["cudagraph_skips"],
            "numerics": numerics(
                self.precision, compiled_losses, eager_losses, compiled_grad_norm, eager_grad_norm, stochastic
            ),
        }

    def _draws_random_numbers(self, model):
        """Whether the training forward depends on the random stream (dropout): two eager forwards of
        a copy under two seeds. Inductor draws its random numbers its own way, so such a step cannot
        be compared with eager number for number."""
        probe = copy.deepcopy(model)
        losses = []
        with torch.no_grad():
            for seed in (1, 2):
                torch.manual_seed(seed)
                with torch.autocast(self.device.type, dtype=self.autocast_dtype, enabled=self.autocast_dtype is not None):
                    losses.append(float(torch.nn.functional.cross_entropy(probe(self.images), self.labels)))
        del probe
        return losses[0] != losses[1]


def grad_norm(model):
    grads = [p.grad.detach().float() for p in model.parameters() if p.grad is not None]
    return float(torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))) if grads else 0.0


def relative_difference(a, b):
    return abs(a - b) / max(abs(a), abs(b), 1e-30)


def numerics(precision, compiled_losses, eager_losses, compiled_grad_norm, eager_grad_norm, stochastic=False):
    """Compiled against eager after the same k steps: the last loss and the gradients' norm, each
    within the precision's tolerance. A value that is not finite (fp16's first steps can overflow
    the scaled gradients) agrees only with the same non-finite value. A step that draws random
    numbers is not compared: `agrees` is None and `stochastic` true."""
    pairs = {
        "loss": (float(compiled_losses[-1]), float(eager_losses[-1])),
        "grad_norm": (compiled_grad_norm, eager_grad_norm),
    }
    out = {"steps": len(compiled_losses), "tolerance": TOLERANCE[precision], "stochastic": stochastic}
    worst = 0.0
    for name, (compiled, eager) in pairs.items():
        finite = math.isfinite(compiled) and math.isfinite(eager)
        out[f"{name}_compiled"] = compiled if math.isfinite(compiled) else str(compiled)
        out[f"{name}_eager"] = eager if math.isfinite(eager) else str(eager)
        if finite:
            worst = max(worst, relative_difference(compiled, eager))
        elif str(compiled) != str(eager):
            worst = math.inf
    out["max_relative_difference"] = worst if math.isfinite(worst) else None
    out["agrees"] = None if stochastic else worst <= TOLERANCE[precision]
    return out
