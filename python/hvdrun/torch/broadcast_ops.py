"""broadcast (in place, asynchronous, differentiable as Horovod's). Tensors of a type libhvdrun has go as
they are; others as their bytes, padded to whole 4-byte words."""

import torch

from hvdrun.torch import basics, placement
from hvdrun.torch.allreduce_ops import allreduce
from hvdrun.torch.basics import (Average, RUNTIME_TYPES, bytes_of, check_process_set, check_tensor, stream_device,
                                 submission_stream, tensor_path)
from hvdrun.torch.handles import Pending, check_name_free, given, register, staged_name, synchronize


def _word_buffer(byte_count, device=None):
    return torch.zeros((byte_count + 3) // 4 * 4, dtype=torch.uint8, device=device)


def _broadcast_words(contiguous):
    """What a broadcast of the contiguous tensor `contiguous` sends: (buffer, count, type name, unpack),
    unpack() writing a received buffer back into `contiguous`. Tensors of a type libhvdrun has go as
    they are; others as their bytes, padded to whole 4-byte words, in a buffer where `contiguous` is."""
    if contiguous.dtype in RUNTIME_TYPES:
        return contiguous, contiguous.numel(), RUNTIME_TYPES[contiguous.dtype], lambda: None
    data = bytes_of(contiguous)
    words = _word_buffer(data.numel(), contiguous.device)
    words[: data.numel()].copy_(data)
    return words, words.numel() // 4, "int32", lambda: data.copy_(words[: data.numel()])


def _shape_of(tensor, count):
    """The shape the ranks compare for a broadcast of `count` elements of `tensor`: the tensor's, or none
    when it travels as bytes in words (_broadcast_words)."""
    return list(tensor.shape) if count == tensor.numel() else []


def broadcast_async_(tensor, root_rank, name=None, process_set=None):
    """Starts overwriting `tensor` on every rank with root_rank's; returns a handle for synchronize(),
    which returns `tensor`.

    A named broadcast is negotiated as a named allreduce is: ranks may start their named
    broadcasts in any order. Unnamed ones are named by their place in this rank's sequence of
    unnamed broadcasts, allgathers and barriers, which every rank must then make in the same order
    (those of CUDA tensors by their place among this rank's unnamed broadcasts of CUDA tensors).
    """
    process_set_id = check_process_set(process_set)
    check_tensor("broadcast", tensor)
    root_rank = int(root_rank)
    if not 0 <= root_rank < basics.runtime.size():
        raise ValueError("hvdrun.torch.broadcast: root_rank %d is not a rank of this job of %d"
                         % (root_rank, basics.runtime.size()))
    check_name_free("broadcast", name)
    held = given(name)
    path = tensor_path("broadcast", tensor)
    if path == placement.STAGED:
        name = staged_name("broadcast", name, process_set_id)
        with torch.no_grad():
            host, ready = basics.host_staging.stage_in(tensor.detach().contiguous())
        sent = []

        def start():
            buffer, count, type_name, unpack = _broadcast_words(host)
            sent.append(unpack)
            return basics.runtime.broadcast_async(name, buffer.data_ptr(), count, type_name, root_rank,
                                                  process_set=process_set_id, shape=_shape_of(tensor, count))

        handle = basics.host_staging.submit_after(ready, start, "hvdrun.torch.broadcast('%s')" % name)

        def finish_staged():
            with torch.no_grad():
                sent[0]()
                basics.host_staging.stage_out(host, tensor)
            return tensor

        return register(Pending(handle, tensor, (tensor, host, sent), finish_staged, held))
    if path == placement.HOST:
        name = "" if name is None else str(name)
    else:
        name = staged_name("broadcast", name, process_set_id)
    with torch.no_grad():
        contiguous = tensor if tensor.is_contiguous() else tensor.contiguous()
        buffer, count, type_name, unpack = _broadcast_words(contiguous)
        handle = basics.runtime.broadcast_async(name, buffer.data_ptr(), count, type_name, root_rank,
                                    stream=submission_stream(path, tensor), process_set=process_set_id,
                                    shape=_shape_of(tensor, count))

    def finish():
        with torch.no_grad():
            unpack()
            if contiguous is not tensor:
                tensor.copy_(contiguous)
        return tensor

    return register(Pending(handle, tensor, (tensor, buffer), finish, held, stream_device(path, tensor)))


def broadcast_async(tensor, root_rank, name=None, process_set=None):
    """Starts a broadcast of root_rank's `tensor` into a new tensor; returns a handle for synchronize()."""
    check_tensor("broadcast", tensor)
    return broadcast_async_(tensor.detach().clone(memory_format=torch.contiguous_format), root_rank, name, process_set)


def broadcast_(tensor, root_rank, name=None, process_set=None):
    """Overwrites `tensor` on every rank with root_rank's; returns it."""
    return synchronize(broadcast_async_(tensor, root_rank, name, process_set))


class _BroadcastFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, root_rank, name, process_set):
        ctx.root_rank = root_rank
        ctx.process_set = process_set
        return synchronize(broadcast_async(tensor, root_rank, name, process_set))

    @staticmethod
    def backward(ctx, grad_output):
        # As Horovod's: the output gradient averaged over the ranks on root_rank, zeros elsewhere.
        averaged = allreduce(grad_output.contiguous(), op=Average, process_set=ctx.process_set)
        if basics.runtime.rank() != ctx.root_rank:
            averaged.zero_()
        return averaged, None, None, None


def broadcast(tensor, root_rank, name=None, process_set=None):
    """Returns root_rank's `tensor` on every rank, as a new tensor; differentiable (as Horovod's, the
    gradient is the output gradient averaged over the ranks on root_rank, zeros on the others)."""
    check_process_set(process_set)
    check_tensor("broadcast", tensor)
    return _BroadcastFunction.apply(tensor, root_rank, name, process_set)
