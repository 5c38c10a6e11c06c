#!/usr/bin/python3
"""Checks every example of README.md, docs/*.md and the public headers' comments (docs/docs-check.md).

Each fenced block is checked according to its info string: shell commands run in a scratch directory
against the installed programs, transcripts run and their output is compared in shape, C++ compiles
against the installed headers (whole programs also run under `hvdrun -np 2 --gloo`), Python runs
under `hvdrun -np 2 --gloo`, experiment files pass `hvdrun-lab validate`, JSON parses. A block that
needs what this machine lacks says so (`needs=...`) and is listed as skipped. A block the checker
cannot classify fails. Every failure names the block as FILE:LINE and says why.

Every process a block starts runs in its own session and carries HVDRUN_DOCS_CHECK_BLOCK in its
environment; after each block, any process still carrying it is killed and the block fails.
"""
import argparse
import glob
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time

# needs=WHAT: what a block needs that a test machine lacks. A fixed list, so that a typo fails and
# so that the tests that have one of these (the cluster tests, the package test) can pick their blocks.
NEEDS = {
    "hosts": "several hosts (SSH to other machines: the test cluster)",
    "slurm": "a Slurm allocation",
    "gpu": "a GPU",
    "root": "root, and changes to this machine (packages, network namespaces)",
    "build": "a build of this repository (the build tree's paths, or minutes of building)",
    "packages": "hvdrun's Debian packages installed (paths under /usr)",
}
LANGUAGES = {
    "sh": "shell",
    "console": "console",
    "cpp": "cpp",
    "python": "python",
    "yaml": "yaml",
    "json": "json",
    "text": "text",
}
ATTRIBUTES = {"needs", "run-for", "exit", "compile"}
MARKER_HELP = "see docs/docs-check.md for the info strings the docs test knows"

SHELL_TIMEOUT_S = 60  # a command of a block without run-for must end within this
CONSOLE_TIMEOUT_S = 60  # a whole transcript
PROGRAM_TIMEOUT_S = 60  # a C++ or Python example under hvdrun -np 2 --gloo

# The scratch directory every block of commands starts in: the repository's configs and examples (as
# the docs' commands, run from a clone, name them) and the user's stand-ins the docs mention.
MY_PROGRAM = '#!/bin/sh\necho "$(basename "$0") rank ${HVDRUN_RANK:-?} of ${HVDRUN_SIZE:-?}: $*"\n'
TRAIN_PY = """import torch
import hvdrun.torch as hvd
hvd.init()
total = hvd.allreduce(torch.ones(3), op=hvd.Sum)
assert total.tolist() == [hvd.size()] * 3, total
print(f"rank {hvd.rank()} of {hvd.size()}: allreduce ok")
"""
SCRATCH_FILES = {
    "my_program": MY_PROGRAM,
    "my_mpi_program": MY_PROGRAM,
    "train": MY_PROGRAM,
    "hosts.txt": "localhost slots=4\n",
    "train.py": TRAIN_PY,
}
SCRATCH_LINKS = ["configs", "examples"]

# C++ fragments (blocks without main) are compiled as the body of a function, after this: the
# names the docs give the user's own data.
CPP_PRELUDE = """#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <hvdrun/runtime.h>

namespace {
// The user's own data in the docs' fragments: a gradient buffer of n float32 values.
[[maybe_unused]] float* grads = nullptr;
[[maybe_unused]] float* grad = nullptr;
[[maybe_unused]] size_t n = 0;
}  // namespace
"""

# C++ fragments marked compile=tests: the tests' own code, in namespace hvdrun::cluster.
TEST_PRELUDE = """#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
"""


class Block:
    def __init__(self, path, line, info, body, body_line):
        self.path = path  # relative to the repository
        self.line = line  # of the opening fence (or of the first line of a header's example)
        self.info = info
        self.body = body  # list of lines
        self.body_line = body_line  # line number of body[0]
        self.lang = ""
        self.attrs = {}

    def where(self):
        return f"{self.path}:{self.line}"


class BlockError(Exception):
    pass


