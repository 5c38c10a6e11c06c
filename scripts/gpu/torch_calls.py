"""The GPU check's collective calls on one device: allreduce in its forms, broadcast, allgather, grouped
allreduce, alltoall, SyncBatchNorm, side streams and synchronize on the caller's stream. Each takes a
device ("cpu", "cuda:N") and returns whether the results were right; torch_collectives.py runs them (its
docstring says what each checks and how the rows are made).
"""
import contextlib
import os
import time

# The job, set by torch_collectives.set_job once hvdrun.torch is initialized; every check reads these as
# module names.
torch = hvd = None
rank, size, device_runtime = 0, 1, False


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
