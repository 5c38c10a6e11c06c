"""Checks hvd.elastic's parts in one process (python/hvdrun/torch/elastic/): State, ObjectState and TorchState
commit, restore and sync; ElasticSampler's splits before and after the job re-forms; run's loop.

    PYTHONPATH=build/python python3 tests/python/elastic_checks.py

No job: hvdrun.torch is a job of one rank, its broadcasts the identity; a fake broadcast and a fake _C stand
in for other ranks where a check needs them. A failed check raises.
"""

import hvdrun
import hvdrun.torch as hvd
import torch

from hvdrun.torch.elastic import state as elastic_state
from hvdrun.torch.elastic import run_fn


def check(condition, what):
    if not condition:
        raise AssertionError(what)


def check_object_state():
    sent = []

    def rank0_sends(obj):  # what rank 0 had: this rank's values are replaced
        sent.append(obj)
        return {"epoch": 7, "batch": 70} if isinstance(obj, dict) else obj

    state = hvd.elastic.ObjectState(rank0_sends, lambda: 1, epoch=1, batch=10)
    check((state.epoch, state.batch) == (1, 10), "ObjectState keeps its keyword arguments as attributes")
    state.epoch, state.batch = 2, 20
    state.restore()
    check((state.epoch, state.batch) == (1, 10), "restore() goes back to the values given")
    state.epoch = 3
    state.save()
    state.epoch = 4
    state.restore()
    check(state.epoch == 3, "restore() goes back to the last save(), not further")
    state.sync()
    check((state.epoch, state.batch) == (7, 70), "sync() takes rank 0's saved values")
    called = []
    state.register_reset_callbacks([lambda: called.append("a"), lambda: called.append("b")])
    state.on_reset()
    check(called == ["a", "b"], "on_reset() runs the reset callbacks in order")


def check_commit_raises_hosts_updated_at_once_on_every_rank():
    answers = []

    def rank0_says_updated(obj):
        answers.append(obj)
        return True  # rank 0 saw the counter move: every rank raises at this commit

    state = hvd.elastic.ObjectState(rank0_says_updated, lambda: 1, step=0)
    state.step = 5
    try:
        state.commit()
    except hvd.HostsUpdatedInterrupt as interrupt:
        check(not interrupt.skip_sync, "new ranks need the state's sync: skip_sync is False")
    else:
        raise AssertionError("commit() did not raise HostsUpdatedInterrupt")
    check(answers == [False], "a rank other than 0 sends no answer of its own: it takes rank 0's")
    state.step = 6
    state.restore()
    check(state.step == 5, "commit() saved before it checked for new hosts")
    quiet = hvd.elastic.ObjectState(lambda obj: obj, lambda: 0, step=1)
    quiet.commit()  # no job: no new hosts


