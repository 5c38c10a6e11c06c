"""allreduce and grouped_allreduce (their in-place, asynchronous and differentiable forms) and the
prescale/postscale factors, which libhvdrun's engine applies on its fused buffers (engine_factors; in a job
of one rank, which has no engine, _scale here). Where a tensor goes: placement.py (the host runtime, the NCCL
runtime in device memory, or staged through pinned host memory)."""

import torch

from hvdrun.torch import basics, placement
from hvdrun.torch.basics import (Average, RUNTIME_TYPES, WIDENED_TYPES, check_process_set, check_tensor,
                                 check_tensor_list, resolve_op, stream_device, submission_stream, tensor_path)
from hvdrun.torch.handles import (HandleGroup, Pending, auto_name, check_name_free, given, group_device, register,
                                  staged_name, synchronize)


def _scale(buffer, factor):
    """Multiplies `buffer` by `factor` in place as Horovod's engine (and libhvdrun's) scales its buffers on the
    CPU: float32, float16 and bfloat16 values times the factor rounded to float32, in float32; float64 values
    in double; integers times the factor in double, truncated toward zero. For a job of one rank only."""
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


def reduced_type(call, tensor, name):
    """The type `tensor` is reduced in: its own where libhvdrun has it, int64 for the narrow integers."""
    if tensor.dtype in RUNTIME_TYPES:
        return tensor.dtype
    if tensor.dtype in WIDENED_TYPES:
        return torch.int64
    raise TypeError("hvdrun.torch.%s: tensor '%s' has type %s, which libhvdrun does not reduce "
                    "(float32, float64, float16, bfloat16, int32, int64, uint8, int8, int16)" % (call, name, tensor.dtype))


def engine_op(op, work_type, prescale_factor, postscale_factor, size):
    """(libhvdrun's op name, prescale factor, postscale factor) that give `op` with the factors on values of
    `work_type` over `size` ranks, as Horovod's engine computes them."""
    if op is Average and work_type in (torch.float16, torch.bfloat16):
        # Divided before the sum, as Horovod's fp16 compression: a float16 sum of every rank's
        # values could overflow where their average does not.
        return "sum", prescale_factor / size, postscale_factor
    if op is Average and (prescale_factor != 1.0 or postscale_factor != 1.0):
        # As Horovod's engine: the average is the sum times postscale_factor / size.
        return "sum", prescale_factor, postscale_factor / size
    return op.name, prescale_factor, postscale_factor


def engine_factors(prescale_factor, postscale_factor):
    """((prescale, postscale) for libhvdrun's engine, (prescale, postscale) left to _scale): the engine
    applies them on its fused buffers, but in a job of one rank, which has none."""
    if basics.runtime.backend() == "none":
        return (1.0, 1.0), (prescale_factor, postscale_factor)
    return (prescale_factor, postscale_factor), (1.0, 1.0)


