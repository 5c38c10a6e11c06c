"""Checks hvdrun.torch's calls against closed-form results; run by CTest under hvdrun at 1 to 4 ranks.

    hvdrun -np N -H localhost:N --gloo /usr/bin/python3 tests/python/hvdrun_torch_checks.py

Every rank runs every check; a failed check raises, so the rank exits non-zero and hvdrun fails.
Values depend on the rank r (0-based) and the number of ranks n only, so each rank computes what
it must get. The optimizer checks compare against a model each rank trains alone on every rank's data.
"""

import itertools
import json
import os
import shutil
import sys
import tempfile
import time

import torch

import hvdrun.torch as hvd
from hvdrun import _C
from host_as_device import HostAsDevice


def nccl_job_without_a_device():
    """A --nccl job on a machine where torch sees no CUDA device (CI): hvd.init() refuses in one line,
    and so does libhvdrun's own nccl backend where hvdrun.torch's check is passed by."""
    for init, words in ((hvd.init, "hvdrun.torch.init: this --nccl job's rank on host "),
                        (_C.init, "nccl: no CUDA device on host ")):
        try:
            init()
        except RuntimeError as error:
            message = str(error)
            if words not in message or "\n" in message or "--gloo" not in message:
                raise AssertionError("%s: %r is not one line naming %r and --gloo" % (init.__name__, message, words))
        else:
            raise AssertionError("%s did not refuse a --nccl job without a CUDA device" % init.__name__)
    assert not hvd.is_initialized()
    print("ok nccl_job_without_a_device (%s)" % _C.job_backend(), flush=True)


if _C.job_backend() == "nccl" and not torch.cuda.is_available():
    nccl_job_without_a_device()
    sys.exit(0)
hvd.init()
R, N = hvd.rank(), hvd.size()
torch.manual_seed(0)
torch.set_num_threads(1)  # the ranks share the machine's cores
CHECKS = []


def check(function):
    CHECKS.append(function)
    return function


def same(actual, expected, what, atol=0.0, rtol=0.0):
    expected = torch.as_tensor(expected, dtype=actual.dtype) if not torch.is_tensor(expected) else expected
    if actual.dtype != expected.dtype or actual.shape != expected.shape or \
            not torch.allclose(actual.double(), expected.double(), atol=atol, rtol=rtol):
        raise AssertionError("%s: rank %d of %d got %r, expected %r" % (what, R, N, actual, expected))


def raises(error_type, words, function, *args, **kwargs):
    try:
        function(*args, **kwargs)
    except error_type as error:
        if words not in str(error):
            raise AssertionError("%s: message %r does not name %r" % (function.__name__, str(error), words))
        return
    raise AssertionError("%s did not raise %s (%s)" % (function.__name__, error_type.__name__, words))


@check
def topology():
    assert hvd.is_initialized()
    assert N == int(os.environ.get("HVDRUN_SIZE", "1")) and 0 <= R < N
    assert (hvd.local_rank(), hvd.local_size(), hvd.cross_rank(), hvd.cross_size()) == (R, N, 0, 1)
    assert hvd.gloo_built()
    # nccl_built() is NCCL_VERSION_CODE of the nccl.h the nccl backend was built with, as Horovod's; CTest
    # names that header (HVDRUN_TEST_NCCL_H) when the backend is built.
    code, header = hvd.nccl_built(), os.environ.get("HVDRUN_TEST_NCCL_H", "")
    assert isinstance(code, int), code
    if header:
        with open(header) as source:
            defined = [line.split()[2] for line in source if line.startswith("#define NCCL_VERSION_CODE ")]
        assert code == int(defined[0]) and code >= 20900, (code, defined)
    else:
        assert code == 0, code
    # A --nccl job has a device runtime (NCCL) for CUDA tensors beside its host one (Gloo) for CPU tensors.
    job_backend = os.environ.get("HVDRUN_BACKEND", "none") if N > 1 or "HVDRUN_SIZE" in os.environ else "none"
    assert hvd.backend() == job_backend == _C.job_backend(), (hvd.backend(), job_backend, _C.job_backend())
    assert _C.device_backend() == ("nccl" if job_backend == "nccl" else "none"), _C.device_backend()
    assert hvd.gloo_enabled() == (job_backend in ("gloo", "nccl")) and hvd.mpi_enabled() == (job_backend == "mpi")


@check
def allreduce_ops_and_types():
    total, base = N * (N + 1) / 2, torch.tensor([1, 2, 3])
    for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.uint8):
        x = base.to(dtype) * (R + 1)
        kept = x.clone()
        same(hvd.allreduce(x, op=hvd.Sum, name="sum.%s" % dtype), (base * total).to(dtype), "Sum %s" % dtype)
        same(hvd.allreduce(x, op=hvd.Min), base.to(dtype), "Min %s" % dtype)
        same(hvd.allreduce(x, op=hvd.Max), (base * N).to(dtype), "Max %s" % dtype)
        average = base.double() * total / N
        if not dtype.is_floating_point:
            average = torch.div(base * int(total), N, rounding_mode="trunc")
        same(hvd.allreduce(x, name="average.%s" % dtype), average.to(dtype), "Average %s" % dtype, rtol=1e-2)
        same(x, kept, "allreduce leaves its input %s" % dtype)
    x = torch.ones(4) * (R + 1)
    same(hvd.allreduce(x, average=False), torch.ones(4) * total, "average=False")
    same(hvd.allreduce(x, op=hvd.Sum, prescale_factor=3.0, postscale_factor=0.5), torch.ones(4) * total * 1.5, "scaling")
    assert hvd.allreduce_(x, op=hvd.Sum) is x
    same(x, torch.ones(4) * total, "allreduce_ in place")
    strided = (torch.arange(12.0).view(3, 4) * (R + 1)).t()
    hvd.allreduce_(strided, op=hvd.Sum)
    same(strided, (torch.arange(12.0).view(3, 4) * total).t(), "allreduce_ of a non-contiguous tensor")


@check
def handles_wait_on_a_stream_as_on_the_host():
    # hvdrun._C's handles' wait_on_stream (CollectiveHandle::WaitOnStream) over the host runtime, or with no
    # runtime at all, is wait(): the collective has run when it returns.
    total = N * (N + 1) / 2
    x = torch.full((4,), float(R + 1))
    handle = _C.allreduce_async("binding.on.stream", x.data_ptr(), x.data_ptr(), 4, "float32", "sum")
    handle.wait_on_stream(0)
    assert handle.ready()
    same(x, torch.full((4,), total), "wait_on_stream over the host runtime")
    rows = torch.full((R + 1,), R, dtype=torch.int64)
    gather = _C.allgather_async("binding.on.stream.rows", rows.data_ptr(), R + 1, "int64", 1)
    gather.wait_on_stream(0)
    assert gather.ready() and gather.counts() == [k + 1 for k in range(N)], gather.counts()


