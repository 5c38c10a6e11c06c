#!/usr/bin/env python3
"""Checks that the tree's top-level folders depend on each other without a cycle.

usage: scripts/folder-layers.py [--print] [ROOT]

A folder depends on another when one of its C++ files includes a header of the other. Headers are
found as the build finds them: beside the including file, from the repository root
("common/placement/host_spec.h"), or in a folder's public include directory (FOLDER/include/,
"hvdrun/status.h"); a header generated from NAME.in counts as NAME. Includes that resolve to
nothing in the tree (the standard library, dependencies) are left out, and so are unit tests
(foo_test.cc beside foo.cc): they belong to the tests' layer, above every other, and may use its
helpers (tests/e2e/scratch_dir.h). With --print, every
dependency is listed with one include that makes it. Exits 1, naming the folders and an include
along each edge, when the dependencies form a cycle.
"""
import os
import re
import sys

SOURCE_SUFFIXES = (".cc", ".h", ".cu", ".cpp")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)


def tracked_files(root):
    """Every file under root, as a path relative to it, but for build directories and .git."""
    for directory, subdirs, files in os.walk(root):
        relative = os.path.relpath(directory, root)
        if relative == ".":
            subdirs[:] = [d for d in subdirs if d != ".git" and not d.startswith("build")]
        for name in files:
            yield os.path.normpath(os.path.join(relative, name))


def main(argv):
    show = "--print" in argv
    args = [a for a in argv if a != "--print"]
    root = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), ".."))
    files = set()
    for path in tracked_files(root):
        files.add(path[:-3] if path.endswith(".in") else path)
    include_roots = [""] + sorted({p.split("/include/")[0] + "/include/" for p in files if "/include/" in p})

    def resolve(including, name):
        candidates = [os.path.normpath(os.path.join(os.path.dirname(including), name))]
        candidates += [os.path.normpath(prefix + name) for prefix in include_roots]
        return next((c for c in candidates if c in files), None)

    edges = {}  # (from, to) -> "file: #include "..."" that makes it
    for path in sorted(files):
        if not path.endswith(SOURCE_SUFFIXES) or path.endswith("_test.cc") or "/" not in path:
            continue
        try:
            with open(os.path.join(root, path), encoding="utf-8", errors="replace") as source:
                text = source.read()
        except FileNotFoundError:  # a generated header's name; its .in is read instead
            continue
        for name in INCLUDE.findall(text):
            target = resolve(path, name)
            if target is None or "/" not in target:
                continue
            source_folder, target_folder = path.split("/")[0], target.split("/")[0]
            if source_folder != target_folder:
                edges.setdefault((source_folder, target_folder), f'{path}: #include "{name}"')

    graph = {}
    for source_folder, target_folder in edges:
        graph.setdefault(source_folder, set()).add(target_folder)
    if show:
        for (source_folder, target_folder), example in sorted(edges.items()):
            print(f"{source_folder} -> {target_folder}  ({example})")

    # Depth-first search; a back edge closes a cycle.
    state, stack = {}, []

    def visit(folder):
        state[folder] = "open"
        stack.append(folder)
        for successor in sorted(graph.get(folder, ())):
            if state.get(successor) == "open":
                return stack[stack.index(successor):] + [successor]
            if successor not in state:
                cycle = visit(successor)
                if cycle:
                    return cycle
        stack.pop()
        state[folder] = "done"
        return None

    for folder in sorted(graph):
        if folder not in state:
            cycle = visit(folder)
            if cycle:
                print("folder-layers: the top-level folders depend on each other in a cycle: " +
                      " -> ".join(cycle))
                for a, b in zip(cycle, cycle[1:]):
                    print(f"  {a} -> {b}: {edges[(a, b)]}")
                return 1
    print(f"folder-layers: no cycle among {len(set(f for e in edges for f in e))} folders "
          f"({len(edges)} dependencies)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
