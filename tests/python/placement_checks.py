"""Checks where hvdrun.torch runs a tensor's collective (python/hvdrun/torch/placement.py), on the CPU.

    PYTHONPATH=build/python python3 tests/python/placement_checks.py

torch.device objects of CUDA devices need no GPU, so every choice placement makes (the host runtime,
NCCL in device memory, pinned host memory) and its refusals are checked here; tests/python/
hvdrun_torch_checks.py runs each path's collectives with CPU tensors, scripts/gpu/torch_collectives.py
on a GPU. A failed check raises.
"""

import sys

import torch

from hvdrun.torch import placement

CPU, CUDA0, CUDA1 = torch.device("cpu"), torch.device("cuda", 0), torch.device("cuda", 1)


def expect_error(function, *args):
    try:
        function(*args)
    except ValueError as error:
        return str(error)
    raise AssertionError("%s%r did not raise ValueError" % (function.__name__, args))


CALLS = ("allreduce", "broadcast", "allgather", "alltoall")


def cpu_tensors_go_to_the_host_runtime():
    for device_runtime in (False, True):
        for call in CALLS:
            assert placement.choose(call, CPU, device_runtime, 1) == placement.HOST


def cuda_tensors_without_a_device_runtime_are_staged():
    # --gloo and --mpi: any CUDA device, every call.
    for device in (CUDA0, CUDA1, torch.device("cuda")):
        for call in CALLS:
            assert placement.choose(call, device, False, 0) == placement.STAGED


def cuda_tensors_of_the_rank_device_go_to_nccl():
    # Every call, allgather and alltoall (rows padded to equal blocks in device memory) included.
    for call in CALLS:
        assert placement.choose(call, CUDA1, True, 1) == placement.DEVICE
        assert placement.choose(call, torch.device("cuda"), True, 0) == placement.DEVICE


def another_device_is_refused_in_one_line_naming_both():
    for call in CALLS:
        message = expect_error(placement.choose, call, CUDA1, True, 0)
        assert message.startswith("hvdrun.torch.%s: the tensor is on cuda:1, but this rank's device is cuda:0" % call)
        assert "tensor.to('cuda:0')" in message and "\n" not in message, message


def the_rank_device_is_the_local_rank_modulo_the_devices():
    assert [placement.rank_device(local, 2) for local in range(5)] == [0, 1, 0, 1, 0]
    assert placement.rank_device(3, 8) == 3


def wire_compression_is_refused_on_the_device_path():
    placement.refuse_wire_compression("allreduce", "grad.w", None)
    placement.refuse_wire_compression("allreduce", "grad.w", "")
    message = expect_error(placement.refuse_wire_compression, "allreduce", "grad.w", "fp8-e4m3")
    assert message.startswith("hvdrun.torch.allreduce('grad.w'): fp8-e4m3 compression converts values in host memory")
    assert "hvd.Compression.fp16" in message and "--gloo or --mpi" in message and "\n" not in message, message


def cpu_devices_have_no_stream():
    assert placement.current_stream(CPU) == 0


CHECKS = [cpu_tensors_go_to_the_host_runtime, cuda_tensors_without_a_device_runtime_are_staged,
          cuda_tensors_of_the_rank_device_go_to_nccl, another_device_is_refused_in_one_line_naming_both,
          the_rank_device_is_the_local_rank_modulo_the_devices, wire_compression_is_refused_on_the_device_path,
          cpu_devices_have_no_stream]

for check in CHECKS:
    check()
    print("ok " + check.__name__, flush=True)
sys.exit(0)