@check
def async_names_in_any_order():
    tensors = {"async.%d" % i: torch.full((i + 1,), float(R + i)) for i in range(6)}
    order = sorted(tensors) if R % 2 == 0 else sorted(tensors, reverse=True)
    # Odd-numbered names are summed in place, even-numbered ones reduced by Max into a new tensor.
    handles = {name: (hvd.allreduce_async_(tensors[name], name=name, op=hvd.Sum) if int(name[-1]) % 2 else
                      hvd.allreduce_async(tensors[name], name=name, op=hvd.Max)) for name in order}
    for name in order:
        result = hvd.synchronize(handles[name])
        index = int(name[-1])
        expected = (N * index + N * (N - 1) / 2) if index % 2 else (N - 1 + index)
        same(result, torch.full((index + 1,), float(expected)), "async " + name)
    handle = hvd.allreduce_async(torch.ones(2), name="polled")
    while not hvd.poll(handle):
        pass
    same(hvd.synchronize(handle), torch.ones(2), "poll then synchronize")
    raises(ValueError, "unknown handle", hvd.synchronize, handle)


@check
def allreduce_autograd():
    for op, factor in ((hvd.Sum, 1.0), (hvd.Average, 1.0 / N)):
        x = (torch.tensor([1.0, 2.0]) * (R + 1)).requires_grad_()
        (hvd.allreduce(x, op=op) * (R + 1)).sum().backward()
        same(x.grad, torch.full((2,), N * (N + 1) / 2 * factor), "allreduce gradient %r" % op, rtol=1e-6)


def check_named_allgathers(prefix, what):
    """Named allgathers are negotiated: each rank starts them in its own order and waits in another;
    rank k gives (k + i) % 3 rows to the i-th (none at all included), of a type libhvdrun has, or not."""
    order = list(range(6))
    order = order[R % 6:] + order[:R % 6]
    dtypes = (torch.float64, torch.bool, torch.int16, torch.float32, torch.uint8, torch.int64)
    handles = {i: hvd.allgather_async(torch.full(((R + i) % 3, 3), float(R + i)).to(dtypes[i]),
                                      name="%s.%d" % (prefix, i))
               for i in order}
    for i in reversed(order):
        expected = torch.cat([torch.full(((k + i) % 3, 3), float(k + i)) for k in range(N)]).to(dtypes[i])
        same(hvd.synchronize(handles[i]), expected, "%s '%s.%d' of %s" % (what, prefix, i, dtypes[i]))


@check
def allgather_uneven_and_autograd():
    rows = sum(k + 1 for k in range(N))
    expected = torch.cat([torch.full((k + 1, 2), float(k)) for k in range(N)])
    for dtype in (torch.float32, torch.int64, torch.uint8, torch.bool, torch.float16):
        same(hvd.allgather(torch.full((R + 1, 2), float(R)).to(dtype)), expected.to(dtype), "allgather %s" % dtype)
    odd = hvd.allgather(torch.arange(3, dtype=torch.uint8).view(1, 3) + R)
    same(odd, torch.stack([torch.arange(3, dtype=torch.uint8) + k for k in range(N)]), "allgather of 3 bytes")
    x = torch.ones(R + 1, 2, requires_grad=True)
    y = hvd.allgather(x)
    assert y.shape == (rows, 2)
    (y * (R + 1)).sum().backward()
    same(x.grad, torch.full((R + 1, 2), (N + 1) / 2), "allgather gradient (averaged over ranks, as Horovod's)")
    check_named_allgathers("ag", "allgather_async")
    # A contiguous view that starts off a word boundary (rows of one word), and a non-contiguous one.
    base = torch.arange(10, dtype=torch.int16) + R
    view = base[1:9].view(4, 2)
    assert view.is_contiguous() and view.storage_offset() == 1
    same(hvd.allgather(view), torch.cat([(torch.arange(10, dtype=torch.int16) + k)[1:9].view(4, 2) for k in range(N)]),
         "allgather of an offset int16 view")
    same(hvd.allgather(base.view(5, 2)[:, :1]), torch.cat([(torch.arange(10, dtype=torch.int16) + k).view(5, 2)[:, :1]
                                                          for k in range(N)]), "allgather of a strided int16 view")


@check
def broadcasts():
    root = N - 1
    x = torch.full((5,), float(R))
    same(hvd.broadcast(x, root), torch.full((5,), float(root)), "broadcast")
    same(x, torch.full((5,), float(R)), "broadcast leaves its input")
    assert hvd.broadcast_(x, root) is x
    same(x, torch.full((5,), float(root)), "broadcast_")
    flags = torch.tensor([R % 2 == 0, True, False])
    same(hvd.broadcast(flags, root), torch.tensor([root % 2 == 0, True, False]), "broadcast bool")
    strided = (torch.arange(6.0).view(2, 3) + R).t()
    hvd.broadcast_(strided, 0)
    same(strided, torch.arange(6.0).view(2, 3).t(), "broadcast_ of a non-contiguous tensor")
    same(hvd.synchronize(hvd.broadcast_async(torch.tensor([R]), 0)), torch.tensor([0]), "broadcast_async")
    # Named broadcasts are negotiated: each rank starts them in its own order, and waits in another.
    order = list(range(6))
    order = order[R % 6:] + order[:R % 6]
    tensors = {i: torch.full((i + 1, 2), float(R * 10 + i)) for i in order}
    handles = {i: hvd.broadcast_async_(tensors[i], i % N, name="bc.%d" % i) for i in order}
    flags = {i: hvd.broadcast_async(torch.tensor([R == i % N] * 3), i % N, name="bc.flags.%d" % i) for i in order}
    for i in reversed(order):
        assert hvd.synchronize(handles[i]) is tensors[i]
        same(tensors[i], torch.full((i + 1, 2), float((i % N) * 10 + i)), "broadcast_async_ 'bc.%d'" % i)
        same(hvd.synchronize(flags[i]), torch.tensor([True] * 3), "broadcast_async of bool 'bc.flags.%d'" % i)
    scale = 3
    got = hvd.broadcast_object({"rank": R, "scale": lambda v: v * scale} if R == root else None, root)
    assert got["rank"] == root and got["scale"](2) == 6, got
    assert hvd.allgather_object(("r", R)) == [("r", k) for k in range(N)]
    hvd.barrier()
    assert 0 <= hvd.join() < N


