"""Checks of hvdrun.torch against Horovod's definitions (horovod/torch/mpi_ops.py, optimizer.py,
functions.py of Horovod 0.28): autograd, duplicate names, sparse allreduce, grouped allgather, scale
factors, the product, reducescatter. Run by hvdrun_torch_checks.py in the same launch (its CHECKS), so they add no launch of their own.

Each check computes what every rank must get from the rank r and the number of ranks n alone, as one
process would, forward and backward, and compares exactly (or to the rounding named).
"""

import re

import torch

import hvdrun.torch as hvd

CHECKS = []
R = N = 0  # this rank and the number of ranks, and hvdrun_torch_checks.py's comparisons: set by setup()
same = raises = None


def check(function):
    CHECKS.append(function)
    return function


def setup(same, raises):
    """Gives the checks hvdrun_torch_checks.py's comparisons."""
    globals().update(same=same, raises=raises, R=hvd.rank(), N=hvd.size())


@check
def allgather_gradient_as_horovod():
    # Horovod's HorovodAllgather.backward: the output gradient averaged over the ranks, then this rank's
    # rows. Rank r gives r rows (rank 0 none); rank k weighs output row i by (k + 1) * (i + 1).
    rows = [k for k in range(N)]
    offset = sum(rows[:R])
    for dtype in (torch.float32, torch.float64):
        x = torch.full((R, 2), float(R), dtype=dtype, requires_grad=True)
        y = hvd.allgather(x)
        same(y.detach(), torch.cat([torch.full((k, 2), float(k), dtype=dtype) for k in range(N)]), "allgather")
        weights = torch.arange(1, sum(rows) + 1, dtype=dtype).view(-1, 1).expand(-1, 2) * (R + 1)
        (y * weights).sum().backward()
        expected = torch.arange(offset + 1, offset + R + 1, dtype=dtype).view(-1, 1).expand(-1, 2) * (N + 1) / 2
        same(x.grad, expected.contiguous(), "allgather gradient %s" % dtype, rtol=1e-12)
    # Horovod's own example: at 2 ranks, y.sum() gives [1, 1] (not [2, 2]).
    x = torch.ones(1, 2, requires_grad=True)
    hvd.allgather(x).sum().backward()
    same(x.grad, torch.ones(1, 2), "allgather gradient of a sum")


@check
def broadcast_gradient_as_horovod():
    # Horovod's HorovodBroadcast.backward: the output gradient averaged over the ranks on root_rank,
    # zeros elsewhere.
    for root in {0, N - 1}:
        x = torch.full((3,), float(R + 1), requires_grad=True)
        y = hvd.broadcast(x, root)
        same(y.detach(), torch.full((3,), float(root + 1)), "broadcast from %d" % root)
        (y * (R + 1)).sum().backward()
        same(x.grad, torch.full((3,), (N + 1) / 2 if R == root else 0.0), "broadcast gradient, root %d" % root)
    same(hvd.broadcast(torch.tensor([R, 7]), 0), torch.tensor([0, 7]), "broadcast of integers (no gradient)")
    x = torch.ones(0, 2, requires_grad=True)
    hvd.broadcast(x, 0).sum().backward()
    same(x.grad, torch.zeros(0, 2), "broadcast gradient of an empty tensor")


@check
def allreduce_gradients_as_horovod():
    # HorovodAllreduce.backward and HorovodGroupedAllreduce.backward: the same op and scale factors
    # over the ranks' output gradients.
    total = N * (N + 1) / 2
    for op, pre, post in ((hvd.Sum, 2.0, 0.5), (hvd.Average, 3.0, 0.25), (hvd.Sum, 1.0, 1.0)):
        x = torch.ones(2, dtype=torch.float64, requires_grad=True)
        y = hvd.allreduce(x * (R + 1), op=op, prescale_factor=pre, postscale_factor=post)
        divisor = N if op is hvd.Average else 1
        same(y.detach(), torch.full((2,), total * pre * post / divisor, dtype=torch.float64), "allreduce %r" % op)
        (y * (R + 1)).sum().backward()
        same(x.grad, torch.full((2,), (R + 1) * total * pre * post / divisor, dtype=torch.float64),
             "allreduce gradient %r" % op, rtol=1e-12)
        a = torch.ones(3, dtype=torch.float64, requires_grad=True)
        b = torch.ones(0, dtype=torch.float64, requires_grad=True)
        ya, yb = hvd.grouped_allreduce([a * (R + 1), b], op=op, prescale_factor=pre, postscale_factor=post)
        (ya * (R + 1)).sum().backward()
        same(a.grad, torch.full((3,), (R + 1) * total * pre * post / divisor, dtype=torch.float64),
             "grouped allreduce gradient %r" % op, rtol=1e-12)
        assert yb.shape == (0,)


