"""scripts/gpu/torch_collectives.py, the GPU check's rows of hvdrun.torch, on the CPU: run by CTest under hvdrun
--gloo at 1 and 3 ranks.

    hvdrun -np 3 -H localhost:3 --gloo /usr/bin/python3 tests/python/torch_collectives_checks.py

CI has no GPU, so the script's rows run on CPU tensors only. Here they run three times: on the path CPU
tensors take (with the script's own expected paths), then on the device path (a --nccl job's CUDA tensors;
over the host runtime, which ignores streams) and on the staged path (through a host-memory stand-in for
the device), as tests/python/hvdrun_torch_checks.py takes them with CPU tensors. Every row must be "ok" on
every rank, except the refusals the script documents on the device path (wire compression; allgather and
alltoall in a process set other than the global one), and a row whose path is not the one expected must
fail. A failed check exits non-zero, so hvdrun fails.
"""

import importlib.util
import os
import sys

import torch

import hvdrun.torch as hvd
from hvdrun.torch import basics, placement, staging
from host_as_device import HostAsDevice

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "gpu", "torch_collectives.py")
spec = importlib.util.spec_from_file_location("torch_collectives", SCRIPT)
rows = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rows)

hvd.init(process_sets="dynamic")
torch.set_num_threads(1)  # the ranks share the machine's cores
rows.set_job(torch, hvd)
N = hvd.size()


def run(path, expected):
    """The script's rows, every rank's worst, with CPU tensors taking `path` (placement.HOST, DEVICE, STAGED)."""
    saved = basics.runtime, basics.host_staging, basics.host_tensors_take
    if path == placement.STAGED:
        basics.host_staging = staging.HostStaging(HostAsDevice())
    basics.host_tensors_take = path
    try:
        return rows.across_ranks(rows.run_checks(["cpu"], rows.PathRecorder(), expected))
    finally:
        basics.host_staging.drain()
        basics.runtime, basics.host_staging, basics.host_tensors_take = saved


def emulated(path):
    def expected(call, device):
        return "none" if call.startswith("DistributedOptimizer") and N == 1 else path
    return expected


REFUSED_ON_THE_DEVICE_PATH = {"allreduce fp8 wire compression"} | \
    ({"process sets: allgather, alltoall"} if N > 1 else set())


def all_rows_pass(calls):
    """The script's rows on the three paths: the failures, one line each."""
    failures = []
    for path, expected in ((placement.HOST, rows.expected_path), (placement.DEVICE, emulated("device")),
                           (placement.STAGED, emulated("staged"))):
        results = run(path, expected)
        if [r["call"] for r in results] != calls:
            failures.append("%s path: rows %r, expected one for each of %r" % (path, [r["call"] for r in results],
                                                                               calls))
        for r in results:
            want = "refused" if path == placement.DEVICE and r["call"] in REFUSED_ON_THE_DEVICE_PATH else "ok"
            if r["result"] != want or (want == "refused" and not r["detail"].startswith("hvdrun.torch")):
                failures.append("%s path: %s is %s (%s), expected %s" % (path, r["call"], r["result"], r["detail"],
                                                                         want))
    return failures


def wrong_path_fails():
    """A path other than the expected one fails the row, its result right or not."""
    everything = rows.CHECKS
    rows.CHECKS = [check for check in everything if check[0] == "allreduce sum"]
    try:
        wrong = run(placement.HOST, lambda call, device: "staged")
    finally:
        rows.CHECKS = everything
    if [(r["result"], r["detail"]) for r in wrong] != [("failed", "path host, expected staged")]:
        return ["a wrong path passed: %r" % wrong]
    return []


def main():
    calls = [call for call, _ in rows.CHECKS]
    failures = [] if len(set(calls)) == len(calls) else ["the script's calls are not unique: %r" % calls]
    failures += all_rows_pass(calls) + wrong_path_fails()
    if failures:
        sys.stderr.write("torch_collectives_checks: rank %d of %d:\n  %s\n" % (hvd.rank(), N, "\n  ".join(failures)))
        sys.exit(1)
    if hvd.rank() == 0:
        print("torch_collectives_checks: %d rows on 3 paths at %d ranks passed" % (len(calls), N))
    hvd.shutdown()


main()
