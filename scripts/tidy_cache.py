#!/usr/bin/env python3
"""scripts/lint.sh tidy's plan and its cache of clean results (run by lint.sh, not by hand).

  tidy_cache.py plan DATABASE ROOT OUT_DIR CLANG_TIDY CACHE_DIR DIR...
      Chooses one compile command per .cc file under ROOT/DIR... (one without sanitizers) and writes
      OUT_DIR/compile_commands.json and OUT_DIR/sources: one line per file to check, "path<TAB>key
      <TAB>checks" (checks: the extra --checks argument, or "-"), the slowest files of the last run
      first (so that the longest checks start first and the parallel jobs end together), files the
      cache holds as clean left out.
  tidy_cache.py record OUT_DIR CACHE_DIR
      Reads OUT_DIR/done ("path<TAB>key<TAB>seconds<TAB>status" per file checked), keeps the files'
      times for the next plan, removes entries unused for KEEP_DAYS, and prints the slowest files.
      lint.sh itself keeps each clean file's key, as CACHE_DIR/clean/<first two digits>/<key>.

A file's key is the SHA-256 of everything clang-tidy's result on it depends on: clang-tidy's version,
every .clang-tidy of the tree, the checks argument, the compile command (the tree's path replaced,
so that a clone elsewhere shares the cache) and the path and content of every file the compiler
read for it, as the build's own dependency record (ninja -t deps) lists them. A file whose object
is not up to date with those files (built before a change, or never built) gets no key: it is
always checked and its result not kept. CACHE_DIR "off" checks every file and keeps nothing.
"""
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

# Entries not used for this many days are removed, so that the cache stays the size of a few trees.
KEEP_DAYS = 30


def file_digest(path, digests):
    if path not in digests:
        try:
            with open(path, "rb") as f:
                digests[path] = hashlib.sha256(f.read()).hexdigest()
        except OSError:
            digests[path] = None
    return digests[path]


