#!/usr/bin/env python3
"""The harness's layers, drawn from its includes and checked (docs/ARCHITECTURE.md, "The harness's
libraries").

    check-layers.py [--root DIR] [--print]

A room is one concept: a header and its source of the same name in one library
(harness/<library>/include/tipbench/<library>/<name>.h, harness/<library>/src/<name>.cpp and a
private src/<name>.h). An arrow is an include. Checked:
  1. the libraries' arrows form no circle (every arrow runs down: CMake enforces this too, since a
     library sees only the headers of the targets it links);
  2. every arrow between libraries is one its CMake target links, directly or through another
     (a header no source includes is not compiled, so the build would not see it);
  3. inside each library, the rooms' arrows form no circle: no arrow runs back up.
--print lists the libraries floor by floor (the ground first) with their lines and what each uses.
Exit 0: all hold; 1: a check failed (each failure on one line); 2: bad usage or no harness/ found.
"""

import argparse
import collections
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
LINK = re.compile(r"target_link_libraries\(\s*tipbench_(\w+)([^)]*)\)", re.DOTALL)


def libraries(harness):
    """The library folders: each has a CMakeLists.txt and a src/ folder."""
    return sorted(p.name for p in harness.iterdir() if (p / "CMakeLists.txt").is_file() and (p / "src").is_dir())


def room_of(path, lib):
    return f"{lib}/{path.stem}"


def arrows(harness, libs):
    """{room: {room it includes}} and {room: lines}."""
    out = collections.defaultdict(set)
    lines = collections.Counter()
    for lib in libs:
        for path in sorted((harness / lib).rglob("*")):
            if path.suffix not in (".h", ".cpp") or not path.is_file():
                continue
            room = room_of(path, lib)
            text = path.read_text(encoding="utf-8")
            lines[room] += text.count("\n")
            out.setdefault(room, set())
            for target in INCLUDE.findall(text):
                parts = target.split("/")
                if len(parts) == 3 and parts[0] == "tipbench" and parts[1] in libs:
                    other = f"{parts[1]}/{pathlib.Path(parts[2]).stem}"
                elif len(parts) == 1 and (path.parent / target).is_file():
                    other = f"{lib}/{pathlib.Path(target).stem}"  # a private header beside it
                else:
                    continue  # another part of the project, or a library outside it
                if other != room:
                    out[room].add(other)
    return out, lines


def declared_links(harness, libs):
    """{library: {harness libraries its target links}}, from its CMakeLists.txt."""
    links = {}
    for lib in libs:
        text = (harness / lib / "CMakeLists.txt").read_text(encoding="utf-8")
        named = set()
        for target, args in LINK.findall(text):
            if target == lib:
                named |= {m for m in re.findall(r"tipbench::(\w+)", args) if m in libs}
        links[lib] = named
    return links


def closure(links, lib):
    seen, todo = set(), list(links[lib])
    while todo:
        x = todo.pop()
        if x not in seen:
            seen.add(x)
            todo.extend(links.get(x, ()))
    return seen


def circles(graph):
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def floors(graph):
    """Floor 1: uses nothing here; floor n: uses something on floor n-1 (graph must be acyclic)."""
    floor = {}

    def of(v):
        if v not in floor:
            floor[v] = 1 + max((of(w) for w in graph.get(v, ())), default=0)
        return floor[v]

    for v in graph:
        of(v)
    return floor


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=pathlib.Path(__file__).resolve().parent.parent, type=pathlib.Path,
                    help="the project's root (default: this script's checkout)")
    ap.add_argument("--print", action="store_true", help="list the libraries floor by floor")
    args = ap.parse_args()
    harness = args.root / "harness"
    if not harness.is_dir():
        print(f"error: {harness}: no harness/ folder", file=sys.stderr)
        return 2
    libs = libraries(harness)
    rooms, lines = arrows(harness, libs)
    lib_graph = {lib: set() for lib in libs}
    uses = collections.defaultdict(set)  # (lib, other) -> the rooms' arrows between them
    for room, targets in rooms.items():
        for t in targets:
            a, b = room.split("/")[0], t.split("/")[0]
            if a != b:
                lib_graph[a].add(b)
                uses[(a, b)].add(f"{room} -> {t}")
    failures = []
    for comp in circles(lib_graph):
        failures.append(f"libraries in a circle: {', '.join(comp)}")
    links = declared_links(harness, libs)
    for (a, b), pairs in sorted(uses.items()):
        if b not in closure(links, a):
            failures.append(f"{a} includes {b} but its target does not link it: {sorted(pairs)[0]}")
    for lib in libs:
        inside = {r: {t for t in ts if t.startswith(lib + "/")} for r, ts in rooms.items() if r.startswith(lib + "/")}
        for comp in circles(inside):
            failures.append(f"{lib}: files in a circle (an arrow runs back up): {', '.join(comp)}")
    if args.print and not any(f.startswith("libraries in a circle") for f in failures):
        floor = floors(lib_graph)
        for lib in sorted(libs, key=lambda x: (floor[x], x)):
            total = sum(n for r, n in lines.items() if r.startswith(lib + "/"))
            below = ", ".join(sorted(lib_graph[lib])) or "-"
            print(f"floor {floor[lib]:2d}  {lib:12s} {total:5d} lines  uses: {below}")
    for f in failures:
        print(f"FAIL {f}")
    if not failures:
        total_arrows = sum(len(t) for t in rooms.values())
        print(f"ok: {len(libs)} libraries, {len(rooms)} rooms, {total_arrows} arrows, none runs back up")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
