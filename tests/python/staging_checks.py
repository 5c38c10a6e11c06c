"""Checks hvdrun.torch's host staging of device tensors (python/hvdrun/torch/staging.py) on the CPU.

    PYTHONPATH=build/python python3 tests/python/staging_checks.py

The device is a fake (FakeOps): its streams and events record what was asked of them, and an event's
synchronize() blocks until the check releases it, so that the order the staging promises is observable
without a GPU: the copy to host memory is queued on the caller's current stream and followed by an
event; the collective is submitted only once that event has completed, and never after a device-wide
synchronize (FakeOps has none to call); submissions keep their order; the result is copied back on the
stream current when the caller synchronizes. A failed check raises; each check is bounded by timeouts.
"""

import sys
import threading
import time

import torch

from hvdrun.torch.staging import HostStaging

TIMEOUT = 10.0


class FakeEvent:
    def __init__(self, log, stream):
        self.log, self.stream = log, stream
        self.released = threading.Event()
        self.waited = False

    def synchronize(self):
        if not self.released.wait(TIMEOUT):
            raise AssertionError("an event was never released")
        self.waited = True
        self.log.append(("event waited", self.stream))


class FakeOps:
    """A device with named streams; tensors are CPU tensors, 'pinned' ones are marked."""

    def __init__(self):
        self.log = []
        self.stream = "default"
        self.events = []
        self.pinned = []

    def pinned_empty(self, shape, dtype):
        tensor = torch.empty(shape, dtype=dtype)
        self.pinned.append(tensor)
        self.log.append(("pinned", tuple(shape), dtype))
        return tensor

    def current_stream(self, device):
        return self.stream

    def copy_on_stream(self, destination, source, stream):
        destination.copy_(source)
        self.log.append(("copy", stream))

    def record_event(self, stream):
        event = FakeEvent(self.log, stream)
        self.events.append(event)
        self.log.append(("event recorded", stream))
        return event


class FakeHandle:
    def __init__(self, log, label):
        self.log, self.label = log, label
        self.done = False

    def wait(self):
        self.log.append(("inner waited", self.label))
        self.done = True

    def ready(self):
        return self.done


def eventually(condition, what):
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.001)


def copy_in_is_queued_on_the_current_stream_then_an_event():
    ops = FakeOps()
    staging = HostStaging(ops)
    ops.stream = "caller's stream"
    source = torch.arange(6, dtype=torch.float32).view(2, 3)
    host, event = staging.stage_in(source)
    assert ops.log == [("pinned", (2, 3), torch.float32), ("copy", "caller's stream"),
                       ("event recorded", "caller's stream")], ops.log
    assert host is ops.pinned[0] and torch.equal(host, source) and event is ops.events[0]
    assert not event.waited, "stage_in waited for its copy"


def submission_waits_for_the_event_only():
    ops = FakeOps()
    staging = HostStaging(ops)
    host, event = staging.stage_in(torch.ones(4))
    started = []

    def start():
        started.append(event.waited)
        return FakeHandle(ops.log, "first")

    handle = staging.submit_after(event, start, "hvdrun.torch.allreduce('x')")
    time.sleep(0.05)
    assert not started and not handle.ready(), "submitted before its copy completed"
    event.released.set()
    handle.wait()
    assert started == [True], started
    assert handle.ready() and handle.inner.done
    assert ops.log[-2:] == [("event waited", "default"), ("inner waited", "first")], ops.log


def submissions_keep_their_order():
    ops = FakeOps()
    staging = HostStaging(ops)
    order = []
    handles = []
    for label in ("a", "b", "c"):
        _, event = staging.stage_in(torch.zeros(1))
        handles.append(staging.submit_after(event, lambda label=label: order.append(label) or FakeHandle([], label),
                                            label))
    # Copies completing in reverse order do not reorder the submissions.
    for event in reversed(ops.events):
        event.released.set()
    for handle in handles:
        handle.wait()
    assert order == ["a", "b", "c"], order
    # A submission with no event to wait for (host memory) runs in its turn too.
    handle = staging.submit_after(None, lambda: order.append("host") or FakeHandle([], "host"), "host")
    handle.wait()
    assert order[-1] == "host"


def a_failed_submission_raises_one_line_naming_the_call():
    ops = FakeOps()
    staging = HostStaging(ops)

    def start():
        raise RuntimeError("libhvdrun: rank 1 is gone\nsecond line")

    handle = staging.submit_after(None, start, "hvdrun.torch.broadcast('w')")
    eventually(handle.ready, "the failed submission")
    try:
        handle.wait()
    except RuntimeError as error:
        assert str(error) == "hvdrun.torch.broadcast('w'): libhvdrun: rank 1 is gone", str(error)
    else:
        raise AssertionError("a failed submission did not raise")
    # The staging thread goes on with later submissions.
    later = staging.submit_after(None, lambda: FakeHandle([], "later"), "later")
    later.wait()


def copy_out_uses_the_stream_current_at_synchronize():
    ops = FakeOps()
    staging = HostStaging(ops)
    host = staging.host_buffer((3,), torch.int64)
    host.copy_(torch.tensor([4, 5, 6]))
    assert ops.log[0] == ("pinned", (3,), torch.int64)
    ops.stream = "stream at synchronize"
    output = torch.zeros(3, dtype=torch.int64)
    staging.stage_out(host, output)
    assert ops.log[-1] == ("copy", "stream at synchronize") and torch.equal(output, torch.tensor([4, 5, 6]))


def drain_returns_once_everything_is_submitted():
    ops = FakeOps()
    staging = HostStaging(ops)
    staging.drain()  # nothing submitted: returns at once
    _, event = staging.stage_in(torch.zeros(1))
    submitted = []
    staging.submit_after(event, lambda: submitted.append(1) or FakeHandle([], "x"), "x")
    threading.Timer(0.05, event.released.set).start()
    staging.drain()
    assert submitted == [1]


CHECKS = [copy_in_is_queued_on_the_current_stream_then_an_event, submission_waits_for_the_event_only,
          submissions_keep_their_order, a_failed_submission_raises_one_line_naming_the_call,
          copy_out_uses_the_stream_current_at_synchronize, drain_returns_once_everything_is_submitted]

for check in CHECKS:
    check()
    print("ok " + check.__name__, flush=True)
sys.exit(0)
