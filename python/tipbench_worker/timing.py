"""A trial's steps timed as the C++ harness times its own (harness/device/src/step_timer.cpp,
memory_probe.cpp), in this process, where they run: on CUDA an event recorded after each step on
the current stream (one untimed step first, not waited for, so the first timed step holds no
launch latency), on a CPU the monotonic clock and the process's CPU time per step. Memory: CUDA
the caching allocator's peaks since the trial's first step and since its first timed step; a CPU
the peak resident set (VmHWM, reset through /proc/self/clear_refs) over the resident set before
the model was built."""

import gc
import time

import torch


def _status_kib(name):
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(name + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _reset_peak_rss():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


class TrialMemory:
    """Peaks of one trial: begin() at its first warm-up step, begin_timed() before its timed steps.

    `private_pool`: the step replays CUDA graphs (reduce-overhead's cudagraph trees), whose
    activations and workspace live in a private pool the caching allocator hands out once, at
    recording, and whose replays allocate nothing (cudagraph_trees.py: reconstruct_outputs builds
    the outputs on the pool's raw pointers). Its allocated bytes would leave all that out, so such
    a trial reports its reserved peak only, which holds the pool, and no allocated peak to compare."""

    def __init__(self, device, private_pool=False):
        self.device = device
        self.private_pool = private_pool
        self.rss_before_kib = _status_kib("VmRSS")  # before the model: what the trial's growth is over
        self.untimed_peak_allocated = 0

    def begin(self):
        if self.device.type == "cuda":
            # As the harness's probe begins (memory_probe.cpp): the cache emptied first, so blocks
            # cached while preparing (an eager twin's steps, autotuning buffers) are in no peak.
            gc.collect()
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats(self.device)
        else:
            self.hwm_resets = _reset_peak_rss()

    def begin_timed(self):
        if self.device.type == "cuda":
            self.untimed_peak_allocated = torch.cuda.max_memory_allocated(self.device)
            self.untimed_peak_reserved = torch.cuda.max_memory_reserved(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)

    def end(self):
        if self.device.type == "cuda":
            timed = torch.cuda.max_memory_allocated(self.device)
            reserved = max(torch.cuda.max_memory_reserved(self.device), self.untimed_peak_reserved)
            if self.private_pool:
                return {"peak_reserved_bytes": reserved}
            return {
                "peak_allocated_bytes": max(timed, self.untimed_peak_allocated),
                "peak_reserved_bytes": reserved,
                "timed_peak_allocated_bytes": timed,
            }
        hwm = _status_kib("VmHWM")
        if not getattr(self, "hwm_resets", False) or hwm is None or self.rss_before_kib is None:
            return {}
        return {"peak_rss_growth_bytes": max(0, hwm - self.rss_before_kib) * 1024}


def timed_steps(step, device, count):
    """Per-step wall times (ms) and, on a CPU, process CPU times (ms) of `count` steps."""
    if device.type == "cuda":
        events = [torch.cuda.Event(enable_timing=True) for _ in range(count + 1)]
        for event in events:  # creates the CUDA events now, outside the timed region
            event.record()
        torch.cuda.current_stream(device).synchronize()
        step()  # untimed, not waited for: the device stays busy while the first timed step launches
        events[0].record()
        for k in range(count):
            step()
            events[k + 1].record()
        events[-1].synchronize()
        return [events[k].elapsed_time(events[k + 1]) for k in range(count)], []
    walls, cpus = [], []
    wall, cpu = time.perf_counter_ns(), time.process_time_ns()
    for _ in range(count):
        step()
        wall_now, cpu_now = time.perf_counter_ns(), time.process_time_ns()
        walls.append((wall_now - wall) / 1e6)
        cpus.append((cpu_now - cpu) / 1e6)
        wall, cpu = wall_now, cpu_now
    return walls, cpus
