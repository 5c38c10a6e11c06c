"""Checks of hvdrun.torch against Horovod's definitions (horovod/torch/mpi_ops.py, optimizer.py,
functions.py of Horovod 0.28): autograd, duplicate names, sparse allreduce, grouped allgather, scale
factors. Run by hvdrun_torch_checks.py in the same launch (its CHECKS), so they add no launch of their own.

Each check computes what every rank must get from the rank r and the number of ranks n alone, as one
process would, forward and backward, and compares exactly (or to the rounding named).
"""

import torch

import hvdrun.torch as hvd

CHECKS = []


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
