"""The collectives that move whole rows (first-dimension slices) of tensors whose first dimensions may
differ between ranks: allgather, grouped_allgather and alltoall (asynchronous and differentiable, as
Horovod's). CUDA tensors of a --nccl job go in device memory as equal blocks (device_rows.py), others
through libhvdrun's collectives of uneven counts, staged through pinned host memory when on a device."""

import torch

from hvdrun.torch import basics, device_rows, placement
from hvdrun.torch.allreduce_ops import allreduce, grouped_allreduce
from hvdrun.torch.basics import (Average, RUNTIME_TYPES, bytes_of, check_process_set, check_tensor, check_tensor_list,
                                 tensor_path)
from hvdrun.torch.handles import HandleGroup, Pending, auto_name, check_name_free, complete, given, register, \
    staged_name, synchronize


def _row_layout(dtype, row, element_size):
    """How rows of `row` elements of `dtype` (`element_size` bytes each) travel: (libhvdrun's type name, elements per row,
    widened). Types libhvdrun has go as they are; others as their bytes: as int32 words when a row is
    whole words, else widened, one byte per int32 element (rows of odd byte sizes, such as bool masks)."""
    if dtype in RUNTIME_TYPES:
        return RUNTIME_TYPES[dtype], row, False
    row_bytes = row * element_size
    widened = row_bytes % 4 != 0
    return "int32", row_bytes if widened else row_bytes // 4, widened


def _rows_start(call, tensor, name, submit, splits=None, process_set_id=0):
    """Starts a collective that moves whole rows (first-dimension slices) of `tensor`: an allgather
    (`splits` None) or an alltoall (`splits`: the rows for each rank). Returns (handle, finish, tensors
    to keep, Pending.device), finish() giving (the received rows as one tensor where `tensor` is, the rows
    from each rank) once the handle has completed (handles.complete).

    On the DEVICE path the rows go in device memory (device_rows.py), named as they were when they were
    staged. Otherwise submit(name, send, type name, elements per row) submits libhvdrun's collective of
    counts that may differ between ranks, whose result is host memory, with `send`, a contiguous host
    tensor of a type libhvdrun has, and returns its handle; a CUDA tensor is staged through host memory
    (staging.py)."""
    check_tensor(call, tensor)
    if tensor.dim() == 0:
        raise ValueError("hvdrun.torch.%s: a 0-dimensional tensor has no first dimension" % call)
    trailing = tuple(tensor.shape[1:])
    row = 1
    for size in trailing:
        row *= size
    if row == 0:
        raise ValueError("hvdrun.torch.%s: a tensor of shape %s has no elements per row" % (call, tuple(tensor.shape)))
    check_name_free(call, name)
    path = tensor_path(call, tensor)
    if path == placement.DEVICE:
        if process_set_id:
            basics.unsupported("process sets for %s of CUDA tensors in device memory (hvdrun.torch.%s(process_set=))"
                               % (call, call), "gather CPU tensors, or over the global process set")
        with torch.no_grad():
            handle, finish, keep = device_rows.start(basics.runtime, basics.exchanges, RUNTIME_TYPES, call, tensor,
                                                     staged_name(call, name, process_set_id), splits)
        return handle, finish, keep, tensor.device
    device = tensor.device
    ready = None
    staged = path == placement.STAGED
    with torch.no_grad():
        if staged:
            local, ready = basics.host_staging.stage_in(tensor.detach().contiguous())
            name = staged_name(call, name, process_set_id)
        else:
            local = tensor.detach().contiguous()
            name = "" if name is None else str(name)
    type_name, unit, widened = _row_layout(local.dtype, row, local.element_size())
    keep = [local]

    def start():
        # Reads `local`: for a staged tensor, on the staging thread once its copy has completed.
        if local.dtype in RUNTIME_TYPES:
            send = local
        else:
            data = bytes_of(local)
            if widened:
                send = data.to(torch.int32)
            else:  # a view of whole words needs a word-aligned start
                send = (data if data.storage_offset() % 4 == 0 else data.clone()).view(torch.int32)
        keep.append(send)
        return submit(name, send, type_name, unit)

    if staged:
        handle = basics.host_staging.submit_after(ready, start, "hvdrun.torch.%s('%s')" % (call, name))
    else:
        handle = start()

    def finish():
        received = handle.inner if staged else handle
        rows = [count // unit for count in received.counts()]
        shape = (sum(rows),) + trailing
        output = basics.host_staging.host_buffer(shape, local.dtype) if staged else torch.empty(shape, dtype=local.dtype)
        if widened:
            values = torch.empty(sum(rows) * unit, dtype=torch.int32)
            received.copy_to(values.data_ptr())
            bytes_of(output).copy_(values.to(torch.uint8))
        else:
            received.copy_to(output.data_ptr())
        if staged:
            on_device = torch.empty(shape, dtype=local.dtype, device=device)
            basics.host_staging.stage_out(output, on_device)
            output = on_device
        return output, rows

    return handle, finish, keep, None


def _allgather_start(tensor, name, process_set_id=0):
    """Starts an allgather of `tensor` along dim 0 over a process set (see _rows_start)."""
    def submit(name, send, type_name, unit):
        return basics.runtime.allgather_async(name, send.data_ptr(), send.numel(), type_name, unit,
                                              process_set=process_set_id, shape=list(tensor.shape))

    return _rows_start("allgather", tensor, name, submit, process_set_id=process_set_id)


class _AllgatherFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, name, process_set):
        ctx.process_set = process_set
        handle, finish, keep, device = _allgather_start(tensor, name, basics.check_process_set(process_set))
        gathered, ctx.rows = complete(handle, keep, finish, device)
        return gathered

    @staticmethod
    def backward(ctx, grad_output):
        # As Horovod's: the output gradient averaged over the ranks, then this rank's rows of it.
        averaged = allreduce(grad_output.contiguous(), op=Average, process_set=ctx.process_set)
        rank = basics.set_rank(basics.check_process_set(ctx.process_set))
        start = sum(ctx.rows[:rank])
        return averaged.narrow(0, start, ctx.rows[rank]), None, None