def _allreduce_start(tensor, output, name, op, prescale_factor, postscale_factor, wire_format=None, process_set_id=0):
    """Starts an allreduce of `tensor` whose result lands in `output` (which may be `tensor`); returns its
    Pending, not yet registered. `wire_format` names libhvdrun's compression for it
    (Compression.bf16/fp8), None the job's, which the DEVICE path refuses. A CUDA tensor takes the DEVICE
    or the STAGED path (placement.py)."""
    check_tensor("allreduce", tensor)
    check_name_free("allreduce", name)
    held = given(name)
    path = tensor_path("allreduce", tensor)
    staged = path == placement.STAGED
    name = (auto_name("allreduce", name, process_set_id) if path == placement.HOST
            else staged_name("allreduce", name, process_set_id))
    if path == placement.DEVICE:
        placement.refuse_wire_compression("allreduce", name, wire_format)
    work_type = reduced_type("allreduce", tensor, name)
    runtime_op, prescale_factor, postscale_factor = engine_op(op, work_type, prescale_factor, postscale_factor,
                                                                basics.set_size(process_set_id))
    engine, (prescale_factor, postscale_factor) = engine_factors(prescale_factor, postscale_factor)
    type_name = RUNTIME_TYPES[work_type]
    with torch.no_grad():
        if staged:
            work = tensor.detach().to(work_type, copy=prescale_factor != 1.0)
            _scale(work, prescale_factor)  # on the device, before the copy to host memory
            buffer, ready = basics.host_staging.stage_in(work.contiguous())
            handle = basics.host_staging.submit_after(
                ready, lambda: basics.runtime.allreduce_async(name, buffer.data_ptr(), buffer.data_ptr(), buffer.numel(),
                                                  type_name, runtime_op, wire_format or "",
                                                  process_set=process_set_id, prescale=engine[0],
                                                  postscale=engine[1], shape=list(tensor.shape)),
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
            handle = basics.runtime.allreduce_async(name, buffer.data_ptr(), buffer.data_ptr(), buffer.numel(), type_name,
                                        runtime_op, wire_format or "", stream=submission_stream(path, tensor),
                                        process_set=process_set_id, prescale=engine[0], postscale=engine[1],
                                        shape=list(tensor.shape))

    def finish():
        with torch.no_grad():
            _scale(buffer, postscale_factor)
            if staged:
                basics.host_staging.stage_out(buffer, output)
            elif buffer is not output:
                output.copy_(buffer)
        return output

    return Pending(handle, output, (tensor, buffer), finish, held, stream_device(path, tensor))


def _allreduce_async_into(tensor, output, name, op, prescale_factor, postscale_factor, wire_format=None,
                          process_set_id=0):
    return register(_allreduce_start(tensor, output, name, op, prescale_factor, postscale_factor, wire_format,
                                     process_set_id))


def allreduce_async(tensor, average=None, name=None, op=None, prescale_factor=1.0, postscale_factor=1.0,
                    process_set=None, wire_format=None):
    """Starts an allreduce of `tensor` into a new tensor; returns a handle for synchronize().

    `wire_format` (hvdrun's): libhvdrun's compression for this call, as Compression.bf16/fp8 ask for it.
    """
    process_set_id = check_process_set(process_set)
    op = resolve_op(average, op)
    check_tensor("allreduce_async", tensor)
    output = tensor.detach().clone(memory_format=torch.contiguous_format)
    return _allreduce_async_into(output, output, name, op, prescale_factor, postscale_factor, wire_format,
                                 process_set_id)


def allreduce_async_(tensor, average=None, name=None, op=None, prescale_factor=1.0, postscale_factor=1.0,
                     process_set=None, wire_format=None):
    """Starts an in-place allreduce of `tensor`; returns a handle for synchronize()."""
    process_set_id = check_process_set(process_set)
    op = resolve_op(average, op)
    return _allreduce_async_into(tensor, tensor, name, op, prescale_factor, postscale_factor, wire_format,
                                 process_set_id)


def allreduce_(tensor, average=None, name=None, op=None, prescale_factor=1.0, postscale_factor=1.0,
               process_set=None):
    """Reduces `tensor` in place over all ranks and returns it."""
    return synchronize(allreduce_async_(tensor, average, name, op, prescale_factor, postscale_factor, process_set))


class _AllreduceFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, name, op, prescale_factor, postscale_factor, wire, process_set):
        ctx.op = op
        ctx.factors = (prescale_factor, postscale_factor)
        ctx.wire = wire
        ctx.process_set = process_set
        return synchronize(allreduce_async(tensor, name=name, op=op, prescale_factor=prescale_factor,
                                           postscale_factor=postscale_factor, wire_format=wire,
                                           process_set=process_set))

    @staticmethod
    def backward(ctx, grad_output):
        # Each rank's output is op over the ranks' inputs: the gradient is the same op over the
        # ranks' output gradients (an average's 1/size included).
        reduced = synchronize(allreduce_async(grad_output, op=ctx.op, prescale_factor=ctx.factors[0],
                                              postscale_factor=ctx.factors[1], wire_format=ctx.wire,
                                              process_set=ctx.process_set))
        return reduced, None, None, None, None, None, None


def allreduce(tensor, average=None, name=None, compression=None, op=None, prescale_factor=1.0, postscale_factor=1.0,
              process_set=None):
    """Returns op (default Average) over all ranks of `tensor`, a new tensor; differentiable.

    `compression` (hvd.Compression.fp16) reduces a compressed copy and decompresses the result.
    """
    check_process_set(process_set)
    op = resolve_op(average, op)
    check_tensor("allreduce", tensor)
    if compression is None:
        from hvdrun.torch.compression import Compression  # pylint: disable=import-outside-toplevel
        compression = Compression.none
    compressed, ctx = compression.compress(tensor)
    wire = getattr(compression, "wire_format", None)
    reduced = _AllreduceFunction.apply(compressed, name, op, prescale_factor, postscale_factor, wire, process_set)
    return compression.decompress(reduced, ctx)


