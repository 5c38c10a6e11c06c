"""Checks hvdrun.torch's process sets (Horovod's hvd.ProcessSet) against closed-form results; run by CTest
under hvdrun at 3 and 4 ranks, over Gloo (with and without shared memory) and MPI.

    hvdrun -np 4 -H localhost:4 --gloo /usr/bin/python3 tests/python/process_set_checks.py

Overlapping sets ({0,1}, {1,...,n-1}, {0,2}) registered at init, used at once from a thread per set beside
the whole job's collectives; dynamic sets added and removed afterwards; the errors of a call on a set this
rank is not in, of a duplicate set and of removing a set with a collective pending. Every rank computes what
it must get from the ranks and n only; a failed check raises, so the rank exits non-zero and hvdrun fails.
"""

import os
import sys
import threading
import time

import torch

import hvdrun.torch as hvd

os.environ["HOROVOD_DYNAMIC_PROCESS_SETS"] = "1"  # static sets at init, dynamic ones later
SETS = [hvd.ProcessSet([0, 1]), hvd.ProcessSet(range(1, int(os.environ["HVDRUN_SIZE"]))), hvd.ProcessSet([2, 0])]
hvd.init(process_sets=SETS)
R, N = hvd.rank(), hvd.size()
torch.set_num_threads(1)  # the ranks share the machine's cores
CHECKS = []


def check(function):
    CHECKS.append(function)
    return function


def same(actual, expected, what):
    expected = torch.as_tensor(expected, dtype=actual.dtype) if not torch.is_tensor(expected) else expected
    if actual.dtype != expected.dtype or actual.shape != expected.shape or not torch.equal(actual, expected):
        raise AssertionError("%s: rank %d of %d got %r, expected %r" % (what, R, N, actual, expected))


def raises(error_type, words, function, *args, **kwargs):
    try:
        function(*args, **kwargs)
    except error_type as error:
        if words not in str(error) or "\n" in str(error):
            raise AssertionError("%s: message %r is not one line naming %r" % (function.__name__, str(error), words))
        return
    raise AssertionError("%s did not raise %s (%s)" % (function.__name__, error_type.__name__, words))


@check
def static_sets_are_registered_in_order():
    assert [ps.process_set_id for ps in SETS] == [1, 2, 3], [str(ps) for ps in SETS]
    assert SETS[2].ranks == [0, 2]
    for ps in SETS:
        assert ps.included() == (R in ps.ranks)
        assert ps.size() == len(ps.ranks)
        if R in ps.ranks:
            assert ps.rank() == ps.ranks.index(R)
    assert hvd.global_process_set.process_set_id == 0 and hvd.global_process_set.ranks == list(range(N))
    assert hvd.global_process_set.size() == N and hvd.global_process_set.rank() == R