@check
def join_with_uneven_steps():
    # As Horovod's test_horovod_join_allreduce: the rank that joins first stands in with zeros for
    # the others' averaged allreduces (divided by every rank), fused ("a" and "b") or not, through
    # the cache or not; join returns the same rank everywhere, never the first to join.
    lasts = []
    for dtype, first_join_rank, caching in itertools.product(
            (torch.int32, torch.float64), range(N), (False, True)):
        torch.manual_seed(1234)
        a = torch.randint(-100, 100, (5, 5)).to(dtype)
        b = torch.randint(-100, 100, (17,)).to(dtype)
        if caching:
            hvd.synchronize(hvd.allreduce_async(a, name="join.a", op=hvd.Average))
            hvd.synchronize(hvd.allreduce_async(b, name="join.b", op=hvd.Average))
        if R == first_join_rank:
            last = hvd.join()
        else:
            handle_a = hvd.allreduce_async(a, name="join.a", op=hvd.Average)
            handle_b = hvd.allreduce_async(b, name="join.b", op=hvd.Average)
            for tensor, handle in ((a, handle_a), (b, handle_b)):
                summed = tensor * (N - 1)
                expected = summed / N if dtype.is_floating_point else summed.div(N, rounding_mode="trunc")
                same(hvd.synchronize(handle), expected, "allreduce while rank %d has joined (%s)" % (first_join_rank, dtype),
                     rtol=1e-6)
            last = hvd.join(hvd.local_rank())  # the device is ignored: the zeros are in host memory
        assert N == 1 or last != first_join_rank, (last, first_join_rank)
        lasts.append(last)
    # Rank r makes r + 1 steps, then joins: step s is reduced over ranks s..N-1, the rank with the
    # most steps joins last.
    for step in range(R + 1):
        x = torch.arange(1.0, 7.0) * (R + 1)
        total = sum(range(step + 1, N + 1))
        same(hvd.allreduce(x, name="join.step", op=hvd.Sum), torch.arange(1.0, 7.0) * total, "sum at step %d" % step)
        same(hvd.allreduce(x, name="join.avg"), torch.arange(1.0, 7.0) * total / N, "average at step %d" % step,
             rtol=1e-6)
        handle = hvd.allreduce_async_(x.half(), name="join.half", op=hvd.Average)
        same(hvd.synchronize(handle), (torch.arange(1.0, 7.0) * total / N).half(), "float16 at step %d" % step,
             rtol=4e-3)
    lasts.append(hvd.join())
    assert lasts[-1] == N - 1, lasts
    if N > 1:
        # As Horovod's test_horovod_join_allgather and _broadcast: refused while a rank has joined.
        for first_join_rank in range(N):
            if R == first_join_rank:
                last = hvd.join()
            else:
                raises(hvd.HorovodInternalError, "cannot run while rank %d has joined" % first_join_rank,
                       hvd.allgather, torch.ones(3, 2))
                raises(hvd.HorovodInternalError, "cannot run while rank %d has joined" % first_join_rank,
                       hvd.broadcast, torch.ones(3), (first_join_rank + 1) % N, name="join.broadcast")
                last = hvd.join()
            assert last != first_join_rank, (last, first_join_rank)
            lasts.append(last)
    assert hvd.allgather_object(lasts) == [lasts] * N, lasts


@check
def fp16_compression():
    x = torch.tensor([0.1, 1000.0, -3.5, 40000.0]) * (1.0 if R == 0 else 1.0)
    compressed, ctx = hvd.Compression.fp16.compress(x)
    assert compressed.dtype == torch.float16 and hvd.Compression.fp16.decompress(compressed, ctx).dtype == torch.float32
    # Every rank's 40000 sums past float16's largest value (65504); the average is divided first.
    result = hvd.allreduce(x, compression=hvd.Compression.fp16, name="fp16")
    same(result, x, "fp16 average round trip", rtol=1e-3)
    same(hvd.allreduce(torch.ones(3) * (R + 1), op=hvd.Sum, compression=hvd.Compression.fp16),
         torch.ones(3) * N * (N + 1) / 2, "fp16 sum")
    same(hvd.allreduce(torch.arange(3), compression=hvd.Compression.fp16), torch.arange(3), "fp16 leaves integers")


@check
def wire_compression():
    # libhvdrun converts float32 values on the wire: 0.1 has no exact bfloat16 or fp8 value. Tolerances:
    # bfloat16 keeps 8 significant bits, E4M3 4, E5M2 3, each rounded on the way in and after the sum.
    for compression, rtol in ((hvd.Compression.bf16, 1e-2), (hvd.Compression.fp8, 0.13),
                              (hvd.Compression.fp8_e5m2, 0.26)):
        x = torch.tensor([0.1, 1.0, -3.5, 100.0]) * (R + 1)
        result = hvd.allreduce(x, compression=compression, name="wire.%s" % compression.wire_format)
        same(result, torch.tensor([0.1, 1.0, -3.5, 100.0]) * (N + 1) / 2, "%s average" % compression.wire_format,
             rtol=rtol)
        summed = hvd.allreduce(torch.full((3,), 0.1), op=hvd.Sum, compression=compression)
        same(summed, torch.full((3,), 0.1 * N), "%s sum" % compression.wire_format, rtol=rtol)
        if N > 1:
            assert not torch.equal(summed, torch.full((3,), 0.1) * N), "%s: sums exact, not compressed" % compression
        same(hvd.allreduce(torch.arange(3), compression=compression), torch.arange(3), "%s integers" % compression)


def make_model():
    torch.manual_seed(1)
    return torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh(), torch.nn.Linear(3, 1))


class WithUnused(torch.nn.Module):
    """A model with a layer that gets no gradient: its zeros are reduced at synchronize()."""

    def __init__(self):
        super().__init__()
        self.used, self.unused = make_model(), torch.nn.Linear(2, 2)

    def forward(self, inputs):
        return self.used(inputs)


def batch(rank, step, half):
    generator = torch.Generator().manual_seed(1000 * rank + 10 * step + half)
    return torch.randn(6, 4, generator=generator), torch.randn(6, 1, generator=generator)


def loss_of(model, data):
    return torch.nn.functional.mse_loss(model(data[0]), data[1])


def train_distributed(passes, steps, optimizer_class=torch.optim.SGD, **options):
    model = WithUnused()
    base = optimizer_class(model.parameters(), lr=0.1)
    optimizer = hvd.DistributedOptimizer(base, named_parameters=model.named_parameters(),
                                         backward_passes_per_step=passes, **options)
    for step in range(steps):
        optimizer.zero_grad()
        for half in range(passes):
            loss_of(model, batch(R, step, half)).backward()
        optimizer.step()
    return model


def train_alone(passes, steps, optimizer_class=torch.optim.SGD):
    model = WithUnused()
    optimizer = optimizer_class(model.parameters(), lr=0.1)
    for step in range(steps):
        optimizer.zero_grad()
        loss = sum(loss_of(model, batch(k, step, half)) for k in range(N) for half in range(passes)) / N
        loss.backward()
        optimizer.step()
    return model


def same_models(actual, expected, what, atol):
    for (name, a), (_, e) in zip(actual.named_parameters(), expected.named_parameters()):
        same(a.detach(), e.detach(), "%s: %s" % (what, name), atol=atol)


