"""reducescatter and grouped_reducescatter (asynchronous and differentiable, as Horovod's) over libhvdrun's
negotiated reducescatter, which fuses those ready together. Each rank gets its rows of the first dimension
as Horovod splits them: rows // size each, one more for each of the first rows % size ranks. Types,
averages and prescale/postscale factors as allreduce's (allreduce_ops.py); CUDA tensors take the path
placement.py chooses (the NCCL runtime in device memory, or pinned host memory)."""

import torch

from hvdrun.torch import basics, placement
from hvdrun.torch.allreduce_ops import _scale, engine_factors, engine_op, reduced_type
from hvdrun.torch.basics import (RUNTIME_TYPES, Sum, check_process_set, check_tensor, check_tensor_list,
                                 stream_device, submission_stream, tensor_path)
from hvdrun.torch.handles import HandleGroup, Pending, auto_name, check_name_free, given, group_device, register, \
    staged_name, synchronize
from hvdrun.torch.row_ops import allgather_async, grouped_allgather_async


def rank_rows(rows, rank, size):
    """The rows of a first dimension of `rows` that `rank` of `size` receives (Horovod's split)."""
    return rows // size + (1 if rank < rows % size else 0)


def _reducescatter_start(call, tensor, name, op, prescale_factor, postscale_factor, process_set_id=0):
    """Starts a reducescatter of `tensor` over the ranks of process set `process_set_id`; returns its
    Pending, not yet registered, whose finish() gives this rank's rows as a new tensor of the input's type
    and device."""
    check_tensor(call, tensor)
    if tensor.dim() == 0:
        raise ValueError("hvdrun.torch.%s: a 0-dimensional tensor has no first dimension to scatter" % call)
    check_name_free(call, name)
    held = given(name)
    path = tensor_path(call, tensor)
    staged = path == placement.STAGED
    name = (auto_name("reducescatter", name, process_set_id) if path == placement.HOST
            else staged_name("reducescatter", name, process_set_id))
    work_type = reduced_type(call, tensor, name)
    try:
        set_rank, set_size = basics.set_rank(process_set_id), basics.set_size(process_set_id)
    except RuntimeError as error:  # a set this rank is not in: libhvdrun's one line, naming the call
        raise RuntimeError("hvdrun.torch.%s('%s'): %s" % (call, name, error)) from None
    runtime_op, prescale_factor, postscale_factor = engine_op(op, work_type, prescale_factor, postscale_factor,
                                                                set_size)
    engine, (prescale_factor, postscale_factor) = engine_factors(prescale_factor, postscale_factor)
    type_name = RUNTIME_TYPES[work_type]
    trailing = tuple(tensor.shape[1:])
    row = 1
    for size in trailing:
        row *= size
    shape = (rank_rows(tensor.shape[0], set_rank, set_size),) + trailing
    with torch.no_grad():
        work = tensor.detach().to(work_type, copy=True).contiguous()
        _scale(work, prescale_factor)  # where the tensor is, before any copy to host memory
        count = work.numel()
        if staged:
            send, ready = basics.host_staging.stage_in(work)
            result = basics.host_staging.host_buffer(shape, work_type)
            handle = basics.host_staging.submit_after(
                ready, lambda: basics.runtime.reducescatter_async(name, send.data_ptr(), result.data_ptr(), count,
                                                                  type_name, runtime_op, max(row, 1),
                                                                  process_set=process_set_id, prescale=engine[0],
                                                                  postscale=engine[1], shape=list(tensor.shape)),
                "hvdrun.torch.%s('%s')" % (call, name))
        else:
            send = work
            result = torch.empty(shape, dtype=work_type, device=tensor.device)
            handle = basics.runtime.reducescatter_async(name, send.data_ptr(), result.data_ptr(), count, type_name,
                                                        runtime_op, max(row, 1),
                                                        stream=submission_stream(path, tensor),
                                                        process_set=process_set_id, prescale=engine[0],
                                                        postscale=engine[1], shape=list(tensor.shape))

    def finish():
        with torch.no_grad():
            _scale(result, postscale_factor)
            output = result
            if staged:
                output = torch.empty(shape, dtype=work_type, device=tensor.device)
                basics.host_staging.stage_out(result, output)
            return output.to(tensor.dtype)

    return Pending(handle, None, (tensor, send, result), finish, held, stream_device(path, tensor))


def reducescatter_async(tensor, name=None, op=None, process_set=None, prescale_factor=1.0, postscale_factor=1.0):
    """Starts a reducescatter of `tensor` (op: hvd.Average by default, or hvd.Sum, hvd.Min, hvd.Max, hvd.Product);
    returns a handle whose synchronize() gives this rank's rows of the reduction over the ranks of
    `process_set` (the whole job by default). The input is not modified."""
    process_set_id = check_process_set(process_set)
    op = basics.resolve_op(None, op, "reducescatter_async")
    return register(_reducescatter_start("reducescatter_async", tensor, name, op, prescale_factor, postscale_factor,
                                         process_set_id))


