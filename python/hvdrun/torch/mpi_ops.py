"""Horovod's collectives on CPU and CUDA tensors, over hvdrun._C (libhvdrun). Where each tensor goes
(placement.py): CPU tensors to the host runtime; in a --nccl job, CUDA tensors of the rank's device in
device memory to the NCCL runtime, read after the caller's current stream (allgather's and alltoall's
rows padded to equal blocks there, device_rows.py); other CUDA tensors (every backend's but NCCL's)
through pinned host memory (staging.py).

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
from hvdrun.torch import device_rows, placement, staging


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
    if tensor.device.type not in ("cpu", "cuda"):
        unsupported("%s tensors (hvdrun.torch.%s)" % (tensor.device.type.upper(), call),
                    "move the tensor to the CPU or to a CUDA device")
    if tensor.is_sparse:
        unsupported("sparse tensors (hvdrun.torch.%s)" % call, "pass tensor.to_dense()")


# CUDA tensors that do not take the device path travel through pinned host memory (staging.py).
_staging = staging.HostStaging()
# Allgathers and alltoalls on the device path are submitted once their row counts have been exchanged
# (device_rows.py), from a thread of their own.
_exchanges = staging.OrderedSubmitter("hvdrun-exchange")


# The path CPU tensors take: placement.HOST, except in tests/python/hvdrun_torch_checks.py, which sets
# STAGED (with a HostStaging over a fake device) or DEVICE (over the host runtime, which ignores streams),
# so that the host-side logic of CUDA tensors' paths runs without a GPU.
_host_tensors_take = placement.HOST


def _path(call, tensor):
    """Where `tensor`'s collective runs: placement.HOST, DEVICE or STAGED (placement.choose)."""
    if not tensor.is_cuda:
        return _host_tensors_take
    if not _C.is_initialized():
        raise RuntimeError("hvdrun.torch.%s: call hvdrun.torch.init() first" % call)
    device_runtime = _C.device_backend() != "none"
    rank_index = placement.rank_device(_C.local_rank(), torch.cuda.device_count()) if device_runtime else 0
    return placement.choose(call, tensor.device, device_runtime, rank_index)


def _stream(path, tensor):
    """The `stream` argument of hvdrun._C's submissions: the caller's current stream on the DEVICE path,
    None (the host runtime) otherwise."""
    return placement.current_stream(tensor.device) if path == placement.DEVICE else None


def _staged_name(kind, name):
    """The name of a collective on a CUDA tensor: its own, or one of this process's unnamed ones of that
    kind. Staged collectives are submitted from the staging thread, so they cannot be named by their
    place in libhvdrun's sequence of unnamed calls."""
    return _auto_name(kind + ".staged", name)


def _resolve_op(average, op, call="allreduce"):
    if op is None:
        op = Average if average is None or average else Sum
    elif average is not None:
        raise ValueError("hvdrun.torch.%s: pass op= or average=, not both" % call)
    if op is Adasum:
        unsupported("Adasum (hvdrun.torch.%s(op=hvd.Adasum))" % call, "use op=hvd.Average (or hvd.Sum)")
    if not isinstance(op, ReduceOp):
        raise ValueError("hvdrun.torch.%s: op must be hvd.Average, hvd.Sum, hvd.Min or hvd.Max, got %r" % (call, op))
    return op


class _Pending:
    __slots__ = ("handle", "output", "keep", "finish", "names")

    def __init__(self, handle, output, keep, finish, names=()):
        self.handle = handle
        self.output = output
        self.keep = keep  # tensors libhvdrun reads or writes until the handle completes
        self.finish = finish  # run after the wait: scaling, copying back; returns the result
        self.names = names  # the names the caller gave it (see _check_name_free)


# The caller-given names of this rank's registered collectives that have not been synchronized, and
# their _Pending: libhvdrun matches collectives across ranks by name, one name space for every kind.
_named = {}


def _check_name_free(call, name):
    """Raises ValueError, as Horovod at submission, where `name` (None: an unnamed call, always free) is
    the name of a collective of this rank that has not completed."""
    if name is None:
        return
    with _lock:
        holder = _named.get(str(name))
    if holder is not None and not holder.handle.ready():
        raise ValueError("hvdrun.torch.%s: rank %d already has a pending collective named '%s' (not yet run); as "
                         "with Horovod, a name can be used again once that one has completed" % (call, _C.rank(), name))


