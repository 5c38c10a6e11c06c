"""hvdrun.torch's collectives on CPU and CUDA tensors, for scripts/gpu-check.sh.

usage: hvdrun -np N [--gloo|--nccl] python3 torch_collectives.py --json FILE

Each rank runs allreduce (sum, average), broadcast and allgather on tensors of every device torch
has (cpu, and cuda:<local rank> where CUDA is available) and checks exact results. Rank 0 writes
a list of {"call", "device", "result": "ok" | "refused" | "failed", "detail"}: "refused" is
hvdrun.torch's own one-line refusal (of a device it does not take, of the job's backend), whose
message begins with "hvdrun.torch"; "failed" anything else, a wrong result included. A refused
init is one row.
"""
import argparse
import json
import os


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", required=True)
    args = parser.parse_args()

    import torch
    import hvdrun.torch as hvd

    try:
        hvd.init()
    except Exception as e:  # noqa: BLE001 - reported as a row, not raised
        write(args.json, [{"call": "init", "device": "-", "result": classify(e), "detail": first_line(e)}])
        return
    rank, size = hvd.rank(), hvd.size()
    devices = ["cpu"]
    if torch.cuda.is_available():
        devices.append(f"cuda:{hvd.local_rank() % torch.cuda.device_count()}")

    def allreduce_sum(device):
        t = torch.arange(1000, dtype=torch.float32, device=device) + rank
        out = hvd.allreduce(t, op=hvd.Sum, name=f"sum.{device}")
        want = torch.arange(1000, dtype=torch.float32) * size + sum(range(size))
        return torch.equal(out.cpu(), want)

    def allreduce_average(device):
        t = torch.full((1000003,), float(2 * rank), dtype=torch.float64, device=device)
        out = hvd.allreduce(t, op=hvd.Average, name=f"avg.{device}")
        return torch.equal(out.cpu(), torch.full((1000003,), float(size - 1), dtype=torch.float64))

    def broadcast(device):
        t = torch.full((17,), float(rank + 5), device=device)
        out = hvd.broadcast(t, root_rank=0, name=f"bcast.{device}")
        return torch.equal(out.cpu(), torch.full((17,), 5.0))

    def allgather(device):
        t = torch.full((2, 3), rank, dtype=torch.int64, device=device)
        out = hvd.allgather(t, name=f"gather.{device}")
        want = torch.arange(size, dtype=torch.int64).repeat_interleave(2).unsqueeze(1).expand(2 * size, 3)
        return torch.equal(out.cpu(), want)

    results = []
    for device in devices:
        for call, body in [("allreduce sum", allreduce_sum), ("allreduce average", allreduce_average),
                           ("broadcast", broadcast), ("allgather", allgather)]:
            try:
                right = body(device)
                results.append({"call": call, "device": device, "result": "ok" if right else "failed",
                                "detail": "" if right else "wrong result"})
            except Exception as e:  # noqa: BLE001 - every failure is reported, not raised
                results.append({"call": call, "device": device, "result": classify(e), "detail": first_line(e)})
    if rank == 0:
        write(args.json, results)
    hvd.shutdown()


def first_line(error):
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def classify(error):
    """ "refused": hvdrun.torch's own one-line refusal, which names the call (its messages begin
    with "hvdrun.torch"); "failed": anything else."""
    return "refused" if first_line(error).startswith("hvdrun.torch") else "failed"


def write(path, rows):
    with open(path + ".tmp", "w") as f:
        json.dump(rows, f)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