@check
def distributed_optimizer_matches_one_process():
    same_models(train_distributed(1, 3), train_alone(1, 3), "backward_passes_per_step=1", 1e-6)
    same_models(train_distributed(2, 3), train_alone(2, 3), "backward_passes_per_step=2", 1e-6)
    same_models(train_distributed(2, 2, torch.optim.Adam), train_alone(2, 2, torch.optim.Adam), "Adam, 2 passes", 1e-6)
    same_models(train_distributed(1, 3, gradient_predivide_factor=2.0), train_alone(1, 3), "predivide 2", 1e-6)
    same_models(train_distributed(1, 3, compression=hvd.Compression.fp16), train_alone(1, 3), "fp16", 1e-3)
    same_models(train_distributed(1, 3, compression=hvd.Compression.bf16), train_alone(1, 3), "bf16", 1e-2)
    same_models(train_distributed(2, 3, compression=hvd.Compression.fp8), train_alone(2, 3), "fp8", 3e-2)
    model = make_model()
    optimizer = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1),
                                         named_parameters=model.named_parameters())
    assert isinstance(optimizer, torch.optim.SGD)
    loss_of(model, batch(R, 0, 0)).backward()
    if N > 1:
        raises(AssertionError, "zero_grad", optimizer.zero_grad)
    optimizer.synchronize()
    with optimizer.skip_synchronize():
        optimizer.step()
    reference = make_model()
    torch.optim.SGD(reference.parameters(), lr=0.1).zero_grad()
    (sum(loss_of(reference, batch(k, 0, 0)) for k in range(N)) / N).backward()
    with torch.no_grad():
        for p in reference.parameters():
            p -= 0.1 * p.grad
    same_models(model, reference, "synchronize + skip_synchronize", 1e-6)


def optimizer_state(optimizer):
    return {"state": {index: {key: (value.clone() if torch.is_tensor(value) else value)
                              for key, value in entries.items()}
                      for index, entries in optimizer.state_dict()["state"].items()},
            "groups": optimizer.state_dict()["param_groups"]}


