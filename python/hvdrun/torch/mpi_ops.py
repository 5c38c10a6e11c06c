"""Horovod's collectives on CPU tensors, over hvdrun._C (libhvdrun).

Asynchronous calls return an integer handle; synchronize(handle) waits and returns the result,
poll(handle) says whether it has run. Until then the tensors a call reads and writes are held here
and must not be written by the caller (libhvdrun reads and writes them from its own thread).

Names: a collective is matched across ranks by its name (libhvdrun negotiates named collectives,
so ranks may submit them in any order). A call without a name gets "<kind>.noname.<n>", n counting
this process's unnamed calls of that kind: every rank must then make its unnamed calls of a kind in
the same order, as with Horovod.
"""

import itertools
import threading

import torch

from hvdrun import _C


class HvdrunUnsupportedError(NotImplementedError):
    """A Horovod feature hvdrun.torch does not have; the message names it."""


def unsupported(feature, instead=None):
    """Raises HvdrunUnsupportedError naming `feature` (and what to use instead)."""
    message = "hvdrun.torch does not support " + feature
    if instead:
        message += "; " + instead
    raise HvdrunUnsupportedError(message)


class ReduceOp:
    """A reduction operation; hvd.Average, hvd.Sum, hvd.Min, hvd.Max (and hvd.Adasum, refused)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "hvdrun.torch." + self.name.capitalize()


Average = ReduceOp("average")
Sum = ReduceOp("sum")
Min = ReduceOp("min")
Max = ReduceOp("max")
Adasum = ReduceOp("adasum")


class ProcessSet:
    """Horovod's process sets: hvdrun.torch runs every collective over all ranks (global_process_set)."""

    def __init__(self, ranks=None):
        if ranks is not None:
            unsupported("process sets (hvd.ProcessSet)", "collectives run over all ranks of the job")
        self.ranks = None
        self.process_set_id = 0


global_process_set = ProcessSet()


def add_process_set(process_set):
    unsupported("process sets (hvd.add_process_set)", "collectives run over all ranks of the job")


def remove_process_set(process_set):
    unsupported("process sets (hvd.remove_process_set)", "collectives run over all ranks of the job")


def _check_process_set(process_set):
    if process_set is not None and process_set is not global_process_set:
        unsupported("process sets (process_set=)", "collectives run over all ranks of the job")


# The element types libhvdrun reduces, by torch type.
_RUNTIME_TYPES = {
    torch.float32: "float32",
    torch.float64: "float64",
    torch.float16: "float16",
    torch.bfloat16: "bfloat16",
    torch.int32: "int32",
    torch.int64: "int64",
}
# Reduced through an int64 copy, cast back afterwards (with torch's wrap-around).
_WIDENED_TYPES = (torch.uint8, torch.int8, torch.int16)

_lock = threading.Lock()
_pending = {}
_handle_numbers = itertools.count()
_noname_numbers = {}


def _auto_name(kind, name):
    if name is not None:
        return str(name)
    with _lock:
        counter = _noname_numbers.setdefault(kind, itertools.count())
        return "%s.noname.%d" % (kind, next(counter))


def _check_tensor(call, tensor):
    if not isinstance(tensor, torch.Tensor):
        raise TypeError("hvdrun.torch.%s: expected a torch.Tensor, got %s" % (call, type(tensor).__name__))
    if tensor.device.type != "cpu":
        unsupported("%s tensors (hvdrun.torch.%s)" % (tensor.device.type.upper(), call),
                    "move the tensor to the CPU (libhvdrun's Python API reduces host memory)")
    if tensor.is_sparse:
        unsupported("sparse tensors (hvdrun.torch.%s)" % call, "pass tensor.to_dense()")


def _resolve_op(average, op):
    if op is None:
        op = Average if average is None or average else Sum
    elif average is not None:
        raise ValueError("hvdrun.torch.allreduce: pass op= or average=, not both")
    if op is Adasum:
        unsupported("Adasum (op=hvd.Adasum)", "use hvd.Average or hvd.Sum")
    if not isinstance(op, ReduceOp):
        raise ValueError("hvdrun.torch.allreduce: op must be hvd.Average, hvd.Sum, hvd.Min or hvd.Max, got %r" % (op,))
    return op


class _Pending:
    __slots__ = ("handle", "output", "keep", "finish")

    def __init__(self, handle, output, keep, finish):
        self.handle = handle
        self.output = output
        self.keep = keep  # tensors libhvdrun reads or writes until the handle completes
        self.finish = finish  # run after the wait: scaling, copying back; returns the result