def ninja_deps(build_dir):
    """{object path relative to build_dir: [dependency paths]} for the objects with VALID records;
    none where the build is not Ninja's (then every file is checked, as without a cache)."""
    try:
        text = subprocess.run(["ninja", "-C", build_dir, "-t", "deps"], check=True, capture_output=True,
                              text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    deps, current = {}, None
    for line in text.splitlines():
        if not line.strip():
            current = None
        elif not line.startswith(" "):
            name, _, status = line.partition(": #deps")
            current = [] if status.rstrip().endswith("(VALID)") else None
            if current is not None:
                deps[name] = current
        elif current is not None:
            current.append(line.strip())
    return deps


def object_of(entry):
    words = shlex.split(entry["command"])
    return words[words.index("-o") + 1] if "-o" in words else None


def key_of(entry, root, base, deps, digests):
    directory = entry["directory"]
    output = object_of(entry)
    files = deps.get(os.path.relpath(os.path.join(directory, output), deps["."])) if output else None
    if not files:
        return None
    try:
        built = os.stat(os.path.join(directory, output)).st_mtime_ns
    except OSError:
        return None
    digest = hashlib.sha256(base)
    digest.update(entry["command"].replace(root, "@ROOT@").encode())
    for name in files:
        path = os.path.join(deps["."], name)
        content = file_digest(path, digests)
        if content is None or os.stat(path).st_mtime_ns > built:
            return None
        digest.update(("\0" + name.replace(root, "@ROOT@") + "\0" + content).encode())
    return digest.hexdigest()


def plan(database, root, out_dir, clang_tidy, cache_dir, dirs):
    chosen = {}
    for entry in json.load(open(database)):
        path = os.path.relpath(os.path.join(entry["directory"], entry["file"]), root)
        if path.split("/")[0] not in dirs or not path.endswith(".cc"):
            continue
        if path not in chosen or ("-fsanitize" in chosen[path]["command"] and "-fsanitize" not in entry["command"]):
            chosen[path] = entry
    with open(os.path.join(out_dir, "compile_commands.json"), "w") as f:
        json.dump(list(chosen.values()), f, indent=1)

    use_cache = cache_dir != "off"
    times, keys = {}, {path: None for path in chosen}
    if use_cache:
        os.makedirs(os.path.join(cache_dir, "clean"), exist_ok=True)
        times = read_times(cache_dir)
        version = subprocess.run([clang_tidy, "--version"], check=True, capture_output=True).stdout
        base = version
        for folder, _, names in sorted(os.walk(root)):
            if ".clang-tidy" in names and not os.path.relpath(folder, root).startswith(("build", ".git")):
                config = open(os.path.join(folder, ".clang-tidy"), "rb").read()
                base += config + root_matches_header_filter(config, root)
        build_dir = os.path.dirname(os.path.abspath(database))
        deps = ninja_deps(build_dir)
        deps["."] = build_dir
        digests = {}
        for path, entry in chosen.items():
            keys[path] = key_of(entry, root, base + checks_of(path).encode(), deps, digests)

    cached, todo = 0, []
    for path in chosen:
        key = keys[path]
        entry = key and os.path.join(cache_dir, "clean", key[:2], key)
        if entry and os.path.exists(entry):
            os.utime(entry)
            cached += 1
        else:
            todo.append(path)
    # Longest first; a file never timed counts as the slowest (it may be new and heavy).
    todo.sort(key=lambda p: (-times.get(p, float("inf")), p))
    with open(os.path.join(out_dir, "sources"), "w") as f:
        for path in todo:
            f.write(f"{path}\t{keys[path] or '-'}\t{checks_of(path)}\n")
    state = f"{cached} clean in the cache ({cache_dir})" if use_cache else "the cache off"
    print(f"clang-tidy: {len(chosen)} files, {len(todo)} to check, {state}")


def root_matches_header_filter(config, root):
    """Keys hold the tree's path replaced, but whether a header filter matches a header can depend
    on that path (a tree under a folder named like one of the filter's): that answer is in the key."""
    found = re.search(rb"^HeaderFilterRegex:\s*'(.*)'\s*$", config, re.MULTILINE)
    if not found:
        return b""
    return b"\0root matches the header filter" if re.fullmatch(found.group(1).decode(), root + "/x.h") else b""


def checks_of(path):
    """The static analyzer runs on the programs' code; tests get every other check, at half the cost."""
    return "--checks=-clang-analyzer-*" if path.endswith("_test.cc") else "-"


def read_times(cache_dir):
    times = {}
    try:
        with open(os.path.join(cache_dir, "times")) as f:
            for line in f:
                path, _, seconds = line.rstrip("\n").partition("\t")
                times[path] = float(seconds)
    except (OSError, ValueError):
        pass
    return times


def record(out_dir, cache_dir):
    done = []
    try:
        with open(os.path.join(out_dir, "done")) as f:
            for line in f:
                path, key, seconds, status = line.rstrip("\n").split("\t")
                done.append((path, key, float(seconds), status))
    except FileNotFoundError:
        pass
    if cache_dir != "off":
        times = read_times(cache_dir)
        for path, _, seconds, _ in done:
            times[path] = seconds
        # Atomically: another run may read the times while this one writes them.
        fd, temporary = tempfile.mkstemp(dir=cache_dir)
        with os.fdopen(fd, "w") as f:
            f.writelines(f"{path}\t{seconds:.1f}\n" for path, seconds in sorted(times.items()))
        os.replace(temporary, os.path.join(cache_dir, "times"))
        cutoff = time.time() - KEEP_DAYS * 86400
        for folder, _, names in os.walk(os.path.join(cache_dir, "clean")):
            for name in names:
                entry = os.path.join(folder, name)
                if os.stat(entry).st_mtime < cutoff:
                    os.remove(entry)
    total = sum(seconds for _, _, seconds, _ in done)
    print(f"clang-tidy: {len(done)} files checked, {total:.0f} s of checking in all; the slowest:")
    for path, _, seconds, _ in sorted(done, key=lambda d: -d[2])[:10]:
        print(f"  {seconds:6.1f} s  {path}")


if __name__ == "__main__":
    if len(sys.argv) >= 7 and sys.argv[1] == "plan":
        plan(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7:])
    elif len(sys.argv) == 4 and sys.argv[1] == "record":
        record(sys.argv[2], sys.argv[3])
    else:
        sys.exit("usage: tidy_cache.py plan DATABASE ROOT OUT_DIR CLANG_TIDY CACHE_DIR DIR... | record OUT_DIR CACHE_DIR")