def parse_info(block):
    try:
        words = shlex.split(block.info)
    except ValueError as error:
        raise BlockError(f"info string '{block.info}': {error}")
    if not words:
        raise BlockError("fenced block without an info string: say what it is (sh, console, cpp, python, yaml, "
                         f"json, text), and needs=... where it cannot run here; {MARKER_HELP}")
    block.lang = words[0]
    if block.lang not in LANGUAGES:
        raise BlockError(f"unknown language '{block.lang}' (expected one of: {', '.join(LANGUAGES)}); {MARKER_HELP}")
    for word in words[1:]:
        key, sep, value = word.partition("=")
        if not sep or key not in ATTRIBUTES or not value:
            raise BlockError(f"unknown marker '{word}' (expected needs=WHAT, run-for=SECONDS, exit=N, compile=tests); {MARKER_HELP}")
        block.attrs[key] = value
    if "needs" in block.attrs and block.attrs["needs"] not in NEEDS:
        raise BlockError(f"needs={block.attrs['needs']}: expected one of {', '.join(NEEDS)}; {MARKER_HELP}")
    for key in ("run-for", "exit"):
        if key in block.attrs and not block.attrs[key].isdigit():
            raise BlockError(f"{key}={block.attrs[key]}: expected a whole number")
    if block.attrs.get("compile", "tests") != "tests" or ("compile" in block.attrs and block.lang != "cpp"):
        raise BlockError("compile=tests is the one compile marker, of cpp blocks")
    if ("run-for" in block.attrs or "exit" in block.attrs) and block.lang != "sh":
        raise BlockError("run-for and exit are markers of sh blocks")


FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")


def markdown_blocks(root, path):
    lines = open(os.path.join(root, path), encoding="utf-8").read().split("\n")
    blocks, i = [], 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent, fence, info = match.groups()
        j = i + 1
        while j < len(lines) and not re.match(r"^\s*" + fence[0] + "{" + str(len(fence)) + r",}\s*$", lines[j]):
            j += 1
        body = [line[len(indent):] if line.startswith(indent) else line.lstrip() for line in lines[i + 1:j]]
        blocks.append(Block(path, i + 1, info.strip(), body, i + 2))
        i = j + 1
    return blocks


def header_blocks(root, path):
    """The examples of a public header's comments: runs of `//   code` lines (three spaces in)."""
    lines = open(os.path.join(root, path), encoding="utf-8").read().split("\n")
    blocks, i = [], 0
    while i < len(lines):
        if re.match(r"^//   \S", lines[i]):
            j = i
            while j < len(lines) and re.match(r"^//   ", lines[j]):
                j += 1
            blocks.append(Block(path, i + 1, "cpp", [line[5:] for line in lines[i:j]], i + 1))
            blocks[-1].lang = "cpp"
            i = j
        else:
            i += 1
    return blocks


