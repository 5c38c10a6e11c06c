"""hvdrun.torch's collectives on CPU and CUDA tensors, for scripts/gpu-check.sh.

usage: hvdrun -np N [--gloo|--nccl] python3 torch_collectives.py --json FILE

Each rank runs allreduce (sum, average, min/max and average of integers, fp16 compression, a strided
tensor, async with poll), broadcast, allgather (equal and differing first dimensions, named ones in any
order, on a side stream), grouped allreduce, alltoall with splits (uneven, zero included), SyncBatchNorm's
synchronized function against torch's BatchNorm, an allreduce on a side stream, broadcast_parameters and
broadcast_optimizer_state of a model and Adam, DistributedOptimizer with groups and fp16 compression
against the optimizer alone, join, libhvdrun's wire compression, reducescatter (uneven, grouped), grouped
allgather (and async), broadcast_ and the async broadcasts, hvd.Product (grouped too), prescale and
postscale factors (allreduce, grouped allreduce, reducescatter), synchronize completing on the caller's
current stream under --nccl (its handle waited for on that stream, not on the host; the result checked
after that stream's synchronize()), sparse_allreduce_async, DistributedOptimizer
with an embedding's sparse gradients (and sparse_as_dense), process sets (each rank's half of the job,
added and removed: allreduce, grouped allreduce, broadcast, reducescatter, barrier; allgather and alltoall;
at one rank the global set, the only one there) and the gradients of the differentiable calls (allreduce,
allgather, broadcast, alltoall, reducescatter), on tensors of every device torch has (cpu, and the rank's
CUDA device where CUDA is available) and checks the results (exact, or within float32 rounding for
SyncBatchNorm, fp16, the optimizers and a sparse average). Rank 0 writes a list of {"call", "device",
"result": "ok" | "refused" | "failed", "detail"}, each row the worst any rank had (its detail that
rank's, "rank k: " before it for a rank other than 0): "refused" is hvdrun.torch's own one-line refusal
(of a device it does not take, of the job's backend, of wire compression of a CUDA tensor under --nccl,
of allgather and alltoall of CUDA tensors in a process set other than the global one under --nccl), whose
message begins with "hvdrun.torch"; "failed" anything else, a wrong result included. Each row's detail
names the path its tensors took (placement.py): "host" (CPU tensors), "device" (CUDA tensors in device
memory over NCCL: every call under --nccl, allgather's and alltoall's exchange of row counts over Gloo
included), "staged" (through pinned host memory: CUDA tensors under --gloo), or both, as seen by
hvdrun._C's submissions (a stream given) and the staging's copies; a path other than expected fails the
row. A refused init is one row.
"""
import argparse
import contextlib
import json
import os
import threading
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", required=True)
    args = parser.parse_args()

    import torch  # pylint: disable=import-outside-toplevel,redefined-outer-name
    import hvdrun.torch as hvd  # pylint: disable=import-outside-toplevel,redefined-outer-name

    try:
        hvd.init(process_sets="dynamic")  # the process-set rows add and remove sets
    except Exception as e:  # noqa: BLE001 - reported as a row, not raised
        write(args.json, [{"call": "init", "device": "-", "result": classify(e), "detail": first_line(e)}])
        return
    set_job(torch, hvd)
    devices = ["cpu"]
    if torch.cuda.is_available():
        devices.append(f"cuda:{hvd.local_rank() % torch.cuda.device_count()}")
    results = across_ranks(run_checks(devices, PathRecorder(), expected_path))
    if rank == 0:
        write(args.json, results)
    hvd.shutdown()


def run_checks(devices, paths, expected):
    """The rows of every check on each of `devices`: its result and the path `paths` (a PathRecorder) saw,
    which must be expected(call, device)."""
    results = []
    for device in devices:
        for call, body in CHECKS:
            paths.reset()
            try:
                right = body(device)
                taken, want = paths.taken(), expected(call, device)
                if right and taken != want:
                    results.append({"call": call, "device": device, "result": "failed",
                                    "detail": "path %s, expected %s" % (taken, want)})
                else:
                    results.append({"call": call, "device": device, "result": "ok" if right else "failed",
                                    "detail": "path " + taken + ("" if right else "; wrong result")})
            except Exception as e:  # noqa: BLE001 - every failure is reported, not raised
                results.append({"call": call, "device": device, "result": classify(e),
                                "detail": first_line(e) + "; path " + paths.taken()})
    return results


