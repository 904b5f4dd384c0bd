#!/usr/bin/env python3
"""Estimate each suite's wall time at today's default budget from earlier results of one GPU kind.

    scripts/estimate_gpu_time.py [--kept-from RESULT.json ...] [--blocks N] RESULT.json [RESULT.json.partial ...]

A plan, not a measurement (docs/gpu.md, "Sizing the whole suite"): per case, from the earlier
runs' median step time and warm-up length of every ok arm and, where the run had at least 3
blocks, the SD of its paired log-ratios against the baseline arm:

- blocks: the first look (5, 8, 13, 20) at which every comparison's t-interval at the look
  confidence (1 - 0.05/4) is precise to 0.5% or wholly outside the 2% band; 20 when none is;
  5 for a case measured by one block only (a --quick smoke run: noise unknown);
- the first trial of an arm: BUILD_S (assumed, not measured) + its warm-up steps + one untimed
  step + the timed steps (at least 5, at least 0.5 s);
- every later trial of a kept arm: a re-warm of one window (5 steps) + one untimed step + the
  timed steps; an arm that is not kept pays the first trial's cost in every block. Which arms are
  kept is read, never assumed, from results of this build (schema 1.13: an arm's
  info.kept_between_trials; --kept-from names more of them, e.g. the first call's smoke runs on
  the GPU kind); an arm no result of this build describes is counted as rebuilt every trial, and
  listed;
- a fresh-process arm pays PROCESS_S (assumed) + the first trial's cost in every block;
- a largest-batch case pays SEARCH_S (assumed, from the H100 log of 2026-11-27: 90-105 s for
  vit_b_16's three amp searches) per arm for its search, which runs when the case starts, inside
  the run's time budget;
- a torch.compile arm (the compile suite, a recipe's python arms) pays its cold compile per trial
  (COMPILE_S by mode, assumed: no GPU has compiled yet) where the result recorded none.

--blocks N plans every case at N blocks instead (3: the floor a time budget keeps each case at).
The total is also given in calls of CALL_S (a device call's stage limit), the first paying
START_S (assumed: the bundle's library check and the first CUDA context).

Later files win for a case seen twice. Python's standard library only.
"""
import json
import math
import statistics
import sys

BUILD_S = 0.5      # assumed: model construction and copy to the device
PROCESS_S = 3.0    # assumed: a trial process's start, LibTorch load and CUDA initialisation
SEARCH_S = 33.0    # assumed from the H100 log: one largest-batch search (about 10 probes)
COMPILE_S = {"default": 60.0, "max_autotune": 180.0, "reduce_overhead": 75.0}  # assumed: one cold compile
CALL_S = 540.0     # a device call's stage limit (TIPBENCH_STAGE_LIMIT_S)
START_S = 30.0     # assumed: the first call's library check and CUDA start
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


def compile_s(suite, arm):
    """A compiled arm's compiles when its worker starts (cold, and warm where timed): as recorded
    (info.compile.cold_s, warm_s), else COMPILE_S of its mode (assumed)."""
    recorded = (arm.get("info") or {}).get("compile")
    if isinstance(recorded, dict) and isinstance(recorded.get("cold_s"), (int, float)) and recorded["cold_s"] > 0:
        warm = recorded.get("warm_s", 0)
        return recorded["cold_s"] + (warm if isinstance(warm, (int, float)) else 0)
    return COMPILE_S.get(arm.get("arm", ""), 0.0) if suite == "compile" else 0.0


def case_s(suite, case, fresh_process, kept, fixed_blocks=None):
    """(blocks, seconds, arms assumed rebuilt) of one case."""
    blocks = fixed_blocks or blocks_needed(case)
    total = 0.0
    unknown = []
    largest = dict(case["params"]).get("batch") == "largest"
    for arm in case["arms"]:
        if arm["status"] != "ok" or not arm["trials"]:
            continue
        first = arm_trial_s(arm, first=True) + compile_s(suite, arm)
        if largest:
            total += SEARCH_S
        if fresh_process:
            total += blocks * (PROCESS_S + first)
            continue
        # A largest-batch arm is never kept (largest_batch.cpp: Keep::never); the rest as recorded.
        is_kept = False if largest else kept.get(kept_key(suite, case, arm))
        if is_kept is None:
            unknown.append(arm["name"])
        if is_kept:
            total += first + (blocks - 1) * arm_trial_s(arm, first=False)
        else:
            total += blocks * first
    return blocks, total, unknown


def kept_key(suite, case, arm):
    """What decides whether an arm is kept: its suite, its arm, and whether its case is a
    largest-batch one (never kept) -- not the model or batch, which a CPU run and a GPU run differ in."""
    largest = dict(case["params"]).get("batch") == "largest"
    return f"{suite}/{arm['arm']}" + ("/largest" if largest else "")


def kept_arms(paths):
    """kept_key -> whether this build keeps the arm, from results that record it
    (info.kept_between_trials, schema 1.13)."""
    kept = {}
    for path in paths:
        for suite in load(path)["suites"]:
            for case in suite["cases"]:
                for arm in case["arms"]:
                    value = (arm.get("info") or {}).get("kept_between_trials")
                    if isinstance(value, bool):
                        kept[kept_key(suite["name"], case, arm)] = value
    return kept


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


def main(argv):
    kept_from, paths, fixed_blocks = [], [], None
    args = iter(argv)
    for a in args:
        if a == "--kept-from":
            kept_from.append(next(args, None) or "")
        elif a == "--blocks":
            fixed_blocks = int(next(args, "0"))
            if fixed_blocks < 1:
                print("--blocks needs a whole number of at least 1", file=sys.stderr)
                return 2
        else:
            paths.append(a)
    if not paths or "" in kept_from:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    kept = kept_arms(kept_from + paths)
    # Where a result of this build records a suite's isolation, it is this build's (preallocate
    # runs in fresh processes since schema 1.10; older results say in_process).
    isolation_now = {suite["name"]: suite.get("isolation") for path in kept_from for suite in load(path)["suites"]}
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
    unknown = []
    print(f"{'case':70} {'blocks':>6} {'est. s':>7}  source")
    for _, suite, isolation, case, path in sorted(cases.values(), key=lambda v: v[3]["name"]):
        name = case["name"]
        if not any(a["status"] == "ok" and a["trials"] for a in case["arms"]):
            continue
        isolation = isolation_now.get(suite) or isolation
        blocks, seconds, rebuilt = case_s(suite, case, isolation == "fresh_process", kept, fixed_blocks)
        unknown += rebuilt
        suites[suite] = suites.get(suite, 0) + seconds
        print(f"{name[:70]:70} {blocks:>6} {seconds:>7.1f}  {path.split('/')[-1]}")
    print()
    for suite, seconds in sorted(suites.items()):
        print(f"{suite:24} {seconds:7.1f} s")
    total = sum(suites.values())
    print(f"{'all of the above':24} {total:7.1f} s")
    calls = math.ceil((total + START_S) / CALL_S)
    print(f"device calls of {CALL_S:.0f} s: {calls} (the first also pays {START_S:.0f} s to start, assumed)")
    if unknown:
        print(f"\n{len(unknown)} arm(s) no result of this build describes, counted as rebuilt every trial "
              "(pass --kept-from with a result of this build):")
        for name in unknown:
            print(f"  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