@check
def alltoall_gradient_as_horovod():
    # HorovodAlltoall.backward: the received rows' gradients go back to their senders (received splits).
    # Rank r sends (r + k) % 3 rows to rank k (none included); rank k weighs what it received by k + 1.
    splits = [(R + k) % 3 for k in range(N)]
    x = (torch.arange(sum(splits), dtype=torch.float32) + 100 * R).view(-1, 1).requires_grad_()
    output, received = hvd.alltoall(x, splits=splits)
    same(received, torch.tensor([(k + R) % 3 for k in range(N)], dtype=torch.int32), "alltoall received splits")
    expected = []
    for k in range(N):
        start = sum((k + j) % 3 for j in range(R))
        expected.append(torch.arange(start, start + (k + R) % 3, dtype=torch.float32) + 100 * k)
    same(output.detach(), torch.cat(expected).view(-1, 1), "alltoall rows")
    (output * (R + 1)).sum().backward()
    same(x.grad, torch.cat([torch.full(((R + k) % 3, 1), float(k + 1)) for k in range(N)]), "alltoall gradient")


def refused(error_type, words, function, *args, **kwargs):
    """Checks that function(*args, **kwargs) raises error_type with a one-line message naming `words`."""
    try:
        function(*args, **kwargs)
    except error_type as error:
        if words not in str(error) or "\n" in str(error):
            raise AssertionError("%s: %r is not one line naming %r" % (function.__name__, str(error), words))
        return
    raise AssertionError("%s did not raise %s (%s)" % (function.__name__, error_type.__name__, words))


@check
def duplicate_names_refused_at_submission():
    # As Horovod: a collective named as one of this rank's that has not run yet is a ValueError at
    # submission, whatever the kinds; the name is free again once that one has run. So that "dup" cannot
    # run while a rank tries it again, rank 0 starts it only after a barrier that the others reach after
    # their tries, and the others start rank 0's "dup0" only after that barrier.
    x = torch.ones(3)
    if N == 1:  # alone, a collective runs at once: its name is free again
        same(hvd.synchronize(hvd.allreduce_async(x, name="dup", op=hvd.Sum)), x, "'dup' alone")
        same(hvd.synchronize(hvd.allreduce_async(x, name="dup", op=hvd.Sum)), x, "'dup' alone again")
        return
    mine, theirs = ("dup0", "dup") if R == 0 else ("dup", "dup0")
    first = hvd.allreduce_async(x, name=mine, op=hvd.Sum)
    words = "rank %d already has a pending collective named '%s'" % (R, mine)
    for call, args in ((hvd.allreduce_async, (x,)), (hvd.allreduce_async_, (x.clone(),)), (hvd.allreduce, (x,)),
                       (hvd.allgather_async, (x,)), (hvd.allgather, (x,)), (hvd.broadcast_async, (x, 0)),
                       (hvd.broadcast_async_, (x.clone(), 0)), (hvd.broadcast, (x, 0)),
                       (hvd.alltoall_async, (torch.ones(N),)), (hvd.alltoall, (torch.ones(N),))):
        refused(ValueError, words, call, *args, name=mine)
    hvd.barrier()
    second = hvd.allreduce_async(x, name=theirs, op=hvd.Sum)
    same(hvd.synchronize(first), torch.full((3,), float(N)), "the first '%s' after the refusals" % mine)
    same(hvd.synchronize(second), torch.full((3,), float(N)), "'%s'" % theirs)
    same(hvd.allreduce(x, name="dup", op=hvd.Sum), torch.full((3,), float(N)), "'dup' again once it has run")
    # A grouped allreduce holds "<name>.<index>" for each of its tensors.
    if R == 0:
        group = hvd.grouped_allreduce_async([x, x], name="dup.group", op=hvd.Sum)
        refused(ValueError, "named 'dup.group.1'", hvd.allreduce_async, x, name="dup.group.1")
    hvd.barrier()
    if R != 0:
        group = hvd.grouped_allreduce_async([x, x], name="dup.group", op=hvd.Sum)
    same(hvd.synchronize(group)[1], torch.full((3,), float(N)), "grouped 'dup.group' after a refusal")


