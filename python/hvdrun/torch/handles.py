"""The handles of asynchronous collectives (synchronize, poll) and the names collectives are matched by.

An asynchronous call returns an integer handle; synchronize(handle) completes it and returns the result,
poll(handle) says whether it has run. Until then the tensors a call reads and writes are held here
and must not be written by the caller (libhvdrun reads and writes them from its own thread). On the
DEVICE path synchronize completes the call on the caller's current CUDA stream, not on the host, and the
tensors stay held until the call has run (completion.py); HOST and STAGED calls are waited for on the host.

Names: a collective is matched across ranks by its name (libhvdrun negotiates named collectives,
so ranks may submit them in any order). A call without a name gets "<kind>.noname.<n>", n counting
this process's unnamed calls of that kind: every rank must then make its unnamed calls of a kind in
the same order, as with Horovod. A caller-given name is held from submission until its collective has
run; submitting another collective of that name meanwhile is a ValueError, as in Horovod.
"""

import itertools
import threading

from hvdrun.torch import basics

# Registered handles by number, and the counters of handles and of each kind's unnamed calls.
_lock = threading.Lock()
_pending = {}
_handle_numbers = itertools.count()
_noname_numbers = {}


def auto_name(kind, name, process_set_id=0):
    """`name`, or the next of this rank's unnamed names of `kind` in the process set (counted per set, since
    only its members make its calls)."""
    if name is not None:
        return str(name)
    with _lock:
        counter = _noname_numbers.setdefault((kind, process_set_id), itertools.count())
        if process_set_id:  # apart from the other sets' in this rank's name space (check_name_free)
            return "%s.noname.set%d.%d" % (kind, process_set_id, next(counter))
        return "%s.noname.%d" % (kind, next(counter))


def staged_name(kind, name, process_set_id=0):
    """The name of a collective on a CUDA tensor: its own, or one of this process's unnamed ones of that
    kind. Staged collectives are submitted from the staging thread, so they cannot be named by their
    place in libhvdrun's sequence of unnamed calls."""
    return auto_name(kind + ".staged", name, process_set_id)


class Pending:
    __slots__ = ("handle", "output", "keep", "finish", "names", "device")

    def __init__(self, handle, output, keep, finish, names=(), device=None):
        self.handle = handle
        self.output = output
        self.keep = keep  # tensors libhvdrun reads or writes until the handle completes
        self.finish = finish  # run after the wait: scaling, copying back; returns the result
        self.names = names  # the names the caller gave it (see check_name_free)
        self.device = device  # on the DEVICE path, the torch.device whose current stream completes it


def group_device(pendings):
    """The Pending.device of a group of calls: any member's on the DEVICE path (its other members, of CPU
    tensors over the host runtime, complete on the host whatever the stream), else None."""
    return next((p.device for p in pendings if p.device is not None), None)


# The caller-given names of this rank's registered collectives that have not been synchronized, and
# their Pending: libhvdrun matches collectives across ranks by name, one name space for every kind.
_named = {}


def check_name_free(call, name):
    """Raises ValueError, as Horovod at submission, where `name` (None: an unnamed call, always free) is
    the name of a collective of this rank that has not completed."""
    if name is None:
        return
    with _lock:
        holder = _named.get(str(name))
    if holder is not None and not holder.handle.ready():
        raise ValueError("hvdrun.torch.%s: rank %d already has a pending collective named '%s' (not yet run); as "
                         "with Horovod, a name can be used again once that one has completed"
                         % (call, basics.runtime.rank(), name))


def register(pending):
    basics.completion.in_flight.release_ready()
    with _lock:
        number = next(_handle_numbers)
        _pending[number] = pending
        for name in pending.names:
            _named[name] = pending
    return number


def given(name):
    """The names a collective named `name` (None: unnamed) holds until it is synchronized."""
    return () if name is None else (str(name),)


def release(pending):
    with _lock:
        for name in pending.names:
            if _named.get(name) is pending:
                del _named[name]


def poll(handle):
    """Whether the asynchronous collective `handle` has run (synchronize will not wait)."""
    if callable(handle):  # sparse_allreduce_async's
        return handle.ready()
    with _lock:
        pending = _pending.get(handle)
    if pending is None:
        raise ValueError("hvdrun.torch.poll: unknown handle %r (already synchronized?)" % (handle,))
    basics.completion.in_flight.release_ready()
    return pending.handle.ready()


def wait(handle, stream=None):
    """Waits for a libhvdrun handle on the host, or with `stream` (a cudaStream_t as an int) until the
    stream has been made to wait for it (wait_on_stream); its failure is raised as HorovodInternalError,
    as Horovod's."""
    try:
        if stream is None:
            handle.wait()
        else:
            handle.wait_on_stream(stream)
    except basics.HorovodInternalError:
        raise
    except RuntimeError as error:
        raise basics.HorovodInternalError(str(error)) from None


def complete(handle, keep, finish, device):
    """Completes a call (libhvdrun's `handle`, the tensors `keep` it reads and writes) and returns finish():
    on the current stream of `device` (on the DEVICE path; completion.py), else on the host."""
    if device is None:
        wait(handle)
    else:
        basics.completion.complete(handle, keep, device, wait)
    result = finish()
    basics.completion.in_flight.release_ready()
    return result


def synchronize(handle):
    """Completes the asynchronous collective `handle` and returns its result tensor: on the DEVICE path, on
    the current stream of the tensor's device (work queued there afterwards sees the result); otherwise
    after a wait on the host."""
    if callable(handle):  # sparse_allreduce_async's
        return handle()
    with _lock:
        pending = _pending.pop(handle, None)
    if pending is None:
        raise ValueError("hvdrun.torch.synchronize: unknown handle %r (already synchronized?)" % (handle,))
    try:
        return complete(pending.handle, pending.keep, pending.finish, pending.device)
    finally:
        release(pending)


class HandleGroup:
    """Several libhvdrun handles that complete together, as one."""

    def __init__(self, handles):
        self.handles = handles

    def wait(self):
        for handle in self.handles:
            handle.wait()

    def wait_on_stream(self, stream):
        for handle in self.handles:
            handle.wait_on_stream(stream)

    def ready(self):
        return all(handle.ready() for handle in self.handles)