def _register(pending):
    with _lock:
        number = next(_handle_numbers)
        _pending[number] = pending
    return number


def _allreduce_async_into(tensor, output, name, op, prescale_factor, postscale_factor, wire_format=None):
    """Starts an allreduce of `tensor` whose result lands in `output` (which may be `tensor`); `wire_format`
    names libhvdrun's compression for it (Compression.bf16/fp8), None the job's."""
    _check_tensor("allreduce", tensor)
    name = _auto_name("allreduce", name)
    if tensor.dtype in _RUNTIME_TYPES:
        work_type = tensor.dtype
    elif tensor.dtype in _WIDENED_TYPES:
        work_type = torch.int64
    else:
        raise TypeError("hvdrun.torch.allreduce: tensor '%s' has type %s, which libhvdrun does not reduce "
                        "(float32, float64, float16, bfloat16, int32, int64, uint8, int8, int16)" % (name, tensor.dtype))
    scaled = prescale_factor != 1.0 or postscale_factor != 1.0
    if scaled and not work_type.is_floating_point:
        raise ValueError("hvdrun.torch.allreduce: prescale_factor/postscale_factor need a floating-point "
                         "tensor; '%s' is %s" % (name, tensor.dtype))
    runtime_op = op.name
    if op is Average and work_type in (torch.float16, torch.bfloat16):
        # Divided before the sum, as Horovod's fp16 compression: a float16 sum of every rank's
        # values could overflow where their average does not.
        prescale_factor = prescale_factor / _C.size()
        runtime_op = "sum"
    with torch.no_grad():
        if output is tensor and tensor.is_contiguous() and work_type == tensor.dtype:
            buffer = tensor
        else:
            buffer = torch.empty(tensor.shape, dtype=work_type)
            buffer.copy_(tensor)
        if prescale_factor != 1.0:
            buffer.mul_(prescale_factor)
    handle = _C.allreduce_async(name, buffer.data_ptr(), buffer.data_ptr(), buffer.numel(), _RUNTIME_TYPES[work_type],
                                runtime_op, wire_format or "")

    def finish():
        with torch.no_grad():
            if postscale_factor != 1.0:
                buffer.mul_(postscale_factor)
            if buffer is not output:
                output.copy_(buffer)
        return output

    return _register(_Pending(handle, output, (tensor, buffer), finish))


def allreduce_async(tensor, average=None, name=None, op=None, prescale_factor=1.0, postscale_factor=1.0,
                    process_set=None, wire_format=None):
    """Starts an allreduce of `tensor` into a new tensor; returns a handle for synchronize().

    `wire_format` (hvdrun's): libhvdrun's compression for this call, as Compression.bf16/fp8 ask for it.
    """
    _check_process_set(process_set)
    op = _resolve_op(average, op)
    _check_tensor("allreduce_async", tensor)
    output = tensor.detach().clone(memory_format=torch.contiguous_format)
    return _allreduce_async_into(output, output, name, op, prescale_factor, postscale_factor, wire_format)


def allreduce_async_(tensor, average=None, name=None, op=None, prescale_factor=1.0, postscale_factor=1.0,
                     process_set=None, wire_format=None):
    """Starts an in-place allreduce of `tensor`; returns a handle for synchronize()."""
    _check_process_set(process_set)
    op = _resolve_op(average, op)
    return _allreduce_async_into(tensor, tensor, name, op, prescale_factor, postscale_factor, wire_format)


def allreduce_(tensor, average=None, name=None, op=None, prescale_factor=1.0, postscale_factor=1.0,
               process_set=None):
    """Reduces `tensor` in place over all ranks and returns it."""
    return synchronize(allreduce_async_(tensor, average, name, op, prescale_factor, postscale_factor, process_set))


class _AllreduceFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, name, op, prescale_factor, postscale_factor, wire):
        ctx.op = op
        ctx.factors = (prescale_factor, postscale_factor)
        ctx.wire = wire
        return synchronize(allreduce_async(tensor, name=name, op=op, prescale_factor=prescale_factor,
                                           postscale_factor=postscale_factor, wire_format=wire))

    @staticmethod
    def backward(ctx, grad_output):
        # Each rank's output is op over the ranks' inputs: the gradient is the same op over the
        # ranks' output gradients (an average's 1/size included).
        reduced = synchronize(allreduce_async(grad_output, op=ctx.op, prescale_factor=ctx.factors[0],
                                              postscale_factor=ctx.factors[1], wire_format=ctx.wire))
        return reduced, None, None, None, None, None