def _register(pending):
    with _lock:
        number = next(_handle_numbers)
        _pending[number] = pending
        for name in pending.names:
            _named[name] = pending
    return number


def _given(name):
    """The names a collective named `name` (None: unnamed) holds until it is synchronized."""
    return () if name is None else (str(name),)


def _release(pending):
    with _lock:
        for name in pending.names:
            if _named.get(name) is pending:
                del _named[name]


def _scale(buffer, factor):
    """Multiplies `buffer` by `factor` in place as Horovod's engine scales its buffers on the CPU
    (ScaleBuffer): float32, float16 and bfloat16 values times the factor rounded to float32, in float32;
    float64 values in double; integers times the factor in double, truncated toward zero."""
    if factor == 1.0:
        return
    if buffer.dtype == torch.float64:
        buffer.mul_(factor)
    elif buffer.dtype.is_floating_point:
        single = torch.tensor(factor, dtype=torch.float32)
        if buffer.dtype == torch.float32:
            buffer.mul_(single)
        else:
            buffer.copy_(buffer.float().mul_(single))
    else:
        buffer.copy_(buffer.double().mul_(factor).trunc_())


def _allreduce_start(tensor, output, name, op, prescale_factor, postscale_factor, wire_format=None):
    """Starts an allreduce of `tensor` whose result lands in `output` (which may be `tensor`); returns its
    _Pending, not yet registered. `wire_format` names libhvdrun's compression for it
    (Compression.bf16/fp8), None the job's, which the DEVICE path refuses. A CUDA tensor takes the DEVICE
    or the STAGED path (placement.py)."""
    _check_tensor("allreduce", tensor)
    _check_name_free("allreduce", name)
    given = _given(name)
    path = _path("allreduce", tensor)
    staged = path == placement.STAGED
    name = _auto_name("allreduce", name) if path == placement.HOST else _staged_name("allreduce", name)
    if path == placement.DEVICE:
        placement.refuse_wire_compression("allreduce", name, wire_format)
    if tensor.dtype in _RUNTIME_TYPES:
        work_type = tensor.dtype
    elif tensor.dtype in _WIDENED_TYPES:
        work_type = torch.int64
    else:
        raise TypeError("hvdrun.torch.allreduce: tensor '%s' has type %s, which libhvdrun does not reduce "
                        "(float32, float64, float16, bfloat16, int32, int64, uint8, int8, int16)" % (name, tensor.dtype))
    runtime_op = op.name
    if op is Average and work_type in (torch.float16, torch.bfloat16):
        # Divided before the sum, as Horovod's fp16 compression: a float16 sum of every rank's
        # values could overflow where their average does not.
        prescale_factor = prescale_factor / _C.size()
        runtime_op = "sum"
    elif op is Average and (prescale_factor != 1.0 or postscale_factor != 1.0):
        # As Horovod's engine: the average is the sum times postscale_factor / size.
        postscale_factor = postscale_factor / _C.size()
        runtime_op = "sum"
    type_name = _RUNTIME_TYPES[work_type]
    with torch.no_grad():
        if staged:
            work = tensor.detach().to(work_type, copy=prescale_factor != 1.0)
            _scale(work, prescale_factor)  # on the device, before the copy to host memory
            buffer, ready = _staging.stage_in(work.contiguous())
            handle = _staging.submit_after(
                ready, lambda: _C.allreduce_async(name, buffer.data_ptr(), buffer.data_ptr(), buffer.numel(),
                                                  type_name, runtime_op, wire_format or ""),
                "hvdrun.torch.allreduce('%s')" % name)
        else:
            # In place where it can be; otherwise a contiguous copy of the work type, where the tensor
            # is (on the DEVICE path, written on the stream libhvdrun reads after).
            if output is tensor and tensor.is_contiguous() and work_type == tensor.dtype:
                buffer = tensor
            else:
                buffer = torch.empty(tensor.shape, dtype=work_type, device=tensor.device)
                buffer.copy_(tensor)
            _scale(buffer, prescale_factor)
            handle = _C.allreduce_async(name, buffer.data_ptr(), buffer.data_ptr(), buffer.numel(), type_name,
                                        runtime_op, wire_format or "", stream=_stream(path, tensor))

    def finish():
        with torch.no_grad():
            _scale(buffer, postscale_factor)
            if staged:
                _staging.stage_out(buffer, output)
            elif buffer is not output:
                output.copy_(buffer)
        return output

    return _Pending(handle, output, (tensor, buffer), finish, given)