def across_ranks(results):
    """Every rank's rows as one list (each rank's own view of a call may differ: its part of the results, its
    process set): each row the worst of any rank's (failed, then refused, then ok), with the detail of the
    first rank that had it, prefixed "rank k: " for a rank other than 0. This rank's own rows, and a failed row,
    where the rows cannot be gathered (a runtime broken by a failed collective)."""
    try:
        everyone = hvd.allgather_object(results)
    except Exception as e:  # noqa: BLE001 - reported as a row, not raised
        return results + [{"call": "every rank's rows", "device": "-", "result": "failed", "detail": first_line(e)}]
    if len({len(rows) for rows in everyone}) != 1:
        return results + [{"call": "every rank's rows", "device": "-", "result": "failed",
                           "detail": "the ranks made %s rows" % [len(rows) for rows in everyone]}]
    merged = []
    for rows in zip(*everyone):
        for result in ("failed", "refused", "ok"):
            where = [k for k, row in enumerate(rows) if row["result"] == result]
            if where:
                row = dict(rows[where[0]])
                if where[0]:
                    row["detail"] = "rank %d: %s" % (where[0], row["detail"])
                merged.append(row)
                break
    return merged


# The job the checks below run in, set by set_job once hvdrun.torch is initialized: the modules are
# imported then (an import failure is reported as a row), and every check reads them as module names.
torch = hvd = None
rank, size, device_runtime = 0, 1, False


def set_job(torch_module, hvd_module):
    global torch, hvd, rank, size, device_runtime  # pylint: disable=global-statement
    torch, hvd = torch_module, hvd_module
    rank, size = hvd.rank(), hvd.size()
    device_runtime = hvd.backend() == "nccl"


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


def allgather_uneven(device):
    # Rank k gives k + 1 rows (padded to the largest in device memory under --nccl), of float16 and of
    # bool (as bytes); then named ones started in one order and waited for in another, none included.
    ok = True
    for dtype in (torch.float16, torch.bool):
        t = torch.full((rank + 1, 5), float(rank % 2), device=device).to(dtype)
        out = hvd.allgather(t, name=f"gather.uneven.{dtype}.{device}")
        want = torch.cat([torch.full((k + 1, 5), float(k % 2)) for k in range(size)]).to(dtype)
        ok = ok and out.device == t.device and torch.equal(out.cpu(), want)
    order = [(rank + i) % 4 for i in range(4)]
    handles = {i: hvd.allgather_async(torch.full(((rank + i) % 3, 2), rank + i, device=device),
                                      name=f"gather.order.{i}.{device}") for i in order}
    for i in reversed(order):
        want = torch.cat([torch.full(((k + i) % 3, 2), k + i) for k in range(size)])
        ok = ok and torch.equal(hvd.synchronize(handles[i]).cpu(), want)
    return ok


def allgather_side_stream(device):
    # Produced on a side stream, gathered, consumed on that stream (no torch.cuda.synchronize).
    if not device.startswith("cuda"):
        return allgather(device)
    stream = torch.cuda.Stream(device)
    with torch.cuda.stream(stream):
        t = torch.arange(1 << 18, dtype=torch.float32, device=device).mul_(2).add_(rank).view(-1, 64)
        t = t[: (rank + 1) * 1024]
        out = hvd.allgather(t, name=f"gather.side.{device}").mul_(1)
        host = out.cpu()
    want = torch.cat([(torch.arange(1 << 18, dtype=torch.float32) * 2 + k).view(-1, 64)[: (k + 1) * 1024]
                      for k in range(size)])
    return torch.equal(host, want)


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
    return all(o is t and torch.equal(o.cpu(), torch.full((i + 1,), total))
               for i, (o, t) in enumerate(zip(out, tensors)))


def alltoall_splits(device):
    splits = [(rank + k) % 3 for k in range(size)]
    rows = [torch.tensor([[rank, k]] * splits[k], dtype=torch.int64).view(-1, 2) for k in range(size)]
    out, received = hvd.alltoall(torch.cat(rows).to(device), splits=splits, name=f"a2a.{device}")
    want = torch.cat([torch.tensor([[k, rank]] * ((k + rank) % 3), dtype=torch.int64).view(-1, 2) for k in range(size)])
    ok = out.device.type == torch.device(device).type and torch.equal(out.cpu(), want) and \
        received.tolist() == [(k + rank) % 3 for k in range(size)]
    # Every rank sends rank + 1 float32 rows to rank 0 only, zero splits elsewhere.
    t = torch.full((rank + 1, 3), float(rank), device=device)
    out, received = hvd.alltoall(t, splits=[rank + 1] + [0] * (size - 1), name=f"a2a.zeros.{device}")
    want = torch.cat([torch.full((k + 1, 3), float(k)) for k in range(size)]) if rank == 0 else torch.ones(0, 3)
    return ok and out.device == t.device and torch.equal(out.cpu(), want) and \
        received.tolist() == [k + 1 if rank == 0 else 0 for k in range(size)]


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


