"""The state an elastic job keeps in memory (Horovod's horovod.common.elastic and horovod.torch.elastic.state):
committed with commit(), restored after a lost rank, synchronized from rank 0 after every re-formation.

    State        the base: reset callbacks, the hosts-updated check at commit()
    ObjectState  Python values given as keyword arguments, kept as attributes, sent with broadcast_object
    TorchState   ObjectState plus models (deep copies of their state_dict), optimizers and ElasticSamplers,
                 each by a handler of its type
"""

import copy

import torch

from hvdrun import _C
from hvdrun.torch.elastic.sampler import ElasticSampler
from hvdrun.torch.functions import broadcast_object, broadcast_optimizer_state, broadcast_parameters


class HostsUpdatedInterrupt(RuntimeError):
    """As Horovod's: hvdrun has found new hosts for the job; raised by State.commit() on every rank at the
    same commit. The training loop re-forms the job without going back to the last commit; skip_sync says
    whether the state's synchronization may be skipped afterwards (never in hvdrun: new ranks need it)."""

    def __init__(self, skip_sync=False):
        super().__init__("hvdrun found new hosts for the job: its ranks re-form")
        self.skip_sync = skip_sync


def _hosts_updated():
    """Whether hvdrun has found new hosts since this rank's runtime was initialized (libhvdrun's
    Runtime::HostsUpdated); False outside an elastic job."""
    return _C.is_initialized() and _C.hosts_updated()


class State:
    """What every elastic state has: reset callbacks and the hosts-updated check.

    `bcast_object(obj)` returns rank 0's obj on every rank; `get_rank()` this rank."""

    def __init__(self, bcast_object, get_rank):
        self._bcast_object = bcast_object
        self._rank = get_rank
        self._reset_callbacks = []

    def register_reset_callbacks(self, callbacks):
        """Adds functions called, in order, after every re-formation of the job (e.g. to scale the learning
        rate to the new hvd.size())."""
        self._reset_callbacks.extend(callbacks)

    def on_reset(self):
        """Called by hvd.elastic.run after the job re-formed, before the state's synchronization."""
        self.reset()
        for callback in self._reset_callbacks:
            callback()

    def commit(self):
        """Saves the state in memory, then raises HostsUpdatedInterrupt on every rank if hvdrun has found new
        hosts. A commit copies the state (from the GPU too): commit every few steps, not every step."""
        self.save()
        self.check_host_updates()

    def check_host_updates(self):
        """Raises HostsUpdatedInterrupt on every rank when rank 0 sees that hvdrun has found new hosts: rank 0
        asks libhvdrun and broadcasts the answer, so that every rank raises at the same commit."""
        updated = _hosts_updated() if self._rank() == 0 else False
        if self._bcast_object(updated):
            raise HostsUpdatedInterrupt(skip_sync=False)

    def save(self):
        """Saves the state in memory."""
        raise NotImplementedError()

    def restore(self):
        """Goes back to the last saved state."""
        raise NotImplementedError()

    def sync(self):
        """Makes every rank's state rank 0's."""
        raise NotImplementedError()

    def reset(self):
        """Adapts the state to the re-formed job (before its synchronization); nothing by default."""


class ObjectState(State):
    """Python values, given as keyword arguments and kept as attributes of the same names."""

    def __init__(self, bcast_object, get_rank, **kwargs):
        self._saved_state = kwargs
        self._set_attrs()
        super().__init__(bcast_object=bcast_object, get_rank=get_rank)

    def save(self):
        self._saved_state = {name: getattr(self, name) for name in self._saved_state}

    def restore(self):
        self._set_attrs()

    def sync(self):
        if self._saved_state:
            self._saved_state = self._bcast_object(self._saved_state)
            self._set_attrs()

    def _set_attrs(self):
        for name, value in self._saved_state.items():
            setattr(self, name, value)


class _Handler:
    """Saves, restores and synchronizes one value of a TorchState."""

    def __init__(self, value):
        self.value = value
        self._saved = None
        self.save()

    def set_value(self, value):
        self.value = value
        self.save()

    def save(self):
        self._saved = copy.deepcopy(self.value.state_dict())

    def restore(self):
        self.value.load_state_dict(self._saved)

    def sync(self):
        raise NotImplementedError()


class _ModelHandler(_Handler):
    def sync(self):
        broadcast_parameters(self.value.state_dict(), root_rank=0)


class _OptimizerHandler(_Handler):
    """A DistributedOptimizer's gradient reductions of the lost round are forgotten on restore and sync."""

    def _abandon(self):
        abandon = getattr(self.value, "_hvd_abandon", None)
        if abandon is not None:
            abandon()

    def restore(self):
        self._abandon()
        super().restore()

    def sync(self):
        self._abandon()
        broadcast_optimizer_state(self.value, root_rank=0)


class _SamplerHandler(_Handler):
    def sync(self):
        self.value.load_state_dict(broadcast_object(self.value.state_dict(), root_rank=0))


_HANDLERS = [(torch.nn.Module, _ModelHandler), (torch.optim.Optimizer, _OptimizerHandler),
             (ElasticSampler, _SamplerHandler)]


def _handler_for(value):
    for kind, handler in _HANDLERS:
        if isinstance(value, kind):
            return handler(value)
    return None


class TorchState(ObjectState):
    """A PyTorch training's state: `model` and `optimizer` (either may be None), and any other keyword
    arguments. Models, optimizers and ElasticSamplers (any keyword) are saved as deep copies of their
    state_dict() and synchronized by broadcast_parameters, broadcast_optimizer_state and broadcast_object;
    other values as ObjectState's. Assigning a new model or optimizer to the attribute saves it."""

    def __init__(self, model=None, optimizer=None, **kwargs):
        kwargs.update(model=model, optimizer=optimizer)
        handlers = {}
        values = {}
        for name, value in kwargs.items():
            handler = _handler_for(value)
            if handler is None:
                values[name] = value
            else:
                handlers[name] = handler
        object.__setattr__(self, "_handlers", handlers)
        for name, handler in handlers.items():
            object.__setattr__(self, name, handler.value)
        super().__init__(bcast_object=broadcast_object, get_rank=_C.rank, **values)

    def save(self):
        for handler in self._handlers.values():
            handler.save()
        super().save()

    def restore(self):
        for handler in self._handlers.values():
            handler.restore()
        super().restore()

    def sync(self):
        for handler in self._handlers.values():
            handler.sync()
        super().sync()

    def __setattr__(self, name, value):
        handlers = self.__dict__.get("_handlers", {})
        if name in handlers:
            handlers[name].set_value(value)
        super().__setattr__(name, value)