def _allreduce_async_into(tensor, output, name, op, prescale_factor, postscale_factor, wire_format=None):
    return _register(_allreduce_start(tensor, output, name, op, prescale_factor, postscale_factor, wire_format))


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
    if callable(handle):  # sparse_allreduce_async's
        return handle.ready()
    with _lock:
        pending = _pending.get(handle)
    if pending is None:
        raise ValueError("hvdrun.torch.poll: unknown handle %r (already synchronized?)" % (handle,))
    return pending.handle.ready()


def synchronize(handle):
    """Waits for the asynchronous collective `handle` and returns its result tensor."""
    if callable(handle):  # sparse_allreduce_async's
        return handle()
    with _lock:
        pending = _pending.pop(handle, None)
    if pending is None:
        raise ValueError("hvdrun.torch.synchronize: unknown handle %r (already synchronized?)" % (handle,))
    try:
        pending.handle.wait()
    finally:
        _release(pending)
    return pending.finish()


# Broadcast and allgather move bytes: tensors of a type libhvdrun has go as they are, others as
# their bytes, padded to whole 4-byte words.
def _bytes_of(tensor):
    return tensor.reshape(-1).view(torch.uint8)


def _word_buffer(byte_count, device=None):
    return torch.zeros((byte_count + 3) // 4 * 4, dtype=torch.uint8, device=device)


def _broadcast_words(contiguous):
    """What a broadcast of the contiguous tensor `contiguous` sends: (buffer, count, type name, unpack),
    unpack() writing a received buffer back into `contiguous`. Tensors of a type libhvdrun has go as
    they are; others as their bytes, padded to whole 4-byte words, in a buffer where `contiguous` is."""
    if contiguous.dtype in _RUNTIME_TYPES:
        return contiguous, contiguous.numel(), _RUNTIME_TYPES[contiguous.dtype], lambda: None
    data = _bytes_of(contiguous)
    words = _word_buffer(data.numel(), contiguous.device)
    words[: data.numel()].copy_(data)
    return words, words.numel() // 4, "int32", lambda: data.copy_(words[: data.numel()])


def broadcast_async_(tensor, root_rank, name=None, process_set=None):
    """Starts overwriting `tensor` on every rank with root_rank's; returns a handle for synchronize(),
    which returns `tensor`.

    A named broadcast is negotiated as a named allreduce is: ranks may start their named
    broadcasts in any order. Unnamed ones are named by their place in this rank's sequence of
    unnamed broadcasts, allgathers and barriers, which every rank must then make in the same order
    (those of CUDA tensors by their place among this rank's unnamed broadcasts of CUDA tensors).
    """
    _check_process_set(process_set)
    _check_tensor("broadcast", tensor)
    root_rank = int(root_rank)
    if not 0 <= root_rank < _C.size():
        raise ValueError("hvdrun.torch.broadcast: root_rank %d is not a rank of this job of %d" % (root_rank, _C.size()))
    _check_name_free("broadcast", name)
    given = _given(name)
    path = _path("broadcast", tensor)
    if path == placement.STAGED:
        name = _staged_name("broadcast", name)
        with torch.no_grad():
            host, ready = _staging.stage_in(tensor.detach().contiguous())
        sent = []

        def start():
            buffer, count, type_name, unpack = _broadcast_words(host)
            sent.append(unpack)
            return _C.broadcast_async(name, buffer.data_ptr(), count, type_name, root_rank)

        handle = _staging.submit_after(ready, start, "hvdrun.torch.broadcast('%s')" % name)

        def finish_staged():
            with torch.no_grad():
                sent[0]()
                _staging.stage_out(host, tensor)
            return tensor

        return _register(_Pending(handle, tensor, (tensor, host, sent), finish_staged, given))
    if path == placement.HOST:
        name = "" if name is None else str(name)
    else:
        name = _staged_name("broadcast", name)
    with torch.no_grad():
        contiguous = tensor if tensor.is_contiguous() else tensor.contiguous()
        buffer, count, type_name, unpack = _broadcast_words(contiguous)
        handle = _C.broadcast_async(name, buffer.data_ptr(), count, type_name, root_rank,
                                    stream=_stream(path, tensor))

    def finish():
        with torch.no_grad():
            unpack()
            if contiguous is not tensor:
                tensor.copy_(contiguous)
        return tensor

    return _register(_Pending(handle, tensor, (tensor, buffer), finish, given))


def broadcast_async(tensor, root_rank, name=None, process_set=None):
    """Starts a broadcast of root_rank's `tensor` into a new tensor; returns a handle for synchronize()."""
    _check_tensor("broadcast", tensor)
    return broadcast_async_(tensor.detach().clone(memory_format=torch.contiguous_format), root_rank, name, process_set)


def broadcast_(tensor, root_rank, name=None, process_set=None):
    """Overwrites `tensor` on every rank with root_rank's; returns it."""
    return synchronize(broadcast_async_(tensor, root_rank, name, process_set))


class _BroadcastFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, root_rank, name):
        ctx.root_rank = root_rank
        return synchronize(broadcast_async(tensor, root_rank, name))

    @staticmethod
    def backward(ctx, grad_output):
        # As Horovod's: the output gradient averaged over the ranks on root_rank, zeros elsewhere.
        averaged = allreduce(grad_output.contiguous(), op=Average)
        if _C.rank() != ctx.root_rank:
            averaged.zero_()
        return averaged, None, None