class Checker:
    def __init__(self, args):
        self.args = args
        self.bin = os.path.join(args.prefix, "bin")
        self.env = dict(os.environ)
        self.env["PATH"] = self.bin + os.pathsep + self.env.get("PATH", "/usr/bin:/bin")
        python_dir = os.path.join(args.prefix, args.python_dir)
        self.env["PYTHONPATH"] = python_dir + (os.pathsep + self.env["PYTHONPATH"] if "PYTHONPATH" in self.env else "")
        self.env.pop("SLURM_JOB_ID", None)  # the docs' one-machine commands, whatever runs the test
        self.scratch_root = tempfile.mkdtemp(prefix="hvdrun-docs-check-")
        self.failures = []
        self.skipped = []
        self.checked = 0
        self.fragments = []

    # -- processes -------------------------------------------------------------------------------

    def block_env(self, block):
        env = dict(self.env)
        env["HVDRUN_DOCS_CHECK_BLOCK"] = f"{os.getpid()}:{block.where()}"
        return env

    def run(self, block, argv, cwd, timeout, stdin_text=None):
        """Runs argv in its own session; returns (exit status or None when it ran past timeout, output)."""
        process = subprocess.Popen(argv, cwd=cwd, env=self.block_env(block), stdin=subprocess.PIPE if stdin_text
                                   else subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   start_new_session=True, text=True, errors="replace")
        try:
            output, _ = process.communicate(stdin_text, timeout=timeout)
            return process.returncode, output
        except subprocess.TimeoutExpired:
            # As a user's Ctrl-C would: the whole group, then SIGKILL for what did not stop.
            self.signal_group(process.pid, signal.SIGTERM)
            try:
                output, _ = process.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                self.signal_group(process.pid, signal.SIGKILL)
                output, _ = process.communicate()
            return None, output

    @staticmethod
    def signal_group(pgid, sig):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            pass

    def leftover_processes(self, block):
        """Processes of this block still running (found by their environment), killed."""
        marker = f"HVDRUN_DOCS_CHECK_BLOCK={os.getpid()}:{block.where()}".encode()
        left = []
        for _ in range(20):  # what was just stopped may take a moment to go
            left = []
            for entry in os.listdir("/proc"):
                if not entry.isdigit():
                    continue
                try:
                    with open(f"/proc/{entry}/environ", "rb") as f:
                        if marker not in f.read().split(b"\0"):
                            continue
                    with open(f"/proc/{entry}/cmdline", "rb") as f:
                        left.append((int(entry), f.read().replace(b"\0", b" ").decode(errors="replace").strip()))
                except OSError:
                    continue
            if not left:
                return []
            time.sleep(0.25)
        for pid, _ in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return left

    def scratch(self, block):
        path = tempfile.mkdtemp(prefix=re.sub(r"[^A-Za-z0-9]+", "-", block.where()) + "-", dir=self.scratch_root)
        for name, text in SCRATCH_FILES.items():
            with open(os.path.join(path, name), "w", encoding="utf-8") as f:
                f.write(text)
            if text.startswith("#!"):
                os.chmod(os.path.join(path, name), 0o755)
        for name in SCRATCH_LINKS:
            os.symlink(os.path.join(self.args.source, name), os.path.join(path, name))
        return path

    # -- the kinds of blocks ---------------------------------------------------------------------

    def check_shell(self, block):
        cwd = self.scratch(block)
        run_for = int(block.attrs.get("run-for", 0))
        expected_exit = int(block.attrs.get("exit", 0))
        for number, command in logical_lines(block):
            if run_for:
                status, output = self.run(block, ["bash", "-c", command], cwd, run_for)
                if status is None:
                    continue  # still running after run-for seconds, as a long run is: it started
            else:
                status, output = self.run(block, ["bash", "-c", command], cwd, SHELL_TIMEOUT_S)
                if status is None:
                    raise BlockError(f"line {number}: `{command}` ran past {SHELL_TIMEOUT_S} s (a long run "
                                     f"needs run-for=SECONDS)\n{tail(output)}")
            if status != expected_exit:
                raise BlockError(f"line {number}: `{command}` exited with {status}, not {expected_exit}\n"
                                 f"{tail(output)}")

    def check_console(self, block):
        commands = transcript(block)
        if not commands:
            raise BlockError("a console block holds `$ command` lines, each followed by its output")
        cwd = self.scratch(block)
        script = []
        for index, (_, command, _) in enumerate(commands):
            script.append(f"printf '\\n@@docs-check {index}@@\\n'")
            script.append(command)
            script.append("__docs_status=$?; printf '\\n'; (exit $__docs_status)")
        status, output = self.run(block, ["bash", "-c", "exec 2>&1\n" + "\n".join(script)], cwd, CONSOLE_TIMEOUT_S)
        if status is None:
            raise BlockError(f"the transcript ran past {CONSOLE_TIMEOUT_S} s\n{tail(output)}")
        pieces = re.split(r"^@@docs-check (\d+)@@$", output, flags=re.M)
        actual = {int(pieces[k]): pieces[k + 1] for k in range(1, len(pieces) - 1, 2)}
        for index, (number, command, expected) in enumerate(commands):
            got = [line.rstrip() for line in actual.get(index, "").split("\n") if line.strip()]
            mismatch = compare_shape(expected, got)
            if mismatch:
                doc_line, why = mismatch
                raise BlockError(f"line {doc_line if doc_line else number}: the output of `{command}` "
                                 f"differs in shape: {why}\n  printed today:\n" +
                                 "\n".join("    " + line for line in got[:40]))

    def check_cpp(self, block):
        text = "\n".join(block.body)
        if re.search(r"\bint\s+main\s*\(", text):
            self.check_cpp_program(block)
        else:
            self.fragments.append(block)  # compiled together at the end: one compiler run

    def cpp_flags(self):
        prefix = self.args.prefix
        return ["-std=c++17", "-Wall", "-Wextra", "-Werror", f"-I{prefix}/include"]

    def check_cpp_program(self, block):
        cwd = self.scratch(block)
        source = os.path.join(cwd, "example.cc")
        with open(source, "w", encoding="utf-8") as f:
            f.write(f'#line {block.body_line} "{block.path}"\n' + "\n".join(block.body) + "\n")
        lib = os.path.join(self.args.prefix, self.args.libdir)
        status, output = self.run(block, [self.args.cxx, *self.cpp_flags(), source, "-o", "example", f"-L{lib}",
                                          f"-Wl,-rpath,{lib}", "-lhvdrun"], cwd, 120)
        if status != 0:
            raise BlockError(f"does not compile against the installed headers:\n{tail(output)}")
        self.run_program(block, cwd, ["./example"])

    def check_cpp_fragments(self):
        """Compiles every fragment, each as a file of its own, in one compiler run per kind."""
        for tests in (False, True):
            fragments = [b for b in self.fragments if (b.attrs.get("compile") == "tests") == tests]
            if fragments:
                self.compile_fragments(fragments, tests)

    def compile_fragments(self, fragments, tests):
        sources = []
        for index, block in enumerate(fragments):
            parts = [TEST_PRELUDE if tests else CPP_PRELUDE]
            includes = [k for k, line in enumerate(block.body) if line.startswith("#include")]
            for k in includes:
                parts.append(f'#line {block.body_line + k} "{block.path}"\n{block.body[k]}')
            body = ["" if k in includes else line for k, line in enumerate(block.body)]
            code = [line for line in body if line.strip() and not line.lstrip().startswith("//")]
            at_namespace_scope = bool(code) and re.match(r"(class|struct|namespace|template|TEST|using)\b", code[0])
            parts.append("namespace hvdrun::cluster {" if tests else "")
            parts.append("" if at_namespace_scope else f"[[maybe_unused]] {'void' if tests else 'int'} DocsFragment() {{")
            parts.append(f'#line {block.body_line} "{block.path}"')
            parts.extend(body)
            parts.append("" if at_namespace_scope else ("}" if tests else "  return 0;\n}"))
            parts.append("}  // namespace hvdrun::cluster" if tests else "")
            sources.append(os.path.join(self.scratch_root, f"fragment{int(tests)}-{index}.cc"))
            with open(sources[-1], "w", encoding="utf-8") as f:
                f.write("\n".join(parts) + "\n")
        flags = self.cpp_flags()
        if tests:
            source, build = self.args.source, self.args.build
            flags = ["-std=c++20", "-Wall", "-Wextra", "-Werror", f"-I{source}", f"-I{build}",
                     f"-I{source}/runtime/include", f"-I{build}/runtime/include", f"-I{source}/vocabulary/include"]
        compiled = subprocess.run([self.args.cxx, *flags, "-fsyntax-only", *sources], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, timeout=300, check=False)
        output = compiled.stdout
        # Blame each fragment the compiler names by file:line.
        blamed = 0
        for block in fragments:
            lines = range(block.body_line, block.body_line + len(block.body))
            mine = [m for m in re.finditer(r"^" + re.escape(block.path) + r":(\d+):\d+: (?:fatal )?error: .*$", output,
                                           re.M) if int(m.group(1)) in lines]
            against = "the repository's headers and GoogleTest" if tests else "the installed headers"
            if mine:
                self.fail(block, f"does not compile against {against} (docs/docs-check.md says how fragments are "
                          "compiled):\n" + "\n".join("  " + m.group(0) for m in mine[:10]))
                blamed += 1
            else:
                self.checked += 1
                print(f"ok      {block.where()} (C++ fragment, compiled against {against})")
        if compiled.returncode != 0 and not blamed:
            self.failures.append(f"C++ fragments: the compiler failed outside any block:\n{tail(output)}")

    def run_program(self, block, cwd, command):
        argv = [os.path.join(self.bin, "hvdrun"), "-np", "2", "--gloo", *command]
        status, output = self.run(block, argv, cwd, PROGRAM_TIMEOUT_S)
        if status != 0:
            raise BlockError(f"`hvdrun -np 2 --gloo {' '.join(command)}` "
                             f"{'ran past %d s' % PROGRAM_TIMEOUT_S if status is None else 'exited with %d' % status}"
                             f"\n{tail(output)}")

    def check_python(self, block):
        cwd = self.scratch(block)
        with open(os.path.join(cwd, "example.py"), "w", encoding="utf-8") as f:
            f.write("\n" * (block.body_line - 1) + "\n".join(block.body) + "\n")  # tracebacks name the doc's lines
        self.run_program(block, cwd, [self.args.python, "example.py"])

    def check_yaml(self, block):
        cwd = self.scratch(block)
        path = os.path.join(cwd, "experiment.yaml")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(block.body) + "\n")
        status, output = self.run(block, [os.path.join(self.bin, "hvdrun-lab"), "validate", path], cwd, 60)
        if status != 0:
            # hvdrun-lab names experiment.yaml:LINE:COL; say which line of the doc that is.
            output = re.sub(r"experiment\.yaml:(\d+)",
                            lambda m: f"{block.path}:{block.body_line + int(m.group(1)) - 1}", output)
            raise BlockError(f"hvdrun-lab validate failed:\n{tail(output)}")

    @staticmethod
    def check_json(block):
        try:
            json.loads("\n".join(block.body))
        except ValueError as error:
            raise BlockError(f"not JSON: {error}")

    # -- driving ---------------------------------------------------------------------------------

    def fail(self, block, why):
        self.failures.append(f"{block.where()}: {block.lang or 'block'}: {why}")
        print(f"FAILED  {block.where()}", flush=True)

    def check(self, block):
        started = time.monotonic()
        try:
            try:
                parse_info(block)
                if "needs" in block.attrs:
                    self.skipped.append(block)
                    print(f"skipped {block.where()} (needs {NEEDS[block.attrs['needs']]})")
                    return
                kind = LANGUAGES[block.lang]
                if kind != "text":
                    getattr(self, "check_" + kind)(block)
            finally:
                left = self.leftover_processes(block)
            if left:
                raise BlockError("left processes running (killed now): " +
                                 "; ".join(f"{pid} {cmd}" for pid, cmd in left))
        except BlockError as error:
            self.fail(block, str(error))
            return
        except subprocess.TimeoutExpired as error:
            self.fail(block, f"timed out: {error}")
            return
        if kind == "text":
            print(f"ok      {block.where()} (text: not run)")
        elif block not in self.fragments:
            self.checked += 1
            print(f"ok      {block.where()} ({kind}, {time.monotonic() - started:.1f} s)", flush=True)


