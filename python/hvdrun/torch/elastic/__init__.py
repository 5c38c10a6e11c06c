"""hvd.elastic: Horovod's elastic training (horovod.torch.elastic) over hvdrun's elastic jobs.

    @hvd.elastic.run
    def train(state):
        for state.epoch in range(state.epoch, epochs):
            ...
            state.commit()

    state = hvd.elastic.TorchState(model, optimizer, epoch=0)
    train(state)

Run under `hvdrun -np 4 --min-np 2 --gloo python3 train.py` (docs/elastic.md). `run` calls the function
after synchronizing `state` from rank 0; when a collective fails because a rank was lost
(HorovodInternalError), the state goes back to its last commit; when hvdrun has found new hosts
(HostsUpdatedInterrupt, raised by state.commit() on every rank at once), it keeps its values. Either
way the rank leaves the job's round (hvd.shutdown()), joins the next one (hvd.init(), which waits for
hvdrun to say this worker's place in it), runs the state's reset callbacks and synchronizes again. A
worker that hvdrun leaves out of the next round exits 0 from hvd.init().
"""

import functools

from hvdrun.torch.basics import HorovodInternalError
from hvdrun.torch.elastic.sampler import ElasticSampler
from hvdrun.torch.elastic.state import HostsUpdatedInterrupt, ObjectState, State, TorchState

__all__ = ["ElasticSampler", "HorovodInternalError", "HostsUpdatedInterrupt", "ObjectState", "State", "TorchState",
           "run"]


def _reset():
    """Leaves the job's round and joins the next: hvd.init() waits for this worker's place in it (and for a
    later round, should that one end before it is formed)."""
    import hvdrun.torch as hvd  # pylint: disable=import-outside-toplevel

    hvd.shutdown()
    hvd.init()


def run_fn(func, reset):
    """`func` wrapped in Horovod's elastic loop, with `reset` leaving one round and joining the next."""

    @functools.wraps(func)
    def wrapper(state, *args, **kwargs):
        skip_sync = False
        while True:
            try:
                if not skip_sync:
                    state.sync()
                return func(state, *args, **kwargs)
            except HorovodInternalError:
                state.restore()
                skip_sync = False
            except HostsUpdatedInterrupt as interrupt:
                skip_sync = interrupt.skip_sync
            reset()
            state.on_reset()

    return wrapper


def run(func):
    """Decorates a training function whose first argument is a State: see the module's documentation.
    Its collectives must come after the state's synchronization, inside `func`."""
    return run_fn(func, _reset)