def exercise(ps, tag):
    """Every collective on `ps`, each result against what one process computes from the members' values."""
    ranks = ps.ranks
    total = sum(r + 1 for r in ranks)
    x = torch.arange(6.0) * (R + 1)
    for step in range(3):
        same(hvd.allreduce(x + step, op=hvd.Sum, process_set=ps), torch.arange(6.0) * total + step * len(ranks),
             "allreduce %s step %d" % (tag, step))
        same(hvd.allreduce(x, name="%s.avg.%d" % (tag, step), process_set=ps), torch.arange(6.0) * total / len(ranks),
             "named average %s" % tag)
        grouped = hvd.grouped_allreduce([x, x.long()], op=hvd.Sum, process_set=ps)
        same(grouped[1], torch.arange(6) * total, "grouped_allreduce %s" % tag)
        gathered = hvd.allgather(torch.full((R + 1, 2), R), process_set=ps)
        same(gathered, torch.cat([torch.full((r + 1, 2), r) for r in ranks]), "allgather %s" % tag)
        lists = hvd.grouped_allgather([torch.full((1,), R), torch.full((2,), R * 10)], process_set=ps)
        same(lists[1], torch.tensor([r * 10 for r in ranks for _ in range(2)]), "grouped_allgather %s" % tag)
        root = ranks[step % len(ranks)]
        same(hvd.broadcast(torch.full((3,), R), root, process_set=ps), torch.full((3,), root), "broadcast %s" % tag)
        sent = torch.arange(len(ranks)) + 100 * R
        received = hvd.alltoall(sent, process_set=ps)
        same(received, torch.tensor([100 * r + ps.rank() for r in ranks]), "alltoall %s" % tag)
        # 5 rows: an uneven split over 2 or 3 members (Horovod's: the first rows % n get one more).
        rows = torch.arange(10, dtype=torch.float64).view(5, 2) + step
        first, own = own_rows(5, ps)
        same(hvd.reducescatter(rows * (R + 1), op=hvd.Sum, process_set=ps), (rows * total)[first:first + own],
             "reducescatter %s step %d" % (tag, step))
        parts = hvd.grouped_reducescatter([rows * (R + 1), (rows * (R + 1)).long()], name="%s.grs.%d" % (tag, step),
                                          process_set=ps)
        same(parts[0], (rows * total / len(ranks))[first:first + own], "grouped reducescatter %s" % tag)
        same(parts[1], ((rows * total).long() // len(ranks))[first:first + own], "grouped reducescatter long %s" % tag)
        hvd.barrier(process_set=ps)


def own_rows(rows, ps):
    """(first row, rows) of this rank's part of `rows` split over the members of `ps`, as Horovod splits."""
    n = ps.size()
    counts = [rows // n + (1 if k < rows % n else 0) for k in range(n)]
    return sum(counts[:ps.rank()]), counts[ps.rank()]


@check
def overlapping_sets_at_once_from_threads():
    failures = []

    def run(ps, tag):
        try:
            exercise(ps, tag)
        except Exception as error:  # pylint: disable=broad-except
            failures.append("%s: %s" % (tag, error))

    threads = [threading.Thread(target=run, args=(ps, "set%d" % ps.process_set_id)) for ps in SETS if ps.included()]
    threads.append(threading.Thread(target=run, args=(hvd.global_process_set, "global")))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise AssertionError("; ".join(failures))


@check
def autograd_and_objects_in_a_set():
    ps = SETS[1]
    if not ps.included():
        return
    x = torch.ones(3).mul(R + 1).requires_grad_()
    (hvd.allreduce(x, op=hvd.Sum, process_set=ps) * (R + 1)).sum().backward()
    same(x.grad, torch.full((3,), float(sum(r + 1 for r in ps.ranks))), "allreduce backward in a set")
    y = torch.ones(R + 1, 2).requires_grad_()
    hvd.allgather(y, process_set=ps).sum().backward()
    same(y.grad, torch.ones(R + 1, 2), "allgather backward in a set (averaged)")
    root = ps.ranks[-1]
    assert hvd.broadcast_object({"from": R}, root_rank=root, process_set=ps) == {"from": root}
    model = torch.nn.Linear(2, 1)
    torch.nn.init.constant_(model.weight, float(R))
    hvd.broadcast_parameters(model.state_dict(), root_rank=root, process_set=ps)
    same(model.weight.data, torch.full((1, 2), float(root)), "broadcast_parameters in a set")
    # Horovod's reducescatter gradient: the output gradient, times the members for a Sum, gathered in the set.
    z = torch.ones(4, 2, dtype=torch.float64).requires_grad_()
    (hvd.reducescatter(z, op=hvd.Sum, process_set=ps) * (ps.rank() + 1)).sum().backward()
    counts = [4 // ps.size() + (1 if k < 4 % ps.size() else 0) for k in range(ps.size())]
    expected = torch.cat([torch.full((counts[k], 2), float((k + 1) * ps.size()), dtype=torch.float64)
                          for k in range(ps.size())])
    same(z.grad, expected, "reducescatter backward in a set")


@check
def distributed_optimizer_in_a_set():
    ps = SETS[0]
    model = torch.nn.Linear(1, 1, bias=False)
    torch.nn.init.zeros_(model.weight)
    optimizer = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=1.0),
                                         named_parameters=model.named_parameters(), process_set=ps)
    model(torch.full((1, 1), float(R + 1))).sum().backward()
    optimizer.step()
    # Members average their gradients; a rank outside the set steps on its own, as Horovod's.
    expected = sum(r + 1 for r in ps.ranks) / len(ps.ranks) if ps.included() else R + 1
    same(model.weight.data, torch.full((1, 1), -float(expected)), "DistributedOptimizer(process_set=)")


@check
def a_call_on_a_set_this_rank_is_not_in_is_one_line():
    outside = [ps for ps in SETS if not ps.included()]
    for ps in outside:
        raises(RuntimeError, "rank %d is not in process set %d (ranks %s)" % (R, ps.process_set_id,
                                                                              ",".join(map(str, ps.ranks))),
               hvd.allreduce, torch.ones(2), process_set=ps)
        raises(RuntimeError, "is not in process set", hvd.barrier, process_set=ps)
        raises(RuntimeError, "rank %d is not in process set %d" % (R, ps.process_set_id), hvd.reducescatter,
               torch.ones(2), process_set=ps)
    if R in SETS[0].ranks:
        raises(RuntimeError, "root %d is not in process set 1" % (N - 1), hvd.broadcast, torch.ones(1), N - 1,
               process_set=SETS[0])
    same(hvd.allreduce(torch.ones(2), op=hvd.Sum), torch.full((2,), float(N)), "the job goes on")


@check
def dynamic_sets_are_added_and_removed():
    raises(ValueError, "duplicate", hvd.add_process_set, [1, 0])
    raises(ValueError, "duplicate", hvd.add_process_set, list(range(N)))
    assert hvd.remove_process_set(SETS[2]) is True  # {0,2}: at 3 ranks, {0,n-1} is added again below
    ps = hvd.add_process_set([N - 1, 0])
    assert ps.process_set_id == 4 and ps.ranks == [0, N - 1], str(ps)
    if ps.included():
        same(hvd.allreduce(torch.full((2,), R), op=hvd.Sum, process_set=ps), torch.full((2,), N - 1), "dynamic set")
    # A set with a collective pending on this rank is not removed (rank 0 alone tries; then both finish it).
    handle = None
    if R == 0:
        handle = hvd.allreduce_async(torch.ones(1), name="pending", op=hvd.Sum, process_set=ps)
        raises(RuntimeError, "collective(s) pending on rank 0", hvd.remove_process_set, ps)
    hvd.barrier()
    if R == N - 1:
        handle = hvd.allreduce_async(torch.ones(1), name="pending", op=hvd.Sum, process_set=ps)
    if handle is not None:
        same(hvd.synchronize(handle), torch.full((1,), 2.0), "the pending collective")
    assert hvd.remove_process_set(ps) is True
    assert ps.process_set_id is None
    assert hvd.remove_process_set(ps) is False and hvd.remove_process_set(hvd.global_process_set) is False
    raises(ValueError, "is not registered", hvd.allreduce, torch.ones(1), process_set=ps)
    again = hvd.add_process_set(hvd.ProcessSet([0, N - 1]))
    assert again.process_set_id == 5, str(again)
    assert hvd.remove_process_set(again) is True
    for each in SETS[:2]:
        assert hvd.remove_process_set(each) is True
    same(hvd.allreduce(torch.ones(1), op=hvd.Sum), torch.full((1,), float(N)), "after removal")


for function in CHECKS:
    started = time.monotonic()
    function()
    if R == 0:
        print("ok %s (%d ranks, %.1f s)" % (function.__name__, N, time.monotonic() - started), flush=True)
hvd.shutdown()
sys.exit(0)
