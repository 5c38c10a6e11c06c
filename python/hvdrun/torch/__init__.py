"""hvdrun.torch: Horovod's PyTorch API (horovod.torch) over libhvdrun, for CPU and CUDA tensors.

    import hvdrun.torch as hvd
    hvd.init()                     # rank and size from the environment hvdrun gives each rank
    optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters())
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)

Run under `hvdrun -np N --gloo python3 train.py` (or --mpi, --nccl); run on its own, a script is a job
of one rank. Under --nccl, CUDA tensors of the rank's device are reduced in device memory over NCCL and
CPU tensors over Gloo; otherwise CUDA tensors travel through pinned host memory (placement.py,
staging.py). What is supported and how it differs from Horovod: docs/python.md.
"""

import atexit

from hvdrun import _C
from hvdrun.torch.compression import Compression
from hvdrun.torch.functions import allgather_object, broadcast_object, broadcast_optimizer_state, broadcast_parameters
from hvdrun.torch import basics as _basics
from hvdrun.torch.mpi_ops import (Adasum, Average, HorovodInternalError, HvdrunUnsupportedError, Max, Min, ProcessSet,
                                  Product, ReduceOp, Sum, add_process_set, allgather, allgather_async, allreduce,
                                  allreduce_, allreduce_async, allreduce_async_, alltoall, alltoall_async, barrier,
                                  broadcast, broadcast_, broadcast_async, broadcast_async_, global_process_set,
                                  grouped_allgather, grouped_allgather_async, grouped_allreduce, grouped_allreduce_,
                                  grouped_allreduce_async, grouped_allreduce_async_, grouped_reducescatter,
                                  grouped_reducescatter_async, join, poll, reducescatter, reducescatter_async,
                                  remove_process_set, sparse_allreduce_async, synchronize, unsupported)
from hvdrun.torch.optimizer import DistributedOptimizer
from hvdrun.torch.sync_batch_norm import SyncBatchNorm


def init(comm=None, process_sets=None):
    """Joins the job hvdrun started this process in (HVDRUN_* variables); outside hvdrun, a job of one rank.

    `process_sets`: a list of hvd.ProcessSet to register now (every rank the same list), or "dynamic" to
    allow hvd.add_process_set / remove_process_set later (as HOROVOD_DYNAMIC_PROCESS_SETS=1)."""
    if comm is not None:
        unsupported("init(comm=) (MPI communicators)", "hvdrun gives every rank its place in the job")
    if not _C.is_initialized() and _C.job_backend() == "nccl":
        _require_cuda_device()
    was_initialized = _C.is_initialized()
    if not was_initialized:
        _basics.completion.configure()  # HOROVOD_ENABLE_ASYNC_COMPLETION, refused before the job is joined
    while True:
        try:
            _C.init()
            break
        except RuntimeError as error:
            _init_failed(error)
    if not was_initialized:
        _basics.init_process_sets(process_sets)


def _init_failed(error):
    """An elastic job's init() that failed: a worker hvdrun left out of the job's new round exits 0 after
    saying so; one whose round ended before it was formed (a peer lost meanwhile) returns, for init() to
    wait for the next round (each wait is bounded by HVDRUN_ELASTIC_TIMEOUT_SECONDS); other errors stay
    RuntimeError."""
    import sys  # pylint: disable=import-outside-toplevel

    kind = _C.error_kind(str(error))
    if kind == "removed":
        sys.stderr.write("hvdrun.torch: %s\n" % error)
        sys.stderr.flush()
        raise SystemExit(0)
    if kind != "recoverable":
        raise error


def _require_cuda_device():
    """Raises RuntimeError, one line, where a --nccl job's rank has no CUDA device for torch: its CUDA
    tensors are reduced over NCCL on the rank's device (libhvdrun's nccl backend refuses too, later)."""
    import os  # pylint: disable=import-outside-toplevel
    import torch  # pylint: disable=import-outside-toplevel

    if torch.cuda.is_available():
        return
    where = "torch %s has no CUDA" % torch.__version__ if not torch.backends.cuda.is_built() else \
        "torch.cuda.is_available() is False"
    raise RuntimeError("hvdrun.torch.init: this --nccl job's rank on host %s has no CUDA device (%s); --nccl "
                       "reduces CUDA tensors over NCCL: run it on a machine with a GPU and a CUDA torch, or use --gloo "
                       "or --mpi" % (os.uname().nodename, where))