def allgather(tensor, name=None, process_set=None):
    """Concatenates every rank's `tensor` along dim 0 (first dimensions may differ); differentiable."""
    check_process_set(process_set)
    check_tensor("allgather", tensor)
    return _AllgatherFunction.apply(tensor, name, process_set)


def allgather_async(tensor, name=None, process_set=None):
    """Starts an allgather of `tensor` along dim 0 (first dimensions may differ); returns a handle for
    synchronize(). Named ones are negotiated: ranks may start them in any order."""
    handle, finish, keep, device = _allgather_start(tensor, name, check_process_set(process_set))
    return register(Pending(handle, None, keep, lambda: finish()[0], given(name), device))


def _grouped_allgather_start(tensors, name, process_set_id=0):
    """Starts allgathers of `tensors` named "<name>.<index>" (unnamed: "grouped_allgather.noname.<n>.<index>")
    together; returns (one handle for all, finish giving [(gathered, rows from each rank)], tensors to keep,
    the names, Pending.device)."""
    base = auto_name("grouped_allgather", name, process_set_id)
    names = ["%s.%d" % (base, index) for index in range(len(tensors))]
    for each in names:  # refused before any of them is submitted
        check_name_free("grouped_allgather", each)
    started = [_allgather_start(tensor, each, process_set_id) for tensor, each in zip(tensors, names)]
    return (HandleGroup([handle for handle, _, _, _ in started]), lambda: [finish() for _, finish, _, _ in started],
            [keep for _, _, keep, _ in started], tuple(names),
            next((device for _, _, _, device in started if device is not None), None))


def grouped_allgather_async(tensors, name=None, process_set=None):
    """Starts allgathers of every tensor in `tensors` along dim 0 (first dimensions may differ), submitted
    together; returns a handle whose synchronize() returns the list of results."""
    process_set_id = check_process_set(process_set)
    tensors = check_tensor_list("grouped_allgather_async", tensors)
    handle, finish, keep, names, device = _grouped_allgather_start(tensors, name, process_set_id)
    return register(Pending(handle, None, keep, lambda: [gathered for gathered, _ in finish()], names, device))


