"""The GPU check's training-side calls on one device: parameters and optimizer state, DistributedOptimizer,
join, reducescatter, wire compression, grouped allgather, the broadcast forms, Product, scale factors,
sparse gradients, process sets and the gradients of the differentiable calls. Each takes a device
("cpu", "cuda:N") and returns whether the results were right; torch_collectives.py runs them.
"""

# The job, set by torch_collectives.set_job once hvdrun.torch is initialized; every check reads these as
# module names.
torch = hvd = None
rank, size, device_runtime = 0, 1, False


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
