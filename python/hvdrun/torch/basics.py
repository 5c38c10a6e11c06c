"""What every collective call shares: Horovod's reduction operations and the errors of what hvdrun.torch
does not support, the process-set arguments (the global set only), the checks of tensors, where each
tensor's collective runs (placement.py), and the two collectives with no tensor, barrier and join.

The runtime the calls submit to (`runtime`, hvdrun._C), the host staging of CUDA tensors
(`host_staging`), the exchanges of device row counts (`exchanges`) and the path CPU tensors take
(`host_tensors_take`) are this module's attributes, read at each call: tests/python/hvdrun_torch_checks.py
replaces them to run CUDA tensors' paths on the CPU.
"""

import torch

from hvdrun import _C
from hvdrun.torch import placement, staging

runtime = _C


class HvdrunUnsupportedError(NotImplementedError):
    """A Horovod feature hvdrun.torch does not have; the message names it."""


class HorovodInternalError(RuntimeError):
    """As Horovod's: a collective failed (libhvdrun's one-line message); the runtime is then broken."""


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


def check_process_set(process_set):
    if process_set is not None and process_set is not global_process_set:
        unsupported("process sets (process_set=)", "collectives run over all ranks of the job")


# The element types libhvdrun reduces, by torch type.
RUNTIME_TYPES = {
    torch.float32: "float32",
    torch.float64: "float64",
    torch.float16: "float16",
    torch.bfloat16: "bfloat16",
    torch.int32: "int32",
    torch.int64: "int64",
}


# Reduced through an int64 copy, cast back afterwards (with torch's wrap-around).
WIDENED_TYPES = (torch.uint8, torch.int8, torch.int16)


def check_tensor(call, tensor):
    if not isinstance(tensor, torch.Tensor):
        raise TypeError("hvdrun.torch.%s: expected a torch.Tensor, got %s" % (call, type(tensor).__name__))
    if tensor.device.type not in ("cpu", "cuda"):
        unsupported("%s tensors (hvdrun.torch.%s)" % (tensor.device.type.upper(), call),
                    "move the tensor to the CPU or to a CUDA device")
    if tensor.is_sparse:
        unsupported("sparse tensors (hvdrun.torch.%s)" % call,
                    "use hvd.sparse_allreduce_async, or pass tensor.to_dense()")


def check_tensor_list(call, tensors):
    if isinstance(tensors, torch.Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError("hvdrun.torch.%s: expected a list of tensors, got %s" % (call, type(tensors).__name__))
    for tensor in tensors:
        check_tensor(call, tensor)
    return list(tensors)


def resolve_op(average, op, call="allreduce"):
    if op is None:
        op = Average if average is None or average else Sum
    elif average is not None:
        raise ValueError("hvdrun.torch.%s: pass op= or average=, not both" % call)
    if op is Adasum:
        unsupported("Adasum (hvdrun.torch.%s(op=hvd.Adasum))" % call, "use op=hvd.Average (or hvd.Sum)")
    if not isinstance(op, ReduceOp):
        raise ValueError("hvdrun.torch.%s: op must be hvd.Average, hvd.Sum, hvd.Min or hvd.Max, got %r" % (call, op))
    return op


# CUDA tensors that do not take the device path travel through pinned host memory (staging.py).
host_staging = staging.HostStaging()


# Allgathers and alltoalls on the device path are submitted once their row counts have been exchanged
# (device_rows.py), from a thread of their own.
exchanges = staging.OrderedSubmitter("hvdrun-exchange")


# The path CPU tensors take: placement.HOST, except in tests/python/hvdrun_torch_checks.py, which sets
# STAGED (with a HostStaging over a fake device) or DEVICE (over the host runtime, which ignores streams),
# so that the host-side logic of CUDA tensors' paths runs without a GPU.
host_tensors_take = placement.HOST


def tensor_path(call, tensor):
    """Where `tensor`'s collective runs: placement.HOST, DEVICE or STAGED (placement.choose)."""
    if not tensor.is_cuda:
        return host_tensors_take
    if not runtime.is_initialized():
        raise RuntimeError("hvdrun.torch.%s: call hvdrun.torch.init() first" % call)
    device_runtime = runtime.device_backend() != "none"
    rank_index = placement.rank_device(runtime.local_rank(), torch.cuda.device_count()) if device_runtime else 0
    return placement.choose(call, tensor.device, device_runtime, rank_index)


def submission_stream(path, tensor):
    """The `stream` argument of hvdrun.runtime's submissions: the caller's current stream on the DEVICE path,
    None (the host runtime) otherwise."""
    return placement.current_stream(tensor.device) if path == placement.DEVICE else None


# Broadcast and allgather move bytes: tensors of a type libhvdrun has go as they are, others as
# their bytes, padded to whole 4-byte words.
def bytes_of(tensor):
    return tensor.reshape(-1).view(torch.uint8)


def barrier(process_set=None):
    """Returns when every rank has called barrier()."""
    check_process_set(process_set)
    runtime.barrier()


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
    host_staging.drain()
    exchanges.drain()
    return runtime.join()
