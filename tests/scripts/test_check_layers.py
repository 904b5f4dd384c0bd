"""scripts/check-layers.py: the harness as it is passes, and each kind of arrow that runs back up,
made in a small tree of the same shape, fails with its line. docs/ARCHITECTURE.md's picture and
its table of libraries name every library of harness/ and no other.

    test_check_layers.py PROJECT_ROOT
"""

import pathlib
import re
import subprocess
import sys
import tempfile


def check(root, *extra):
    script = pathlib.Path(sys.argv[1]) / "scripts" / "check-layers.py"
    return subprocess.run([sys.executable, str(script), "--root", str(root), *extra], capture_output=True, text=True)


def library(root, name, links, files):
    base = root / "harness" / name
    (base / "src").mkdir(parents=True)
    (base / "include" / "tipbench" / name).mkdir(parents=True)
    link_line = f"target_link_libraries(tipbench_{name} PUBLIC {' '.join('tipbench::' + l for l in links)})\n"
    (base / "CMakeLists.txt").write_text(f"add_library(tipbench_{name} src/a.cpp)\n" + (link_line if links else ""))
    for stem, includes in files.items():
        text = "".join(f'#include "{i}"\n' for i in includes)
        (base / "include" / "tipbench" / name / f"{stem}.h").write_text("#pragma once\n" + text)
        (base / "src" / f"{stem}.cpp").write_text(f'#include "tipbench/{name}/{stem}.h"\n')


def tree(kind):
    root = pathlib.Path(tempfile.mkdtemp(prefix="layers-"))
    low = {"base": []}
    high = {"top": ["tipbench/low/base.h"]}
    if kind == "library circle":
        low = {"base": ["tipbench/high/top.h"]}
    if kind == "file circle":
        low = {"base": ["tipbench/low/other.h"], "other": ["tipbench/low/base.h"]}
    library(root, "low", ["high"] if kind == "library circle" else [], low)
    library(root, "high", [] if kind == "unlinked" else ["low"], high)
    return root


def architecture_doc_problems(root):
    """The libraries the doc's Mermaid picture and its table name, against harness/'s folders."""
    harness = root / "harness"
    libs = {p.name for p in harness.iterdir() if (p / "CMakeLists.txt").is_file() and (p / "src").is_dir()}
    doc = (root / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    picture = re.search(r"```mermaid\n(.*?)```", doc, re.DOTALL)
    table = re.search(r"### The harness's libraries\n(.*?)\n### ", doc, re.DOTALL)
    if not picture or not table:
        return ["docs/ARCHITECTURE.md: no Mermaid picture or no table of the harness's libraries"]
    drawn = set(re.findall(r"<b>(\w+)</b>", picture.group(1)))
    listed = set(re.findall(r"^\| `(\w+)` \|", table.group(1), re.MULTILINE))
    out = []
    for what, names in (("picture", drawn), ("table", listed)):
        if names != libs:
            out.append(f"docs/ARCHITECTURE.md's {what}: missing {sorted(libs - names)}, not in harness/ {sorted(names - libs)}")
    return out


def main():
    failures = []
    real = check(sys.argv[1], "--print")
    if real.returncode != 0 or "none runs back up" not in real.stdout:
        failures.append(f"the project's harness: exit {real.returncode}\n{real.stdout}{real.stderr}")
    if "floor  1  common" not in real.stdout:
        failures.append(f"--print does not put common on the ground floor:\n{real.stdout}")
    cases = {
        "sound": (0, "none runs back up"),
        "library circle": (1, "FAIL libraries in a circle: high, low"),
        "file circle": (1, "FAIL low: files in a circle (an arrow runs back up): low/base, low/other"),
        "unlinked": (1, "FAIL high includes low but its target does not link it: high/top -> low/base"),
    }
    for kind, (code, line) in cases.items():
        got = check(tree(kind))
        if got.returncode != code or line not in got.stdout:
            failures.append(f"{kind}: expected exit {code} and {line!r}, got exit {got.returncode}:\n{got.stdout}{got.stderr}")
    failures += architecture_doc_problems(pathlib.Path(sys.argv[1]))
    missing = check(pathlib.Path(tempfile.mkdtemp(prefix="layers-none-")))
    if missing.returncode != 2 or "no harness/ folder" not in missing.stderr:
        failures.append(f"no harness/: expected exit 2, got {missing.returncode}: {missing.stderr}")
    for f in failures:
        print("FAIL", f)
    print("ok" if not failures else f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