def shutdown():
    """Waits for this rank's queued collectives and leaves the job; init() may be called again."""
    if _C.is_initialized():
        _basics.host_staging.drain()  # staged collectives submitted first
        _basics.exchanges.drain()  # and device allgathers, alltoalls
        _basics.completion.in_flight.wait_all()  # completed on a stream, still running
        _C.shutdown()
        _basics.forget_process_sets()


atexit.register(shutdown)

is_initialized = _C.is_initialized
rank = _C.rank
size = _C.size
local_rank = _C.local_rank
local_size = _C.local_size
cross_rank = _C.cross_rank
cross_size = _C.cross_size


def backend():
    """The job's backend: "gloo" (hvdrun --gloo), "mpi" (--mpi), "nccl" (--nccl: CUDA tensors of the rank's
    device over NCCL, in device memory; CPU tensors over Gloo), "none" in a job of one rank."""
    return _C.backend()


def mpi_built():
    """Whether libhvdrun has its MPI backend (hvdrun --mpi)."""
    return "mpi" in _C.built_backends()


def gloo_built():
    """Whether libhvdrun has its Gloo backend (hvdrun --gloo)."""
    return "gloo" in _C.built_backends()


def nccl_built():
    """As Horovod's: NCCL_VERSION_CODE of the NCCL libhvdrun's nccl backend was built with (22809 for 2.28.9),
    0 when it has none. hvdrun.torch reduces CUDA tensors over it in --nccl jobs."""
    return _C.nccl_version_code()


def cuda_built():
    """Whether CUDA tensors can be reduced: where torch was built with CUDA (over NCCL in --nccl jobs,
    staged through pinned host memory otherwise)."""
    import torch  # pylint: disable=import-outside-toplevel

    return torch.backends.cuda.is_built()


def ddl_built():
    """False: libhvdrun has no IBM DDL backend."""
    return False


def ccl_built():
    """False: libhvdrun has no oneCCL backend."""
    return False


def mpi_threads_supported():
    """Horovod's: whether the job's MPI gives this process MPI_THREAD_MULTIPLE (libhvdrun asks for it). As
    Horovod, a ValueError when the job does not run over MPI (hvdrun --mpi)."""
    if not mpi_enabled():
        raise ValueError("hvdrun.torch.mpi_threads_supported: this job does not run over MPI (hvdrun --mpi)")
    return _C.mpi_threads_supported()


def rocm_built():
    """False: libhvdrun has no ROCm (RCCL) backend; hvdrun.torch reduces CPU tensors, and CUDA tensors
    where torch was built with CUDA (cuda_built())."""
    return False


def mpi_enabled():
    return _C.is_initialized() and _C.backend() == "mpi"


def gloo_enabled():
    """Whether CPU tensors go over Gloo: --gloo jobs, and --nccl jobs (their CUDA tensors go over NCCL)."""
    return _C.is_initialized() and _C.backend() in ("gloo", "nccl")


def is_homogeneous():
    """Whether every host runs the same number of ranks."""
    return _C.size() == _C.local_size() * _C.cross_size()


def start_timeline(file_path, mark_cycles=False):
    """Horovod's start_timeline: from now on rank 0 writes what libhvdrun does to `file_path`, the Chrome
    trace of one rank that hvdrun --timeline-filename writes for every rank (`mark_cycles`: a CYCLE_START
    at each negotiation cycle with work); the other ranks write nothing, as in Horovod. Called by every
    rank. A one-line error when a timeline is written already (hvdrun --timeline-filename)."""
    if _C.rank() == 0:
        _C.start_timeline(str(file_path), bool(mark_cycles))


def stop_timeline():
    """Horovod's stop_timeline: closes the file start_timeline opened, complete, before returning."""
    _C.stop_timeline()


# Last: hvd.elastic's reset calls this module's init() and shutdown().
from hvdrun.torch import elastic  # noqa: E402  pylint: disable=wrong-import-position
from hvdrun.torch.elastic import HostsUpdatedInterrupt  # noqa: E402  pylint: disable=wrong-import-position
