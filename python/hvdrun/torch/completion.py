"""How synchronize() completes a collective: on the caller's CUDA stream (the DEVICE path) or on the host.

On the DEVICE path (a --nccl job's CUDA tensors, placement.py) synchronize(handle) does not wait on the
host for the collective to run: libhvdrun's CollectiveHandle::WaitOnStream returns once the collective's
work is queued on the NCCL stream, having made the caller's current stream of the tensor's device (the
stream current when synchronize is called) wait on an event recorded after that work. The call's finish
(scaling, copying back, putting rows together) is then queued on that same stream, after the collective.
So work queued on that stream afterwards, and anything that waits for it (tensor.cpu(), .item(),
torch.cuda.current_stream().synchronize()), sees the result; another stream sees it once it waits for
that one. This is Horovod's HOROVOD_ENABLE_ASYNC_COMPLETION, which hvdrun.torch does by default;
HOROVOD_ENABLE_ASYNC_COMPLETION=0 (read at hvd.init()) makes synchronize wait on the host instead, as
Horovod does without it. On the HOST and STAGED paths synchronize waits on the host (a staged result is
copied back from host memory). poll(handle) is always the host's question: whether it has run.

Memory contract. libhvdrun reads and writes a call's tensors (Pending.keep: inputs, outputs, contiguous
copies, padded blocks) on its own stream until its handle is ready (module_collectives.h: the Python
layer keeps them alive until the handle completes). After a stream completion the host goes on before
that, so two things keep the memory from being reused too early:

1. Every CUDA tensor of `keep` is marked as used by the caller's stream (tensor.record_stream): PyTorch's
   caching allocator reuses a freed block only once the work queued on that stream before the free has
   run, and that stream waits for the collective's end. This also orders reuse after finish's reads on
   that stream, where the tensor was allocated on another one (a gradient made on autograd's stream).
2. `keep` itself stays referenced here (InFlight) until the handle is ready on the host, so that nothing
   libhvdrun may still touch is freed while it runs, whatever the allocator does. Held calls are let go,
   oldest first, whenever a collective is submitted, synchronized or polled, and all of them at shutdown
   (after a host wait for each).

A failure the device meets after the stream wait breaks libhvdrun's runtime: the next call raises it.

The CUDA operations sit behind CudaStreams, so that tests/python/completion_checks.py checks the order
above with a fake on a machine without a GPU.
"""

import collections
import os
import threading

# Horovod's switch (common/env_names.h): "0" waits on the host; unset or "1" completes on the stream.
ASYNC_COMPLETION_VARIABLE = "HOROVOD_ENABLE_ASYNC_COMPLETION"


def stream_completion_from(environment):
    """Whether DEVICE-path collectives complete on the caller's stream, from HOROVOD_ENABLE_ASYNC_COMPLETION in
    `environment`: unset, empty or "1": yes; "0": no. Another value raises ValueError, one line naming it."""
    value = environment.get(ASYNC_COMPLETION_VARIABLE, "").strip()
    if value in ("", "1"):
        return True
    if value == "0":
        return False
    raise ValueError("hvdrun.torch.init: %s=%r: use 1 (the default: a CUDA tensor's synchronize() completes on the "
                     "caller's stream) or 0 (it waits on the host)" % (ASYNC_COMPLETION_VARIABLE, value))


class CudaStreams:
    """The CUDA operations stream completion uses (torch.cuda's current stream and record_stream)."""

    @staticmethod
    def current(device):
        """The current stream of torch.device `device`; None for a CPU device (tests take the DEVICE path
        with CPU tensors over the host runtime, which ignores streams)."""
        if device.type != "cuda":
            return None
        import torch  # pylint: disable=import-outside-toplevel

        return torch.cuda.current_stream(device)

    @staticmethod
    def address(stream):
        """The cudaStream_t of `stream` as an int, for libhvdrun (0 for none)."""
        return 0 if stream is None else stream.cuda_stream

    @staticmethod
    def record(tensor, stream):
        """Marks `tensor`, where it is a CUDA tensor, as used by `stream` (tensor.record_stream)."""
        if tensor.is_cuda:
            tensor.record_stream(stream)


def tensors_of(keep):
    """The torch tensors in `keep` (a tensor, or lists and tuples of them and of other objects, nested), each
    once."""
    import torch  # pylint: disable=import-outside-toplevel

    found = {}
    pending = [keep]
    while pending:
        item = pending.pop()
        if isinstance(item, torch.Tensor):
            found[id(item)] = item
        elif isinstance(item, (list, tuple)):
            pending.extend(item)
    return list(found.values())


class InFlight:
    """The tensors of collectives completed on a stream whose handles are not yet ready on the host.

    Thread safety: every method may be called from any thread."""

    def __init__(self):
        self._lock = threading.Lock()
        self._held = collections.deque()  # (libhvdrun's handle, keep), oldest first

    def hold(self, handle, keep):
        """Keeps `keep` referenced until `handle` is ready (nothing to keep where it is already)."""
        if not handle.ready():
            with self._lock:
                self._held.append((handle, keep))

    def release_ready(self):
        """Lets go of the oldest held calls whose handles are ready, up to the first that is not (calls run
        in about the order they were made, so this costs one ready() per call in the end)."""
        with self._lock:
            while self._held and self._held[0][0].ready():
                self._held.popleft()

    def wait_all(self):
        """Waits on the host for every held call and lets go of them all (for shutdown); a failure is left
        to the runtime, which is broken by it and says so at its next call."""
        while True:
            with self._lock:
                if not self._held:
                    return
                handle, _ = self._held.popleft()
            try:
                handle.wait()
            except Exception:  # pylint: disable=broad-except  # see above
                pass

    def __len__(self):
        with self._lock:
            return len(self._held)


class StreamCompletion:
    """Completes DEVICE-path collectives on the caller's stream (see the module's documentation).

    `streams`: the CUDA operations (CudaStreams; a fake in tests); `on_stream`: whether to complete on
    the stream (False: a host wait, HOROVOD_ENABLE_ASYNC_COMPLETION=0)."""

    def __init__(self, streams=None, on_stream=True):
        self.streams = streams if streams is not None else CudaStreams()
        self.on_stream = on_stream
        self.in_flight = InFlight()

    def configure(self, environment=None):
        """Reads HOROVOD_ENABLE_ASYNC_COMPLETION (hvd.init())."""
        self.on_stream = stream_completion_from(os.environ if environment is None else environment)

    def complete(self, handle, keep, device, wait):
        """Completes the DEVICE-path collective `handle` of the tensors `keep` on torch.device `device`:
        on its current stream (wait_on_stream), or on the host with wait(handle) where stream completion is
        off. Either way the caller's stream is recorded on keep's CUDA tensors, since finish reads them
        there. Returns that stream (None for a CPU device)."""
        stream = self.streams.current(device)
        if self.on_stream:
            wait(handle, self.streams.address(stream))
        else:
            wait(handle)
        if stream is not None:
            for tensor in tensors_of(keep):
                self.streams.record(tensor, stream)
        self.in_flight.hold(handle, keep)
        return stream