def broadcast(tensor, root_rank, name=None, process_set=None):
    """Returns root_rank's `tensor` on every rank, as a new tensor; differentiable (as Horovod's, the
    gradient is the output gradient averaged over the ranks on root_rank, zeros on the others)."""
    _check_process_set(process_set)
    _check_tensor("broadcast", tensor)
    return _BroadcastFunction.apply(tensor, root_rank, name)


def _rows_start(call, tensor, name, submit, splits=None):
    """Starts a collective that moves whole rows (first-dimension slices) of `tensor`: an allgather
    (`splits` None) or an alltoall (`splits`: the rows for each rank). Returns (handle, finish, tensors
    to keep), finish() giving (the received rows as one tensor where `tensor` is, the rows from each
    rank) once the handle has completed.

    On the DEVICE path the rows go in device memory (device_rows.py), named as they were when they were
    staged. Otherwise submit(name, send, type name, elements per row) submits libhvdrun's collective of
    counts that may differ between ranks, whose result is host memory, with `send`, a contiguous host
    tensor of a type libhvdrun has, and returns its handle; a CUDA tensor is staged through host memory
    (staging.py)."""
    _check_tensor(call, tensor)
    if tensor.dim() == 0:
        raise ValueError("hvdrun.torch.%s: a 0-dimensional tensor has no first dimension" % call)
    trailing = tuple(tensor.shape[1:])
    row = 1
    for size in trailing:
        row *= size
    if row == 0:
        raise ValueError("hvdrun.torch.%s: a tensor of shape %s has no elements per row" % (call, tuple(tensor.shape)))
    _check_name_free(call, name)
    path = _path(call, tensor)
    if path == placement.DEVICE:
        with torch.no_grad():
            return device_rows.start(_C, _exchanges, _RUNTIME_TYPES, call, tensor, _staged_name(call, name), splits)
    device = tensor.device
    ready = None
    staged = path == placement.STAGED
    with torch.no_grad():
        if staged:
            local, ready = _staging.stage_in(tensor.detach().contiguous())
            name = _staged_name(call, name)
        else:
            local = tensor.detach().contiguous()
            name = "" if name is None else str(name)
    if local.dtype in _RUNTIME_TYPES:
        type_name, unit, widened = _RUNTIME_TYPES[local.dtype], row, False
    else:
        # Other types go as their bytes: as int32 words when a row is whole words, else one byte per
        # int32 element (rows of odd byte sizes, such as bool masks).
        row_bytes = row * local.element_size()
        widened = row_bytes % 4 != 0
        type_name, unit = "int32", row_bytes if widened else row_bytes // 4
    keep = [local]

    def start():
        # Reads `local`: for a staged tensor, on the staging thread once its copy has completed.
        if local.dtype in _RUNTIME_TYPES:
            send = local
        else:
            data = _bytes_of(local)
            if widened:
                send = data.to(torch.int32)
            else:  # a view of whole words needs a word-aligned start
                send = (data if data.storage_offset() % 4 == 0 else data.clone()).view(torch.int32)
        keep.append(send)
        return submit(name, send, type_name, unit)

    if staged:
        handle = _staging.submit_after(ready, start, "hvdrun.torch.%s('%s')" % (call, name))
    else:
        handle = start()

    def finish():
        received = handle.inner if staged else handle
        rows = [count // unit for count in received.counts()]
        shape = (sum(rows),) + trailing
        output = _staging.host_buffer(shape, local.dtype) if staged else torch.empty(shape, dtype=local.dtype)
        if widened:
            values = torch.empty(sum(rows) * unit, dtype=torch.int32)
            received.copy_to(values.data_ptr())
            _bytes_of(output).copy_(values.to(torch.uint8))
        else:
            received.copy_to(output.data_ptr())
        if staged:
            on_device = torch.empty(shape, dtype=local.dtype, device=device)
            _staging.stage_out(output, on_device)
            output = on_device
        return output, rows

    return handle, finish, keep


def _allgather_start(tensor, name):
    """Starts an allgather of `tensor` along dim 0 (see _rows_start)."""
    return _rows_start("allgather", tensor, name,
                       lambda name, send, type_name, unit: _C.allgather_async(name, send.data_ptr(), send.numel(),
                                                                              type_name, unit))


class _AllgatherFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, name):
        handle, finish, keep = _allgather_start(tensor, name)
        handle.wait()
        gathered, ctx.rows = finish()
        del keep  # read by libhvdrun until the handle has completed
        return gathered

    @staticmethod
    def backward(ctx, grad_output):
        # As Horovod's: the output gradient averaged over the ranks, then this rank's rows of it.
        averaged = allreduce(grad_output.contiguous(), op=Average)
        rank = _C.rank()
        start = sum(ctx.rows[:rank])
        return averaged.narrow(0, start, ctx.rows[rank]), None


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
    return _register(_Pending(handle, None, keep, lambda: finish()[0], _given(name)))


