#!/usr/bin/env python3
"""The GPU check's table, ready to paste into docs/benchmarks.md.

    check_table.py ROWS FACTS OUT

ROWS is gpu-check.sh's rows.jsonl (one {"step", "result", "detail"} object a line); FACTS a JSON object
of what the run was, written by gpu-check.sh:

    date           "2026-11-27 17:51 UTC" (when the check started)
    gpu, driver    nvidia-smi's name and driver version of the first GPU
    gpus           how many GPUs nvidia-smi lists
    cores, os      nproc, and /etc/os-release's PRETTY_NAME
    torch, nccl    torch.__version__, and the NCCL torch carries ("2.28.9"; "" without CUDA)
    bundle         the bundle's version and the commit it was built from ("0.2.0, commit aa82397")
    step_timeout   GPU_CHECK_STEP_TIMEOUT's seconds
    seconds        how long the whole check took

OUT gets, written atomically, the paragraph that docs/benchmarks.md opens a run's figures with, the
table, and the closing count; standard output gets the same. Exit status 1 when a row failed, else 0.
"""
import json
import os
import sys

FACT_NAMES = ("date", "gpu", "driver", "gpus", "cores", "os", "torch", "nccl", "bundle", "step_timeout",
              "seconds")


def cell(text):
    """One table cell: a '|' would end the cell and a line break the row."""
    return str(text).replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def heading(facts, rows):
    failed = sum(1 for r in rows if r["result"] == "failed")
    gpus = int(facts["gpus"])
    machine = "one" if gpus == 1 else str(gpus) + " ×"
    nccl = " with its NCCL %s" % facts["nccl"] if facts["nccl"] else " (no CUDA)"
    return ("**Result** — %s, %s %s (driver %s), %s cores, %s, PyTorch %s%s, the bundle %s "
            "(`GPU_CHECK_STEP_TIMEOUT=%s`); %d rows, %s failed, in %s s:"
            % (facts["date"], machine, facts["gpu"], facts["driver"], facts["cores"], facts["os"],
               facts["torch"], nccl, facts["bundle"], facts["step_timeout"], len(rows),
               "none" if failed == 0 else str(failed), facts["seconds"]))


def render(rows, facts):
    missing = [name for name in FACT_NAMES if name not in facts]
    if missing:
        raise ValueError("the facts lack " + ", ".join(missing))
    lines = [heading(facts, rows), "", "| check | result | detail |", "|---|---|---|"]
    for r in rows:
        lines.append("| %s | %s | %s |" % (cell(r["step"]), cell(r["result"]), cell(r["detail"])))
    failed = sum(1 for r in rows if r["result"] == "failed")
    lines += ["", "gpu-check: %d rows, %d failed, in %s s" % (len(rows), failed, facts["seconds"])]
    return "\n".join(lines) + "\n", failed


def main(argv):
    if len(argv) != 4:
        print("usage: check_table.py ROWS FACTS OUT", file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    with open(argv[2]) as f:
        facts = json.load(f)
    text, failed = render(rows, facts)
    with open(argv[3] + ".tmp", "w") as f:
        f.write(text)
    os.replace(argv[3] + ".tmp", argv[3])
    sys.stdout.write(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