class _GroupedAllgatherFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, name, process_set, *tensors):
        ctx.process_set = process_set
        handle, finish, keep, _, device = _grouped_allgather_start(list(tensors), name,
                                                                   basics.check_process_set(process_set))
        results = complete(handle, keep, finish, device)
        ctx.rows = [rows for _, rows in results]
        return tuple(gathered for gathered, _ in results)

    @staticmethod
    def backward(ctx, *grad_outputs):
        # As Horovod's: each output gradient averaged over the ranks (one grouped allreduce), then this
        # rank's rows of it.
        averaged = grouped_allreduce([g.contiguous() for g in grad_outputs], op=Average, process_set=ctx.process_set)
        rank = basics.set_rank(basics.check_process_set(ctx.process_set))
        return (None, None) + tuple(grad.narrow(0, sum(rows[:rank]), rows[rank]) for grad, rows in zip(averaged, ctx.rows))


def grouped_allgather(tensors, name=None, process_set=None):
    """Returns the allgathers along dim 0 of every tensor in `tensors`, as a list, gathered together;
    differentiable (as allgather)."""
    check_process_set(process_set)
    tensors = check_tensor_list("grouped_allgather", tensors)
    return list(_GroupedAllgatherFunction.apply(name, process_set, *tensors))


def _alltoall_splits(tensor, splits, process_set_id=0):
    """The rows of `tensor` to send to each rank of the process set, as a list of ints, checked."""
    size = basics.set_size(process_set_id)
    if tensor.dim() == 0:
        raise ValueError("hvdrun.torch.alltoall: a 0-dimensional tensor has no first dimension to split")
    rows = tensor.shape[0]
    if splits is None:
        if rows % size != 0:
            raise ValueError("hvdrun.torch.alltoall: the first dimension (%d) is not divisible by the %d ranks; "
                             "pass splits=" % (rows, size))
        return [rows // size] * size
    values = splits.tolist() if torch.is_tensor(splits) else list(splits)
    if len(values) != size or any(int(v) != v or v < 0 for v in values) or sum(values) != rows:
        raise ValueError("hvdrun.torch.alltoall: splits must be %d non-negative integers (one per rank) that add up "
                         "to the first dimension (%d), got %r" % (size, rows, values))
    return [int(v) for v in values]


def alltoall_async(tensor, splits=None, name=None, process_set=None):
    """Starts an alltoall: rank r sends rows [sum(splits[:k]), sum(splits[:k+1])) of `tensor` to rank k
    (splits=None: equal parts); returns a handle whose synchronize() returns (the rows received, in rank
    order; an int32 CPU tensor of how many came from each rank). libhvdrun's alltoall: named ones are
    negotiated (any order on any rank); see Runtime::AlltoallAsync for its traffic."""
    process_set_id = check_process_set(process_set)
    check_tensor("alltoall", tensor)
    rows = _alltoall_splits(tensor, splits, process_set_id)
    def submit(name, send, type_name, unit):
        return basics.runtime.alltoall_async(name, send.data_ptr(), [r * unit for r in rows], type_name, unit,
                                             process_set=process_set_id, shape=list(tensor.shape))

    handle, finish, keep, device = _rows_start("alltoall", tensor, name, submit, rows, process_set_id)

    def received():
        output, counts = finish()
        return output, torch.tensor(counts, dtype=torch.int32)

    return register(Pending(handle, None, keep, received, given(name), device))


class _AlltoallFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, splits, name, process_set):
        output, received = synchronize(alltoall_async(tensor, splits, name, process_set))
        ctx.received = received
        ctx.process_set = process_set
        ctx.mark_non_differentiable(received)
        return output, received

    @staticmethod
    def backward(ctx, grad_output, unused):
        # The rows this rank received go back to the ranks they came from.
        grad, _ = synchronize(alltoall_async(grad_output.contiguous(), ctx.received, process_set=ctx.process_set))
        return grad, None, None, None


def alltoall(tensor, splits=None, name=None, process_set=None):
    """Sends rows of `tensor` to every rank and returns the rows received, in rank order; with `splits`
    (the rows for each rank), returns (the rows, an int32 tensor of the rows from each rank), as Horovod.
    Differentiable. See alltoall_async for how it travels."""
    check_process_set(process_set)
    check_tensor("alltoall", tensor)
    output, received = _AlltoallFunction.apply(tensor, splits, name, process_set)
    return output if splits is None else (output, received)