@check
def shape_mismatches_fail_on_every_rank():
    # As Horovod's coordinator: tensors of one name whose shapes differ between ranks (the same element
    # count) fail on every rank with one line naming both shapes and ranks: every dimension of an allreduce
    # (alone and grouped), a broadcast and a reducescatter, those after the first of an allgather and an
    # alltoall. The last rank gives the odd shape; a collective after them runs.
    if N == 1:
        return
    last = R == N - 1

    def shaped(shape, odd):
        return torch.ones(odd if last else shape)

    def mismatch(shape, odd):
        # The first description is of whichever rank the negotiation compared the odd one with.
        return "shape %s by rank " % shape, "shape %s by rank %d" % (odd, N - 1)

    def fails(words, call, *args, **kwargs):
        for word in words:
            refused(RuntimeError, word, call, *args, **kwargs)

    fails(mismatch("[2, 3]", "[3, 2]"), hvd.allreduce, shaped((2, 3), (3, 2)), name="shape.allreduce")
    fails(mismatch("[2, 3]", "[3, 2]"), hvd.grouped_allreduce, [torch.ones(4), shaped((2, 3), (3, 2))],
          name="shape.group")
    fails(mismatch("[4]", "[2, 2]"), hvd.broadcast, shaped((4,), (2, 2)), 0, name="shape.broadcast")
    fails(mismatch("[%d, 3]" % (2 * N), "[%d, 3, 1]" % (2 * N)), hvd.reducescatter,
          shaped((2 * N, 3), (2 * N, 3, 1)), name="shape.reducescatter")
    # An allgather's first dimension is each rank's own: only the rest must agree.
    same(hvd.allgather(torch.ones(R + 1, 3), name="shape.allgather.rows"), torch.ones(N * (N + 1) // 2, 3),
         "allgather of rows that differ in number")
    # Each rank's rows are its own: the rank compared with the last one is named with its own rows.
    fails((", 3] by rank ", "shape [%d, 1, 3] by rank %d" % (N, N - 1)), hvd.allgather,
          shaped((R + 1, 3), (R + 1, 1, 3)), name="shape.allgather")
    try:
        hvd.allgather(shaped((R + 1, 3), (R + 1, 1, 3)), name="shape.allgather")
    except RuntimeError as error:
        named = re.search(r"shape \[(\d+), 3\] by rank (\d+) but as", str(error))
        assert named and int(named.group(1)) == int(named.group(2)) + 1, "rows of another rank: %s" % error
    else:
        raise AssertionError("allgather of a mismatched shape did not fail")
    fails(mismatch("[%d, 2]" % N, "[%d, 2, 1]" % N), hvd.alltoall, shaped((N, 2), (N, 2, 1)), name="shape.alltoall")
    same(hvd.allreduce(torch.ones(2, 3), name="shape.allreduce", op=hvd.Sum), torch.full((2, 3), float(N)),
         "the same name in one shape after the mismatches")


@check
def grouped_allgather_as_horovod():
    # Uneven first dimensions (rank r gives r + i rows of the i-th tensor, rank 0 none of the first), every
    # type; differentiable as HorovodGroupedAllgather (averaged over the ranks, this rank's rows).
    dtypes = (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.uint8,
              torch.int8, torch.int16, torch.bool)
    tensors = [torch.full((R + i, 2), float(R + i)).to(dtype) for i, dtype in enumerate(dtypes)]
    for results in (hvd.grouped_allgather(tensors), hvd.synchronize(hvd.grouped_allgather_async(tensors, name="gag"))):
        assert len(results) == len(dtypes)
        for i, (result, dtype) in enumerate(zip(results, dtypes)):
            same(result, torch.cat([torch.full((k + i, 2), float(k + i)) for k in range(N)]).to(dtype),
                 "grouped allgather %s" % dtype)
    same(hvd.grouped_allgather([torch.ones(0, 3)])[0], torch.ones(0, 3), "grouped allgather of nothing")
    a = torch.ones(R, 2, dtype=torch.float64, requires_grad=True)
    b = torch.ones(R + 1, dtype=torch.float64, requires_grad=True)
    ya, yb = hvd.grouped_allgather([a, b], name="gag.grad")
    ((ya * (R + 1)).sum() + (yb * torch.arange(1.0, yb.shape[0] + 1, dtype=torch.float64) * (R + 1)).sum()).backward()
    same(a.grad, torch.full((R, 2), (N + 1) / 2, dtype=torch.float64), "grouped allgather gradient 0")
    offset = sum(k + 1 for k in range(R))
    same(b.grad, torch.arange(offset + 1.0, offset + R + 2, dtype=torch.float64) * (N + 1) / 2,
         "grouped allgather gradient 1", rtol=1e-12)


def sparse_of(rank, rows=6, width=2):
    """Rank `rank`'s sparse gradient-like tensor: rows rank % rows and (rank + 2) % rows (the same row twice
    at some ranks), none at all on rank 1."""
    if rank == 1:
        return torch.sparse_coo_tensor(torch.zeros(1, 0, dtype=torch.int64), torch.zeros(0, width), (rows, width))
    indices = torch.tensor([[rank % rows, (rank + 2) % rows, rank % rows]])
    values = torch.arange(3 * width, dtype=torch.float32).view(3, width) + rank
    return torch.sparse_coo_tensor(indices, values, (rows, width))


@check
def sparse_allreduce_as_horovod():
    # Indices and values allgathered, values divided by the ranks for an Average; the result sums to the
    # dense sum (average) of every rank's tensor.
    dense_sum = sum(sparse_of(k).to_dense() for k in range(N))
    for op, divisor in ((hvd.Average, N), (hvd.Sum, 1)):
        handle = hvd.sparse_allreduce_async(sparse_of(R), name="sparse.%s" % op.name, op=op)
        result = handle() if R % 2 else hvd.synchronize(handle)
        assert result.is_sparse and result.shape == (6, 2)
        same(result.to_dense(), dense_sum / divisor, "sparse allreduce %r" % op, rtol=1e-6)
        entries = sum(sparse_of(k)._nnz() for k in range(N))
        assert result._nnz() == entries, ("sparse allreduce entries (not coalesced, as Horovod's)", result._nnz(), entries)
    refused(TypeError, "expected a sparse COO tensor", hvd.sparse_allreduce_async, torch.ones(2), "sparse.dense",
            hvd.Sum)
    refused(ValueError, "op must be hvd.Average or hvd.Sum", hvd.sparse_allreduce_async, sparse_of(R), "sparse.max",
            hvd.Max)
    refused(hvd.HvdrunUnsupportedError, "use hvd.sparse_allreduce_async", hvd.allreduce, sparse_of(R))
    # A sparse allreduce's, a grouped allgather's and a grouped allreduce's names are checked before any of
    # their collectives is submitted; rank 0 holds "held.indices" and "held.0" until after a barrier.
    if N > 1:
        names = ("held.indices", "held.0")
        if R == 0:
            pending = [hvd.allgather_async(torch.ones(1), name=name) for name in names]
            refused(ValueError, "named 'held.indices'", hvd.sparse_allreduce_async, sparse_of(R), "held", hvd.Sum)
            refused(ValueError, "named 'held.0'", hvd.grouped_allgather_async, [torch.ones(1)] * 2, name="held")
            refused(ValueError, "named 'held.0'", hvd.grouped_allreduce_async, [torch.ones(1)] * 2, name="held")
        hvd.barrier()
        if R != 0:
            pending = [hvd.allgather_async(torch.ones(1), name=name) for name in names]
        for handle in pending:
            same(hvd.synchronize(handle), torch.ones(N), "an allgather that held its name")
    same(hvd.allreduce(torch.ones(2), op=hvd.Sum), torch.full((2,), float(N)), "an allreduce after the refusals")


class EmbeddingModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(3)
        self.embedding = torch.nn.Embedding(10, 3, sparse=True)
        self.linear = torch.nn.Linear(3, 1)

    def forward(self, ids):
        return self.linear(self.embedding(ids)).sum(dim=1)


def embedding_batch(rank, step):
    generator = torch.Generator().manual_seed(100 * rank + step)
    return torch.randint(0, 10, (4, 3), generator=generator), torch.randn(4, 1, generator=generator)


@check
def sparse_embedding_trains_as_one_process():
    # nn.Embedding(sparse=True) through DistributedOptimizer: its sparse gradient by sparse allreduce, or
    # dense with sparse_as_dense; the model matches one process trained on every rank's batches.
    reference = EmbeddingModel()
    optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
    for step in range(3):
        optimizer.zero_grad()
        loss = sum(torch.nn.functional.mse_loss(reference(ids), target)
                   for ids, target in (embedding_batch(k, step) for k in range(N))) / N
        loss.backward()
        optimizer.step()
    for sparse_as_dense, groups in ((False, None), (True, None), (True, 1)):
        model = EmbeddingModel()
        optimizer = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), groups=groups,
                                             named_parameters=model.named_parameters(), sparse_as_dense=sparse_as_dense)
        for step in range(3):
            optimizer.zero_grad()
            ids, target = embedding_batch(R, step)
            torch.nn.functional.mse_loss(model(ids), target).backward()
            assert model.embedding.weight.grad.is_sparse
            optimizer.step()
        for (name, mine), (_, expected) in zip(model.named_parameters(), reference.named_parameters()):
            same(mine.detach(), expected.detach(), "sparse_as_dense=%s, groups=%s: %s" % (sparse_as_dense, groups, name),
                 atol=1e-6)


