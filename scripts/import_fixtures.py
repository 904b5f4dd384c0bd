#!/usr/bin/env python3
"""The first call's fixtures (run.sh first-call's first-call-fixtures.tar.gz, docs/gpu.md) as CPU
tests: each profiled-event list that a run recorded beside the breakdown its trial kept becomes one
pair file, {"profiled": <the events>, "recorded_breakdown": <the trial's breakdown>}, that
ProfiledSteps.RecordedListsReduceToTheBreakdownsTheirRunsRecorded (test_explain) reduces again and
compares. Standard library only.

    scripts/import_fixtures.py TARBALL --into tests/fixtures/profiled/<kind> [--max N]
    scripts/import_fixtures.py --check TARBALL

--into writes at most N pairs (default 4: the smallest of each suite first), named after the arm
and block; --check only says whether every trial breakdown of the results has its event list (exit
1 if not). A list whose arm and block several runs share (a gate's processes) pairs with nothing
and is left out. Exit: 0 done; 1 a check failed; 2 usage or a file that is no such tarball.
"""
import io
import json
import re
import sys
import tarfile

NAME = re.compile(r"^fixtures/profiled\.[A-Za-z0-9_.\-]+\.json$")


def read_tarball(path):
    profiled, results = [], []
    with tarfile.open(path, "r:gz") as tar:
        for member in tar.getmembers():
            if not member.isfile() or member.size > 64 << 20:
                continue
            if NAME.match(member.name):
                profiled.append(json.load(tar.extractfile(member)))
            elif member.name.startswith("fixtures/results/") and member.name.endswith(".json"):
                results.append(json.load(io.TextIOWrapper(tar.extractfile(member), encoding="utf-8")))
    return profiled, results


def recorded_breakdowns(results):
    """(arm, block) -> the trial's breakdown, for every trial of every run result that has one."""
    out = {}
    for doc in results:
        doc = doc.get("result", doc)
        for suite in doc.get("suites", []):
            for case in suite.get("cases", []):
                for arm in case.get("arms", []):
                    for trial in arm.get("trials", []):
                        b = trial.get("breakdown")
                        if b and not b.get("error"):
                            out.setdefault((arm["name"], trial["block"]), []).append(b)
    return out


def pairs(profiled, results):
    recorded = recorded_breakdowns(results)
    by_key = {}
    for p in profiled:
        if isinstance(p.get("arm"), str) and isinstance(p.get("block"), int):
            by_key.setdefault((p["arm"], p["block"]), []).append(p)
    out, missing = [], []
    for key, breakdowns in sorted(recorded.items()):
        lists = by_key.get(key, [])
        if len(lists) == 1 and len(breakdowns) == 1:
            out.append((key, lists[0], breakdowns[0]))
        elif not lists:
            missing.append(key)
    return out, missing


def stem(arm, block):
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", arm.replace("/", ".").replace(":", "-")) + f".b{block}"


def main(argv):
    if len(argv) == 3 and argv[1] == "--check":
        found, missing = pairs(*read_tarball(argv[2]))
        if missing or not found:
            print(f"{len(found)} breakdown(s) with their events; without: {missing[:3]}")
            return 1
        print(f"{len(found)} breakdown(s), each with the event list it was reduced from")
        return 0
    if len(argv) >= 4 and argv[2] == "--into":
        most = int(argv[argv.index("--max") + 1]) if "--max" in argv else 4
        found, _ = pairs(*read_tarball(argv[1]))
        found.sort(key=lambda item: len(json.dumps(item[1])))
        written, suites = 0, set()
        for (arm, block), events, breakdown in found:
            suite = arm.split("/")[0]
            if written >= most or suite in suites:
                continue
            suites.add(suite)
            path = f"{argv[3]}/{stem(arm, block)}.json"
            with open(path, "w", encoding="utf-8") as f:
                json.dump({"profiled": events, "recorded_breakdown": breakdown}, f, separators=(",", ":"))
            print(path)
            written += 1
        return 0
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (OSError, ValueError, tarfile.TarError) as e:
        print(f"import_fixtures: {e}", file=sys.stderr)
        sys.exit(2)