def logical_lines(block):
    """(line number, command) for each command of a shell block: `\\` continues a line, `#` lines are comments."""
    commands, current, first = [], "", None
    for k, line in enumerate(block.body):
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if first is None:
            first = block.body_line + k
        if line.rstrip().endswith("\\"):
            current += line.rstrip()[:-1] + " "
            continue
        commands.append((first, current + line))
        current, first = "", None
    return commands


def transcript(block):
    """(line number, command, expected output lines with their numbers) for each `$ command` of a console block."""
    commands = []
    continuing = False
    for k, line in enumerate(block.body):
        number = block.body_line + k
        if continuing:
            commands[-1][1] += "\n" + line
            continuing = line.rstrip().endswith("\\")
        elif line.startswith("$ "):
            commands.append([number, line[2:], []])
            continuing = line.rstrip().endswith("\\")
        elif commands:
            commands[-1][2].append((number, line.rstrip()))
        elif line.strip():
            raise BlockError(f"line {number}: output before the first `$ command`")
    return [(n, c, [(m, line) for m, line in out if line.strip()]) for n, c, out in commands]


TAG = re.compile(r"^(\[\d+\]<std(?:out|err)>:)")
WILDCARD = object()


def line_pattern(line):
    """A documented output line as a regex: numbers stand for any number, runs of spaces for any, `...` for anything."""
    tag = TAG.match(line)
    prefix = re.escape(tag.group(1)) if tag else ""
    rest = line[len(tag.group(1)):] if tag else line
    out = []
    for token in re.findall(r"\.\.\.|\d+|\s+|[^\d\s.]+|\.", rest):
        if token == "...":
            out.append(".*")
        elif token.isdigit():
            out.append(r"\d+")
        elif token.isspace():
            out.append(r"\s+" if out else r"\s*")
        else:
            out.append(re.escape(token))
    return re.compile(prefix + "".join(out) + r"\s*$")


