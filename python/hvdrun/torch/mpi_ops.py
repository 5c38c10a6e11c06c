"""Horovod's collectives on CPU and CUDA tensors, over hvdrun._C (libhvdrun): the names of
horovod.torch.mpi_ops, gathered from the modules that hold them.

    basics.py         reduction operations, refusals, process-set arguments, tensor checks, where a
                      tensor's collective runs (placement.py); barrier and join
    handles.py        asynchronous handles (synchronize, poll) and the names collectives are matched by
    allreduce_ops.py  allreduce and grouped_allreduce, with Horovod's prescale and postscale factors
    broadcast_ops.py  broadcast
    row_ops.py        allgather, grouped_allgather and alltoall
    reducescatter_ops.py  reducescatter and grouped_reducescatter
    sparse.py         Horovod's sparse allreduce, over allgathers

Where each tensor goes (placement.py): CPU tensors to the host runtime; in a --nccl job, CUDA tensors of
the rank's device in device memory to the NCCL runtime, read after the caller's current stream
(allgather's and alltoall's rows padded to equal blocks there, device_rows.py); other CUDA tensors (every
backend's but NCCL's) through pinned host memory (staging.py).
"""

# pylint: disable=unused-import
from hvdrun.torch.allreduce_ops import (allreduce, allreduce_, allreduce_async, allreduce_async_, grouped_allreduce,
                                        grouped_allreduce_, grouped_allreduce_async, grouped_allreduce_async_)
from hvdrun.torch.basics import (Adasum, Average, HorovodInternalError, HvdrunUnsupportedError, Max, Min, ProcessSet,
                                 Product, ReduceOp, Sum, add_process_set, barrier, global_process_set, join,
                                 remove_process_set, unsupported)
from hvdrun.torch.broadcast_ops import broadcast, broadcast_, broadcast_async, broadcast_async_
from hvdrun.torch.handles import poll, synchronize
from hvdrun.torch.reducescatter_ops import (grouped_reducescatter, grouped_reducescatter_async, reducescatter,
                                            reducescatter_async)
from hvdrun.torch.row_ops import (allgather, allgather_async, alltoall, alltoall_async, grouped_allgather,
                                  grouped_allgather_async)
from hvdrun.torch.sparse import sparse_allreduce_async