def synchronize_on_the_stream(device):
    # Under --nccl a CUDA tensor's synchronize completes on the stream current at that moment (here a side
    # stream, not the one the tensor was made on), without a host wait: the handle gets wait_on_stream,
    # never wait; the result, doubled on that stream, is checked after that stream's synchronize().
    # Elsewhere (CPU tensors, staged ones) synchronize waits on the host.
    from hvdrun.torch import basics, completion, placement  # pylint: disable=import-outside-toplevel

    waits = []
    real = basics.runtime

    class Waited:
        def __init__(self, handle):
            self.handle = handle

        def wait(self):
            waits.append("host")
            self.handle.wait()

        def wait_on_stream(self, stream):
            waits.append("stream")
            self.handle.wait_on_stream(stream)

        def ready(self):
            return self.handle.ready()

    class Recording:
        def __getattr__(self, attribute):
            function = getattr(real, attribute)
            return (lambda *a, **k: Waited(function(*a, **k))) if attribute == "allreduce_async" else function

    t = torch.ones(1 << 22, device=device).mul_(rank + 1).cumsum_(0)  # still queued when submitted
    on_device = device.startswith("cuda")
    basics.runtime = Recording()
    try:
        handle = hvd.allreduce_async_(t, op=hvd.Sum, name=f"on.stream.{device}")
        stream = torch.cuda.Stream(device) if on_device else None
        with torch.cuda.stream(stream) if on_device else contextlib.nullcontext():
            doubled = hvd.synchronize(handle) * 2
            if on_device:
                torch.cuda.current_stream(device).synchronize()
    finally:
        basics.runtime = real
    want = torch.arange(1, (1 << 22) + 1, dtype=torch.float32) * (size * (size + 1))
    streamed = basics.tensor_path("allreduce", t) == placement.DEVICE and completion.stream_completion_from(os.environ)
    return waits == ["stream" if streamed else "host"] and torch.equal(doubled.cpu(), want)


def allreduce_integers(device):
    # Min and max of int32, a sum of uint8 (reduced through an int64 copy on the device).
    t = torch.tensor([rank, -rank, 7], dtype=torch.int32, device=device)
    low = hvd.allreduce(t, op=hvd.Min, name=f"min.{device}")
    high = hvd.allreduce(t, op=hvd.Max, name=f"max.{device}")
    small = hvd.allreduce(torch.tensor([1, 2, 3], dtype=torch.uint8, device=device), op=hvd.Sum,
                          name=f"u8.{device}")
    # An int64 average rounds toward zero, as on the CPU (negative sums included).
    values = [3 * k - 4 for k in range(size)]
    mean = hvd.allreduce(torch.tensor([values[rank], 7], dtype=torch.int64, device=device), op=hvd.Average,
                         name=f"i64.avg.{device}")
    want_mean = torch.div(torch.tensor([sum(values), 7 * size]), size, rounding_mode="trunc")
    return (torch.equal(mean.cpu(), want_mean)
            and torch.equal(low.cpu(), torch.tensor([0, -(size - 1), 7], dtype=torch.int32))
            and torch.equal(high.cpu(), torch.tensor([size - 1, 0, 7], dtype=torch.int32))
            and small.dtype == torch.uint8
            and torch.equal(small.cpu(), (torch.tensor([1, 2, 3]) * size).to(torch.uint8)))


def allreduce_fp16_compression(device):
    t = torch.full((4099,), 0.5 * (rank + 1), device=device)
    out = hvd.allreduce(t, compression=hvd.Compression.fp16, name=f"fp16.{device}")
    return out.dtype == torch.float32 and torch.allclose(out.cpu(), torch.full((4099,), 0.25 * (size + 1)),
                                                         rtol=1e-3)