def _grouped_allgather_start(tensors, name):
    """Starts allgathers of `tensors` named "<name>.<index>" (unnamed: "grouped_allgather.noname.<n>.<index>")
    together; returns (one handle for all, finish giving [(gathered, rows from each rank)], tensors to keep,
    the names)."""
    base = _auto_name("grouped_allgather", name)
    names = ["%s.%d" % (base, index) for index in range(len(tensors))]
    for each in names:  # refused before any of them is submitted
        _check_name_free("grouped_allgather", each)
    started = [_allgather_start(tensor, each) for tensor, each in zip(tensors, names)]
    return (_HandleGroup([handle for handle, _, _ in started]), lambda: [finish() for _, finish, _ in started],
            [keep for _, _, keep in started], tuple(names))


def grouped_allgather_async(tensors, name=None, process_set=None):
    """Starts allgathers of every tensor in `tensors` along dim 0 (first dimensions may differ), submitted
    together; returns a handle whose synchronize() returns the list of results."""
    _check_process_set(process_set)
    tensors = _check_tensor_list("grouped_allgather_async", tensors)
    handle, finish, keep, names = _grouped_allgather_start(tensors, name)
    return _register(_Pending(handle, None, keep, lambda: [gathered for gathered, _ in finish()], names))


class _GroupedAllgatherFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, name, *tensors):
        handle, finish, keep, _ = _grouped_allgather_start(list(tensors), name)
        handle.wait()
        results = finish()
        del keep  # read by libhvdrun until the handle has completed
        ctx.rows = [rows for _, rows in results]
        return tuple(gathered for gathered, _ in results)

    @staticmethod
    def backward(ctx, *grad_outputs):
        # As Horovod's: each output gradient averaged over the ranks (one grouped allreduce), then this
        # rank's rows of it.
        averaged = grouped_allreduce([g.contiguous() for g in grad_outputs], op=Average)
        rank = _C.rank()
        return (None,) + tuple(grad.narrow(0, sum(rows[:rank]), rows[rank]) for grad, rows in zip(averaged, ctx.rows))


