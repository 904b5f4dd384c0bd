"""`python -m tipbench_worker`: serves the C++ harness's requests until "quit" or the end of stdin.

Requests (one JSON object per line; docs/python-worker.md):
  {"op": "hello"}                      -> protocol, torch's and torchvision's versions, devices
  {"op": "prepare", ...spec}           -> builds the arm's step (and compiles it: times, graphs,
                                          numerics); once per worker
  {"op": "step"}                       -> one step, waited for; the first after a trial starts one
  {"op": "time", "steps": N}           -> N timed steps: times, CPU times, memory
  {"op": "set_aside"}                  -> between two trials of the kept arm: its cached device
                                          memory handed back, so other arms' trials can use it
  {"op": "quit"}
"""

import sys
import time

from . import PROTOCOL
from .protocol import BadRequest, field, open_channel, requests, send


def recipe_of(request):
    """The recipe's Python lines (tipbench's recipe suite sends the lines recipe.py holds), or None."""
    recipe = request.get("recipe")
    if recipe is None:
        return None
    if not isinstance(recipe, dict):
        raise BadRequest('"recipe" must be an object')
    recipe = dict(recipe, op="prepare.recipe")
    out = {name: field(recipe, name, list, []) for name in ("setup", "model", "optimizer_kwargs", "batch")}
    for name, lines in out.items():
        if not all(isinstance(line, str) for line in lines):
            raise BadRequest(f'"recipe.{name}" must be a list of strings')
    out["autocast_dtype"] = field(recipe, "autocast_dtype", str, "")
    out["grad_scaler"] = field(recipe, "grad_scaler", bool, False)
    return out


def triton_unavailable():
    """Why Triton cannot compile kernels on this machine, or None: it builds a small CUDA helper
    module at first use, with a C compiler (CC, else cc, gcc or clang on PATH), Python's headers
    and libcuda.so.1 found by `ldconfig -p` or TRITON_LIBCUDA_PATH (triton/runtime/build.py
    _build, triton/backends/nvidia/driver.py libcuda_dirs); without them every compiled arm would
    fail on its first step."""
    import os
    import shutil
    import sysconfig

    try:
        import triton  # noqa: F401
    except Exception as e:
        return f"no triton module ({type(e).__name__}: {e})"
    compilers = [os.environ.get("CC")] if os.environ.get("CC") else ["cc", "gcc", "clang"]
    if not any(c and shutil.which(c) for c in compilers):
        return f"no C compiler ({', '.join(c for c in compilers if c)}) on PATH; set CC"
    include = sysconfig.get_paths().get("include", "")
    if not os.path.exists(os.path.join(include, "Python.h")):
        return f"no Python.h in {include} (the Python development headers)"
    try:
        from triton.backends.nvidia.driver import libcuda_dirs

        libcuda_dirs()
    except Exception as e:
        return f"libcuda.so.1 not found ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}; set TRITON_LIBCUDA_PATH)"
    return None


