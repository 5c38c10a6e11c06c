"""hvdrun.torch's collectives on CPU and CUDA tensors, for scripts/gpu-check.sh.

usage: hvdrun -np N [--gloo|--nccl] python3 torch_collectives.py --json FILE

Each rank runs allreduce (sum, average), broadcast, allgather, grouped allreduce, alltoall with splits,
SyncBatchNorm's synchronized function against torch's BatchNorm, and an allreduce on a side stream, on
tensors of every device torch has (cpu, and cuda:<local rank> where CUDA is available) and checks the
results (exact, or within float32 rounding for SyncBatchNorm). Rank 0 writes
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

    def broadcast_bool(device):
        t = torch.tensor([rank == 0, True, False] * 5, device=device)
        out = hvd.broadcast(t, root_rank=0, name=f"bcast.bool.{device}")
        return out.device == t.device and torch.equal(out.cpu(), torch.tensor([True, True, False] * 5))

    def allgather_odd_bytes(device):
        t = (torch.arange(3, dtype=torch.uint8) + rank).view(1, 3).to(device)
        out = hvd.allgather(t, name=f"gather.bytes.{device}")
        want = torch.stack([torch.arange(3, dtype=torch.uint8) + k for k in range(size)])
        return out.device == t.device and torch.equal(out.cpu(), want)

    def grouped(device):
        tensors = [torch.full((i + 1,), float(rank + 1), device=device) for i in range(3)]
        handle = hvd.grouped_allreduce_async_(tensors, op=hvd.Sum, name=f"grouped.{device}")
        out = hvd.synchronize(handle)
        total = size * (size + 1) / 2
        return all(o is t and torch.equal(o.cpu(), torch.full((i + 1,), total)) for i, (o, t) in enumerate(zip(out, tensors)))

    def alltoall_splits(device):
        splits = [(rank + k) % 3 for k in range(size)]
        rows = [torch.tensor([[rank, k]] * splits[k], dtype=torch.int64).view(-1, 2) for k in range(size)]
        out, received = hvd.alltoall(torch.cat(rows).to(device), splits=splits, name=f"a2a.{device}")
        want = torch.cat([torch.tensor([[k, rank]] * ((k + rank) % 3), dtype=torch.int64).view(-1, 2) for k in range(size)])
        return out.device.type == torch.device(device).type and torch.equal(out.cpu(), want) and \
            received.tolist() == [(k + rank) % 3 for k in range(size)]

    def sync_batch_norm(device):
        # The synchronized function itself (hvd.SyncBatchNorm uses torch's batch_norm in a job of one
        # rank), against torch's BatchNorm over the whole batch: every rank gives the same batch here.
        from hvdrun.torch.sync_batch_norm import _SyncBatchNormFunction
        generator = torch.Generator().manual_seed(3)
        x = torch.randn(4, 3, 5, 5, generator=generator)
        upstream = torch.randn(4, 3, 5, 5, generator=generator)
        reference = torch.nn.BatchNorm2d(3).to(device)
        whole = torch.cat([x] * size).to(device).requires_grad_()
        expected = reference(whole)
        (expected * torch.cat([upstream] * size).to(device)).sum().backward()
        mine = x.to(device).requires_grad_()
        weight = torch.ones(3, device=device, requires_grad=True)
        bias = torch.zeros(3, device=device, requires_grad=True)
        running_mean, running_var = torch.zeros(3, device=device), torch.ones(3, device=device)
        out = _SyncBatchNormFunction.apply(mine, weight, bias, running_mean, running_var, 1e-5, 0.1)
        (out * upstream.to(device)).sum().backward()
        close = dict(atol=1e-5, rtol=1e-5)
        return (out.device == mine.device and torch.allclose(out.detach().cpu(), expected.detach()[:4].cpu(), **close)
                and torch.allclose(mine.grad.cpu(), whole.grad[:4].cpu(), **close)
                and torch.allclose(running_mean.cpu(), reference.running_mean.cpu(), **close)
                and torch.allclose(running_var.cpu(), reference.running_var.cpu(), **close))

    def side_stream(device):
        # Produced on a side stream, reduced, consumed on that stream: staging orders by its events.
        if not device.startswith("cuda"):
            return allreduce_sum(device)
        stream = torch.cuda.Stream(device)
        with torch.cuda.stream(stream):
            t = torch.arange(1 << 20, dtype=torch.float32, device=device).mul_(2).add_(rank)
            out = hvd.allreduce(t, op=hvd.Sum, name=f"side.{device}").mul_(1)
            host = out.cpu()
        want = torch.arange(1 << 20, dtype=torch.float32) * 2 * size + sum(range(size))
        return torch.equal(host, want)

    results = []
    for device in devices:
        for call, body in [("allreduce sum", allreduce_sum), ("allreduce average", allreduce_average),
                           ("broadcast", broadcast), ("allgather", allgather), ("broadcast bool", broadcast_bool),
                           ("allgather of 3-byte rows", allgather_odd_bytes), ("grouped allreduce", grouped),
                           ("alltoall with splits", alltoall_splits), ("SyncBatchNorm", sync_batch_norm),
                           ("allreduce on a side stream", side_stream)]:
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
