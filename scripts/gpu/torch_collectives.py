"""hvdrun.torch's collectives on CPU and CUDA tensors, for scripts/gpu-check.sh.

usage: hvdrun -np N [--gloo|--nccl] python3 torch_collectives.py --json FILE

Each rank runs allreduce (sum, average, min/max and average of integers, fp16 compression, a strided
tensor, async with poll), broadcast, allgather (equal and differing first dimensions, named ones in any
order, on a side stream), grouped allreduce, alltoall with splits (uneven, zero included), SyncBatchNorm's
synchronized function against torch's BatchNorm, an allreduce on a side stream, broadcast_parameters and
broadcast_optimizer_state of a model and Adam, DistributedOptimizer with groups and fp16 compression
against the optimizer alone, join, libhvdrun's wire compression, reducescatter (uneven, grouped), grouped
allgather (and async), broadcast_ and the async broadcasts, hvd.Product (grouped too), prescale and
postscale factors (allreduce, grouped allreduce, reducescatter), synchronize completing on the caller's
current stream under --nccl (its handle waited for on that stream, not on the host; the result checked
after that stream's synchronize()), sparse_allreduce_async, DistributedOptimizer
with an embedding's sparse gradients (and sparse_as_dense), process sets (each rank's half of the job,
added and removed: allreduce, grouped allreduce, broadcast, reducescatter, barrier; allgather and alltoall;
at one rank the global set, the only one there) and the gradients of the differentiable calls (allreduce,
allgather, broadcast, alltoall, reducescatter), on tensors of every device torch has (cpu, and the rank's
CUDA device where CUDA is available) and checks the results (exact, or within float32 rounding for
SyncBatchNorm, fp16, the optimizers and a sparse average). Rank 0 writes a list of {"call", "device",
"result": "ok" | "refused" | "failed", "detail"}, each row the worst any rank had (its detail that
rank's, "rank k: " before it for a rank other than 0): "refused" is hvdrun.torch's own one-line refusal
(of a device it does not take, of the job's backend, of wire compression of a CUDA tensor under --nccl,
of allgather and alltoall of CUDA tensors in a process set other than the global one under --nccl), whose
message begins with "hvdrun.torch"; "failed" anything else, a wrong result included. Each row's detail
names the path its tensors took (placement.py): "host" (CPU tensors), "device" (CUDA tensors in device
memory over NCCL: every call under --nccl, allgather's and alltoall's exchange of row counts over Gloo
included), "staged" (through pinned host memory: CUDA tensors under --gloo), or both, as seen by
hvdrun._C's submissions (a stream given) and the staging's copies; a path other than expected fails the
row. A refused init is one row.
"""
import argparse
import json
import os
import sys
import threading

# The checks, beside this file (also where a test loads this file by its path).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_calls as calls  # noqa: E402 pylint: disable=wrong-import-position
import torch_training_calls as training_calls  # noqa: E402 pylint: disable=wrong-import-position


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", required=True)
    args = parser.parse_args()

    import torch  # pylint: disable=import-outside-toplevel,redefined-outer-name
    import hvdrun.torch as hvd  # pylint: disable=import-outside-toplevel,redefined-outer-name

    try:
        hvd.init(process_sets="dynamic")  # the process-set rows add and remove sets
    except Exception as e:  # noqa: BLE001 - reported as a row, not raised
        write(args.json, [{"call": "init", "device": "-", "result": classify(e), "detail": first_line(e)}])
        return
    set_job(torch, hvd)
    devices = ["cpu"]
    if torch.cuda.is_available():
        devices.append(f"cuda:{hvd.local_rank() % torch.cuda.device_count()}")
    results = across_ranks(run_checks(devices, PathRecorder(), expected_path))
    if rank == 0:
        write(args.json, results)
    hvd.shutdown()


def run_checks(devices, paths, expected):
    """The rows of every check on each of `devices`: its result and the path `paths` (a PathRecorder) saw,
    which must be expected(call, device)."""
    results = []
    for device in devices:
        for call, body in CHECKS:
            paths.reset()
            try:
                right = body(device)
                taken, want = paths.taken(), expected(call, device)
                if right and taken != want:
                    results.append({"call": call, "device": device, "result": "failed",
                                    "detail": "path %s, expected %s" % (taken, want)})
                else:
                    results.append({"call": call, "device": device, "result": "ok" if right else "failed",
                                    "detail": "path " + taken + ("" if right else "; wrong result")})
            except Exception as e:  # noqa: BLE001 - every failure is reported, not raised
                results.append({"call": call, "device": device, "result": classify(e),
                                "detail": first_line(e) + "; path " + paths.taken()})
    return results


def across_ranks(results):
    """Every rank's rows as one list (each rank's own view of a call may differ: its part of the results, its
    process set): each row the worst of any rank's (failed, then refused, then ok), with the detail of the
    first rank that had it, prefixed "rank k: " for a rank other than 0. This rank's own rows, and a failed row,
    where the rows cannot be gathered (a runtime broken by a failed collective)."""
    try:
        everyone = hvd.allgather_object(results)
    except Exception as e:  # noqa: BLE001 - reported as a row, not raised
        return results + [{"call": "every rank's rows", "device": "-", "result": "failed", "detail": first_line(e)}]
    if len({len(rows) for rows in everyone}) != 1:
        return results + [{"call": "every rank's rows", "device": "-", "result": "failed",
                           "detail": "the ranks made %s rows" % [len(rows) for rows in everyone]}]
    merged = []
    for rows in zip(*everyone):
        for result in ("failed", "refused", "ok"):
            where = [k for k, row in enumerate(rows) if row["result"] == result]
            if where:
                row = dict(rows[where[0]])
                if where[0]:
                    row["detail"] = "rank %d: %s" % (where[0], row["detail"])
                merged.append(row)
                break
    return merged