@check
def optimizers_without_names_and_gradients():
    # DistributedOptimizer without named_parameters (Horovod's names allreduce.noname.<group>.<index>), and
    # broadcast_optimizer_state with a parameter that has no gradient yet, stepped on some ranks only.
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Linear(2, 2))
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    optimizer = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9))
    assert sorted(optimizer._hvd_names.values()) == ["allreduce.noname.0.%d" % j for j in range(4)]
    model[0](torch.ones(2, 3) * (R + 1)).sum().backward()  # the second layer gets no gradient
    optimizer.step()
    same(model[0].weight.grad, torch.full((2, 3), 2.0 * (N + 1) / 2), "averaged gradient without names")
    if N > 1:  # alone, nothing is reduced
        same(model[1].bias.grad, torch.zeros(2), "a parameter without gradient reduced as zeros")
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Linear(2, 2))  # no DistributedOptimizer's hooks
    for make in (lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9), lambda p: torch.optim.Adam(p, lr=0.1)):
        optimizer = make(model.parameters())
        if R == 0:
            model.zero_grad(set_to_none=True)
            model[0](torch.ones(2, 3)).sum().backward()
            optimizer.step()
        hvd.broadcast_optimizer_state(optimizer, root_rank=0)
        keys = sorted(hvd.broadcast_object(sorted(optimizer.state_dict()["state"]), 0))
        assert sorted(optimizer.state_dict()["state"]) == keys, (R, optimizer.state_dict()["state"].keys(), keys)
    refused(ValueError, "named_parameters must be (name, parameter) tuples", hvd.DistributedOptimizer,
            torch.optim.SGD(model.parameters(), lr=0.1), named_parameters=list(model.parameters()))