@check
def elastic_state_syncs_from_rank_0():
    """hvd.elastic's TorchState in a fixed job: sync() makes every rank's model, optimizer and values rank 0's,
    commit() finds no new hosts, restore() goes back to the commit; run() calls the function once."""
    torch.manual_seed(100 + R)  # each rank's model differs until the sync
    model = torch.nn.Linear(3, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(torch.ones(2, 3) * (R + 1)).sum().backward()
    optimizer.step()  # each rank's momentum differs too
    state = hvd.elastic.TorchState(model, optimizer, epoch=R, note="rank %d" % R)

    @hvd.elastic.run
    def train(state, extra):
        state.commit()
        return extra + state.epoch

    if train(state, 5) != 5 or state.note != "rank 0":
        raise AssertionError("rank %d: run() did not sync rank 0's values first: %r" % (R, state.note))
    for name, tensor in model.state_dict().items():
        gathered = hvd.allgather(tensor.detach().unsqueeze(0))
        for rank in range(N):
            same(gathered[rank], gathered[0], "rank %d's synced %s" % (rank, name))
    momentum = next(iter(optimizer.state_dict()["state"].values()))["momentum_buffer"]
    gathered = hvd.allgather(momentum.unsqueeze(0))
    for rank in range(N):
        same(gathered[rank], gathered[0], "rank %d's synced momentum" % rank)
    state.epoch = 9
    state.restore()
    if state.epoch != 0:
        raise AssertionError("restore() gave epoch %r, not the commit's 0" % state.epoch)


@check
def broadcast_optimizer_state_sgd_and_adam():
    for make_optimizer in (lambda p: torch.optim.SGD(p, lr=0.1 * (R + 1), momentum=0.5 + 0.1 * R),
                           lambda p: torch.optim.Adam(p, lr=0.01 * (R + 1), betas=(0.8, 0.9))):
        for stepped_ranks in (range(N), [0], range(1, N)):
            torch.manual_seed(100 + R)
            model = torch.nn.Linear(3, 2)
            optimizer = make_optimizer(model.parameters())
            if R in stepped_ranks:
                for step in range(R + 1):
                    model(torch.randn(4, 3)).pow(2).sum().backward()
                    optimizer.step()
            hvd.broadcast_parameters(model.state_dict(), root_rank=0)
            hvd.broadcast_optimizer_state(optimizer, root_rank=0)
            mine = optimizer_state(optimizer)
            root = hvd.broadcast_object(mine, 0)
            assert mine["groups"] == root["groups"], (mine["groups"], root["groups"])
            assert mine["state"].keys() == root["state"].keys(), (R, mine["state"].keys(), root["state"].keys())
            for index, entries in root["state"].items():
                assert entries.keys() == mine["state"][index].keys()
                for key, value in entries.items():
                    if torch.is_tensor(value):
                        same(mine["state"][index][key], value, "%s state %s" % (type(optimizer).__name__, key))
                    else:
                        assert mine["state"][index][key] == value
            for p in model.parameters():
                same(p.detach(), hvd.broadcast(p.detach(), 0), "broadcast_parameters")
            model(torch.randn(4, 3)).pow(2).sum().backward()
            optimizer.step()  # the received state is usable


@check
def names_reused_once_completed():
    # Every SyncBatchNorm layer reuses its names, one layer after another.
    for step in range(4):
        same(hvd.allreduce(torch.full((3,), float(R + step)), op=hvd.Sum, name="reused"),
             torch.full((3,), float(N * step + N * (N - 1) / 2)), "allreduce 'reused', time %d" % step)
        same(hvd.allgather(torch.full((1, 2), float(R * step)), name="reused.gather"),
             torch.stack([torch.full((2,), float(k * step)) for k in range(N)]), "allgather 'reused.gather' %d" % step)
        same(hvd.broadcast(torch.tensor([R + step]), step % N, name="reused.broadcast"),
             torch.tensor([step % N + step]), "broadcast 'reused.broadcast' %d" % step)


@check
def grouped_allreduces():
    total = N * (N + 1) / 2
    tensors = [torch.full((i + 1,), float(R + 1) * (i + 1)) for i in range(4)] + [torch.arange(3) * (R + 1)]
    kept = [t.clone() for t in tensors]
    summed = hvd.grouped_allreduce(tensors, op=hvd.Sum, name="grouped.sum")
    assert isinstance(summed, list) and len(summed) == len(tensors)
    for i, result in enumerate(summed[:4]):
        same(result, torch.full((i + 1,), total * (i + 1)), "grouped_allreduce Sum %d" % i)
    same(summed[4], torch.arange(3) * int(total), "grouped_allreduce Sum of int64")
    for t, k in zip(tensors, kept):
        same(t, k, "grouped_allreduce leaves its inputs")
    averaged = hvd.grouped_allreduce(tensors[:4])
    for i, result in enumerate(averaged):
        same(result, torch.full((i + 1,), total / N * (i + 1)), "grouped_allreduce Average %d" % i, rtol=1e-6)
    handle = hvd.grouped_allreduce_async([t.clone() for t in tensors[:2]], op=hvd.Max, name="grouped.max")
    for i, result in enumerate(hvd.synchronize(handle)):
        same(result, torch.full((i + 1,), float(N) * (i + 1)), "grouped_allreduce_async Max %d" % i)
    in_place = [t.clone() for t in tensors[:3]]
    handle = hvd.grouped_allreduce_async_(in_place, op=hvd.Sum, prescale_factor=2.0, postscale_factor=0.25)
    results = hvd.synchronize(handle)
    assert all(a is b for a, b in zip(results, in_place))
    for i, result in enumerate(in_place):
        same(result, torch.full((i + 1,), total * (i + 1) / 2), "grouped_allreduce_async_ scaled %d" % i)
    again = [t.clone() for t in tensors[:2]]
    assert hvd.grouped_allreduce_(again, op=hvd.Min)[0] is again[0]
    same(again[1], torch.full((2,), 2.0), "grouped_allreduce_ Min")
    # Differentiable: the gradient of each input is the same op over the ranks' output gradients.
    x, y = torch.ones(2, requires_grad=True), torch.ones(3, requires_grad=True)
    a, b = hvd.grouped_allreduce([x, y], op=hvd.Sum)
    ((a * (R + 1)).sum() + (b * 2).sum()).backward()
    same(x.grad, torch.full((2,), total), "grouped_allreduce gradient 0")
    same(y.grad, torch.full((3,), 2.0 * N), "grouped_allreduce gradient 1")
    fp16 = hvd.grouped_allreduce([torch.full((4,), 0.5 * (R + 1))], compression=hvd.Compression.fp16)
    same(fp16[0], torch.full((4,), 0.5 * total / N), "grouped_allreduce fp16", rtol=1e-3)
    raises(TypeError, "list of tensors", hvd.grouped_allreduce, torch.ones(2))


@check
def alltoalls():
    # Equal parts: rank r sends rows [2k, 2k + 2) of its tensor to rank k.
    x = torch.arange(2 * N * 3, dtype=torch.float32).view(2 * N, 3) + 1000 * R
    expected = torch.cat([(torch.arange(2 * N * 3, dtype=torch.float32).view(2 * N, 3) + 1000 * k)[2 * R: 2 * R + 2]
                          for k in range(N)])
    same(hvd.alltoall(x), expected, "alltoall equal parts")
    # Splits: rank r sends (r + k) % 3 rows to rank k (none included), each row [r, k, j].
    def rows(sender, receiver):
        return torch.tensor([[sender, receiver, j] for j in range((sender + receiver) % 3)], dtype=torch.int64).view(-1, 3)

    splits = [(R + k) % 3 for k in range(N)]
    mine = torch.cat([rows(R, k) for k in range(N)])
    for kind in ("list", "tensor"):
        output, received = hvd.alltoall(mine, splits=splits if kind == "list" else torch.tensor(splits, dtype=torch.int32),
                                        name="a2a.%s" % kind)
        same(output, torch.cat([rows(k, R) for k in range(N)]), "alltoall with splits as a %s" % kind)
        same(received, torch.tensor([(k + R) % 3 for k in range(N)], dtype=torch.int32), "alltoall received splits")
    output, received = hvd.synchronize(hvd.alltoall_async(mine.to(torch.uint8), splits, name="a2a.async"))
    same(output, torch.cat([rows(k, R) for k in range(N)]).to(torch.uint8), "alltoall_async of uint8")
    # Differentiable: the gradient goes back to the rows' senders.
    x = (torch.arange(N, dtype=torch.float32) + 10 * R).view(N, 1).requires_grad_()
    y = hvd.alltoall(x)
    (y * (R + 1)).sum().backward()
    same(x.grad, torch.arange(1, N + 1, dtype=torch.float32).view(N, 1), "alltoall gradient")
    raises(ValueError, "splits", hvd.alltoall, torch.ones(N + 1, 1), splits=[1] * N)
    if N > 1:
        raises(ValueError, "divisible", hvd.alltoall, torch.ones(N + 1, 1))


def sync_batch_norm_matches_one_process(shape, affine, momentum):
    """Rank r normalizes r + 2 samples; the reference, one BatchNorm over every rank's samples."""
    generator = torch.Generator().manual_seed(7)
    batches = [torch.randn((k + 2,) + shape, generator=generator) * (k + 1) + k for k in range(N)]
    upstream = [torch.randn((k + 2,) + shape, generator=generator) for k in range(N)]
    channels = shape[0]
    kinds = {2: torch.nn.BatchNorm1d, 3: torch.nn.BatchNorm1d, 4: torch.nn.BatchNorm2d, 5: torch.nn.BatchNorm3d}
    reference = kinds[len(shape) + 1](channels, affine=affine, momentum=momentum)
    synced = hvd.SyncBatchNorm(channels, affine=affine, momentum=momentum)
    if affine:
        with torch.no_grad():
            for layer in (reference, synced):
                layer.weight.copy_(torch.linspace(0.5, 1.5, channels))
                layer.bias.copy_(torch.linspace(-1, 1, channels))
    what = "SyncBatchNorm %s affine=%s momentum=%s" % (shape, affine, momentum)
    for step in range(2):
        everything = torch.cat(batches).requires_grad_()
        expected = reference(everything)
        (expected * torch.cat(upstream)).sum().backward()
        mine = batches[R].clone().requires_grad_()
        output = synced(mine)
        (output * upstream[R]).sum().backward()
        start = sum(k + 2 for k in range(R))
        rows = slice(start, start + R + 2)
        same(output.detach(), expected.detach()[rows], "%s: output, step %d" % (what, step), atol=1e-5, rtol=1e-5)
        same(mine.grad, everything.grad[rows], "%s: input gradient, step %d" % (what, step), atol=1e-5, rtol=1e-5)
        same(synced.running_mean, reference.running_mean, "%s: running_mean" % what, atol=1e-6, rtol=1e-5)
        same(synced.running_var, reference.running_var, "%s: running_var" % what, atol=1e-6, rtol=1e-5)
        assert int(synced.num_batches_tracked) == step + 1
        if affine:
            # Each rank's weight and bias gradients are its own batch's; their sum is the reference's.
            for name in ("weight", "bias"):
                summed = hvd.allreduce(getattr(synced, name).grad, op=hvd.Sum)
                same(summed, getattr(reference, name).grad, "%s: %s gradient" % (what, name), atol=1e-4, rtol=1e-5)
                getattr(synced, name).grad = None
                getattr(reference, name).grad = None
    # Eval mode normalizes with the running statistics, locally: no collective is made.
    synced.eval()
    reference.eval()
    with torch.no_grad():
        same(synced(batches[R]), reference(batches[R]), "%s: eval" % what, atol=1e-5, rtol=1e-5)


@check
def sync_batch_norm():
    sync_batch_norm_matches_one_process((3,), True, 0.1)
    sync_batch_norm_matches_one_process((4, 5, 3), True, 0.3)
    sync_batch_norm_matches_one_process((2, 3, 2, 2), False, None)
    raises(ValueError, "2-D", hvd.SyncBatchNorm(3), torch.ones(3))


@check
def distributed_optimizer_groups():
    same_models(train_distributed(1, 3, groups=2), train_alone(1, 3), "groups=2", 1e-6)
    same_models(train_distributed(2, 3, num_groups=3, gradient_predivide_factor=2.0), train_alone(2, 3),
                "num_groups=3, 2 passes, predivide 2", 1e-6)
    model = WithUnused()
    used = list(model.used.parameters())
    optimizer = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1),
                                         named_parameters=model.named_parameters(), groups=[used[:3], [used[3]]])
    for step in range(3):
        optimizer.zero_grad()
        loss_of(model, batch(R, step, 0)).backward()
        optimizer.step()
    same_models(model, train_alone(1, 3), "groups as lists of parameters", 1e-6)
    sgd = torch.optim.SGD(make_model().parameters(), lr=0.1)
    raises(ValueError, "not a parameter", hvd.DistributedOptimizer, sgd, groups=[[torch.ones(1)]])
    raises(ValueError, "non-negative", hvd.DistributedOptimizer, sgd, groups=-1)