def allreduce(tensor, average=None, name=None, compression=None, op=None, prescale_factor=1.0, postscale_factor=1.0,
              process_set=None):
    """Returns op (default Average) over all ranks of `tensor`, a new tensor; differentiable.

    `compression` (hvd.Compression.fp16) reduces a compressed copy and decompresses the result.
    """
    _check_process_set(process_set)
    op = _resolve_op(average, op)
    _check_tensor("allreduce", tensor)
    if compression is None:
        from hvdrun.torch.compression import Compression  # pylint: disable=import-outside-toplevel
        compression = Compression.none
    compressed, ctx = compression.compress(tensor)
    wire = getattr(compression, "wire_format", None)
    reduced = _AllreduceFunction.apply(compressed, name, op, prescale_factor, postscale_factor, wire)
    return compression.decompress(reduced, ctx)


def poll(handle):
    """Whether the asynchronous collective `handle` has run (synchronize will not wait)."""
    with _lock:
        pending = _pending.get(handle)
    if pending is None:
        raise ValueError("hvdrun.torch.poll: unknown handle %r (already synchronized?)" % (handle,))
    return pending.handle.ready()


def synchronize(handle):
    """Waits for the asynchronous collective `handle` and returns its result tensor."""
    with _lock:
        pending = _pending.pop(handle, None)
    if pending is None:
        raise ValueError("hvdrun.torch.synchronize: unknown handle %r (already synchronized?)" % (handle,))
    pending.handle.wait()
    return pending.finish()


# Broadcast and allgather move bytes: tensors of a type libhvdrun has go as they are, others as
# their bytes, padded to whole 4-byte words.
def _bytes_of(tensor):
    return tensor.reshape(-1).view(torch.uint8)


