"""What every collective call shares: Horovod's reduction operations and the errors of what hvdrun.torch
does not support, process sets (Horovod's ProcessSet, registered in libhvdrun), the checks of tensors, where each
tensor's collective runs (placement.py), and the two collectives with no tensor, barrier and join.

The runtime the calls submit to (`runtime`, hvdrun._C), the host staging of CUDA tensors
(`host_staging`), the exchanges of device row counts (`exchanges`), how DEVICE-path calls complete
(`completion`) and the path CPU tensors take (`host_tensors_take`) are this module's attributes, read at
each call: tests/python/hvdrun_torch_checks.py and completion_checks.py replace them to run CUDA tensors'
paths on the CPU.
"""

import os

import torch

from hvdrun import _C
from hvdrun.torch import completion as completion_module, placement, staging

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
    """A reduction operation; hvd.Average, hvd.Sum, hvd.Min, hvd.Max, hvd.Product (and hvd.Adasum, refused)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "hvdrun.torch." + self.name.capitalize()


Average = ReduceOp("average")
Sum = ReduceOp("sum")
Min = ReduceOp("min")
Max = ReduceOp("max")
Product = ReduceOp("product")
Adasum = ReduceOp("adasum")


class ProcessSet:
    """Horovod's process set: a subset of the job's ranks whose collectives run among themselves, with an
    engine of their own in libhvdrun (negotiation, fusion, backend group). Registered by hvd.init(process_sets=)
    or hvd.add_process_set on every rank in the same order; process_set_id is None until then."""

    process_set_id = None
    ranks = None
    mpi_comm = None

    def __init__(self, ranks_or_comm):
        if isinstance(ranks_or_comm, torch.Tensor) or not hasattr(ranks_or_comm, "__iter__"):
            unsupported("process sets made from an MPI communicator (hvd.ProcessSet(comm))",
                        "give the list of ranks: hvd.ProcessSet([0, 2])")
        ranks = sorted(ranks_or_comm)
        if any(not isinstance(rank, int) for rank in ranks):
            raise ValueError("ProcessSet should be initialized with a list of process ranks or an mpi4py Comm object")
        self.ranks = ranks

    def _invalidate(self):
        self.process_set_id = None

    def size(self):
        """The number of ranks in the set; None until it is registered."""
        if self.process_set_id is None:
            return None
        return runtime.process_set_size(self.process_set_id) if self.process_set_id else runtime.size()

    def rank(self):
        """This rank's place in the set (a broadcast's root_rank stays a job rank); None until registered."""
        if self.process_set_id is None:
            return None
        return runtime.process_set_rank(self.process_set_id) if self.process_set_id else runtime.rank()

    def included(self):
        """Whether this rank is in the set; None when the set has no ranks yet."""
        if self.ranks is None:
            return None
        return runtime.rank() in self.ranks

    def __str__(self):
        return "ProcessSet(process_set_id=%s, ranks=%s, mpi_comm=%s)" % (self.process_set_id, self.ranks,
                                                                        self.mpi_comm)


global_process_set = ProcessSet([])
global_process_set.process_set_id = 0

# The sets registered now, by id (the global set's 0 included once hvd.init has run), and whether sets may
# be added and removed after init (hvd.init(process_sets="dynamic") or HOROVOD_DYNAMIC_PROCESS_SETS=1).
_registered = {}
_dynamic = [False]


def _register(process_set):
    """Registers `process_set` (a ProcessSet or a list of ranks) on every runtime; returns it with its id,
    or None where a set of the same ranks is registered already (Horovod refuses duplicates)."""
    if not isinstance(process_set, ProcessSet):
        process_set = ProcessSet(process_set)
    size = runtime.size() if runtime.is_initialized() else 1
    for rank in process_set.ranks:
        if rank < 0 or rank >= size:
            raise ValueError("hvdrun.torch: process set %s names rank %d, outside this job of %d ranks"
                             % (process_set.ranks, rank, size))
    if len(set(process_set.ranks)) != len(process_set.ranks):
        raise ValueError("hvdrun.torch: process set %s names a rank twice" % process_set.ranks)
    if any(other.ranks == process_set.ranks for other in _registered.values()) or not process_set.ranks:
        return None
    process_set.process_set_id = runtime.add_process_set(process_set.ranks)
    _registered[process_set.process_set_id] = process_set
    return process_set


def init_process_sets(process_sets):
    """hvd.init's part: registers the global set, then each of `process_sets` in order (every rank gives
    the same list), or turns dynamic sets on for "dynamic". A duplicate entry is refused as Horovod does."""
    _registered.clear()
    global_process_set.ranks = list(range(runtime.size()))
    _registered[0] = global_process_set
    _dynamic[0] = os.environ.get("HOROVOD_DYNAMIC_PROCESS_SETS", "0") not in ("", "0")
    if process_sets is None:
        return
    if isinstance(process_sets, str):
        if process_sets.lower() != "dynamic":
            raise ValueError("hvdrun.torch.init: process_sets must be a list of hvd.ProcessSet or \"dynamic\", "
                             "got %r" % process_sets)
        os.environ["HOROVOD_DYNAMIC_PROCESS_SETS"] = "1"
        _dynamic[0] = True
        return
    process_sets = list(process_sets)
    for index, process_set in enumerate(process_sets):
        if _register(process_set) is None:
            process_set._invalidate()  # pylint: disable=protected-access
            raise ValueError("Horovod could not be initialized because process_sets entry number %d is a "
                             "duplicate: %s" % (index, process_set))


def forget_process_sets():
    """At shutdown: the sets registered are gone with their runtime (their objects need registering again)."""
    for process_set_id, process_set in list(_registered.items()):
        if process_set_id:
            process_set._invalidate()  # pylint: disable=protected-access
    _registered.clear()


def add_process_set(process_set):
    """Registers a process set after init (every rank, in the same order) and returns it; needs dynamic
    process sets. A set of the same ranks as a registered one is a ValueError."""
    if not runtime.is_initialized():
        raise ValueError("Horovod has not been initialized; use hvd.init().")
    if not _dynamic[0]:
        raise ValueError("Set HOROVOD_DYNAMIC_PROCESS_SETS=1 to allow adding process sets after Horovod "
                         "initialization.")
    registered = _register(process_set)
    if registered is None:
        raise ValueError("Attempted to add a duplicate process set: %s" % process_set)
    return registered


def remove_process_set(process_set):
    """Removes a registered set (every rank, in the same order); returns whether it did. The global set and
    a set not registered are not removed; a set with collectives still pending on this rank is an error."""
    if not runtime.is_initialized():
        raise ValueError("Horovod has not been initialized; use hvd.init().")
    if not _dynamic[0]:
        raise ValueError("Set HOROVOD_DYNAMIC_PROCESS_SETS=1 to allow removing process sets after Horovod "
                         "initialization.")
    process_set_id = process_set.process_set_id
    if not process_set_id or process_set_id not in _registered:
        return False
    runtime.remove_process_set(process_set_id)
    del _registered[process_set_id]
    process_set._invalidate()  # pylint: disable=protected-access
    return True


def check_process_set(process_set):
    """The id of the set a collective runs on: 0 for None and hvd.global_process_set."""
    if process_set is None:
        return 0
    if not isinstance(process_set, ProcessSet):
        raise ValueError("hvdrun.torch: process_set must be an hvd.ProcessSet, got %s" % type(process_set).__name__)
    if process_set.process_set_id is None:
        raise ValueError("hvdrun.torch: %s is not registered: pass it to hvd.init(process_sets=[...]) or "
                         "hvd.add_process_set" % process_set)
    return process_set.process_set_id


def set_size(process_set_id):
    """The number of ranks of the set a collective runs on."""
    return runtime.size() if process_set_id == 0 else runtime.process_set_size(process_set_id)


def set_rank(process_set_id):
    """This rank's place in the set a collective runs on."""
    return runtime.rank() if process_set_id == 0 else runtime.process_set_rank(process_set_id)


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
        raise ValueError("hvdrun.torch.%s: op must be hvd.Average, hvd.Sum, hvd.Min, hvd.Max or hvd.Product, got %r" % (call, op))
    return op


# CUDA tensors that do not take the device path travel through pinned host memory (staging.py).
host_staging = staging.HostStaging()


# Allgathers and alltoalls on the device path are submitted once their row counts have been exchanged
# (device_rows.py), from a thread of their own.
exchanges = staging.OrderedSubmitter("hvdrun-exchange")


# How synchronize completes DEVICE-path calls: on the caller's stream (completion.py), configured at init.
completion = completion_module.StreamCompletion()


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


def stream_device(path, tensor):
    """Pending.device: the device whose current stream completes the call on the DEVICE path, else None."""
    return tensor.device if path == placement.DEVICE else None


# Broadcast and allgather move bytes: tensors of a type libhvdrun has go as they are, others as
# their bytes, padded to whole 4-byte words.
def bytes_of(tensor):
    return tensor.reshape(-1).view(torch.uint8)


def barrier(process_set=None):
    """Returns when every rank of the process set (default: the job) has called barrier()."""
    runtime.barrier(process_set=check_process_set(process_set))


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