@check
def scale_factors_as_horovod():
    # prescale_factor before the sum and postscale_factor after it, each as Horovod's engine scales a buffer:
    # float types by the factor rounded to float32, float64 in double, integers in double then truncated; an
    # Average is the sum times postscale_factor / size.
    def scaled(values, factor, dtype):
        if dtype == torch.float64:
            return values * factor
        if dtype.is_floating_point:
            return (values.float() * torch.tensor(factor, dtype=torch.float32)).to(dtype)
        return (values.double() * factor).trunc().to(dtype)

    values = torch.tensor([1.0, 3.0, 7.0, 10.0, 0.1, -5.0])
    started = []
    for dtype in (torch.float32, torch.float64, torch.int32, torch.int64, torch.int16, torch.int8):
        x = values.to(dtype) * (R == 0)  # zeros but on rank 0: every rank's sum is rank 0's scaled values
        for op, pre, post in ((hvd.Sum, 0.1, 3.0), (hvd.Average, 0.3, 0.7), (hvd.Max, 1.0, 0.5), (hvd.Sum, 1.0, 1.0)):
            reduced = scaled(values.to(dtype), pre, dtype)
            if op is hvd.Max:
                reduced = torch.maximum(reduced, torch.zeros_like(reduced)) if N > 1 else reduced
            expected = scaled(reduced, post / N if op is hvd.Average else post, dtype)
            what = "%s %r scaled by %s, %s" % (dtype, op, pre, post)
            started.append((hvd.allreduce_async(x, name="scaled." + what, op=op, prescale_factor=pre,
                                                postscale_factor=post), expected, what))
            started.append((hvd.grouped_allreduce_async([x, x[:2]], name="scaled.group." + what, op=op,
                                                        prescale_factor=pre, postscale_factor=post), expected, what))
    for handle, expected, what in started:  # submitted together: they run in few negotiation cycles
        result = hvd.synchronize(handle)
        if isinstance(result, list):
            same(result[1], expected[:2], "grouped " + what)
        else:
            same(result, expected, what)
    same(hvd.allreduce(torch.ones(0, 3), prescale_factor=2.0, postscale_factor=3.0), torch.ones(0, 3), "empty, scaled")
    # float16 and bfloat16 averages are divided by the ranks before the sum (hvdrun's, against overflow).
    for dtype in (torch.float16, torch.bfloat16):
        x = torch.tensor([1.0, 2.0, 4.0], dtype=dtype)
        same(hvd.allreduce(x, prescale_factor=2.0, postscale_factor=0.5), x, "%s average scaled" % dtype)
        same(hvd.allreduce(x, op=hvd.Sum, prescale_factor=0.5, postscale_factor=4.0), x * 2 * N, "%s sum scaled" % dtype)