def compare_shape(expected, actual):
    """None when the actual lines have the documented shape, else (doc line number, why).

    Tagged lines ([N]<stdout>:...) are compared per rank and stream, hvdrun's own lines in order: the
    interleaving of different ranks' output is not defined. A `...` line stands for any lines; a
    block without one must account for every line printed."""
    lenient = any(line.strip() == "..." for _, line in expected)

    def streams(lines, key):
        groups = {}
        for item in lines:
            text = key(item)
            tag = TAG.match(text) if text.strip() != "..." else None
            groups.setdefault(tag.group(1) if tag else "", []).append(item)
        return groups

    want = streams(expected, lambda item: item[1])
    got = streams(actual, lambda item: item)
    for name in sorted(set(want) | set(got)):
        pattern = [(number, WILDCARD if line.strip() == "..." else line_pattern(line), line)
                   for number, line in want.get(name, [])]
        if name and lenient:
            pattern = [(0, WILDCARD, "...")] + pattern + [(0, WILDCARD, "...")]
        lines = got.get(name, [])
        why = match_lines(pattern, lines)
        if why:
            return why
    return None


def match_lines(pattern, lines):
    """Matches the patterns against the lines in order; None, or (doc line, why) for the first that fails."""
    best = [0]
    memo = {}

    def match(p, a):
        key = (p, a)
        if key in memo:
            return memo[key]
        best[0] = max(best[0], p)
        if p == len(pattern):
            result = a == len(lines)
        elif pattern[p][1] is WILDCARD:
            result = any(match(p + 1, k) for k in range(a, len(lines) + 1))
        else:
            result = a < len(lines) and bool(pattern[p][1].match(lines[a])) and match(p + 1, a + 1)
        memo[key] = result
        return result

    if match(0, 0):
        return None
    if best[0] >= len(pattern):
        return (pattern[-1][0] if pattern else 0, "it printed more lines than the block shows (add `...` "
                "where the block leaves lines out)")
    number, _, text = pattern[best[0]]
    return (number, f"no line printed today has the shape of `{text.strip()}`")