def allreduce_strided_in_place(device):
    # A transposed (non-contiguous) tensor: reduced as a contiguous copy, copied back into it.
    t = (torch.arange(12, dtype=torch.float32, device=device).view(3, 4) * (rank + 1)).t()
    same = hvd.allreduce_(t, op=hvd.Sum, name=f"strided.{device}")
    want = (torch.arange(12, dtype=torch.float32).view(3, 4) * (size * (size + 1) // 2)).t()
    return same is t and torch.equal(t.cpu(), want)


def allreduce_async_poll(device):
    # Produced by a kernel still queued on the current stream, submitted at once, polled, then used
    # on that stream after synchronize (no torch.cuda.synchronize anywhere).
    t = torch.ones(1 << 22, device=device).mul_(rank + 1).cumsum_(0)
    handle = hvd.allreduce_async_(t, op=hvd.Sum, name=f"async.{device}")
    deadline = time.monotonic() + 60
    while not hvd.poll(handle) and time.monotonic() < deadline:
        time.sleep(0.001)
    out = hvd.synchronize(handle).add_(1)
    want = torch.arange(1, (1 << 22) + 1, dtype=torch.float32) * (size * (size + 1) // 2) + 1
    return out is t and torch.equal(out.cpu(), want)


def parameters_and_optimizer_state(device):
    torch.manual_seed(rank)  # a different model and state on every rank before the broadcasts
    model = torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    model(torch.randn(8, 5, device=device)).sum().backward()
    optimizer.step()
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    hvd.broadcast_optimizer_state(optimizer, root_rank=0)
    torch.manual_seed(0)
    root = torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2)).to(device)
    root_optimizer = torch.optim.Adam(root.parameters(), lr=0.01)
    root(torch.randn(8, 5, device=device)).sum().backward()
    root_optimizer.step()
    same_model = all(torch.equal(a.cpu(), b.cpu())
                     for a, b in zip(model.state_dict().values(), root.state_dict().values()))
    mine = [optimizer.state[p] for p in model.parameters()]
    theirs = [root_optimizer.state[p] for p in root.parameters()]
    same_state = all(torch.equal(torch.as_tensor(a[k]).cpu(), torch.as_tensor(b[k]).cpu())
                     for a, b in zip(mine, theirs) for k in ("exp_avg", "exp_avg_sq", "step"))
    return same_model and same_state and next(model.parameters()).device == torch.device(device)


def distributed_optimizer(device):
    # Every rank trains on the same batch, so the averaged gradients are each rank's own: the model
    # must end as one process's trained with the optimizer alone (fp16 rounding aside). Gradient
    # hooks run on autograd's threads, with autograd's current stream. At one rank the optimizer
    # makes no collective (as Horovod's).
    def train(distributed):
        torch.manual_seed(5)
        model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)).to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        if distributed:
            optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters(),
                                                 compression=hvd.Compression.fp16, groups=2)
        for step in range(3):
            torch.manual_seed(100 + step)
            data = torch.randn(8, 16, device=device)
            optimizer.zero_grad()
            model(data).square().mean().backward()
            optimizer.step()
        return model

    mine, alone = train(True), train(False)
    return all(torch.allclose(a.detach().cpu(), b.detach().cpu(), rtol=1e-2, atol=1e-3)
               for a, b in zip(mine.parameters(), alone.parameters()))