def product_input(rank, dtype, count=11):
    """Rank `rank`'s values for a product: 0, or plus or minus a power of two (0.5, 1, 2; integers 1 or 2;
    uint8 positive), so that the product over the ranks is exact in every type."""
    values = []
    for i in range(count):
        exponent = (i + rank) % 2 if not dtype.is_floating_point else (i + rank) % 3 - 1
        sign = -1.0 if (i * 3 + rank) % 4 == 0 and dtype != torch.uint8 else 1.0
        values.append(0.0 if i % 11 == 5 else sign * 2.0 ** exponent)
    return torch.tensor(values, dtype=torch.float64)


@check
def product_as_horovod():
    # hvd.Product over every type allreduce takes, fused with others ready in the same cycle, in place,
    # grouped, with factors (the prescale on each rank's values, the postscale on the product), and its
    # gradient as Horovod's (the product of the output gradients); a reducescatter of it too.
    dtypes = (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.uint8,
              torch.int8, torch.int16)
    started = []
    for dtype in dtypes:
        expected = torch.stack([product_input(k, dtype) for k in range(N)]).prod(0).to(dtype)
        x = product_input(R, dtype).to(dtype)
        what = "product of %s" % dtype
        started.append((hvd.allreduce_async(x, name=what, op=hvd.Product), expected, what))
        started.append((hvd.grouped_allreduce_async([x, x[:3]], name="group." + what, op=hvd.Product), expected,
                        "grouped " + what))
        inplace = x.clone()
        started.append((hvd.allreduce_async_(inplace, name="inplace." + what, op=hvd.Product), expected,
                        "in place " + what))
    for handle, expected, what in started:  # submitted together: fused in few negotiation cycles
        result = hvd.synchronize(handle)
        if isinstance(result, list):
            same(result[1], expected[:3], what)
            result = result[0]
        same(result, expected, what)
    x = torch.full((3,), 2.0, dtype=torch.float64)
    same(hvd.allreduce(x, op=hvd.Product, prescale_factor=0.5, postscale_factor=3.0), torch.full((3,), 3.0,
         dtype=torch.float64), "product scaled")
    x = torch.full((2,), float(R + 1), dtype=torch.float64, requires_grad=True)
    y = hvd.allreduce(x, op=hvd.Product)
    same(y.detach(), torch.full((2,), float(torch.arange(1, N + 1).prod()), dtype=torch.float64), "product forward")
    (y * 2.0).sum().backward()
    same(x.grad, torch.full((2,), 2.0 ** N, dtype=torch.float64), "product gradient (Horovod's: the product)")
    full = torch.stack([product_input(k, torch.float32, 2 * N + 1) for k in range(N)]).prod(0).float()
    same(hvd.reducescatter(product_input(R, torch.float32, 2 * N + 1).float(), op=hvd.Product), own_rows(full),
         "reducescatter product")
    same(hvd.allreduce(torch.ones(0, 2), op=hvd.Product), torch.ones(0, 2), "product of nothing")


def rank_rows(rows, rank):
    """Horovod's split of a first dimension of `rows` (ReducescatterOp::ComputeOutputShapeForRank)."""
    return rows // N + (1 if rank < rows % N else 0)


