#!/usr/bin/env python3
"""scripts/gpu/check_table.py, the GPU check's docs-ready table, on rows and facts made here (no GPU)."""
import json
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "gpu", "check_table.py")

FACTS = {"date": "2026-11-29 09:10 UTC", "gpu": "NVIDIA H200", "driver": "580.159.04", "gpus": 1, "cores": 16,
         "os": "Ubuntu 24.04.3 LTS", "torch": "2.11.0+cu130", "nccl": "2.28.9",
         "bundle": "0.2.0, commit 6054e9b", "step_timeout": 120, "seconds": 319}


def run(rows, facts):
    with tempfile.TemporaryDirectory() as folder:
        rows_path, facts_path, out = (os.path.join(folder, n) for n in ("rows.jsonl", "facts.json", "gpu-check.md"))
        with open(rows_path, "w") as f:
            f.write("".join(json.dumps(r) + "\n" for r in rows) + "\n")
        with open(facts_path, "w") as f:
            json.dump(facts, f)
        done = subprocess.run([sys.executable, SCRIPT, rows_path, facts_path, out], capture_output=True, text=True)
        written = open(out).read() if os.path.exists(out) else None
        leftovers = sorted(os.listdir(folder))
    return done, written, leftovers


def check(condition, what):
    if not condition:
        print("FAILED: " + what)
        sys.exit(1)


rows = [{"step": "machine", "result": "NVIDIA H200, 580.159.04", "detail": "16 cores"},
        {"step": "replay | fused", "result": "1.41 ms", "detail": "goal <= 1.21 ms\nnot met"}]
done, written, leftovers = run(rows, FACTS)
check(done.returncode == 0, "a table without a failed row exits 0, got %d: %s" % (done.returncode, done.stderr))
lines = written.splitlines()
check(lines[0] == "**Result** — 2026-11-29 09:10 UTC, one NVIDIA H200 (driver 580.159.04), 16 cores, "
      "Ubuntu 24.04.3 LTS, PyTorch 2.11.0+cu130 with its NCCL 2.28.9, the bundle 0.2.0, commit 6054e9b "
      "(`GPU_CHECK_STEP_TIMEOUT=120`); 2 rows, none failed, in 319 s:", "the heading: " + lines[0])
check(lines[2:4] == ["| check | result | detail |", "|---|---|---|"], "the table's head: %r" % lines[2:4])
check(lines[5] == "| replay \\| fused | 1.41 ms | goal <= 1.21 ms not met |", "a cell's '|' and line break: " + lines[5])
check(lines[-1] == "gpu-check: 2 rows, 0 failed, in 319 s", "the closing count: " + lines[-1])
check(done.stdout == written, "standard output and the file say the same")
check(leftovers == ["facts.json", "gpu-check.md", "rows.jsonl"], "no temporary file left: %r" % leftovers)

failed_rows = rows + [{"step": "NCCL unit tests", "result": "failed", "detail": "1 failed"}]
done, written, _ = run(failed_rows, dict(FACTS, gpus=2, nccl=""))
check(done.returncode == 1, "a failed row exits 1, got %d" % done.returncode)
check(", 2 × NVIDIA H200 (driver" in written and "PyTorch 2.11.0+cu130 (no CUDA)," in written
      and "3 rows, 1 failed, in 319 s:" in written, "two GPUs, no NCCL, one failure: " + written.splitlines()[0])

done, written, _ = run(rows, {k: v for k, v in FACTS.items() if k != "driver"})
check(done.returncode != 0 and "the facts lack driver" in done.stderr and written is None,
      "missing facts are an error that names them and writes nothing: %r" % done.stderr[-200:])
print("gpu_check_table: 3 cases passed")