def grouped_allgather(tensors, name=None, process_set=None):
    """Returns the allgathers along dim 0 of every tensor in `tensors`, as a list, gathered together;
    differentiable (as allgather)."""
    _check_process_set(process_set)
    tensors = _check_tensor_list("grouped_allgather", tensors)
    return list(_GroupedAllgatherFunction.apply(name, *tensors))


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
    A --nccl job joins both its runtimes at once: this rank stands in for the others' collectives of
    CPU tensors and of CUDA tensors alike. `device` is accepted for Horovod's signature and ignored:
    each runtime makes its zeros where its tensors are. Staged collectives, and device allgathers and
    alltoalls whose row counts are being exchanged, are submitted first (the staging and exchange threads'
    queues are drained), so that they too are among this rank's pending ones.
    """
    _staging.drain()
    _exchanges.drain()
    return _C.join()


class _HandleGroup:
    """Several libhvdrun handles that complete together, as one."""

    def __init__(self, handles):
        self.handles = handles

    def wait(self):
        for handle in self.handles:
            handle.wait()

    def ready(self):
        return all(handle.ready() for handle in self.handles)


def _check_tensor_list(call, tensors):
    if isinstance(tensors, torch.Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError("hvdrun.torch.%s: expected a list of tensors, got %s" % (call, type(tensors).__name__))
    for tensor in tensors:
        _check_tensor(call, tensor)
    return list(tensors)


def _grouped_start(tensors, outputs, name, op, prescale_factor, postscale_factor, wire_format=None):
    """Starts the allreduces of `tensors` into `outputs` together, named "<name>.<index>"; returns one
    registered handle whose synchronize() returns the list of outputs."""
    base = _auto_name("grouped_allreduce", name)
    for index in range(len(tensors)):  # refused before any of them is submitted
        _check_name_free("grouped_allreduce", "%s.%d" % (base, index))
    pending = [_allreduce_start(tensor, output, "%s.%d" % (base, index), op, prescale_factor, postscale_factor,
                                wire_format)
               for index, (tensor, output) in enumerate(zip(tensors, outputs))]
    return _register(_Pending(_HandleGroup([p.handle for p in pending]), outputs, [p.keep for p in pending],
                              lambda: [p.finish() for p in pending], sum((p.names for p in pending), ())))


def grouped_allreduce_async(tensors, average=None, name=None, op=None, prescale_factor=1.0, postscale_factor=1.0,
                            process_set=None, wire_format=None):
    """Starts allreduces of every tensor in `tensors` into new tensors, submitted together (libhvdrun
    fuses those negotiated in the same cycle); returns a handle whose synchronize() returns the list of
    results. Each tensor is named "<name>.<index>" (unnamed: "grouped_allreduce.noname.<n>.<index>")."""
    _check_process_set(process_set)
    op = _resolve_op(average, op, "grouped_allreduce_async")
    tensors = _check_tensor_list("grouped_allreduce_async", tensors)
    outputs = [t.detach().clone(memory_format=torch.contiguous_format) for t in tensors]
    return _grouped_start(outputs, outputs, name, op, prescale_factor, postscale_factor,
                          wire_format)


def grouped_allreduce_async_(tensors, average=None, name=None, op=None, prescale_factor=1.0, postscale_factor=1.0,
                             process_set=None, wire_format=None):
    """Starts in-place allreduces of every tensor in `tensors`, submitted together; returns a handle whose
    synchronize() returns the list of tensors."""
    _check_process_set(process_set)
    op = _resolve_op(average, op, "grouped_allreduce_async_")
    tensors = _check_tensor_list("grouped_allreduce_async_", tensors)
    return _grouped_start(tensors, tensors, name, op, prescale_factor, postscale_factor,
                          wire_format)


def grouped_allreduce_(tensors, average=None, name=None, op=None, prescale_factor=1.0, postscale_factor=1.0,
                       process_set=None):
    """Reduces every tensor in `tensors` in place over all ranks; returns the list of them."""
    return synchronize(grouped_allreduce_async_(tensors, average, name, op, prescale_factor, postscale_factor,
                                                process_set))


class _GroupedAllreduceFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, name, op, factors, wire, *tensors):
        ctx.op, ctx.factors, ctx.wire = op, factors, wire
        return tuple(synchronize(grouped_allreduce_async(list(tensors), name=name, op=op, prescale_factor=factors[0],
                                                         postscale_factor=factors[1], wire_format=wire)))

    @staticmethod
    def backward(ctx, *grad_outputs):
        # As allreduce's: the same op over the ranks' output gradients.
        reduced = synchronize(grouped_allreduce_async([g.contiguous() for g in grad_outputs], op=ctx.op,
                                                      prescale_factor=ctx.factors[0], postscale_factor=ctx.factors[1],
                                                      wire_format=ctx.wire))
        return (None, None, None, None) + tuple(reduced)


def grouped_allreduce(tensors, average=None, name=None, compression=None, op=None, prescale_factor=1.0,
                      postscale_factor=1.0, process_set=None):
    """Returns op (default Average) over all ranks of every tensor in `tensors`, as a list of new tensors,
    reduced together; differentiable. `compression` as allreduce's."""
    _check_process_set(process_set)
    op = _resolve_op(average, op, "grouped_allreduce")
    tensors = _check_tensor_list("grouped_allreduce", tensors)
    if compression is None:
        from hvdrun.torch.compression import Compression  # pylint: disable=import-outside-toplevel
        compression = Compression.none
    compressed, contexts = [], []
    for tensor in tensors:
        value, ctx = compression.compress(tensor)
        compressed.append(value)
        contexts.append(ctx)
    wire = getattr(compression, "wire_format", None)
    reduced = _GroupedAllreduceFunction.apply(name, op, (prescale_factor, postscale_factor), wire, *compressed)
    return [compression.decompress(value, ctx) for value, ctx in zip(reduced, contexts)]