def own_rows(full, rank=None):
    rank = R if rank is None else rank
    first = sum(rank_rows(full.shape[0], k) for k in range(rank))
    return full[first:first + rank_rows(full.shape[0], rank)]


@check
def reducescatter_as_horovod():
    # Every type, Sum and Average, first dimensions that split evenly, unevenly and not at all (fewer rows
    # than ranks, none); rank r's row i holds (r + 1) * (i % 5 + 1), so sums fit every type.
    dtypes = (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.uint8,
              torch.int8, torch.int16)
    started = []
    for rows in (2 * N + 1, 4 * N, 1, 0):
        for dtype in dtypes:
            def of(rank):
                return ((torch.arange(rows) % 5 + 1) * (rank + 1)).view(-1, 1).expand(-1, 3).to(dtype)
            total = sum(of(k).double() for k in range(N))
            for op in (hvd.Sum, hvd.Average):
                expected = total if op is hvd.Sum else total / N
                if not dtype.is_floating_point:
                    expected = expected.trunc()
                what = "reducescatter of %d rows of %s, %r" % (rows, dtype, op)
                started.append((hvd.reducescatter_async(of(R), name=what, op=op), own_rows(expected.to(dtype)), what))
    grouped = [torch.full((2 * N + 1 + i, 2), float(R + 1)).to(dtype) for i, dtype in enumerate(dtypes)]
    handle = hvd.grouped_reducescatter_async(grouped, name="grs", op=hvd.Sum)
    for handle_, expected, what in started:  # submitted together: fused in few negotiation cycles
        rtol = 1e-2 if expected.dtype in (torch.float16, torch.bfloat16) else 0
        same(hvd.synchronize(handle_), expected, what, rtol=rtol)
    for i, (result, dtype) in enumerate(zip(hvd.synchronize(handle), dtypes)):
        full = torch.full((2 * N + 1 + i, 2), float(N * (N + 1) // 2)).to(dtype)
        same(result, own_rows(full), "grouped reducescatter %s" % dtype)
    same(hvd.reducescatter(torch.ones(0, 3)), torch.ones(0, 3), "reducescatter of nothing")
    same(hvd.grouped_reducescatter([torch.ones(N, 0)])[0], torch.ones(rank_rows(N, R), 0),
         "grouped reducescatter of rows of nothing")
    x = torch.tensor([[1.0], [3.0], [7.0]], dtype=torch.float64) * (R + 1)
    same(hvd.reducescatter(x, op=hvd.Sum, prescale_factor=0.5, postscale_factor=3.0),
         own_rows(torch.tensor([[1.0], [3.0], [7.0]], dtype=torch.float64) * (N * (N + 1) / 2) * 1.5),
         "reducescatter scaled")
    raises(ValueError, "0-dimensional", hvd.reducescatter, torch.tensor(1.0))


@check
def reducescatter_gradients_as_horovod():
    # HorovodReducescatter.backward: the output gradient, times the ranks for a Sum and times the factors,
    # gathered from every rank. Rank k weighs its rows by k + 1.
    rows = 2 * N + 1
    gathered = torch.cat([torch.full((rank_rows(rows, k), 2), float(k + 1), dtype=torch.float64) for k in range(N)])
    for op, pre, post in ((hvd.Sum, 1.0, 1.0), (hvd.Average, 1.0, 1.0), (hvd.Sum, 2.0, 0.25)):
        x = torch.ones(rows, 2, dtype=torch.float64, requires_grad=True)
        y = hvd.reducescatter(x, op=op, prescale_factor=pre, postscale_factor=post)
        (y * (R + 1)).sum().backward()
        factor = (N if op is hvd.Sum else 1) * pre * post
        same(x.grad, gathered * factor, "reducescatter gradient %r, %s, %s" % (op, pre, post))
    a = torch.ones(rows, 2, dtype=torch.float64, requires_grad=True)
    b = torch.ones(N, dtype=torch.float64, requires_grad=True)
    ya, yb = hvd.grouped_reducescatter([a, b], name="grs.grad", op=hvd.Average)
    ((ya * (R + 1)).sum() + (yb * (R + 1)).sum()).backward()
    same(a.grad, gathered, "grouped reducescatter gradient 0")
    same(b.grad, torch.arange(1.0, N + 1, dtype=torch.float64), "grouped reducescatter gradient 1")
