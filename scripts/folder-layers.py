#!/usr/bin/env python3
"""Checks that the tree's top-level folders depend on each other without a cycle, and so do the
file pairs inside runtime/.

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

Inside runtime/ the same holds for its file pairs: a header and the sources of its name beside it
(name.h, name.cc, name.cu) are one, and a public header, runtime/include/hvdrun/NAME.h, is one with
runtime/NAME.cc, which implements it. So hvdrun/runtime.h, the API, sits with runtime.cc above
everything the runtime is made of: a file that runtime.cc reaches and that includes runtime.h (or
any include that closes a loop among the runtime's parts) is a cycle, and fails the same way.
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
    for path, text in program_sources(root, files):
        for name in INCLUDE.findall(text):
            target = resolve(path, name)
            if target is None or "/" not in target:
                continue
            source_folder, target_folder = path.split("/")[0], target.split("/")[0]
            if source_folder != target_folder:
                edges.setdefault((source_folder, target_folder), f'{path}: #include "{name}"')
    pair_edges = runtime_pair_edges(root, files, resolve)
    if show:
        for (source, target), example in sorted(edges.items()) + sorted(pair_edges.items()):
            print(f"{source} -> {target}  ({example})")

    cycle = find_cycle(edges)
    if cycle:
        print("folder-layers: the top-level folders depend on each other in a cycle: " + " -> ".join(cycle))
        for a, b in zip(cycle, cycle[1:]):
            print(f"  {a} -> {b}: {edges[(a, b)]}")
        return 1
    cycle = find_cycle(pair_edges)
    if cycle:
        print("folder-layers: runtime/'s file pairs include each other in a cycle (an upward include): " +
              " -> ".join(cycle))
        for a, b in zip(cycle, cycle[1:]):
            print(f"  {a} -> {b}: {pair_edges[(a, b)]}")
        return 1
    print(f"folder-layers: no cycle among {len(set(f for e in edges for f in e))} folders "
          f"({len(edges)} dependencies), nor among runtime/'s {len(set(f for e in pair_edges for f in e))} "
          f"file pairs ({len(pair_edges)} dependencies)")
    return 0


def program_sources(root, files):
    """The C++ files that programs are made of (not unit tests), with their text."""
    for path in sorted(files):
        if not path.endswith(SOURCE_SUFFIXES) or path.endswith("_test.cc") or "/" not in path:
            continue
        try:
            with open(os.path.join(root, path), encoding="utf-8", errors="replace") as source:
                yield path, source.read()
        except FileNotFoundError:  # a generated header's name; its .in is read instead
            continue


def runtime_pair(path):
    """The file pair of runtime/ that `path` belongs to: its folder and name without the suffix."""
    stem = os.path.splitext(path)[0]
    public = "runtime/include/hvdrun/"
    return "runtime/" + stem[len(public):] if stem.startswith(public) else stem


def runtime_pair_edges(root, files, resolve):
    """(pair, pair) -> the include that makes it, for the includes between runtime/'s file pairs."""
    edges = {}
    for path, text in program_sources(root, files):
        if not path.startswith("runtime/"):
            continue
        for name in INCLUDE.findall(text):
            target = resolve(path, name)
            if target is None or not target.startswith("runtime/"):
                continue
            source_pair, target_pair = runtime_pair(path), runtime_pair(target)
            if source_pair != target_pair:
                edges.setdefault((source_pair, target_pair), f'{path}: #include "{name}"')
    return edges


def find_cycle(edges):
    """A cycle of the graph that `edges` ((from, to) keys) make, as [a, b, ..., a]; None if there is none."""
    graph = {}
    for source, target in edges:
        graph.setdefault(source, set()).add(target)
    # Depth-first search; a back edge closes a cycle.
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for successor in sorted(graph.get(node, ())):
            if state.get(successor) == "open":
                return stack[stack.index(successor):] + [successor]
            if successor not in state:
                cycle = visit(successor)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
