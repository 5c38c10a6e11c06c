"""Checks how hvdrun.torch's synchronize completes a collective (python/hvdrun/torch/completion.py) on the CPU.

    PYTHONPATH=build/python python3 tests/python/completion_checks.py

The device is a fake (FakeStreams): its current stream is a name, record_stream is logged, and libhvdrun's
handles are fakes that log wait() and wait_on_stream(stream) and become ready when the check says so. So
the contract is observable without a GPU: a DEVICE-path call (Pending.device set) is completed by
wait_on_stream with the current stream's address, never by a host wait, and its finish runs after that;
every tensor it keeps is recorded on that stream and stays referenced until the handle is ready on the
host, then is let go; HOST-path calls, and every call with HOROVOD_ENABLE_ASYNC_COMPLETION=0, wait on the
host; shutdown waits for what is still held. No job: hvdrun.torch's handles over fakes. A failed check
raises.
"""

import gc
import sys
import threading
import weakref

import torch

from hvdrun.torch import basics, completion, handles, staging

CUDA = torch.device("cuda", 0)  # a device object only: nothing runs on it


class FakeStream:
    def __init__(self, name, address):
        self.name, self.cuda_stream = name, address

    def __repr__(self):
        return self.name


class FakeStreams:
    """The current stream of a CUDA device is `self.stream`; CPU devices have none, as CudaStreams."""

    def __init__(self, log):
        self.log = log
        self.stream = FakeStream("caller's stream", 0x5eed)

    def current(self, device):
        return self.stream if device.type == "cuda" else None

    @staticmethod
    def address(stream):
        return completion.CudaStreams.address(stream)

    def record(self, tensor, stream):
        self.log.append(("record", id(tensor), stream.name))


class FakeHandle:
    """libhvdrun's handle: logs its waits; ready() once the check calls run() (or after a host wait)."""

    def __init__(self, log, label, fail=None):
        self.log, self.label, self.fail = log, label, fail
        self.done = False

    def run(self):
        self.done = True

    def wait(self):
        self.log.append(("wait", self.label))
        self.done = True
        if self.fail:
            raise RuntimeError(self.fail)

    def wait_on_stream(self, stream):
        self.log.append(("wait_on_stream", self.label, stream))
        if self.fail:
            raise RuntimeError(self.fail)

    def ready(self):
        return self.done


def fresh(on_stream=True):
    """A StreamCompletion over a fake device in basics (what handles.py reads), and the log they share."""
    log = []
    basics.completion = completion.StreamCompletion(FakeStreams(log), on_stream)
    return log


def start(log, label, device, keep=None, fail=None):
    """A registered call with a fake handle; finish logs and returns 'result <label>'."""
    handle = FakeHandle(log, label, fail)
    kept = keep if keep is not None else [torch.ones(2), (torch.zeros(1), "not a tensor")]

    def finish():
        log.append(("finish", label))
        return "result " + label

    return handles.register(handles.Pending(handle, None, kept, finish, (), device)), handle


def device_path_completes_on_the_current_stream():
    log = fresh()
    number, handle = start(log, "a", CUDA)
    assert handles.synchronize(number) == "result a"
    assert ("wait", "a") not in log, log
    tensors = [entry for entry in log if entry[0] == "record"]
    assert log[0] == ("wait_on_stream", "a", 0x5eed) and log[-1] == ("finish", "a"), log
    assert len(tensors) == 2 and all(entry[2] == "caller's stream" for entry in tensors), log
    # The stream current when synchronize is called, not when the call was made.
    number, handle = start(log, "b", CUDA)
    basics.completion.streams.stream = FakeStream("another stream", 0xbeef)
    before = len(log)
    handles.synchronize(number)
    assert log[before] == ("wait_on_stream", "b", 0xbeef), log[before:]
    assert [entry[2] for entry in log[before + 1:-1]] == ["another stream"] * 2, log[before:]


def kept_tensors_live_until_the_handle_is_ready():
    log = fresh()
    kept = torch.ones(3)
    alive = weakref.ref(kept)
    number, handle = start(log, "a", CUDA, keep=(kept,))
    del kept
    handles.synchronize(number)
    gc.collect()
    assert alive() is not None and len(basics.completion.in_flight) == 1, "let go before the handle was ready"
    other, _ = start(log, "b", None)  # a submission lets go of the ready ones only
    assert alive() is not None, "let go before the handle was ready"
    handle.run()
    handles.poll(other)  # as does a poll
    gc.collect()
    assert alive() is None and len(basics.completion.in_flight) == 0, "still held once the handle was ready"
    handles.synchronize(other)
    # A handle already ready when synchronized holds nothing; the oldest held goes first.
    first, first_handle = start(log, "c", CUDA)
    second, second_handle = start(log, "d", CUDA)
    handles.synchronize(first)
    handles.synchronize(second)
    second_handle.run()
    basics.completion.in_flight.release_ready()
    assert len(basics.completion.in_flight) == 2, "a later call let go before an earlier one"
    first_handle.run()
    basics.completion.in_flight.release_ready()
    assert len(basics.completion.in_flight) == 0