@check
def staged_collectives_without_a_device():
    from hvdrun.torch import basics, placement, staging  # pylint: disable=import-outside-toplevel

    saved = basics.host_staging, basics.host_tensors_take
    device = HostAsDevice()
    basics.host_staging, basics.host_tensors_take = staging.HostStaging(device), placement.STAGED
    try:
        total = N * (N + 1) / 2
        x = torch.full((5,), float(R + 1))
        same(hvd.allreduce(x, op=hvd.Sum, name="staged.sum"), torch.full((5,), total), "staged allreduce")
        same(hvd.allreduce(x.half(), prescale_factor=2.0), torch.full((5,), 2 * total / N).half(), "staged fp16 average",
             rtol=1e-3)
        assert hvd.allreduce_(x, op=hvd.Max) is x
        same(x, torch.full((5,), float(N)), "staged allreduce_ in place")
        same(hvd.broadcast(torch.tensor([R == 0, True]), 0), torch.tensor([True, True]), "staged broadcast of bool")
        strided = (torch.arange(6.0).view(2, 3) + R).t()
        hvd.broadcast_(strided, N - 1, name="staged.strided")
        same(strided, (torch.arange(6.0).view(2, 3) + N - 1).t(), "staged broadcast_ of a strided tensor")
        same(hvd.allgather(torch.arange(3, dtype=torch.uint8).view(1, 3) + R),
             torch.stack([torch.arange(3, dtype=torch.uint8) + k for k in range(N)]), "staged allgather of 3 bytes")
        output, received = hvd.alltoall(torch.arange(N, dtype=torch.int64) * 10 + R, splits=[1] * N, name="staged.a2a")
        same(output, torch.arange(N, dtype=torch.int64) + 10 * R, "staged alltoall")
        same(received, torch.ones(N, dtype=torch.int32), "staged alltoall received splits")
        results = hvd.grouped_allreduce([torch.ones(2) * (R + 1), torch.ones(3)], op=hvd.Sum)
        same(results[0], torch.full((2,), total), "staged grouped allreduce")
        same_models(train_distributed(2, 2, groups=2), train_alone(2, 2), "staged DistributedOptimizer", 1e-6)
        sync_batch_norm_matches_one_process((3, 2), True, 0.1)
        handle = hvd.allreduce_async_(torch.full((5,), float(R + 1)), op=hvd.Sum, name="staged.before.join")
        assert 0 <= hvd.join() < N
        same(hvd.synchronize(handle), torch.full((5,), total), "staged allreduce pending at join")
        assert device.recorded > 0 and device.waited == device.recorded, (device.recorded, device.waited)
    finally:
        basics.host_staging.drain()
        basics.host_staging, basics.host_tensors_take = saved


class RecordingHandle:
    """hvdrun._C.Handle, recording how it was waited for in `waits`: ("wait", name) or ("stream", name, stream)."""

    def __init__(self, handle, name, waits):
        self.handle, self.name, self.waits = handle, name, waits

    def wait(self):
        self.waits.append(("wait", self.name))
        self.handle.wait()

    def wait_on_stream(self, stream):
        self.waits.append(("stream", self.name, stream))
        self.handle.wait_on_stream(stream)  # over the host runtime, libhvdrun's Wait

    def ready(self):
        return self.handle.ready()


class RecordingC:
    """hvdrun._C, recording the kind, the name and the stream of every collective submitted, and how the
    handles of those given a stream (the device path's) were waited for."""

    def __init__(self):
        self.calls = []
        self.waits = []

    def __getattr__(self, attribute):
        function = getattr(_C, attribute)
        if attribute not in ("allreduce_async", "broadcast_async", "allgather_async", "alltoall_async",
                             "allgather_into_async", "alltoall_into_async"):
            return function

        def recorded(name, *args, **kwargs):
            self.calls.append((attribute, name, kwargs.get("stream")))
            handle = function(name, *args, **kwargs)
            return handle if kwargs.get("stream") is None else RecordingHandle(handle, name, self.waits)

        return recorded