def _word_buffer(byte_count):
    return torch.zeros((byte_count + 3) // 4 * 4, dtype=torch.uint8)


def broadcast_async_(tensor, root_rank, name=None, process_set=None):
    """Starts overwriting `tensor` on every rank with root_rank's; returns a handle for synchronize(),
    which returns `tensor`.

    A named broadcast is negotiated as a named allreduce is: ranks may start their named
    broadcasts in any order. Unnamed ones are named by their place in this rank's sequence of
    unnamed broadcasts, allgathers and barriers, which every rank must then make in the same order.
    """
    _check_process_set(process_set)
    _check_tensor("broadcast", tensor)
    root_rank = int(root_rank)
    name = "" if name is None else str(name)
    with torch.no_grad():
        if tensor.dtype in _RUNTIME_TYPES and tensor.is_contiguous():
            handle = _C.broadcast_async(name, tensor.data_ptr(), tensor.numel(), _RUNTIME_TYPES[tensor.dtype], root_rank)
            return _register(_Pending(handle, tensor, (tensor,), lambda: tensor))
        # Other types and layouts go as their bytes, padded to whole 4-byte words.
        contiguous = tensor.contiguous()
        data = _bytes_of(contiguous)
        words = _word_buffer(data.numel())
        words[: data.numel()].copy_(data)
        handle = _C.broadcast_async(name, words.data_ptr(), words.numel() // 4, "int32", root_rank)

    def finish():
        with torch.no_grad():
            data.copy_(words[: data.numel()])
            if contiguous is not tensor:
                tensor.copy_(contiguous)
        return tensor

    return _register(_Pending(handle, tensor, (tensor, words), finish))


def broadcast_async(tensor, root_rank, name=None, process_set=None):
    """Starts a broadcast of root_rank's `tensor` into a new tensor; returns a handle for synchronize()."""
    _check_tensor("broadcast", tensor)
    return broadcast_async_(tensor.detach().clone(memory_format=torch.contiguous_format), root_rank, name, process_set)


def broadcast_(tensor, root_rank, name=None, process_set=None):
    """Overwrites `tensor` on every rank with root_rank's; returns it."""
    return synchronize(broadcast_async_(tensor, root_rank, name, process_set))


def broadcast(tensor, root_rank, name=None, process_set=None):
    """Returns root_rank's `tensor` on every rank, as a new tensor."""
    return synchronize(broadcast_async(tensor, root_rank, name, process_set))


def _allgather_start(tensor, name):
    """Starts an allgather of `tensor` along dim 0; returns (handle, finish, tensors to keep), finish()
    giving (the gathered tensor, the rows from each rank) once the handle has completed."""
    _check_tensor("allgather", tensor)
    if tensor.dim() == 0:
        raise ValueError("hvdrun.torch.allgather: a 0-dimensional tensor has no first dimension to gather along")
    local = tensor.detach().contiguous()
    trailing = tuple(local.shape[1:])
    row = 1
    for size in trailing:
        row *= size
    if row == 0:
        raise ValueError("hvdrun.torch.allgather: a tensor of shape %s has no elements per row to gather"
                         % (tuple(local.shape),))
    if local.dtype in _RUNTIME_TYPES:
        send, type_name, unit, widened = local, _RUNTIME_TYPES[local.dtype], row, False
    else:
        # Other types go as their bytes: as int32 words when a row is whole words, else one byte per
        # int32 element (rows of odd byte sizes, such as bool masks).
        data = _bytes_of(local)
        row_bytes = row * local.element_size()
        widened = row_bytes % 4 != 0
        if widened:
            send = data.to(torch.int32)
        else:  # a view of whole words needs a word-aligned start
            send = (data if data.storage_offset() % 4 == 0 else data.clone()).view(torch.int32)
        type_name, unit = "int32", row_bytes if widened else row_bytes // 4
    handle = _C.allgather_async("" if name is None else str(name), send.data_ptr(), send.numel(), type_name, unit)

    def finish():
        rows = [count // unit for count in handle.counts()]
        output = torch.empty((sum(rows),) + trailing, dtype=local.dtype)
        if widened:
            values = torch.empty(sum(rows) * unit, dtype=torch.int32)
            handle.copy_to(values.data_ptr())
            _bytes_of(output).copy_(values.to(torch.uint8))
        else:
            handle.copy_to(output.data_ptr())
        return output, rows

    return handle, finish, (local, send)


class _AllgatherFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, name):
        handle, finish, _ = _allgather_start(tensor, name)
        handle.wait()
        gathered, ctx.rows = finish()
        return gathered

    @staticmethod
    def backward(ctx, grad_output):
        # Every rank's output holds this rank's rows: their gradient is the sum over ranks of the
        # output gradient's rows that came from this rank.
        summed = allreduce(grad_output.contiguous(), op=Sum)
        rank = _C.rank()
        start = sum(ctx.rows[:rank])
        return summed.narrow(0, start, ctx.rows[rank]), None


def allgather(tensor, name=None, process_set=None):
    """Concatenates every rank's `tensor` along dim 0 (first dimensions may differ); differentiable."""
    _check_process_set(process_set)
    _check_tensor("allgather", tensor)
    return _AllgatherFunction.apply(tensor, name)


def allgather_async(tensor, name=None, process_set=None):
    """Starts an allgather of `tensor` along dim 0 (first dimensions may differ); returns a handle for
    synchronize(). Named ones are negotiated: ranks may start them in any order."""
    _check_process_set(process_set)
    handle, finish, keep = _allgather_start(tensor, name)
    return _register(_Pending(handle, None, keep, lambda: finish()[0]))


def barrier(process_set=None):
    """Returns when every rank has called barrier()."""
    _check_process_set(process_set)
    _C.barrier()


def join(device=-1):
    """Horovod's join, for ranks with uneven amounts of data: blocks until every rank has joined and
    returns the rank that joined last (the same on every rank).

    libhvdrun first waits for this rank's pending collectives (their handles stay valid for
    synchronize). Until every rank has joined, this rank stands in for the others' allreduces with
    zeros of the shape and type they submitted, as Horovod's joined ranks do: an average is still
    divided by every rank, a minimum or maximum sees the zeros. A broadcast or allgather made while
    some rank has joined raises RuntimeError on the ranks that made it (Horovod refuses them too).
    `device` is accepted for Horovod's signature and ignored: the zeros are in host memory.
    """
    return _C.join()


def alltoall(tensor, splits=None, name=None, process_set=None):
    unsupported("alltoall (hvd.alltoall)")


def reducescatter(tensor, name=None, op=None, process_set=None):
    unsupported("reducescatter (hvd.reducescatter)")


def grouped_allreduce(tensors, *args, **kwargs):
    unsupported("grouped allreduce (hvd.grouped_allreduce)", "allreduce each tensor: libhvdrun fuses them")


def grouped_allreduce_async(tensors, *args, **kwargs):
    unsupported("grouped allreduce (hvd.grouped_allreduce_async)", "allreduce_async each tensor: libhvdrun fuses them")


def sparse_allreduce_async(tensor, name, op, process_set=None):
    unsupported("sparse allreduce (hvd.sparse_allreduce_async)", "pass tensor.to_dense()")