def join_after_work(device):
    t = torch.full((1000,), float(rank + 1), device=device)
    handle = hvd.allreduce_async_(t, op=hvd.Sum, name=f"before.join.{device}")
    last = hvd.join()
    out = hvd.synchronize(handle)
    return 0 <= last < size and torch.equal(out.cpu(), torch.full((1000,), float(size * (size + 1) // 2)))


def reducescatter_uneven(device):
    # Horovod's split (rows // size each, one more for the first rows % size ranks): uneven parts go over
    # NCCL as one ncclReduce per rank in a group, even ones as ncclReduceScatter; both fused with Average.
    right = True
    for rows in (2 * size + 1, 4 * size):
        t = torch.arange(rows * 3, dtype=torch.float32, device=device).view(rows, 3) + rank
        outs = [hvd.reducescatter(t, op=hvd.Sum, name=f"rs.{rows}.{device}")] + \
            hvd.grouped_reducescatter([t, t], op=hvd.Average, name=f"grs.{rows}.{device}")
        mine = rows_of(torch.arange(rows * 3, dtype=torch.float32).view(rows, 3) * size + sum(range(size)), rank, size)
        right = right and torch.equal(outs[0].cpu(), mine)
        right = right and all(torch.allclose(out.cpu(), mine / size) for out in outs[1:])
    return right


def rows_of(full, place, count):
    """The rows of `full` a reducescatter gives the rank at `place` of `count`, as Horovod splits them: rows //
    count each, one more for each of the first rows % count ranks."""
    rows = full.shape[0]
    first = sum(rows // count + (1 if k < rows % count else 0) for k in range(place))
    return full[first:first + rows // count + (1 if place < rows % count else 0)]


def wire_compression(device):
    # libhvdrun's fp8: refused for CUDA tensors under --nccl (a "refused" row), reduced otherwise.
    t = torch.full((64,), 0.5, device=device)
    out = hvd.allreduce(t, compression=hvd.Compression.fp8, name=f"fp8.{device}")
    return torch.allclose(out.cpu(), torch.full((64,), 0.5), rtol=0.13)


def grouped_allgather(device):
    # The allgathers of a list submitted together: rank k gives k + 1 float32 rows, two int64 rows and
    # size - k bools; synchronous and async.
    tensors = [torch.full((rank + 1, 3), float(rank), device=device),
               torch.arange(4, dtype=torch.int64, device=device).view(2, 2) + rank,
               torch.tensor([rank % 2 == 0] * (size - rank), device=device)]
    wants = [torch.cat([torch.full((k + 1, 3), float(k)) for k in range(size)]),
             torch.cat([torch.arange(4, dtype=torch.int64).view(2, 2) + k for k in range(size)]),
             torch.tensor([k % 2 == 0 for k in range(size) for _ in range(size - k)])]
    outs = hvd.grouped_allgather(tensors, name=f"ggather.{device}")
    outs_async = hvd.synchronize(hvd.grouped_allgather_async(tensors, name=f"ggather.async.{device}"))
    return all(len(got) == len(wants) and
               all(out.device == t.device and torch.equal(out.cpu(), want) for out, t, want in zip(got, tensors, wants))
               for got in (outs, outs_async))


def broadcast_forms(device):
    # In place, async and async in place, from the last rank.
    root = size - 1
    t = torch.arange(6, dtype=torch.float64, device=device).view(2, 3) + rank
    want = torch.arange(6, dtype=torch.float64).view(2, 3) + root
    same = hvd.broadcast_(t, root_rank=root, name=f"bcast_.{device}")
    u = torch.arange(6, dtype=torch.int32, device=device) * (rank + 1)
    out = hvd.synchronize(hvd.broadcast_async(u, root_rank=root, name=f"bcast.async.{device}"))
    v = torch.full((5,), rank, dtype=torch.int8, device=device)
    same_v = hvd.synchronize(hvd.broadcast_async_(v, root_rank=root, name=f"bcast.async_.{device}"))
    return (same is t and torch.equal(t.cpu(), want)
            and torch.equal(u.cpu(), torch.arange(6, dtype=torch.int32) * (rank + 1))  # broadcast_async: a copy
            and torch.equal(out.cpu(), torch.arange(6, dtype=torch.int32) * (root + 1))
            and same_v is v and torch.equal(v.cpu(), torch.full((5,), root, dtype=torch.int8)))


def allreduce_product(device):
    # hvd.Product (libhvdrun's product: ncclProd over NCCL), exact on small integers and powers of two:
    # float32, float16, int32, uint8 wrapping around as uint8 does, and a grouped allreduce in place.
    floats = [float(rank + 1), 2.0, -0.5, 3.0 if rank == 0 else 1.0]
    fact = 1
    for k in range(size):
        fact *= k + 1
    want = [float(fact), 2.0 ** size, (-0.5) ** size, 3.0]
    ok = True
    for dtype in (torch.float32, torch.float16):
        out = hvd.allreduce(torch.tensor(floats, dtype=dtype, device=device), op=hvd.Product,
                            name=f"prod.{dtype}.{device}")
        ok = ok and out.dtype == dtype and torch.equal(out.cpu(), torch.tensor(want, dtype=dtype))
    ints = hvd.allreduce(torch.tensor([rank + 1, -2], dtype=torch.int32, device=device), op=hvd.Product,
                         name=f"prod.i32.{device}")
    small = hvd.allreduce(torch.tensor([rank + 3], dtype=torch.uint8, device=device), op=hvd.Product,
                          name=f"prod.u8.{device}")
    wrapped = 1
    for k in range(size):
        wrapped = wrapped * (k + 3) % 256
    group = [torch.full((3,), 2.0, device=device), torch.full((2,), rank + 1, dtype=torch.int64, device=device)]
    same = hvd.grouped_allreduce_(group, op=hvd.Product, name=f"gprod.{device}")
    return (ok and torch.equal(ints.cpu(), torch.tensor([fact, (-2) ** size], dtype=torch.int32))
            and small.dtype == torch.uint8 and torch.equal(small.cpu(), torch.tensor([wrapped], dtype=torch.uint8))
            and all(o is t for o, t in zip(same, group)) and torch.equal(group[0].cpu(), torch.full((3,), 2.0 ** size))
            and torch.equal(group[1].cpu(), torch.full((2,), fact, dtype=torch.int64)))


def scale_factors(device):
    # prescale_factor on every rank's values before the reduction, postscale_factor on the result (libhvdrun's
    # engine on its fused buffer; over NCCL a kernel in device memory), with Horovod's arithmetic: float32 and
    # float16 times the factor in float32, integers in double truncated toward zero; an Average with factors
    # is the sum times postscale / size. On allreduce, grouped allreduce and reducescatter.
    total = size * (size + 1) // 2
    t = torch.arange(1, 9, dtype=torch.float32, device=device) * (rank + 1)
    want = torch.arange(1, 9, dtype=torch.float32) * (2 * total)  # the Sum times 0.5 and 4
    summed = hvd.allreduce(t, op=hvd.Sum, prescale_factor=0.5, postscale_factor=4.0, name=f"scale.sum.{device}")
    ok = torch.equal(summed.cpu(), want)
    averaged = hvd.allreduce(t, op=hvd.Average, prescale_factor=2.0, postscale_factor=3.0, name=f"scale.avg.{device}")
    ok = ok and torch.equal(averaged.cpu(), want * torch.tensor(3.0 / size, dtype=torch.float32))
    half = hvd.allreduce(t.half(), op=hvd.Sum, prescale_factor=0.25, postscale_factor=2.0,
                         name=f"scale.f16.{device}")
    ok = ok and half.dtype == torch.float16 and torch.equal(half.cpu(), (want / 4).half())
    ints = hvd.allreduce(torch.tensor([7, -7, 101], dtype=torch.int32, device=device) * (rank + 1), op=hvd.Sum,
                         prescale_factor=0.5, postscale_factor=1.5, name=f"scale.i32.{device}")
    truncated = [int(sum(int(v * (k + 1) * 0.5) for k in range(size)) * 1.5) for v in (7, -7, 101)]
    ok = ok and torch.equal(ints.cpu(), torch.tensor(truncated, dtype=torch.int32))
    grouped_out = hvd.grouped_allreduce([t, 2 * t], op=hvd.Sum, prescale_factor=0.5, postscale_factor=4.0,
                                        name=f"scale.grouped.{device}")
    ok = ok and all(torch.equal(out.cpu(), want * (i + 1)) for i, out in enumerate(grouped_out))
    rows = 2 * size + 1
    table = torch.arange(rows * 3, dtype=torch.float32, device=device).view(rows, 3) * (rank + 1)
    mine = hvd.reducescatter(table, op=hvd.Sum, prescale_factor=0.5, postscale_factor=4.0, name=f"scale.rs.{device}")
    full = torch.arange(rows * 3, dtype=torch.float32).view(rows, 3) * (2 * total)
    return ok and torch.equal(mine.cpu(), rows_of(full, rank, size))


def sparse_allreduce(device):
    # Horovod's sparse allreduce: allgathers of a sparse COO tensor's indices and values (rank k gives k + 1
    # entries, some at the same index as another rank's), Sum waited for by synchronize, Average by calling
    # the handle as Horovod's optimizer does; the result holds every rank's entries, not coalesced.
    def entries(k):
        indices = torch.tensor([[(k + i) % 5 for i in range(k + 1)], [i % 3 for i in range(k + 1)]])
        return torch.sparse_coo_tensor(indices, torch.full((k + 1,), float(k + 1)), (5, 3))

    t = entries(rank).to(device)
    summed = hvd.synchronize(hvd.sparse_allreduce_async(t, name=f"sparse.sum.{device}", op=hvd.Sum))
    averaged = hvd.sparse_allreduce_async(t, name=f"sparse.avg.{device}", op=hvd.Average)()
    want = sum(entries(k).to_dense() for k in range(size))
    entries_kept = size * (size + 1) // 2  # every rank's, repeated indices included
    return all(out.is_sparse and out.device == t.device
               and out._nnz() == entries_kept  # pylint: disable=protected-access
               for out in (summed, averaged)) and \
        torch.equal(summed.to_dense().cpu(), want) and torch.allclose(averaged.to_dense().cpu(), want / size)


def sparse_distributed_optimizer(device):
    # An embedding's sparse gradient through sparse_allreduce_async, and as a dense allreduce made sparse again
    # (sparse_as_dense), against the optimizer alone: every rank trains on the same batch.
    def train(distributed, sparse_as_dense=False):
        torch.manual_seed(7)
        model = torch.nn.Sequential(torch.nn.Embedding(20, 6, sparse=True), torch.nn.Linear(6, 2)).to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        if distributed:
            optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters(),
                                                 sparse_as_dense=sparse_as_dense)
        for step in range(3):
            torch.manual_seed(200 + step)
            data = torch.randint(0, 20, (8, 4), device=device)
            optimizer.zero_grad()
            model(data).square().mean().backward()
            optimizer.step()
        return model

    alone = train(False)
    return all(torch.allclose(a.detach().cpu(), b.detach().cpu(), rtol=1e-5, atol=1e-6)
               for mine in (train(True), train(True, sparse_as_dense=True))
               for a, b in zip(mine.parameters(), alone.parameters()))


def process_set_collectives(device):
    # The even ranks' set and the odd ranks' (added, used by each rank on its own, removed); at one rank
    # the global set, which a set of [0] duplicates (refused as Horovod refuses it). allreduce, grouped
    # allreduce, broadcast from the set's last rank, reducescatter and barrier, results over the set only.
    mine, sets, ok = hvd.global_process_set, [], True
    if size == 1:
        try:
            hvd.add_process_set([0])
            ok = False
        except ValueError:
            pass
    else:
        sets = [hvd.add_process_set(list(range(parity, size, 2))) for parity in (0, 1)]
        mine = sets[rank % 2]
    members = mine.ranks
    try:
        n = len(members)
        ok = ok and mine.included() and mine.size() == n and mine.rank() == members.index(rank)
        out = hvd.allreduce(torch.full((7,), float(rank + 1), device=device), op=hvd.Sum, process_set=mine,
                            name=f"set.sum.{device}")
        ok = ok and torch.equal(out.cpu(), torch.full((7,), float(sum(m + 1 for m in members))))
        outs = hvd.grouped_allreduce([torch.full((3,), float(rank), dtype=torch.float64, device=device)] * 2,
                                     op=hvd.Average, process_set=mine, name=f"set.grouped.{device}")
        ok = ok and all(torch.equal(o.cpu(), torch.full((3,), sum(members) / n, dtype=torch.float64)) for o in outs)
        root = members[-1]
        out = hvd.broadcast(torch.full((4,), rank + 5, dtype=torch.int32, device=device), root_rank=root,
                            process_set=mine, name=f"set.bcast.{device}")
        ok = ok and torch.equal(out.cpu(), torch.full((4,), root + 5, dtype=torch.int32))
        rows = 2 * n + 1
        part = hvd.reducescatter(torch.arange(rows * 2, dtype=torch.float32, device=device).view(rows, 2) + rank,
                                 op=hvd.Sum, process_set=mine, name=f"set.rs.{device}")
        full = torch.arange(rows * 2, dtype=torch.float32).view(rows, 2) * n + sum(members)
        ok = ok and torch.equal(part.cpu(), rows_of(full, mine.rank(), n))
        hvd.barrier(process_set=mine)
    finally:
        for each in sets:
            ok = hvd.remove_process_set(each) and ok
    return ok


def process_set_rows(device):
    # allgather and alltoall in the rank's set (as process_set_collectives'): under --nccl, CUDA tensors in
    # device memory over a set other than the global one are refused (docs/python.md), a "refused" row at
    # two ranks or more.
    mine, sets = hvd.global_process_set, []
    if size > 1:
        sets = [hvd.add_process_set(list(range(parity, size, 2))) for parity in (0, 1)]
        mine = sets[rank % 2]
    members = mine.ranks
    try:
        gathered = hvd.allgather(torch.full((rank + 1, 2), rank, device=device), process_set=mine,
                                 name=f"set.gather.{device}")
        ok = torch.equal(gathered.cpu(), torch.cat([torch.full((m + 1, 2), m) for m in members]))
        splits = [1] * len(members)
        received, counts = hvd.alltoall(torch.tensor([[rank, m] for m in members], device=device), splits=splits,
                                        process_set=mine, name=f"set.a2a.{device}")
        ok = ok and torch.equal(received.cpu(), torch.tensor([[m, rank] for m in members])) and \
            counts.tolist() == splits
    finally:
        for each in sets:
            hvd.remove_process_set(each)
    return ok


def gradients(device):
    # The differentiable calls' backward collectives, as Horovod's, each rank's output gradient rank + 1:
    # allreduce (Sum: the Sum of the output gradients), allgather (their average, this rank's rows), broadcast
    # from 0 (their average on the root, zeros elsewhere), alltoall (back to the senders), reducescatter (Sum:
    # this rank's gradient times the ranks, allgathered).
    weight, total = float(rank + 1), size * (size + 1) // 2
    results = []
    for call in ("allreduce", "allgather", "broadcast", "alltoall", "reducescatter"):
        x = torch.ones(size, 2, device=device, requires_grad=True)
        if call == "allreduce":
            y = hvd.allreduce(x, op=hvd.Sum, name=f"grad.sum.{device}")
            want = torch.full((size, 2), float(total))
        elif call == "allgather":
            y = hvd.allgather(x, name=f"grad.gather.{device}")
            want = torch.full((size, 2), total / size)
        elif call == "broadcast":
            y = hvd.broadcast(x, root_rank=0, name=f"grad.bcast.{device}")
            want = torch.full((size, 2), total / size if rank == 0 else 0.0)
        elif call == "alltoall":
            y = hvd.alltoall(x, name=f"grad.a2a.{device}")
            want = torch.arange(1, size + 1, dtype=torch.float32).view(size, 1).expand(size, 2)
        else:
            y = hvd.reducescatter(x, op=hvd.Sum, name=f"grad.rs.{device}")
            want = torch.arange(1, size + 1, dtype=torch.float32).view(size, 1).expand(size, 2) * size
        (y * weight).sum().backward()
        results.append(x.grad.device == x.device and torch.equal(x.grad.cpu(), want))
    return all(results)


def expected_path(call, device):
    """The path a check's tensors take in this job (see PathRecorder)."""
    if call.startswith("DistributedOptimizer") and size == 1:
        return "none"  # at one rank the optimizer makes no collective, as Horovod's
    if not device.startswith("cuda"):
        return "host"
    path = "device" if device_runtime else "staged"
    if call.startswith("broadcast_parameters"):
        path += "+host"  # broadcast_optimizer_state's layout (broadcast_object) and Adam's step are CPU tensors
    return path


CHECKS = [("allreduce sum", allreduce_sum), ("allreduce average", allreduce_average),
          ("allreduce min, max, uint8, int64 average", allreduce_integers),
          ("allreduce fp16 compression", allreduce_fp16_compression),
          ("allreduce_ of a strided tensor", allreduce_strided_in_place),
          ("allreduce_async_ and poll", allreduce_async_poll),
          ("broadcast", broadcast), ("allgather", allgather),
          ("allgather of differing first dimensions, in any order", allgather_uneven),
          ("allgather on a side stream", allgather_side_stream), ("broadcast bool", broadcast_bool),
          ("allgather of 3-byte rows", allgather_odd_bytes), ("grouped allreduce", grouped),
          ("alltoall with splits", alltoall_splits), ("SyncBatchNorm", sync_batch_norm),
          ("allreduce on a side stream", side_stream),
          ("synchronize on the caller's stream, checked after its synchronize()", synchronize_on_the_stream),
          ("broadcast_parameters, broadcast_optimizer_state", parameters_and_optimizer_state),
          ("DistributedOptimizer, groups=2, fp16", distributed_optimizer),
          ("join", join_after_work), ("allreduce fp8 wire compression", wire_compression),
          ("reducescatter of even and uneven first dimensions, grouped", reducescatter_uneven),
          ("grouped allgather, async", grouped_allgather),
          ("broadcast_, broadcast_async, broadcast_async_", broadcast_forms),
          ("allreduce Product, grouped", allreduce_product),
          ("prescale and postscale factors: allreduce, grouped, reducescatter", scale_factors),
          ("sparse_allreduce_async", sparse_allreduce),
          ("DistributedOptimizer, sparse gradients, sparse_as_dense", sparse_distributed_optimizer),
          ("process sets: allreduce, grouped, broadcast, reducescatter, barrier", process_set_collectives),
          ("process sets: allgather, alltoall", process_set_rows),
          ("gradients of allreduce, allgather, broadcast, alltoall, reducescatter", gradients)]


class PathRecorder:
    """Which paths hvdrun.torch's submissions took (placement.py): hvdrun._C's collectives given a stream
    went to the device runtime; those without one to the host runtime, from the staging thread when
    their tensor was staged (a copy to pinned memory). The exchange of row counts that comes before a
    device allgather or alltoall (named with device_rows.EXCHANGE_SUFFIXES) is part of the device path."""

    def __init__(self):
        from hvdrun.torch import basics, device_rows  # pylint: disable=import-outside-toplevel

        self.seen = set()
        real_c, real_stage_in = basics.runtime, basics.host_staging.stage_in
        recorder = self

        class RecordingC:
            def __getattr__(self, attribute):
                function = getattr(real_c, attribute)
                if not attribute.endswith("_async"):
                    return function

                def recorded(*args, **kwargs):
                    if kwargs.get("stream") is None and str(args[0]).endswith(device_rows.EXCHANGE_SUFFIXES):
                        return function(*args, **kwargs)
                    recorder.seen.add("device" if kwargs.get("stream") is not None else
                                      "staged" if threading.current_thread().name == "hvdrun-staging" else "host")
                    return function(*args, **kwargs)

                return recorded

        def stage_in(tensor):
            recorder.seen.add("staged")
            return real_stage_in(tensor)

        basics.runtime = RecordingC()
        basics.host_staging.stage_in = stage_in

    def reset(self):
        self.seen = set()

    def taken(self):
        """The paths seen since reset(), "+"-joined in the order device, staged, host; "none" if no
        submission was made (a job of one rank without hvdrun)."""
        return "+".join(path for path in ("device", "staged", "host") if path in self.seen) or "none"


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
