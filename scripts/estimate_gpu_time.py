#!/usr/bin/env python3
"""Estimate each suite's wall time at today's default budget from earlier results of one GPU kind.

    scripts/estimate_gpu_time.py RESULT.json [RESULT.json.partial ...]

A plan, not a measurement (docs/gpu.md, "Sizing the whole suite"): per case, from the earlier
runs' median step time and warm-up length of every ok arm and, where the run had at least 3
blocks, the SD of its paired log-ratios against the baseline arm:

- blocks: the first look (5, 8, 13, 20) at which every comparison's t-interval at the look
  confidence (1 - 0.05/4) is precise to 0.5% or wholly outside the 2% band; 20 when none is;
  5 for a case measured by one block only (a --quick smoke run: noise unknown);
- the first trial of an arm: BUILD_S (assumed, not measured) + its warm-up steps + one untimed
  step + the timed steps (at least 5, at least 0.5 s);
- every later trial of a kept (in-process) arm: a re-warm of one window (5 steps) + one untimed
  step + the timed steps;
- a fresh-process arm pays PROCESS_S (assumed) + the first trial's cost in every block.

Later files win for a case seen twice. Python's standard library only.
"""
import json
import math
import statistics
import sys

BUILD_S = 0.5      # assumed: model construction and copy to the device
PROCESS_S = 3.0    # assumed: a trial process's start, LibTorch load and CUDA initialisation
LOOKS = [5, 8, 13, 20]
T_QUANTILE = {4: 4.315, 7: 3.335, 12: 2.934, 19: 2.759}  # t(df), two-sided 98.75% (1 - 0.05/4)
PRECISION = 0.005
BAND = 0.02
WINDOW = 5
TRIAL_MIN_S = 0.5
TRIAL_MIN_STEPS = 5


def load(path):
    with open(path) as f:
        doc = json.load(f)
    return doc.get("result", doc)


def settles(ratio, sd, blocks):
    half = T_QUANTILE[blocks - 1] * sd / math.sqrt(blocks)
    lo, hi = math.log(ratio) - half, math.log(ratio) + half
    precise = math.exp(half) - 1 <= PRECISION
    outside = hi < math.log(1 - BAND) or lo > math.log(1 + BAND)
    inside = lo > math.log(1 - BAND) and hi < math.log(1 + BAND)
    return precise or outside or inside


def blocks_needed(case):
    arms = [a for a in case["arms"] if a["status"] == "ok" and a["trials"]]
    base = next((a for a in arms if a.get("baseline")), None)
    if base is None or len(base["trials"]) < 3:
        return LOOKS[0]
    worst = LOOKS[0]
    by_block = {t["block"]: t["throughput_samples_per_s"] for t in base["trials"]}
    for arm in arms:
        if arm is base:
            continue
        logs = [math.log(t["throughput_samples_per_s"] / by_block[t["block"]])
                for t in arm["trials"] if t["block"] in by_block and by_block[t["block"]] > 0]
        if len(logs) < 3:
            continue
        ratio, sd = math.exp(statistics.mean(logs)), statistics.stdev(logs)
        look = next((n for n in LOOKS if settles(ratio, sd, n)), LOOKS[-1])
        worst = max(worst, look)
    return worst


def arm_trial_s(arm, first):
    steps = [statistics.median(t["step_times_ms"]) / 1000 for t in arm["trials"] if t["step_times_ms"]]
    step = statistics.median(steps)
    warm = statistics.median(t["warmup_steps"] for t in arm["trials"])
    timed = max(TRIAL_MIN_STEPS, math.ceil(TRIAL_MIN_S / step)) * step
    return (BUILD_S + warm * step if first else WINDOW * step) + step + timed


def case_s(case, fresh_process):
    blocks = blocks_needed(case)
    total = 0.0
    for arm in case["arms"]:
        if arm["status"] != "ok" or not arm["trials"]:
            continue
        first = arm_trial_s(arm, first=True)
        if fresh_process:
            total += blocks * (PROCESS_S + first)
        else:
            total += first + (blocks - 1) * arm_trial_s(arm, first=False)
    return blocks, total


# A --quick run's model stands for the default run's (docs/cli.md: resnet18 for resnet50).
DEFAULT_OF_QUICK = {"resnet18": "resnet50", "vit_ti_16": "vit_b_16", "vit_s_16": "vit_b_16"}


def case_key(suite, case):
    params = dict(case["params"])
    if "model" in params:
        params["model"] = DEFAULT_OF_QUICK.get(params["model"], params["model"])
    # The default batch per model differs from the quick one; the largest and the launch-bound
    # small batches (8) are cases of their own.
    if params.get("batch") != "largest" and not (params.get("batch", "").isdigit() and int(params["batch"]) <= 16):
        params.pop("batch", None)
    return suite + "|" + json.dumps(params, sort_keys=True)


def main(paths):
    if not paths:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    # One entry per case of the default run, whatever batch (and quick model) measured it: a run of several blocks wins over a one-block smoke run, a later file over an
    # earlier one.
    cases = {}  # key -> (blocks measured, suite, isolation, case, source)
    for path in paths:
        result = load(path)
        for suite in result["suites"]:
            for case in suite["cases"]:
                measured = max((len(a["trials"]) for a in case["arms"]), default=0)
                key = case_key(suite["name"], case)
                if key in cases and cases[key][0] > 1 and measured <= 1:
                    continue
                cases[key] = (measured, suite["name"], suite.get("isolation", "in_process"), case, path)
    suites = {}
    print(f"{'case':70} {'blocks':>6} {'est. s':>7}  source")
    for _, suite, isolation, case, path in sorted(cases.values(), key=lambda v: v[3]["name"]):
        name = case["name"]
        if not any(a["status"] == "ok" and a["trials"] for a in case["arms"]):
            continue
        blocks, seconds = case_s(case, isolation == "fresh_process")
        suites[suite] = suites.get(suite, 0) + seconds
        print(f"{name[:70]:70} {blocks:>6} {seconds:>7.1f}  {path.split('/')[-1]}")
    print()
    for suite, seconds in sorted(suites.items()):
        print(f"{suite:24} {seconds:7.1f} s")
    print(f"{'all of the above':24} {sum(suites.values()):7.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