def check_torch_state():
    hvd.init()
    model = torch.nn.Linear(3, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    state = hvd.elastic.TorchState(model, optimizer, epoch=0)
    check(state.model is model and state.optimizer is optimizer, "TorchState keeps the model and optimizer")
    committed = {name: value.clone() for name, value in model.state_dict().items()}
    model(torch.ones(4, 3)).sum().backward()
    optimizer.step()
    state.epoch = 1
    check(any(not torch.equal(committed[name], value) for name, value in model.state_dict().items()),
          "the step changed the model")
    state.restore()
    check(all(torch.equal(committed[name], value) for name, value in model.state_dict().items()),
          "restore() gives the model's committed parameters back")
    check(state.epoch == 0, "restore() gives the other values back")
    check(not optimizer.state_dict()["state"], "restore() gives the optimizer's committed (empty) state back")
    model(torch.ones(4, 3)).sum().backward()
    optimizer.step()
    state.epoch = 2
    state.commit()
    after = {name: value.clone() for name, value in model.state_dict().items()}
    with torch.no_grad():
        model.weight.add_(1.0)
    state.restore()
    check(all(torch.equal(after[name], value) for name, value in model.state_dict().items()),
          "restore() after commit() gives the committed step's parameters")
    check(bool(optimizer.state_dict()["state"]), "the optimizer's momentum was committed")
    state.sync()  # a job of one rank: rank 0's state is this one's
    check(state.epoch == 2, "sync() keeps rank 0's values")
    replacement = torch.nn.Linear(3, 2)
    state.model = replacement
    with torch.no_grad():
        replacement.bias.add_(5.0)
    state.restore()
    check(torch.equal(replacement.bias, state.model.bias) and float(replacement.bias.abs().max()) < 5.0,
          "a model assigned to the state is saved at once")
    hvd.shutdown()


class FakeJob:
    """hvdrun._C for ElasticSampler.reset(): this rank's place in a job of `size` ranks."""

    def __init__(self, rank, size):
        self._rank, self._size = rank, size

    def is_initialized(self):
        return True

    def rank(self):
        return self._rank

    def size(self):
        return self._size


def sampler_for(rank, size, dataset, processed=0, epoch=0, shuffle=True):
    real = hvdrun._C
    hvdrun._C = FakeJob(rank, size)
    try:
        sampler = hvd.elastic.ElasticSampler(dataset, shuffle=shuffle, seed=3)
        sampler.load_state_dict({"epoch": epoch, "processed_num": processed})
    finally:
        hvdrun._C = real
    return sampler


def check_sampler():
    dataset = list(range(10))
    three = [list(sampler_for(rank, 3, dataset)) for rank in range(3)]
    check(all(len(part) == 4 for part in three), "10 samples over 3 ranks: 4 each (2 repeated)")
    seen = sorted(index for part in three for index in part)
    check(sorted(set(seen)) == dataset, "every sample is in some rank's part")
    order = list(range(10))
    import random  # pylint: disable=import-outside-toplevel
    random.Random(3 + 0).shuffle(order)
    check([part[0] for part in three] == order[:3], "the parts interleave the epoch's shuffled order")
    # Rank 2 lost after one batch of 2 per rank: 6 processed; the 4 left split over the 2 survivors.
    first = sampler_for(0, 3, dataset)
    first.record_batch(0, 2)
    check(first.state_dict() == {"epoch": 0, "processed_num": 6}, "record_batch counts every rank's samples")
    two = [list(sampler_for(rank, 2, dataset, processed=6)) for rank in range(2)]
    check(sorted(two[0] + two[1]) == sorted(order[6:]), "after re-forming, the rest of the epoch and nothing twice")
    later = sampler_for(0, 2, dataset, processed=6, epoch=1)
    later.set_epoch(2)
    check(later.state_dict() == {"epoch": 2, "processed_num": 0}, "set_epoch starts the epoch afresh")
    plain = [list(sampler_for(rank, 4, dataset, shuffle=False)) for rank in range(4)]
    check(plain == [[0, 4, 8], [1, 5, 9], [2, 6, 0], [3, 7, 1]], "unshuffled: DistributedSampler's split")
    tiny = [list(sampler_for(rank, 3, [0])) for rank in range(3)]
    check(tiny == [[0], [0], [0]], "one sample over three ranks is repeated, not lost")


class RecordingState(elastic_state.State):
    def __init__(self, log):
        super().__init__(bcast_object=lambda obj: obj, get_rank=lambda: 0)
        self.log = log

    def save(self):
        self.log.append("save")

    def restore(self):
        self.log.append("restore")

    def sync(self):
        self.log.append("sync")

    def reset(self):
        self.log.append("reset")


def check_run_loop():
    log = []
    failures = [hvd.HorovodInternalError("gloo: peer gone"), hvd.HostsUpdatedInterrupt(skip_sync=False)]

    def train(state, value):
        log.append("train")
        if failures:
            raise failures.pop(0)
        return value * 2

    state = RecordingState(log)
    state.register_reset_callbacks([lambda: log.append("callback")])
    result = run_fn(train, lambda: log.append("re-form"))(state, 21)
    check(result == 42, "run returns the function's result")
    check(log == ["sync", "train", "restore", "re-form", "reset", "callback", "sync", "train", "re-form", "reset",
                  "callback", "sync", "train"],
          "a lost rank restores then re-forms; new hosts re-form without restoring; each re-formation syncs: %r" % log)
    raised = []

    def broken(state):
        raise ValueError("the user's own error")

    try:
        run_fn(broken, lambda: raised.append("re-form"))(RecordingState([]))
    except ValueError:
        pass
    else:
        raise AssertionError("another exception must reach the caller")
    check(not raised, "another exception is not a re-formation")


def check_api_names():
    for name in ("run", "State", "ObjectState", "TorchState", "ElasticSampler", "HorovodInternalError",
                 "HostsUpdatedInterrupt"):
        check(hasattr(hvd.elastic, name), "hvd.elastic." + name)
    check(issubclass(hvd.HorovodInternalError, RuntimeError), "HorovodInternalError is a RuntimeError")
    check(hvdrun._C.error_kind("x [elastic: recoverable]") == "recoverable", "the recoverable kind")
    check(hvdrun._C.error_kind("x [elastic: removed]") == "removed", "the removed kind")
    check(hvdrun._C.error_kind("x") == "other", "other errors")


def main():
    check_api_names()
    check_object_state()
    check_commit_raises_hosts_updated_at_once_on_every_rank()
    check_torch_state()
    check_sampler()
    check_run_loop()
    print("elastic checks: ok")


if __name__ == "__main__":
    main()
