#!/usr/bin/env python3
"""Reads tipbench's JSON outputs for the device bundle's run.sh (standard library only: the target
has Python but nothing installed for us). Each command prints one line for run.sh's summary.

  bundle_check.py gpus ENV.json               GPUs LibTorch sees, from `tipbench env`
  bundle_check.py result RUN.json DEVICE      check a result (DEVICE: cpu or cuda); exit 1 on a problem
  bundle_check.py slowdown BASE.json SLOW.json PCT
                                              step-time ratio of a run made with --inject-slowdown PCT
                                              over one without; exit 1 unless it is near 1 + PCT/100

A result passes when it is schema 1.x from the expected device, no arm failed or was invalid,
every ok arm has timed steps, and on CUDA every ok arm recorded the caching allocator's peak (its
reserved peak for an arm that replays a CUDA graph).
The line also states what the GPU paths reported: TorchScript fusion, the largest batch that fit,
the NCCL version behind the ddp arms, pinned host-to-device copy times, nvJPEG's backend and
decode times.
"""
import json
import math
import sys


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def arms(doc):
    for suite in doc.get("suites", []):
        for case in suite.get("cases", []):
            for arm in case.get("arms", []):
                yield suite["name"], case, arm


def gpus(env_path):
    print(len(load(env_path)["fingerprint"].get("gpus", [])))
    return 0


def facts(doc):
    """Short statements of what the CUDA-specific paths did, per suite present."""
    out = []
    fusion, largest, h2d, nvjpeg = {}, {}, [], {}
    graphs = [a for s, _, a in arms(doc) if s == "cuda_graphs" and a.get("arm") == "graph"]
    for suite, case, arm in arms(doc):
        if arm.get("status") != "ok":
            continue
        info = arm.get("info", {})
        if suite == "jit_fusion" and arm.get("arm") == "torchscript":
            for key, value in info.items():
                if key.endswith("fusion"):
                    fusion[value] = fusion.get(value, 0) + 1
        if suite == "checkpointing" and "largest_batch_search" in info:
            largest[arm["arm"]] = info["largest_batch_search"].get("largest", 0)
        if suite == "dataloader":
            copy = arm.get("summary", {}).get("metrics", {}).get("h2d_copy_ms")
            if copy:
                h2d.append(copy["median"])
            decode = arm.get("summary", {}).get("metrics", {}).get("device_decode_ms")
            if arm.get("arm") == "nvjpeg" and decode:
                nvjpeg.setdefault(info.get("decode", "?"), []).append(decode["median"])
    if fusion:
        out.append("torchscript " + ", ".join(f"{k} x{v}" for k, v in sorted(fusion.items())))
    if largest:
        out.append("largest batch " + ", ".join(f"{k}={v}" for k, v in sorted(largest.items())))
    if h2d:
        out.append(f"h2d copy {min(h2d):.3g}-{max(h2d):.3g} ms")
    for backend, times in sorted(nvjpeg.items()):
        out.append(f"{backend}: {min(times):.3g}-{max(times):.3g} ms per batch")
    if graphs:
        ok = sum(a.get("status") == "ok" and a.get("info", {}).get("cuda_graph") is True for a in graphs)
        out.append(f"cuda graph arms captured and replayed {ok}/{len(graphs)}")
    suites = {s for s, _, _ in arms(doc)}
    if "data_parallel" in suites:
        # c10d's backend follows the device: NCCL on GPUs, Gloo on CPUs.
        cuda = doc["context"]["device"].startswith("cuda")
        backend = "NCCL " + doc["context"]["fingerprint"].get("nccl_version", "?") if cuda else "Gloo"
        ddp = [a for s, _, a in arms(doc) if s == "data_parallel" and a.get("arm", "").startswith("ddp")]
        ok = sum(a.get("status") == "ok" for a in ddp)
        out.append(f"ddp arms ok {ok}/{len(ddp)} ({backend})")
    return out


def result(path, device):
    doc = load(path)
    problems = []
    version = str(doc.get("schema_version", ""))
    if not version.startswith("1."):
        problems.append(f"schema_version {version!r}, expected 1.x")
    got = doc.get("context", {}).get("device", "")
    if not got.startswith(device):
        problems.append(f"ran on {got!r}, expected {device}")
    counts, reasons = {}, {}
    for _, _, arm in arms(doc):
        status = arm.get("status", "?")
        counts[status] = counts.get(status, 0) + 1
        if status in ("failed", "invalid"):
            problems.append(f"{arm['name']}: {status}: {arm.get('reason', '')}")
        elif status == "skipped":
            reasons[arm.get("reason", "")] = reasons.get(arm.get("reason", ""), 0) + 1
        elif status == "ok":
            trials = arm.get("trials", [])
            steps = [t for trial in trials for t in trial.get("step_times_ms", [])]
            if not steps or not all(math.isfinite(t) and t > 0 for t in steps):
                problems.append(f"{arm['name']}: no positive finite step times")
            # An arm whose steps replay a CUDA graph records its reserved peak only (its memory is a
            # private pool the allocated bytes do not see: info.memory_in_private_pool).
            peak = "peak_reserved_bytes" if arm.get("info", {}).get("memory_in_private_pool") else "peak_allocated_bytes"
            if device == "cuda" and not all(t.get("memory", {}).get(peak, 0) > 0 for t in trials):
                problems.append(f"{arm['name']}: no CUDA allocator peak recorded ({peak})")
    if not counts:
        problems.append("no arms at all")
    line = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    extra = facts(doc)
    if extra:
        line += "; " + "; ".join(extra)
    if reasons:
        top = max(reasons, key=reasons.get)
        line += f"; skipped e.g.: {top[:100]}"
    if problems:
        print(f"{line}; PROBLEM: {problems[0][:300]}" + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""))
        for p in problems:
            print(p, file=sys.stderr)
        return 1
    print(line)
    return 0


def slowdown(base_path, slow_path, pct):
    base, slow = load(base_path), load(slow_path)
    injected = slow["context"]["settings"].get("inject_slowdown_pct", 0)
    if injected != pct:
        print(f"the slowed run records inject_slowdown_pct {injected}, expected {pct}")
        return 1
    medians = {a["name"]: a["summary"]["step_time_ms"]["median"] for _, _, a in arms(base) if a.get("status") == "ok"}
    ratios = [a["summary"]["step_time_ms"]["median"] / medians[a["name"]]
              for _, _, a in arms(slow) if a.get("status") == "ok" and medians.get(a["name"], 0) > 0]
    if not ratios:
        print("no arm ran in both runs")
        return 1
    want = 1 + pct / 100
    # One block per run: allow half the injected share either way.
    low, high = 1 + 0.5 * pct / 100, 1 + 1.5 * pct / 100
    line = f"step time x{min(ratios):.2f}-x{max(ratios):.2f} with --inject-slowdown {pct:g} (expected about x{want:.2f})"
    ok = all(low <= r <= high for r in ratios)
    print(line if ok else f"{line}; PROBLEM: outside x{low:.2f}-x{high:.2f}")
    return 0 if ok else 1


def main(argv):
    try:
        if len(argv) == 3 and argv[1] == "gpus":
            return gpus(argv[2])
        if len(argv) == 4 and argv[1] == "result":
            return result(argv[2], argv[3])
        if len(argv) == 5 and argv[1] == "slowdown":
            return slowdown(argv[2], argv[3], float(argv[4]))
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"unreadable: {type(e).__name__}: {e}")
        return 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