def device_path_rows(recording):
    """device_path_without_a_device's allgathers and alltoalls: every rank's row counts gathered over the
    host runtime ("<name>.rows", "<name>.splits", no stream), then one collective of equal blocks (the
    largest rows of any rank, padded) with the caller's stream, whose rows are put together."""
    def submitted(kind, name):
        return [c for c in recording.calls if c[1] in (name + (".rows" if "allgather" in kind else ".splits"), name)]

    # First dimensions that differ (rank k gives k + 1 rows), of libhvdrun's types and of others (bytes).
    for dtype in (torch.float32, torch.int64, torch.float16, torch.uint8, torch.bool, torch.int16):
        expected = torch.cat([torch.full((k + 1, 2), float(k % 2)) for k in range(N)]).to(dtype)
        name = "device.ag.%s" % dtype
        same(hvd.allgather(torch.full((R + 1, 2), float(R % 2)).to(dtype), name=name), expected,
             "device allgather of differing first dimensions, %s" % dtype)
        assert submitted("allgather", name) == [("allgather_async", name + ".rows", None),
                                                ("allgather_into_async", name, 0)], submitted("allgather", name)
    odd = hvd.allgather(torch.arange(3, dtype=torch.uint8).view(1, 3) + R)
    same(odd, torch.stack([torch.arange(3, dtype=torch.uint8) + k for k in range(N)]), "device allgather of 3 bytes")
    assert recording.calls[-1][0] == "allgather_into_async" and \
        recording.calls[-1][1].startswith("allgather.staged.noname."), recording.calls[-1]
    # Equal first dimensions (no padding), and rows of several dimensions.
    x = torch.arange(24, dtype=torch.float64).view(2, 3, 4) + 100 * R
    same(hvd.allgather(x, name="device.ag.equal"),
         torch.cat([torch.arange(24, dtype=torch.float64).view(2, 3, 4) + 100 * k for k in range(N)]),
         "device allgather of equal first dimensions")
    check_named_allgathers("dag", "device allgather_async")
    # Differentiable, as on the other paths.
    x = torch.ones(R + 1, 2, requires_grad=True)
    (hvd.allgather(x) * (R + 1)).sum().backward()
    same(x.grad, torch.full((R + 1, 2), (N + 1) / 2), "device allgather gradient (averaged, as Horovod's)")

    # Alltoall with uneven splits: rank r sends (r + k) % 3 rows [r, k, j] to rank k (none included).
    def rows(sender, receiver, count=None):
        count = (sender + receiver) % 3 if count is None else count
        return torch.tensor([[sender, receiver, j] for j in range(count)], dtype=torch.int64).view(-1, 3)

    splits = [(R + k) % 3 for k in range(N)]
    mine = torch.cat([rows(R, k) for k in range(N)])
    for dtype in (torch.int64, torch.float32, torch.uint8, torch.int16):
        name = "device.a2a.%s" % dtype
        output, received = hvd.alltoall(mine.to(dtype), splits=splits, name=name)
        same(output, torch.cat([rows(k, R) for k in range(N)]).to(dtype), "device alltoall with splits, %s" % dtype)
        same(received, torch.tensor([(k + R) % 3 for k in range(N)], dtype=torch.int32),
             "device alltoall received splits, %s" % dtype)
        # At one rank it sends itself no rows: no collective of empty blocks.
        assert submitted("alltoall", name) == [("allgather_async", name + ".splits", None)] + \
            [("alltoall_into_async", name, 0)] * (N > 1), submitted("alltoall", name)
    # Rank r sends r + 1 rows to rank 0 only (zero splits elsewhere); then nothing at all (no collective).
    output, received = hvd.alltoall(rows(R, 0, R + 1), splits=[R + 1] + [0] * (N - 1), name="device.a2a.zeros")
    expected = torch.cat([rows(k, 0, k + 1) for k in range(N)]) if R == 0 else rows(0, R, 0)
    same(output, expected, "device alltoall with zero splits")
    same(received, torch.tensor([k + 1 if R == 0 else 0 for k in range(N)], dtype=torch.int32),
         "device alltoall zero splits received")
    output, received = hvd.alltoall(torch.ones(0, 2), splits=[0] * N, name="device.a2a.empty")
    same(output, torch.ones(0, 2), "device alltoall of nothing")
    same(received, torch.zeros(N, dtype=torch.int32), "device alltoall of nothing, received")
    assert submitted("alltoall", "device.a2a.empty") == [("allgather_async", "device.a2a.empty.splits", None)], \
        submitted("alltoall", "device.a2a.empty")
    # Equal parts (no padding: the tensor itself is sent), and the gradient back to the rows' senders.
    x = torch.arange(2 * N * 3, dtype=torch.float32).view(2 * N, 3) + 1000 * R
    same(hvd.alltoall(x), torch.cat([(torch.arange(2 * N * 3, dtype=torch.float32).view(2 * N, 3) + 1000 * k)
                                     [2 * R: 2 * R + 2] for k in range(N)]), "device alltoall equal parts")
    x = (torch.arange(N, dtype=torch.float32) + 10 * R).view(N, 1).requires_grad_()
    (hvd.alltoall(x) * (R + 1)).sum().backward()
    same(x.grad, torch.arange(1, N + 1, dtype=torch.float32).view(N, 1), "device alltoall gradient")