def tail(text, count=25):
    lines = (text or "").rstrip().split("\n")
    return "\n".join("  | " + line for line in lines[-count:])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", required=True, help="the repository")
    parser.add_argument("--prefix", required=True, help="the installed tree (install_for_e2e's stage)")
    parser.add_argument("--build", default="build", help="the build tree (generated headers, for compile=tests)")
    parser.add_argument("--libdir", default="lib")
    parser.add_argument("--python-dir", default="lib/python3/dist-packages")
    parser.add_argument("--cxx", default="c++")
    parser.add_argument("--python", default="/usr/bin/python3")
    parser.add_argument("--list", action="store_true", help="list the blocks and how each is checked; run nothing")
    parser.add_argument("only", nargs="*", help="FILE or FILE:LINE: check only these blocks")
    args = parser.parse_args()
    args.source = os.path.abspath(args.source)
    args.prefix = os.path.abspath(args.prefix)
    args.build = os.path.abspath(args.build)

    os.chdir(args.source)
    files = ["README.md"] + sorted(glob.glob("docs/*.md"))
    blocks = [b for f in files for b in markdown_blocks(args.source, f)]
    headers = glob.glob("runtime/include/hvdrun/*.h") + glob.glob("vocabulary/include/hvdrun/*.h")
    blocks += [b for f in sorted(headers) for b in header_blocks(args.source, f)]
    if args.only:
        blocks = [b for b in blocks if b.path in args.only or b.where() in args.only]
    if args.list:
        for block in blocks:
            print(f"{block.where():32} {block.info or block.lang or '(no info string)'}")
        return 0

    checker = Checker(args)
    started = time.monotonic()
    try:
        for block in blocks:
            checker.check(block)
        checker.check_cpp_fragments()
    finally:
        subprocess.run(["rm", "-rf", checker.scratch_root], check=False)
    print(f"\ndocs check: {len(blocks)} blocks: {checker.checked} checked, {len(checker.skipped)} need what this "
          f"machine lacks, {len(checker.failures)} failed ({time.monotonic() - started:.0f} s)")
    for needs in NEEDS:
        places = [b.where() for b in checker.skipped if b.attrs["needs"] == needs]
        if places:
            print(f"  needs={needs}: {' '.join(places)}")
    if checker.failures:
        print("\nFAILED (docs/docs-check.md says how blocks are checked and marked):\n\n" +
              "\n\n".join(checker.failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
