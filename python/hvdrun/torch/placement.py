"""Where a tensor's collective runs, and the stream it is read after.

libhvdrun's runtimes, as hvdrun._C holds them: every job has a host runtime (host memory: the job's
Gloo or MPI, and Gloo in a --nccl job); a --nccl job also has a device runtime (NCCL, in CUDA memory
of the rank's device, local_rank % devices as libhvdrun's nccl backend picks it). A tensor's
collective takes one of three paths:

- HOST: a CPU tensor, handed to the host runtime as it is.
- DEVICE: a CUDA tensor of the rank's device in a job with a device runtime, handed to it as it is
  (or as a contiguous copy), with the caller's current stream of that device: libhvdrun records an
  event there when the call is made and reads the tensor once the stream has reached it
  (Runtime::SetCallerStream); synchronize completes the call on the stream current then, without a
  host wait (completion.py).
  Allgather and alltoall, whose ranks' rows may differ, exchange their row counts over the host
  runtime first and pad the rows to equal blocks in device memory (device_rows.py).
- STAGED: any other CUDA tensor (every CUDA tensor of a job without a device runtime: --gloo, --mpi),
  through pinned host memory to the host runtime (staging.py).

In a job with a device runtime a CUDA tensor must be on the rank's device, whichever path it takes:
its collectives run beside that device's other work.

Pure functions over devices, not tensors, so that tests/python/placement_checks.py runs them without
a GPU.
"""

HOST = "host"
DEVICE = "device"
STAGED = "staged"


def rank_device(local_rank, device_count):
    """The CUDA device index libhvdrun's device runtime uses for a rank (NcclBackend::Create)."""
    return local_rank % device_count


def choose(call, device, device_runtime, rank_index):
    """The path (HOST, DEVICE, STAGED) of hvdrun.torch.`call` on a tensor on torch.device `device`: the
    same for every call.

    `device_runtime`: whether the job has one (a --nccl job); `rank_index`: the rank's CUDA device
    index (used only with a device runtime). Raises ValueError, one line naming the call and both devices, for a CUDA tensor
    on another device than the rank's in a job with a device runtime."""
    if device.type != "cuda":
        return HOST
    if not device_runtime:
        return STAGED
    index = 0 if device.index is None else device.index
    if index != rank_index:
        raise ValueError("hvdrun.torch.%s: the tensor is on cuda:%d, but this rank's device is cuda:%d (its local "
                         "rank modulo the devices it sees), where its NCCL collectives run; move the tensor there "
                         "(tensor.to('cuda:%d'))" % (call, index, rank_index, rank_index))
    return DEVICE


def refuse_wire_compression(call, name, wire_format):
    """Raises ValueError, one line, for libhvdrun's wire compression (Compression.bf16/fp8) of a tensor
    on the DEVICE path: the runtime converts values in host memory, NCCL reduces device memory."""
    if wire_format:
        raise ValueError("hvdrun.torch.%s('%s'): %s compression converts values in host memory, and this --nccl "
                         "job reduces CUDA tensors on the GPU; use compression=hvd.Compression.fp16 (a cast before "
                         "the allreduce), or run with --gloo or --mpi" % (call, name, wire_format))


def current_stream(device):
    """The handle (cudaStream_t as an int) of the current CUDA stream of torch.device `device`; 0 (no
    stream: libhvdrun's host runtime ignores it) for a CPU device, as tests take the DEVICE path with
    CPU tensors."""
    if device.type != "cuda":
        return 0
    import torch  # pylint: disable=import-outside-toplevel

    return torch.cuda.current_stream(device).cuda_stream