@check
def device_path_without_a_device():
    """The DEVICE path (a --nccl job's CUDA tensors) with CPU tensors, over the host runtime, which ignores
    streams: in place where it can be, contiguous copies copied back, the caller's stream passed with
    every collective (0 for the CPU), the names CUDA tensors had when they were staged; allgather and
    alltoall as equal blocks after an exchange of row counts (device_path_rows); libhvdrun's wire
    compression refused in one line; nothing staged. Not in a job with a device runtime (--nccl on a
    GPU), whose NCCL runtime takes device memory only: scripts/gpu/torch_collectives.py checks it there."""
    if _C.device_backend() != "none":
        return
    from hvdrun.torch import basics, placement, staging  # pylint: disable=import-outside-toplevel

    saved = basics.host_staging, basics.host_tensors_take, basics.runtime
    device, recording = HostAsDevice(), RecordingC()
    basics.host_staging, basics.host_tensors_take = staging.HostStaging(device), placement.DEVICE
    basics.runtime = recording
    try:
        total = N * (N + 1) / 2
        x = torch.full((5,), float(R + 1))
        address = x.data_ptr()
        assert hvd.allreduce_(x, op=hvd.Sum) is x and x.data_ptr() == address
        same(x, torch.full((5,), total), "device allreduce_ in place")
        kind, name, stream = recording.calls[-1]
        assert (kind, stream) == ("allreduce_async", 0) and name.startswith("allreduce.staged.noname."), \
            recording.calls[-1]
        strided = (torch.arange(6.0).view(2, 3) * (R + 1)).t()
        hvd.allreduce_(strided, op=hvd.Sum, name="device.strided")
        same(strided, (torch.arange(6.0).view(2, 3) * total).t(), "device allreduce_ of a strided tensor")
        assert recording.calls[-1] == ("allreduce_async", "device.strided", 0), recording.calls[-1]
        same(hvd.allreduce(torch.tensor([1, 2], dtype=torch.uint8) * (R + 1), op=hvd.Sum),
             (torch.tensor([1, 2]) * int(total)).to(torch.uint8), "device allreduce of uint8 (through int64)")
        same(hvd.allreduce(torch.full((5,), float(R + 1)).half(), prescale_factor=2.0, postscale_factor=0.5), torch.full((5,), total / N).half(),
             "device fp16 average, scaled", rtol=1e-3)
        same(hvd.allreduce(torch.full((3,), float(R + 1)), compression=hvd.Compression.fp16),
             torch.full((3,), total / N), "device Compression.fp16", rtol=1e-3)
        raises(ValueError, "fp8-e4m3 compression converts values in host memory", hvd.allreduce, x,
               compression=hvd.Compression.fp8)
        raises(ValueError, "--gloo or --mpi", hvd.grouped_allreduce, [x], compression=hvd.Compression.bf16)
        results = hvd.grouped_allreduce([torch.ones(2) * (R + 1), torch.ones(3)], op=hvd.Sum, name="device.group")
        same(results[0], torch.full((2,), total), "device grouped allreduce")
        assert [c[1:] for c in recording.calls[-2:]] == [("device.group.0", 0), ("device.group.1", 0)], \
            recording.calls[-2:]
        same(hvd.broadcast(torch.tensor([R == 0, True]), 0), torch.tensor([True, True]), "device broadcast of bool")
        kind, name, stream = recording.calls[-1]
        assert (kind, stream) == ("broadcast_async", 0) and name.startswith("broadcast.staged.noname."), \
            recording.calls[-1]
        strided = (torch.arange(6.0).view(2, 3) + R).t()
        hvd.broadcast_(strided, N - 1, name="device.strided")
        same(strided, (torch.arange(6.0).view(2, 3) + N - 1).t(), "device broadcast_ of a strided tensor")
        device_path_rows(recording)
        assert device.recorded == 0 and device.waited == 0, (device.recorded, device.waited)
        same_models(train_distributed(2, 2, groups=2, compression=hvd.Compression.fp16), train_alone(2, 2),
                    "device DistributedOptimizer with fp16", 1e-3)
        sync_batch_norm_matches_one_process((3, 2), True, 0.1)
        model = make_model()
        for param in model.parameters():
            param.data.fill_(float(R))
        hvd.broadcast_parameters(model.state_dict(), root_rank=0)
        assert all(torch.equal(p, torch.zeros_like(p)) for p in model.parameters())
        handle = hvd.allreduce_async_(torch.full((5,), float(R + 1)), op=hvd.Sum, name="device.before.join")
        gather = hvd.allgather_async(torch.full((R + 1, 2), R), name="device.gather.before.join")
        assert 0 <= hvd.join() < N
        same(hvd.synchronize(handle), torch.full((5,), total), "device allreduce pending at join")
        same(hvd.synchronize(gather), torch.cat([torch.full((k + 1, 2), k) for k in range(N)]),
             "device allgather pending at join")
        assert ("broadcast_async", "broadcast.0.weight", 0) in recording.calls, recording.calls[-4:]
        assert all(c[2] == 0 for c in recording.calls if not c[1].endswith((".rows", ".splits"))), \
            [c for c in recording.calls if c[2] != 0 and not c[1].endswith((".rows", ".splits"))]
        # Every one of them (the optimizer's included) completed on the caller's stream, none on the host.
        streamed = {name for _, name, stream in recording.calls if stream is not None}
        assert recording.waits and all(wait[0] == "stream" and wait[2] == 0 for wait in recording.waits), \
            [wait for wait in recording.waits if wait[0] != "stream"][:4]
        assert {wait[1] for wait in recording.waits} == streamed, sorted(streamed - {w[1] for w in recording.waits})
        assert N == 1 or any(wait[1].startswith("grad_group.") for wait in recording.waits), "the optimizer's"
        assert len(basics.completion.in_flight) == 0, "held after the host runtime completed them"
    finally:
        basics.host_staging.drain()
        basics.host_staging, basics.host_tensors_take, basics.runtime = saved


@check
def unsupported_features_name_themselves():
    error = hvd.HvdrunUnsupportedError
    x = torch.ones(2)
    raises(error, "Adasum", hvd.allreduce, x, op=hvd.Adasum)
    raises(error, "hvdrun.torch.grouped_allreduce(op=hvd.Adasum)); use op=hvd.Average", hvd.grouped_allreduce, [x],
           op=hvd.Adasum)
    raises(error, "use op=hvd.Average", hvd.allreduce_async_, x, op=hvd.Adasum)
    raises(error, "Adasum", hvd.DistributedOptimizer, torch.optim.SGD(make_model().parameters(), lr=0.1), op=hvd.Adasum)
    raises(error, "MPI communicator", hvd.ProcessSet, object())
    raises(ValueError, "is not registered", hvd.allreduce, x, process_set=hvd.ProcessSet([0]))
    raises(ValueError, "must be an hvd.ProcessSet", hvd.allreduce, x, process_set=object())
    raises(ValueError, "HOROVOD_DYNAMIC_PROCESS_SETS=1", hvd.add_process_set, [0])
    raises(error, "sparse", hvd.allreduce, x.to_sparse())
    raises(error, "communicators", hvd.init, comm=[0])
    if hvd.mpi_enabled():
        assert hvd.mpi_threads_supported() is True  # libhvdrun asks Open MPI for MPI_THREAD_MULTIPLE
    else:
        raises(ValueError, "does not run over MPI", hvd.mpi_threads_supported)
    assert hvd.ddl_built() is False and hvd.ccl_built() is False
    raises(TypeError, "complex", hvd.allreduce, torch.ones(2, dtype=torch.complex64), name="complex")


@check
def timeline_started_and_stopped_while_the_job_runs():
    # Horovod's start_timeline/stop_timeline: rank 0 writes the Chrome trace of what runs between them.
    directory = hvd.broadcast_object(tempfile.mkdtemp(prefix="hvdrun-timeline-") if R == 0 else None, root_rank=0)
    path = os.path.join(directory, "timeline.json")
    hvd.allreduce(torch.ones(3), name="timeline.before")
    hvd.start_timeline(path, mark_cycles=True)
    if R == 0 and _C.backend() != "none":
        raises(RuntimeError, "already writes a timeline to '%s'" % path, hvd.start_timeline, path + ".2")
    for _ in range(2):
        same(hvd.allreduce(torch.ones(3), name="timeline.during", op=hvd.Sum), torch.full((3,), float(N)), "during")
    hvd.stop_timeline()
    hvd.allreduce(torch.ones(3), name="timeline.after")
    if R == 0:
        if _C.backend() == "none":  # a script run alone has no engine, so no timeline
            assert not os.path.exists(path)
        else:
            with open(path) as trace:
                events = json.load(trace)
            names = [name for event in events if event.get("name") == "ALLREDUCE" for name in event["args"]["names"]]
            assert names == ["timeline.during"] * 2, names
            assert any(event.get("name") == "CYCLE_START" for event in events)
        shutil.rmtree(directory)
    hvd.stop_timeline()  # again: nothing to stop


# Horovod's definitions, checked in this same launch (tests/python/horovod_api_checks.py).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import horovod_api_checks  # noqa: E402  pylint: disable=wrong-import-position

horovod_api_checks.setup(same, raises)
CHECKS.extend(horovod_api_checks.CHECKS)
ONLY = os.environ.get("HVDRUN_TEST_ONLY")  # a comma-separated list of checks, when debugging
for function in [f for f in CHECKS if not ONLY or f.__name__ in ONLY.split(",")]:
    started = time.monotonic()
    function()
    if R == 0:
        print("ok %s (%d ranks, %.1f s)" % (function.__name__, N, time.monotonic() - started), flush=True)
hvd.shutdown()
sys.exit(0)