class _ReducescatterFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, name, op, prescale_factor, postscale_factor, process_set):
        ctx.op, ctx.factors, ctx.process_set = op, (prescale_factor, postscale_factor), process_set
        return synchronize(reducescatter_async(tensor, name=name, op=op, prescale_factor=prescale_factor,
                                               postscale_factor=postscale_factor, process_set=process_set))

    @staticmethod
    def backward(ctx, grad_output):
        # Horovod's HorovodReducescatter.backward: the output gradient (times the ranks for a Sum, times
        # the factors) gathered from every rank.
        return _gathered_gradients([grad_output], ctx.op, ctx.factors, ctx.process_set)[0], None, None, None, None, \
            None


def _gathered_gradients(grad_outputs, op, factors, process_set):
    grads = []
    for grad in grad_outputs:
        if op is Sum:
            grad = grad * basics.set_size(check_process_set(process_set))
        for factor in factors:
            if factor != 1.0:
                grad = grad * factor
        grads.append(grad.contiguous())
    if len(grads) == 1:
        return [synchronize(allgather_async(grads[0], process_set=process_set))]
    return synchronize(grouped_allgather_async(grads, process_set=process_set))


def _compressor(compression):
    if compression is None:
        from hvdrun.torch.compression import Compression  # pylint: disable=import-outside-toplevel
        return Compression.none
    return compression


def reducescatter(tensor, name=None, compression=None, op=None, process_set=None, prescale_factor=1.0,
                  postscale_factor=1.0):
    """Returns this rank's rows of op (default Average) over all ranks of `tensor`, a new tensor;
    differentiable as Horovod's. `compression` (hvd.Compression.fp16) reduces a compressed copy."""
    check_process_set(process_set)
    op = basics.resolve_op(None, op, "reducescatter")
    check_tensor("reducescatter", tensor)
    compression = _compressor(compression)
    compressed, ctx = compression.compress(tensor)
    reduced = _ReducescatterFunction.apply(compressed, name, op, prescale_factor, postscale_factor, process_set)
    return compression.decompress(reduced, ctx)


def grouped_reducescatter_async(tensors, name=None, op=None, process_set=None, prescale_factor=1.0,
                                postscale_factor=1.0):
    """Starts reducescatters of every tensor in `tensors`, submitted together and named "<name>.<index>"
    (unnamed: "grouped_reducescatter.noname.<n>.<index>"); libhvdrun fuses those negotiated in the same
    cycle. Returns a handle whose synchronize() gives the list of this rank's rows of each."""
    process_set_id = check_process_set(process_set)
    op = basics.resolve_op(None, op, "grouped_reducescatter_async")
    tensors = check_tensor_list("grouped_reducescatter_async", tensors)
    base = auto_name("grouped_reducescatter", name, process_set_id)
    names = ["%s.%d" % (base, index) for index in range(len(tensors))]
    for member in names:  # refused before any of them is submitted
        check_name_free("grouped_reducescatter_async", member)
    pending = [_reducescatter_start("grouped_reducescatter_async", tensor, member, op, prescale_factor,
                                    postscale_factor, process_set_id)
               for tensor, member in zip(tensors, names)]
    return register(Pending(HandleGroup([p.handle for p in pending]), None, [p.keep for p in pending],
                            lambda: [p.finish() for p in pending], sum((p.names for p in pending), ()),
                            group_device(pending)))


class _GroupedReducescatterFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, name, op, factors, process_set, *tensors):
        ctx.op, ctx.factors, ctx.process_set = op, factors, process_set
        return tuple(synchronize(grouped_reducescatter_async(list(tensors), name=name, op=op,
                                                             prescale_factor=factors[0],
                                                             postscale_factor=factors[1], process_set=process_set)))

    @staticmethod
    def backward(ctx, *grad_outputs):
        # Horovod's HorovodGroupedReducescatter.backward: reducescatter's, in one grouped allgather.
        return (None, None, None, None) + tuple(_gathered_gradients(list(grad_outputs), ctx.op, ctx.factors,
                                                                    ctx.process_set))


def grouped_reducescatter(tensors, name=None, compression=None, op=None, process_set=None, prescale_factor=1.0,
                          postscale_factor=1.0):
    """Returns, for every tensor in `tensors`, this rank's rows of op (default Average) over all ranks, as a
    list of new tensors reduced together; differentiable as Horovod's. `compression` as reducescatter's."""
    check_process_set(process_set)
    op = basics.resolve_op(None, op, "grouped_reducescatter")
    tensors = check_tensor_list("grouped_reducescatter", tensors)
    compression = _compressor(compression)
    compressed, contexts = [], []
    for tensor in tensors:
        value, ctx = compression.compress(tensor)
        compressed.append(value)
        contexts.append(ctx)
    reduced = _GroupedReducescatterFunction.apply(name, op, (prescale_factor, postscale_factor), process_set,
                                                  *compressed)
    return [compression.decompress(value, ctx) for value, ctx in zip(reduced, contexts)]
