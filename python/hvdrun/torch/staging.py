"""Collectives on device tensors through pinned host memory, ordered by streams and events.

libhvdrun's Gloo and MPI backends read and write host memory. A CUDA tensor in a job without a device
runtime (--gloo, --mpi; placement.py) therefore goes as follows:

1. stage_in: the tensor is copied into a pinned host buffer on the caller's current stream, and an
   event is recorded on that stream after the copy. The caller's thread does not wait.
2. submit_after: one submitter thread per process waits for that event (that copy only, never a
   device-wide synchronize) and then hands the host buffer to libhvdrun. Submissions keep the order
   in which they were made, so the copies of later tensors overlap the communication of earlier ones.
3. stage_out: when the caller synchronizes, the result is copied back into device memory on the
   stream current at that moment; work queued on that stream afterwards sees the result.

Pinned buffers come from PyTorch's caching host allocator, which keeps a buffer from being reused
until the asynchronous copies recorded on it have completed, so a buffer may be dropped as soon as
its copy has been queued.

The device operations sit behind DeviceOps, so that the ordering above is tested on machines
without a GPU with a fake (tests/python/staging_checks.py); CudaOps is the real one. The submitter
thread is an OrderedSubmitter, which device_rows.py's allgathers and alltoalls use too.
"""

import queue
import threading


class CudaOps:
    """The CUDA operations staging uses (torch.cuda's streams, events and pinned memory)."""

    @staticmethod
    def pinned_empty(shape, dtype):
        import torch  # pylint: disable=import-outside-toplevel

        return torch.empty(shape, dtype=dtype, pin_memory=True)

    @staticmethod
    def current_stream(device):
        import torch  # pylint: disable=import-outside-toplevel

        return torch.cuda.current_stream(device)

    @staticmethod
    def copy_on_stream(destination, source, stream):
        import torch  # pylint: disable=import-outside-toplevel

        with torch.cuda.stream(stream):
            destination.copy_(source, non_blocking=True)

    @staticmethod
    def record_event(stream):
        import torch  # pylint: disable=import-outside-toplevel

        event = torch.cuda.Event()
        event.record(stream)
        return event  # event.synchronize() waits for this event only


class StagedHandle:
    """A collective whose submission waits for its input's copy to host memory: wait() blocks until it
    has been submitted and has run; `inner` is libhvdrun's handle once submitted."""

    def __init__(self, what):
        self._what = what
        self._submitted = threading.Event()
        self._error = None
        self.inner = None

    def _set(self, inner, error):
        self.inner, self._error = inner, error
        self._submitted.set()

    def _submitted_inner(self):
        """libhvdrun's handle, once submitted; raises RuntimeError where the submission failed."""
        self._submitted.wait()
        if self._error is not None:
            raise RuntimeError("%s: %s" % (self._what, self._error))
        return self.inner

    def wait(self):
        self._submitted_inner().wait()

    def wait_on_stream(self, stream):
        """Blocks until it has been submitted, then completes libhvdrun's handle on the CUDA stream
        `stream` (wait_on_stream: device_rows.py's collectives in device memory)."""
        self._submitted_inner().wait_on_stream(stream)

    def ready(self):
        if not self._submitted.is_set():
            return False
        return self._error is not None or self.inner.ready()


class OrderedSubmitter:
    """Submits collectives from one thread of its own, each once what it waits for is ready, in the order
    submit_after was called; that thread waits for those only, never for a collective's completion.

    Thread safety: submit_after and drain may be called from any thread (autograd's hooks run on its
    device threads)."""

    def __init__(self, thread_name):
        self._thread_name = thread_name
        self._queue = queue.Queue()
        self._lock = threading.Lock()
        self._thread = None

    def submit_after(self, event, start, what):
        """Returns a StagedHandle; the submitter thread waits for `event` (its synchronize(); None:
        nothing to wait for), then calls start(), which submits the collective and returns libhvdrun's
        handle. An exception from either is raised by the handle's wait(), as "`what`: message"."""
        handle = StagedHandle(what)
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._submit_loop, name=self._thread_name, daemon=True)
                self._thread.start()
        self._queue.put((event, start, handle))
        return handle

    def drain(self):
        """Returns once every submission made so far has been made (for join and shutdown)."""
        if self._thread is not None:
            self._queue.join()

    def _submit_loop(self):
        while True:
            event, start, handle = self._queue.get()
            try:
                if event is not None:
                    event.synchronize()
                inner = start()
            except Exception as error:  # pylint: disable=broad-except  # handed to the waiter
                handle._set(None, str(error).splitlines()[0] if str(error) else type(error).__name__)
            else:
                handle._set(inner, None)
            finally:
                self._queue.task_done()


class HostStaging:
    """Stages device tensors through pinned host memory (see the module's documentation).

    Thread safety: every method may be called from any thread (autograd's hooks run on its device
    threads); submissions are made by one thread, in the order submit_after was called.
    """

    def __init__(self, ops=None):
        self._ops = ops if ops is not None else CudaOps()
        self._submitter = OrderedSubmitter("hvdrun-staging")

    def stage_in(self, tensor):
        """Queues a copy of the contiguous device tensor `tensor` to a new pinned host buffer on the
        current stream; returns (the buffer, the event recorded after the copy)."""
        host = self._ops.pinned_empty(tuple(tensor.shape), tensor.dtype)
        stream = self._ops.current_stream(tensor.device)
        self._ops.copy_on_stream(host, tensor, stream)
        return host, self._ops.record_event(stream)

    def host_buffer(self, shape, dtype):
        """A new pinned host buffer, for results that stage_out copies to the device."""
        return self._ops.pinned_empty(tuple(shape), dtype)

    def submit_after(self, event, start, what):
        """OrderedSubmitter.submit_after, on the staging thread: `event` is stage_in's."""
        return self._submitter.submit_after(event, start, what)

    def stage_out(self, host, output):
        """Queues the copy of `host` into the device tensor `output` on the current stream."""
        self._ops.copy_on_stream(output, host, self._ops.current_stream(output.device))

    def drain(self):
        """Returns once every submission made so far has been made (for shutdown)."""
        self._submitter.drain()