def _alltoall_splits(tensor, splits):
    """The rows of `tensor` to send to each rank, as a list of ints, checked."""
    size = _C.size()
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
    _check_process_set(process_set)
    _check_tensor("alltoall", tensor)
    rows = _alltoall_splits(tensor, splits)
    handle, finish, keep = _rows_start(
        "alltoall", tensor, name,
        lambda name, send, type_name, unit: _C.alltoall_async(name, send.data_ptr(), [r * unit for r in rows],
                                                              type_name, unit), rows)

    def received():
        output, counts = finish()
        return output, torch.tensor(counts, dtype=torch.int32)

    return _register(_Pending(handle, None, keep, received, _given(name)))


class _AlltoallFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, splits, name):
        output, received = synchronize(alltoall_async(tensor, splits, name))
        ctx.received = received
        ctx.mark_non_differentiable(received)
        return output, received

    @staticmethod
    def backward(ctx, grad_output, unused):
        # The rows this rank received go back to the ranks they came from.
        grad, _ = synchronize(alltoall_async(grad_output.contiguous(), ctx.received))
        return grad, None, None


def alltoall(tensor, splits=None, name=None, process_set=None):
    """Sends rows of `tensor` to every rank and returns the rows received, in rank order; with `splits`
    (the rows for each rank), returns (the rows, an int32 tensor of the rows from each rank), as Horovod.
    Differentiable. See alltoall_async for how it travels."""
    _check_process_set(process_set)
    _check_tensor("alltoall", tensor)
    output, received = _AlltoallFunction.apply(tensor, splits, name)
    return output if splits is None else (output, received)


def reducescatter(tensor, name=None, compression=None, op=None, process_set=None, prescale_factor=1.0,
                  postscale_factor=1.0):
    unsupported("reducescatter (hvd.reducescatter)", "use hvd.allreduce and keep this rank's part")


def reducescatter_async(tensor, name=None, op=None, process_set=None, prescale_factor=1.0, postscale_factor=1.0):
    unsupported("reducescatter (hvd.reducescatter_async)", "use hvd.allreduce_async and keep this rank's part")


def grouped_reducescatter(tensors, name=None, compression=None, op=None, process_set=None, prescale_factor=1.0,
                          postscale_factor=1.0):
    unsupported("reducescatter (hvd.grouped_reducescatter)", "use hvd.grouped_allreduce and keep this rank's parts")


def grouped_reducescatter_async(tensors, name=None, op=None, process_set=None, prescale_factor=1.0,
                                postscale_factor=1.0):
    unsupported("reducescatter (hvd.grouped_reducescatter_async)",
                "use hvd.grouped_allreduce_async and keep this rank's parts")