# The job the checks below run in, set by set_job once hvdrun.torch is initialized: the modules are
# imported then (an import failure is reported as a row), and every check reads them as module names.
torch = hvd = None
rank, size, device_runtime = 0, 1, False


def set_job(torch_module, hvd_module):
    global torch, hvd, rank, size, device_runtime  # pylint: disable=global-statement
    torch, hvd = torch_module, hvd_module
    rank, size = hvd.rank(), hvd.size()
    device_runtime = hvd.backend() == "nccl"
    for module in (calls, training_calls):
        module.torch, module.hvd = torch, hvd
        module.rank, module.size, module.device_runtime = rank, size, device_runtime


def expected_path(call, device):
    """The path a check's tensors take in this job (see PathRecorder)."""
    if call.startswith("DistributedOptimizer") and size == 1:
        return "none"  # at one rank the optimizer makes no collective, as Horovod's
    if not device.startswith("cuda"):
        return "host"
    path = "device" if device_runtime else "staged"
    if call.startswith("broadcast_parameters"):
        path += "+host"  # broadcast_optimizer_state's layout (broadcast_object) and Adam's step are CPU tensors
    return path


CHECKS = [("allreduce sum", calls.allreduce_sum), ("allreduce average", calls.allreduce_average),
          ("allreduce min, max, uint8, int64 average", calls.allreduce_integers),
          ("allreduce fp16 compression", calls.allreduce_fp16_compression),
          ("allreduce_ of a strided tensor", calls.allreduce_strided_in_place),
          ("allreduce_async_ and poll", calls.allreduce_async_poll),
          ("broadcast", calls.broadcast), ("allgather", calls.allgather),
          ("allgather of differing first dimensions, in any order", calls.allgather_uneven),
          ("allgather on a side stream", calls.allgather_side_stream), ("broadcast bool", calls.broadcast_bool),
          ("allgather of 3-byte rows", calls.allgather_odd_bytes), ("grouped allreduce", calls.grouped),
          ("alltoall with splits", calls.alltoall_splits), ("SyncBatchNorm", calls.sync_batch_norm),
          ("allreduce on a side stream", calls.side_stream),
          ("synchronize on the caller's stream, checked after its synchronize()", calls.synchronize_on_the_stream),
          ("broadcast_parameters, broadcast_optimizer_state", training_calls.parameters_and_optimizer_state),
          ("DistributedOptimizer, groups=2, fp16", training_calls.distributed_optimizer),
          ("join", training_calls.join_after_work),
          ("allreduce fp8 wire compression", training_calls.wire_compression),
          ("reducescatter of even and uneven first dimensions, grouped", training_calls.reducescatter_uneven),
          ("grouped allgather, async", training_calls.grouped_allgather),
          ("broadcast_, broadcast_async, broadcast_async_", training_calls.broadcast_forms),
          ("allreduce Product, grouped", training_calls.allreduce_product),
          ("prescale and postscale factors: allreduce, grouped, reducescatter", training_calls.scale_factors),
          ("sparse_allreduce_async", training_calls.sparse_allreduce),
          ("DistributedOptimizer, sparse gradients, sparse_as_dense", training_calls.sparse_distributed_optimizer),
          ("process sets: allreduce, grouped, broadcast, reducescatter, barrier",
           training_calls.process_set_collectives),
          ("process sets: allgather, alltoall", training_calls.process_set_rows),
          ("gradients of allreduce, allgather, broadcast, alltoall, reducescatter", training_calls.gradients)]


class PathRecorder:
    """Which paths hvdrun.torch's submissions took (placement.py): hvdrun._C's collectives given a stream
    went to the device runtime; those without one to the host runtime, from the staging thread when
    their tensor was staged (a copy to pinned memory). The exchange of row counts that comes before a
    device allgather or alltoall (named with device_rows.EXCHANGE_SUFFIXES) is part of the device path."""

    def __init__(self):
        from hvdrun.torch import basics, device_rows  # pylint: disable=import-outside-toplevel

        self.seen = set()
        real_c, real_stage_in = basics.runtime, basics.host_staging.stage_in
        recorder = self

        class RecordingC:
            def __getattr__(self, attribute):
                function = getattr(real_c, attribute)
                if not attribute.endswith("_async"):
                    return function

                def recorded(*args, **kwargs):
                    if kwargs.get("stream") is None and str(args[0]).endswith(device_rows.EXCHANGE_SUFFIXES):
                        return function(*args, **kwargs)
                    recorder.seen.add("device" if kwargs.get("stream") is not None else
                                      "staged" if threading.current_thread().name == "hvdrun-staging" else "host")
                    return function(*args, **kwargs)

                return recorded

        def stage_in(tensor):
            recorder.seen.add("staged")
            return real_stage_in(tensor)

        basics.runtime = RecordingC()
        basics.host_staging.stage_in = stage_in

    def reset(self):
        self.seen = set()

    def taken(self):
        """The paths seen since reset(), "+"-joined in the order device, staged, host; "none" if no
        submission was made (a job of one rank without hvdrun)."""
        return "+".join(path for path in ("device", "staged", "host") if path in self.seen) or "none"


def first_line(error):
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def classify(error):
    """ "refused": hvdrun.torch's own one-line refusal, which names the call (its messages begin
    with "hvdrun.torch"); "failed": anything else."""
    return "refused" if first_line(error).startswith("hvdrun.torch") else "failed"


def write(path, rows):
    with open(path + ".tmp", "w") as f:
        json.dump(rows, f)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
