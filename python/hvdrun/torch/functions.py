"""Broadcasting a model's parameters, an optimizer's state and Python objects from one rank."""

import collections
import collections.abc
import io
import pickle

import torch

from hvdrun import _C
from hvdrun.torch import mpi_ops
from hvdrun.torch.basics import check_process_set

try:
    import cloudpickle as _pickler  # lambdas and local classes too, as Horovod's broadcast_object
except ImportError:  # pragma: no cover - python3-cloudpickle is a dependency; plain pickle otherwise
    _pickler = pickle


def _named_tensors(params):
    if isinstance(params, collections.abc.Mapping):
        return sorted(params.items(), key=lambda item: str(item[0]))
    items = list(params)
    if all(isinstance(item, tuple) and len(item) == 2 for item in items):
        return items
    return [("param.%d" % index, item) for index, item in enumerate(items)]


def broadcast_parameters(params, root_rank, process_set=None):
    """Overwrites every tensor in `params` with root_rank's, in place.

    `params`: a state_dict() or other mapping of names to tensors (taken in sorted name order), a
    list of (name, tensor) such as named_parameters(), or a list of tensors. Every rank must pass
    the same names and shapes. `process_set` (hvdrun's, beside Horovod's signature): among its ranks only.
    """
    check_process_set(process_set)
    handles = []
    for name, tensor in _named_tensors(params):
        if tensor is None:
            continue
        if not isinstance(tensor, torch.Tensor):
            raise TypeError("hvdrun.torch.broadcast_parameters: '%s' is a %s, not a tensor"
                            % (name, type(tensor).__name__))
        # Started together, named: libhvdrun agrees on them in one cycle, in any order.
        handles.append(mpi_ops.broadcast_async_(tensor.data if isinstance(tensor, torch.nn.Parameter) else tensor,
                                                root_rank, name="broadcast." + str(name), process_set=process_set))
    for handle in handles:
        mpi_ops.synchronize(handle)


def broadcast_object(obj, root_rank=0, name=None, process_set=None):
    """Returns root_rank's `obj` on every rank: pickled (cloudpickle) on root_rank, sent, unpickled."""
    check_process_set(process_set)
    if _C.rank() == root_rank:
        buffer = io.BytesIO()
        _pickler.dump(obj, buffer)
        data = torch.frombuffer(bytearray(buffer.getvalue()), dtype=torch.uint8)
        length = torch.tensor([data.numel()], dtype=torch.int64)
    else:
        length = torch.zeros(1, dtype=torch.int64)
    mpi_ops.broadcast_(length, root_rank, process_set=process_set)
    if _C.rank() != root_rank:
        data = torch.zeros(int(length.item()), dtype=torch.uint8)
    mpi_ops.broadcast_(data, root_rank, process_set=process_set)
    if _C.rank() == root_rank:
        return obj
    return pickle.loads(data.numpy().tobytes())


def allgather_object(obj, name=None, process_set=None):
    """Returns a list of every rank's `obj`, in rank order."""
    check_process_set(process_set)
    data = torch.frombuffer(bytearray(_pickler.dumps(obj)), dtype=torch.uint8)
    lengths = mpi_ops.allgather(torch.tensor([data.numel()], dtype=torch.int64), process_set=process_set).tolist()
    gathered = mpi_ops.allgather(data, process_set=process_set)
    objects, start = [], 0
    for length in lengths:
        objects.append(pickle.loads(gathered[start: start + length].numpy().tobytes()))
        start += length
    return objects


def broadcast_optimizer_state(optimizer, root_rank, model=None, process_set=None):
    """Makes every rank's optimizer state and hyperparameters root_rank's.

    Parameters are matched by their place in optimizer.param_groups, the same on every rank when
    the model is built the same way. root_rank's state says what there is: other ranks get its
    tensors (allocated where they had none, so an optimizer that has not stepped yet may receive a
    state) and its other values (an SGD momentum buffer that is None, an int step); a root whose
    state is empty empties the others'. `model` is accepted for Horovod's signature and unused;
    `process_set` (hvdrun's, beside Horovod's signature): among its ranks only.
    """
    check_process_set(process_set)
    if isinstance(optimizer, torch.optim.LBFGS):
        mpi_ops.unsupported("hvdrun.torch.broadcast_optimizer_state of an LBFGS optimizer (as Horovod)",
                            "broadcast_parameters(model.state_dict()) and let every rank start LBFGS afresh")
    params = [p for group in optimizer.param_groups for p in group["params"]]
    is_root = _C.rank() == root_rank
    layout = None
    if is_root:
        # Per parameter index: its state, tensors described by shape and type, other values as they are.
        state = {}
        for index, param in enumerate(params):
            entries = optimizer.state.get(param)
            if not entries:
                continue
            # A tensor on a device lands on the parameter's device on every rank (Adam's step stays on the CPU).
            state[index] = {key: (("tensor", tuple(value.shape), value.dtype, value.device.type != "cpu")
                                  if torch.is_tensor(value)
                                  else ("value", value))
                            for key, value in entries.items()}
        groups = [{key: value for key, value in group.items() if key != "params"} for group in optimizer.param_groups]
        layout = {"parameters": len(params), "state": state, "groups": groups}
    layout = broadcast_object(layout, root_rank, process_set=process_set)
    if layout["parameters"] != len(params):
        raise ValueError("hvdrun.torch.broadcast_optimizer_state: rank %d's optimizer has %d parameters, root rank %d's "
                         "has %d" % (_C.rank(), len(params), root_rank, layout["parameters"]))
    if not is_root:
        for group, options in zip(optimizer.param_groups, layout["groups"]):
            group.update(options)
        optimizer.state = collections.defaultdict(dict)
    for index in sorted(layout["state"]):
        param = params[index]
        entries = optimizer.state[param]
        for key in sorted(layout["state"][index], key=str):
            description = layout["state"][index][key]
            if description[0] == "value":
                entries[key] = description[1]
                continue
            _, shape, dtype, on_device = description
            if not is_root:
                entries[key] = torch.zeros(shape, dtype=dtype, device=param.device if on_device else "cpu")
            mpi_ops.broadcast_(entries[key], root_rank, name="optimizer.%d.%s" % (index, key), process_set=process_set)
