"""Horovod's sparse allreduce (horovod/torch/mpi_ops.py's sparse_allreduce_async), over allgathers: every
rank's indices and values are gathered, and the sum of the sparse tensors is the sparse tensor of all of
them, its repeated indices not yet coalesced (as Horovod's; coalesce() sums them)."""

import torch

from hvdrun.torch import basics
from hvdrun.torch.basics import Average, Sum, check_process_set, resolve_op
from hvdrun.torch.handles import auto_name, check_name_free, poll, synchronize
from hvdrun.torch.row_ops import allgather_async


class SparseHandle:
    """What sparse_allreduce_async returns: calling it (as Horovod's optimizer does) or synchronize(handle)
    waits and returns the reduced sparse tensor; poll(handle) says whether it has run."""

    def __init__(self, tensor, op, indices_handle, values_handle, size):
        self._tensor = tensor
        self._op = op
        self._size = size  # the process set's
        self._handles = (indices_handle, values_handle)
        self._result = None

    def ready(self):
        return self._result is not None or all(poll(handle) for handle in self._handles)

    def __call__(self):
        if self._result is None:
            indices_handle, values_handle = self._handles
            values = synchronize(values_handle)
            indices = synchronize(indices_handle)
            if self._op is Average:
                values = values / self._size
            self._result = torch.sparse_coo_tensor(indices.transpose(0, 1), values, self._tensor.size())
        return self._result


def sparse_allreduce_async(tensor, name, op, process_set=None):
    """Starts Horovod's sparse allreduce of the sparse COO tensor `tensor` (op hvd.Average or hvd.Sum):
    allgathers of its indices (named "<name>.indices") and values ("<name>.values"); returns a SparseHandle.
    An Average divides the values by the number of ranks (integer values become floating-point, as
    Horovod's true division)."""
    process_set_id = check_process_set(process_set)
    if not isinstance(tensor, torch.Tensor) or not tensor.is_sparse:
        raise TypeError("hvdrun.torch.sparse_allreduce_async: expected a sparse COO tensor, got %s"
                        % (tensor.layout if isinstance(tensor, torch.Tensor) else type(tensor).__name__))
    op = resolve_op(None, op, "sparse_allreduce_async")
    if op not in (Average, Sum):
        raise ValueError("hvdrun.torch.sparse_allreduce_async: op must be hvd.Average or hvd.Sum (a sparse "
                         "allreduce gathers every rank's entries), got %r" % op)
    name = auto_name("sparse_allreduce", name, process_set_id)
    for part in (".indices", ".values"):  # refused before either is submitted
        check_name_free("sparse_allreduce_async", name + part)
    # Allgathers concatenate along the first dimension: the indices go as (entries, sparse dims).
    indices_handle = allgather_async(tensor._indices().transpose(0, 1).contiguous(), name=name + ".indices",
                                     process_set=process_set)
    values_handle = allgather_async(tensor._values().contiguous(), name=name + ".values", process_set=process_set)
    return SparseHandle(tensor, op, indices_handle, values_handle, basics.set_size(process_set_id))
