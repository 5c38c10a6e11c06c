"""What the hvd.elastic test scripts (elastic_recovery.py, elastic_discovery.py) share: a small model trained
for STEPS steps with hvd.elastic (TorchState with an ElasticSampler, one sample a rank a step, a commit every
10 steps, a reset callback recording the new size), a record of the samples each rank trained, and the line
each rank of the last round prints at the end.

Samples: an ElasticSampler splits each epoch of SAMPLES samples over the ranks (Horovod's examples: keep it
in the state, record_batch after each batch, set_epoch at the end of each epoch). Each rank appends one line
per step to its own file under $ELASTIC_TEST_SAMPLES (a directory every host sees), before the step's
gradients are reduced: "ROUND STEP EPOCH INDEX", INDEX -1 where the sampler pads an epoch's last step with a
sample already given (as torch's DistributedSampler; it trains nothing here). Each round's rank 0 writes
"start ROUND STEP" when the round begins training from rank 0's last commit. A step of round R is committed
when the next round starts after it, or when R is the round the job ends in; at the end, every rank checks
that the committed samples hold every sample of each whole epoch exactly once and a prefix of the last
epoch's order, each once."""

import os
import time

import torch

import hvdrun
import hvdrun.torch as hvd

STEPS = 300
SAMPLES = 64  # an epoch: about 20 steps on 3 ranks
SEED = 1
COMMIT_EVERY = 10


def _epoch_order(epoch):
    """The sampler's order of `epoch`'s samples (its remaining indices before any is processed)."""
    probe = hvd.elastic.ElasticSampler(range(SAMPLES), shuffle=True, seed=SEED)
    probe.set_epoch(epoch)
    return probe.remaining_indices


def _read_records(directory):
    starts, records = {}, []
    for name in os.listdir(directory):
        with open(os.path.join(directory, name), encoding="ascii") as lines:
            for line in lines:
                fields = line.split()
                if fields and fields[0] == "start":
                    starts[int(fields[1])] = int(fields[2])
                elif len(fields) == 4:
                    records.append(tuple(int(field) for field in fields))
    return starts, records


def check_samples(directory):
    """'each once (...)' when the committed samples hold each sample of every epoch once; else what is wrong."""
    starts, records = _read_records(directory)
    if not starts:
        return "wrong: no round's start recorded"
    rounds = sorted(starts)
    last_step = dict(zip(rounds, [starts[later] for later in rounds[1:]] + [STEPS]))
    by_epoch = {}
    for round_, step, epoch, index in records:
        if index >= 0 and round_ in last_step and starts[round_] < step <= last_step[round_]:
            by_epoch.setdefault(epoch, []).append(index)
    epochs = sorted(by_epoch)
    if epochs != list(range(len(epochs))):
        return "wrong: epochs %s committed" % epochs
    for epoch in epochs:
        indices = by_epoch[epoch]
        if len(set(indices)) != len(indices):
            twice = sorted({index for index in indices if indices.count(index) > 1})
            return "wrong: samples %s of epoch %d committed more than once" % (twice, epoch)
        expected = _epoch_order(epoch)[:len(indices)]
        if (epoch < epochs[-1] and len(indices) != SAMPLES) or set(indices) != set(expected):
            return "wrong: epoch %d committed %d samples, not the first %d of its order" % (
                epoch, len(indices), SAMPLES if epoch < epochs[-1] else len(indices))
    return "each once (%d epochs of %d, then %d)" % (len(epochs) - 1, SAMPLES, len(by_epoch[epochs[-1]]))


class ElasticTraining:
    """The model, its optimizer, the sampler and the state of one rank (hvd.init() first)."""

    def __init__(self):
        hvd.init()
        self.samples_dir = os.environ["ELASTIC_TEST_SAMPLES"]
        worker = os.environ["HVDRUN_WORKER_ID"].replace("/", "_")
        self._log = os.open(os.path.join(self.samples_dir, worker), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        torch.manual_seed(hvd.rank())  # different until the state's sync
        self.model = torch.nn.Linear(8, 1)
        self.optimizer = hvd.DistributedOptimizer(torch.optim.SGD(self.model.parameters(), lr=0.01),
                                                  named_parameters=self.model.named_parameters())
        self.data = torch.arange(SAMPLES * 8, dtype=torch.float32).reshape(SAMPLES, 8) / (SAMPLES * 8)
        sampler = hvd.elastic.ElasticSampler(self.data, shuffle=True, seed=SEED)
        self.state = hvd.elastic.TorchState(self.model, self.optimizer, sampler=sampler, step=0)
        self.resets = []
        self.state.register_reset_callbacks([lambda: self.resets.append(hvd.size())])

    def _write(self, *fields):
        os.write(self._log, (" ".join(str(field) for field in fields) + "\n").encode("ascii"))

    def _step(self, state, position, index):
        sampler = state.sampler
        real = sampler.rank + position * sampler.num_replicas < len(sampler.remaining_indices)
        self._write(hvdrun._C.round(), state.step + 1, sampler.epoch, index if real else -1)
        self.optimizer.zero_grad()
        loss = self.model(self.data[index].unsqueeze(0)).pow(2).mean()
        (loss if real else loss * 0).backward()
        self.optimizer.step()
        state.step += 1
        sampler.record_batch(position, 1)

    def train(self, after_step):
        """Trains to STEPS; `after_step(state)` runs after each step and its commit."""

        @hvd.elastic.run
        def train(state):
            if hvd.rank() == 0:
                self._write("start", hvdrun._C.round(), state.step)
            while state.step < STEPS:
                for position, index in enumerate(state.sampler):
                    self._step(state, position, index)
                    if state.step % COMMIT_EVERY == 0:
                        state.commit()
                    after_step(state)
                    time.sleep(0.02)
                    if state.step == STEPS:
                        break
                else:
                    state.sampler.set_epoch(state.sampler.epoch + 1)

        train(self.state)

    def finish(self, expected):
        """Prints the rank's line and returns whether it ends well: rank 0's parameters, every step run,
        each sample once, and `expected` (the script's own checks)."""
        rows = hvd.allgather(torch.cat([p.detach().flatten() for p in self.model.parameters()]).unsqueeze(0))
        identical = all(torch.equal(rows[0], row) for row in rows)
        samples = check_samples(self.samples_dir)  # after the allgather: every rank has written its last step
        print("worker %s: rank %d of %d, round %d, step %d, resets %s, identical %s, samples %s" % (
            os.environ["HVDRUN_WORKER_ID"], hvd.rank(), hvd.size(), hvdrun._C.round(), self.state.step,
            self.resets, identical, samples), flush=True)
        return identical and self.state.step == STEPS and samples.startswith("each once") and expected