def _grouped_start(tensors, outputs, name, op, prescale_factor, postscale_factor, wire_format=None,
                   process_set_id=0):
    """Starts the allreduces of `tensors` into `outputs` together, named "<name>.<index>"; returns one
    registered handle whose synchronize() returns the list of outputs."""
    base = auto_name("grouped_allreduce", name, process_set_id)
    for index in range(len(tensors)):  # refused before any of them is submitted
        check_name_free("grouped_allreduce", "%s.%d" % (base, index))
    pending = [_allreduce_start(tensor, output, "%s.%d" % (base, index), op, prescale_factor, postscale_factor,
                                wire_format, process_set_id)
               for index, (tensor, output) in enumerate(zip(tensors, outputs))]
    return register(Pending(HandleGroup([p.handle for p in pending]), outputs, [p.keep for p in pending],
                            lambda: [p.finish() for p in pending], sum((p.names for p in pending), ()),
                            group_device(pending)))


def grouped_allreduce_async(tensors, average=None, name=None, op=None, prescale_factor=1.0, postscale_factor=1.0,
                            process_set=None, wire_format=None):
    """Starts allreduces of every tensor in `tensors` into new tensors, submitted together (libhvdrun
    fuses those negotiated in the same cycle); returns a handle whose synchronize() returns the list of
    results. Each tensor is named "<name>.<index>" (unnamed: "grouped_allreduce.noname.<n>.<index>")."""
    process_set_id = check_process_set(process_set)
    op = resolve_op(average, op, "grouped_allreduce_async")
    tensors = check_tensor_list("grouped_allreduce_async", tensors)
    outputs = [t.detach().clone(memory_format=torch.contiguous_format) for t in tensors]
    return _grouped_start(outputs, outputs, name, op, prescale_factor, postscale_factor,
                          wire_format, process_set_id)


def grouped_allreduce_async_(tensors, average=None, name=None, op=None, prescale_factor=1.0, postscale_factor=1.0,
                             process_set=None, wire_format=None):
    """Starts in-place allreduces of every tensor in `tensors`, submitted together; returns a handle whose
    synchronize() returns the list of tensors."""
    process_set_id = check_process_set(process_set)
    op = resolve_op(average, op, "grouped_allreduce_async_")
    tensors = check_tensor_list("grouped_allreduce_async_", tensors)
    return _grouped_start(tensors, tensors, name, op, prescale_factor, postscale_factor,
                          wire_format, process_set_id)


def grouped_allreduce_(tensors, average=None, name=None, op=None, prescale_factor=1.0, postscale_factor=1.0,
                       process_set=None):
    """Reduces every tensor in `tensors` in place over all ranks; returns the list of them."""
    return synchronize(grouped_allreduce_async_(tensors, average, name, op, prescale_factor, postscale_factor,
                                                process_set))


class _GroupedAllreduceFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, name, op, factors, wire, process_set, *tensors):
        ctx.op, ctx.factors, ctx.wire, ctx.process_set = op, factors, wire, process_set
        return tuple(synchronize(grouped_allreduce_async(list(tensors), name=name, op=op, prescale_factor=factors[0],
                                                         postscale_factor=factors[1], wire_format=wire,
                                                         process_set=process_set)))

    @staticmethod
    def backward(ctx, *grad_outputs):
        # As allreduce's: the same op over the ranks' output gradients.
        reduced = synchronize(grouped_allreduce_async([g.contiguous() for g in grad_outputs], op=ctx.op,
                                                      prescale_factor=ctx.factors[0], postscale_factor=ctx.factors[1],
                                                      wire_format=ctx.wire, process_set=ctx.process_set))
        return (None, None, None, None, None) + tuple(reduced)


def grouped_allreduce(tensors, average=None, name=None, compression=None, op=None, prescale_factor=1.0,
                      postscale_factor=1.0, process_set=None):
    """Returns op (default Average) over all ranks of every tensor in `tensors`, as a list of new tensors,
    reduced together; differentiable. `compression` as allreduce's."""
    check_process_set(process_set)
    op = resolve_op(average, op, "grouped_allreduce")
    tensors = check_tensor_list("grouped_allreduce", tensors)
    if compression is None:
        from hvdrun.torch.compression import Compression  # pylint: disable=import-outside-toplevel
        compression = Compression.none
    compressed, contexts = [], []
    for tensor in tensors:
        value, ctx = compression.compress(tensor)
        compressed.append(value)
        contexts.append(ctx)
    wire = getattr(compression, "wire_format", None)
    reduced = _GroupedAllreduceFunction.apply(name, op, (prescale_factor, postscale_factor), wire, process_set,
                                              *compressed)
    return [compression.decompress(value, ctx) for value, ctx in zip(reduced, contexts)]
