#!/usr/bin/env python3
"""How long `make quick` and `make test` took, stage by stage, from their own logs.

  scripts/ci-times.py [--log FILE] [--all | --last] [--tus BUILD_DIR] [--tests BUILD_DIR] [--top N]
  scripts/ci-times.py --costs BUILD_DIR > tests/ctest-costs.txt

Without options: the last cold and the last warm run of each make target that .times/stages.tsv
holds (scripts/stage_times.sh writes it), each stage's wall time and the build stages' ccache
counts. A run is cold when its build stages compiled at least one file and ccache answered under
half of the compiles; warm when it answered at least half; "nothing to build" when nothing was
compiled. A stage that ran beside the others ("... (background)") is not counted in the total.
  --all             every run in the log, oldest first
  --last            the last run only (make quick and make test end with it)
  --tus BUILD_DIR   the slowest steps (translation units, links) of BUILD_DIR's last ninja run
                    (.ninja_log), with that run's job time and wall time
  --tests BUILD_DIR the slowest tests of BUILD_DIR's last ctest run (Testing/Temporary/LastTest.log)
  --top N           rows for --tus and --tests (default 20)
  --costs BUILD_DIR every test's time in BUILD_DIR's last ctest run, in ctest's cost-file format
                    (Testing/Temporary/CTestCostData.txt): how tests/ctest-costs.txt is refreshed
Exit: 0 printed; 2 a file missing or unreadable.
"""
import argparse
import collections
import pathlib
import re
import sys

Stage = collections.namedtuple("Stage", "started run target name seconds rc hits misses")


def read_stages(path):
    stages = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        fields = line.split("\t")
        if len(fields) != 8 or not fields[4].isdigit():
            continue  # a row cut short by an interrupted run
        stages.append(Stage(*fields[:4], int(fields[4]), fields[5], fields[6], fields[7]))
    return stages


def runs_of(stages):
    runs = collections.OrderedDict()
    for s in stages:
        runs.setdefault(s.run, []).append(s)
    return list(runs.values())


def warmth(run):
    hits = sum(int(s.hits) for s in run if s.hits.isdigit())
    misses = sum(int(s.misses) for s in run if s.misses.isdigit())
    if hits + misses == 0:
        return "nothing to build", hits, misses
    return ("warm" if hits >= misses else "cold"), hits, misses


def minutes(seconds):
    return f"{seconds // 60} min {seconds % 60:02d} s"


def print_run(run):
    kind, hits, misses = warmth(run)
    total = sum(s.seconds for s in run if not s.name.endswith("(background)"))
    failed = [s.name for s in run if s.rc != "0"]
    print(f"make {run[0].target}, started {run[0].started}: {kind} "
          f"(ccache answered {hits} of {hits + misses} compiles)" + (f"; FAILED: {', '.join(failed)}" if failed else ""))
    width = max(len(s.name) for s in run)
    for s in run:
        cache = f"  ccache {s.hits} hits, {s.misses} misses" if s.hits.isdigit() else ""
        print(f"  {s.name:<{width}}  {s.seconds:>6} s{cache}")
    print(f"  {'total':<{width}}  {total:>6} s  ({minutes(total)})")
    print()


def print_summary(stages, show_all, last):
    runs = runs_of(stages)
    if last:
        print_run(runs[-1])
        return
    if show_all:
        for run in runs:
            print_run(run)
        return
    latest = collections.OrderedDict()
    for run in runs:
        kind = warmth(run)[0]
        latest[(run[0].target, "cold" if kind == "cold" else "warm")] = run
    for key in sorted(latest, key=lambda k: (k[0] != "quick", k[0], k[1])):
        print_run(latest[key])


def ninja_invocations(log):
    """The steps of each ninja invocation in .ninja_log, oldest first. Ninja appends a step when it
    ends, with times from its own start: end times grow within an invocation and fall back at the
    next one."""
    invocations, last_end = [], None
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        fields = line.split("\t")
        if line.startswith("#") or len(fields) < 4 or not fields[0].isdigit() or not fields[1].isdigit():
            continue
        start, end = int(fields[0]), int(fields[1])
        if last_end is None or end < last_end:
            invocations.append([])
        invocations[-1].append((start, end, fields[3]))
        last_end = end
    return invocations


def print_tus(build_dir, top):
    log = build_dir / ".ninja_log"
    invocations = ninja_invocations(log)
    if not invocations:
        print(f"{log}: no build steps")
        return
    steps = invocations[-1]
    jobs = sorted(((end - start) / 1000, out) for start, end, out in steps)
    wall = (max(e for _, e, _ in steps) - min(s for s, _, _ in steps)) / 1000
    print(f"{build_dir}, its last build: {len(jobs)} steps, {sum(t for t, _ in jobs):.0f} job-s, {wall:.0f} s wall")
    for seconds, out in reversed(jobs[-top:]):
        print(f"  {seconds:7.1f} s  {out}")
    print()


def test_times(build_dir):
    """(seconds, name) of every test in BUILD_DIR's last ctest run, longest first."""
    log = build_dir / "Testing" / "Temporary" / "LastTest.log"
    text = log.read_text(encoding="utf-8", errors="replace")
    times = re.findall(r'^\d+/\d+ Testing: (\S+)\n(?:.*\n)*?Test time = +([\d.]+) sec', text, re.M)
    return log, sorted(((float(t), name) for name, t in times), reverse=True)


def print_costs(build_dir):
    _, rows = test_times(build_dir)
    for seconds, name in sorted(rows, key=lambda r: r[1]):
        print(f"{name} 1 {seconds:.3f}")
    print("---")


def print_tests(build_dir, top):
    log, rows = test_times(build_dir)
    print(f"{log}: {len(rows)} tests, {sum(t for t, _ in rows):.0f} s of test time")
    for seconds, name in rows[:top]:
        print(f"  {seconds:7.1f} s  {name}")
    print()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--log", type=pathlib.Path, default=pathlib.Path(__file__).resolve().parent.parent / ".times" /
                        "stages.tsv")
    parser.add_argument("--all", action="store_true")
    parser.add_argument("--last", action="store_true")
    parser.add_argument("--tus", type=pathlib.Path)
    parser.add_argument("--tests", type=pathlib.Path)
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--costs", type=pathlib.Path)
    args = parser.parse_args()
    try:
        if args.costs:
            print_costs(args.costs)
            return 0
        if args.tus or args.tests:
            if args.tus:
                print_tus(args.tus, args.top)
            if args.tests:
                print_tests(args.tests, args.top)
            return 0
        stages = read_stages(args.log) if args.log.exists() else []
        if not stages:
            print(f"{args.log}: no stage recorded yet (make quick and make test write it)")
            return 0
        print_summary(stages, args.all, args.last)
    except OSError as e:
        print(f"ci-times: {e.filename}: {e.strerror}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