def host_path_and_switch_off_wait_on_the_host():
    log = fresh()
    number, _ = start(log, "host", None)
    handles.synchronize(number)
    assert log == [("wait", "host"), ("finish", "host")], log
    log = fresh(on_stream=False)
    number, _ = start(log, "off", CUDA)
    handles.synchronize(number)
    assert [entry for entry in log if entry[0] != "record"] == [("wait", "off"), ("finish", "off")], log
    assert len([entry for entry in log if entry[0] == "record"]) == 2, "finish reads the tensors on the stream"
    assert len(basics.completion.in_flight) == 0
    assert completion.stream_completion_from({}) is True
    assert completion.stream_completion_from({"HOROVOD_ENABLE_ASYNC_COMPLETION": "1"}) is True
    assert completion.stream_completion_from({"HOROVOD_ENABLE_ASYNC_COMPLETION": "0"}) is False
    try:
        completion.stream_completion_from({"HOROVOD_ENABLE_ASYNC_COMPLETION": "yes"})
    except ValueError as error:
        assert "HOROVOD_ENABLE_ASYNC_COMPLETION='yes': use 1" in str(error) and "\n" not in str(error), error
    else:
        raise AssertionError("HOROVOD_ENABLE_ASYNC_COMPLETION=yes accepted")


def a_cpu_device_passes_no_stream():
    # Tests take the DEVICE path with CPU tensors over the host runtime: stream 0, nothing recorded.
    log = fresh()
    number, _ = start(log, "cpu", torch.device("cpu"))
    handles.synchronize(number)
    assert log == [("wait_on_stream", "cpu", 0), ("finish", "cpu")], log


def a_failure_is_horovod_internal_error_and_frees_the_name():
    log = fresh()
    handle = FakeHandle(log, "bad", fail="libhvdrun: rank 1 is gone")
    number = handles.register(handles.Pending(handle, None, (), lambda: "never", ("bad.name",), CUDA))
    try:
        handles.synchronize(number)
    except basics.HorovodInternalError as error:
        assert str(error) == "libhvdrun: rank 1 is gone", error
    else:
        raise AssertionError("a failed wait_on_stream did not raise")
    handles.check_name_free("allreduce", "bad.name")  # released: no ValueError
    assert ("finish",) not in [entry[:1] for entry in log], log


def composite_handles_wait_on_the_stream():
    log = []
    group = handles.HandleGroup([FakeHandle(log, "x"), FakeHandle(log, "y")])
    group.wait_on_stream(7)
    assert log == [("wait_on_stream", "x", 7), ("wait_on_stream", "y", 7)], log
    submitter = staging.OrderedSubmitter("completion-checks")
    release = threading.Event()
    staged = submitter.submit_after(None, lambda: release.wait(10) and FakeHandle(log, "z"), "z")
    threading.Timer(0.05, release.set).start()
    staged.wait_on_stream(9)  # waits for the submission on the host, then on the stream
    assert log[-1] == ("wait_on_stream", "z", 9) and not staged.ready(), log


def shutdown_waits_for_what_is_held():
    log = fresh()
    numbers = [start(log, label, CUDA)[0] for label in ("p", "q")]
    for number in numbers:
        handles.synchronize(number)
    assert len(basics.completion.in_flight) == 2
    basics.completion.in_flight.wait_all()
    assert len(basics.completion.in_flight) == 0
    assert [entry for entry in log if entry[0] == "wait"] == [("wait", "p"), ("wait", "q")], log


CHECKS = [device_path_completes_on_the_current_stream, kept_tensors_live_until_the_handle_is_ready,
          host_path_and_switch_off_wait_on_the_host, a_cpu_device_passes_no_stream,
          a_failure_is_horovod_internal_error_and_frees_the_name, composite_handles_wait_on_the_stream,
          shutdown_waits_for_what_is_held]

saved = basics.completion
try:
    for check in CHECKS:
        check()
        print("ok " + check.__name__, flush=True)
finally:
    basics.completion = saved
sys.exit(0)
