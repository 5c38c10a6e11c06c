#!/usr/bin/python3
"""The command shapes of Horovod 0.28.1's own documentation that fit one host, run unchanged under hvdrun.

Each shape is horovodrun's command as Horovod's docs write it, with `horovodrun` replaced by hvdrun; `python`
is Debian's /usr/bin/python3 (put first in PATH under that name, and as python3) and `train.py` a small Horovod script that
imports horovod.torch (hvdrun's alias of hvdrun.torch, docs/python.md), takes a DistributedOptimizer step and
checks that every rank ends with rank 0's model. The docs' rank counts are kept where two cores carry them
(the README's -np 4) and halved elsewhere. Usage: horovod_docs_shapes.py --hvdrun PATH --shape NAME
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

TRAIN_PY = """import torch
import horovod.torch as hvd

hvd.init()
torch.manual_seed(hvd.rank())
model = torch.nn.Linear(4, 2)
optimizer = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1),
                                     named_parameters=model.named_parameters())
hvd.broadcast_parameters(model.state_dict(), root_rank=0)
hvd.broadcast_optimizer_state(optimizer, root_rank=0)
loss = model(torch.full((8, 4), float(hvd.rank() + 1))).pow(2).mean()
optimizer.zero_grad()
loss.backward()
optimizer.step()
weights = hvd.allgather(model.weight.detach().reshape(1, -1))
assert all(torch.equal(weights[0], row) for row in weights), "the ranks' models differ"
print(f"rank {hvd.rank()} of {hvd.size()}: a Horovod step ok")
"""

# name: (the command, where Horovod's docs write it, the ranks that must report, files it must leave)
SHAPES = {
    "readme": ("-np 4 python train.py", "docs/pytorch.rst, docs/mpi.rst", 4, []),
    "hosts": ("-np 2 -H localhost:2 python train.py", "README.rst, docs/running.rst (-np 4 -H localhost:4)", 2, []),
    "gloo": ("--gloo -np 2 python train.py", "README.rst, docs/summary.rst", 2, []),
    "hostfile": ("-np 2 -hostfile myhostfile python train.py", "docs/running.rst (-np 6)", 2, []),
    "timeline": ("-np 2 --timeline-filename timeline.json --timeline-mark-cycles python train.py",
                 "docs/timeline.rst (-np 4, /path/to/timeline.json)", 2, ["timeline.json"]),
    "fusion": ("-np 2 --fusion-threshold-mb 32 python train.py", "docs/tensor-fusion.rst (-np 4)", 2, []),
    "check_build": ("--check-build", "docs/install.rst", 0, []),
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hvdrun", required=True)
    parser.add_argument("--shape", required=True, choices=sorted(SHAPES))
    args = parser.parse_args()
    command, where, ranks, files = SHAPES[args.shape]
    with tempfile.TemporaryDirectory(prefix="hvdrun-horovod-shape-") as scratch:
        os.mkdir(os.path.join(scratch, "bin"))
        for name in ("python", "python3"):
            os.symlink("/usr/bin/python3", os.path.join(scratch, "bin", name))
        with open(os.path.join(scratch, "train.py"), "w") as script:
            script.write(TRAIN_PY)
        with open(os.path.join(scratch, "myhostfile"), "w") as hostfile:
            hostfile.write("localhost slots=2\n")
        env = dict(os.environ)
        env["PATH"] = os.path.join(scratch, "bin") + os.pathsep + env.get("PATH", "/usr/bin:/bin")
        env.pop("SLURM_JOB_ID", None)
        argv = [args.hvdrun] + command.split()
        result = subprocess.run(argv, cwd=scratch, env=env, capture_output=True, text=True, timeout=240)
        shown = f"hvdrun {command} (horovodrun's, {where}) exited {result.returncode}\n" \
                f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
        problems = []
        if result.returncode != 0:
            problems.append("a non-zero exit code")
        reported = set(re.findall(r"^\[\d+\]<stdout>:rank (\d+) of (\d+): a Horovod step ok$", result.stdout, re.M))
        if reported != {(str(rank), str(ranks)) for rank in range(ranks)}:
            problems.append(f"ranks reporting {sorted(reported)}, not all {ranks}")
        if args.shape == "check_build" and "[X] PyTorch" not in result.stdout:
            problems.append("no [X] PyTorch in --check-build's table")
        for name in files:
            path = os.path.join(scratch, name)
            if not os.path.exists(path) or os.path.getsize(path) == 0:
                problems.append(f"no {name}")
        if problems:
            print(shown)
            print("FAILED: " + "; ".join(problems))
            return 1
        print(f"ok: hvdrun {command} ({where})")
        return 0


if __name__ == "__main__":
    sys.exit(main())