class Worker:
    def __init__(self):
        self.step = None
        self.memory = None
        self.in_trial = False

    def hello(self, request):
        try:
            import torch
        except Exception as e:  # no torch in this Python: the arm cannot run here
            return {"ok": False, "unavailable": f"the worker's Python cannot import torch ({type(e).__name__}: {e})"}
        try:
            import torchvision

            vision = torchvision.__version__
        except Exception:
            vision = None
        return {
            "ok": True,
            "protocol": PROTOCOL,
            "python": sys.version.split()[0],
            "torch": torch.__version__,
            "torchvision": vision,
            "cuda_devices": torch.cuda.device_count(),
        }

    def prepare(self, request):
        import torch

        from . import models, step, timing

        if self.step is not None:
            raise BadRequest("this worker is prepared already")
        spec = {
            "device": field(request, "device", str),
            "model": field(request, "model", str),
            "model_file": field(request, "model_file", str, ""),
            "model_file_format": field(request, "model_file_format", str, ""),
            "image_size": field(request, "image_size", int),
            "classes": field(request, "classes", int),
            "batch": field(request, "batch", int),
            "precision": field(request, "precision", str, choices=tuple(step.PRECISIONS)),
            "channels_last": field(request, "channels_last", bool, False),
            "seed": field(request, "seed", int, 0),
            "compile": field(request, "compile", str, "") or None,
            "recipe": recipe_of(request),
        }
        if spec["compile"] is not None and spec["compile"] not in step.COMPILE_MODES:
            raise BadRequest(f'"compile" is {spec["compile"]!r}: one of {", ".join(step.COMPILE_MODES)}')
        for name in ("image_size", "classes", "batch"):
            if not 1 <= spec[name] <= 1 << 20:
                raise BadRequest(f'"{name}" is {spec[name]}: from 1 to {1 << 20}')
        threads = field(request, "threads", int, 0)
        if threads > 0:
            torch.set_num_threads(threads)
        device = torch.device(spec["device"])
        if device.type == "cuda":
            if torch.cuda.device_count() <= (device.index or 0):
                return {"ok": False, "unavailable": f"the worker's torch sees {torch.cuda.device_count()} CUDA device(s), not {device}"}
            torch.cuda.set_device(device)
        # reduce-overhead replays CUDA graphs from a private pool: its allocated bytes miss them.
        self.memory = timing.TrialMemory(device, private_pool=device.type == "cuda" and spec["compile"] == "reduce-overhead")
        if spec["compile"] is not None and device.type == "cuda":
            why = triton_unavailable()
            if why:
                return {"ok": False, "unavailable": f"torch.compile on a GPU needs Triton, which cannot build here: {why}"}
        try:
            self.step = step.TrainingStep(spec)
        except models.ModelUnavailable as e:
            return {"ok": False, "unavailable": str(e)}
        info = {
            "parameters": self.step.parameters,
            "optimizer": "sgd",
            "optimizer_impl": self.step.optimizer_impl(),
            "threads": torch.get_num_threads(),
            # What the step runs with, a recipe's lines applied: its autocast and its input's layout.
            "precision": {None: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}.get(
                self.step.autocast_dtype, str(self.step.autocast_dtype)),
            "channels_last": self.step.images.is_contiguous(memory_format=torch.channels_last),
        }
        if spec["compile"] is not None:
            info["compile"] = self.step.compile(field(request, "numerics_steps", int, 3))
        if spec["recipe"] is not None:  # its first step builds what the lines set up lazily (torch.compile's graphs)
            started = time.perf_counter()
            self.step.run()
            self.step.synchronize()
            info["first_step_s"] = time.perf_counter() - started
        return {"ok": True, "info": info}

    def run_step(self, request):
        prepared = self.prepared()
        if not self.in_trial:
            self.memory.begin()
            self.in_trial = True
        prepared.run()
        prepared.synchronize()
        return {"ok": True}

    def time(self, request):
        from . import step, timing

        prepared = self.prepared()
        count = field(request, "steps", int)
        if not 1 <= count <= 1_000_000:
            raise BadRequest(f'"steps" is {count}: from 1 to 1000000')
        if not self.in_trial:
            self.memory.begin()
        self.memory.begin_timed()
        walls, cpus = timing.timed_steps(prepared.run, prepared.device, count)
        self.in_trial = False
        reply = {"ok": True, "step_times_ms": walls, "step_cpu_times_ms": cpus, "memory": self.memory.end()}
        if prepared.compile_mode is not None:  # graphs so far: more than after the first step are recompiles
            reply["graphs"] = step.dynamo_counts()["graphs"]
        return reply

    def set_aside(self, request):
        """The trial ended and other arms' trials come: what this process caches on the device goes
        back (the harness's own empty_cache cannot reach another process's allocator)."""
        import gc

        import torch

        gc.collect()
        if self.step is not None and self.step.device.type == "cuda":
            torch.cuda.empty_cache()
        return {"ok": True}

    def prepared(self):
        if self.step is None:
            raise BadRequest('"prepare" first')
        return self.step


def main():
    channel, incoming = open_channel()
    worker = Worker()
    handlers = {"hello": worker.hello, "prepare": worker.prepare, "step": worker.run_step, "time": worker.time,
                "set_aside": worker.set_aside}
    for request in requests(incoming):
        if isinstance(request, BadRequest):
            send(channel, {"ok": False, "error": str(request)})
            continue
        if request["op"] == "quit":
            send(channel, {"ok": True})
            return 0
        handler = handlers.get(request["op"])
        try:
            if handler is None:
                raise BadRequest(f'unknown op "{request["op"]}" ({", ".join([*handlers, "quit"])})')
            reply = handler(request)
        except BadRequest as e:
            reply = {"ok": False, "error": str(e)}
        except Exception as e:  # the step's own error (a compile error, OOM): one line, the worker goes on
            import traceback

            traceback.print_exc()  # the whole story in the log
            text = str(e).strip().splitlines()
            reply = {"ok": False, "error": f"{type(e).__name__}: {text[0] if text else ''}".rstrip(": ")}
        send(channel, reply)
    return 0


if __name__ == "__main__":
    sys.exit(main())
