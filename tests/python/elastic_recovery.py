"""An elastic training script for tests/python/elastic_recovery_driver.cc: trains a small model with
hvd.elastic (TorchState, commits every 10 steps, a reset callback recording the new size), touches
$ELASTIC_TEST_PROGRESS once rank 2 is well into training (or, with ELASTIC_TEST_KILL_SELF=1, when hvdrun's
own elastic driver runs it, rank 2 SIGKILLs itself there), with $ELASTIC_TEST_FIRST_STEP writes into that file
the time (time.time()) at which rank 0's first step of a later round ended, and prints one line at the end: the
worker, its rank, size and round, the step count, the sizes its resets saw and whether every
rank ends with the same parameters. It exits 1 unless it ran every step, ends with rank 0's parameters, and
is in round $ELASTIC_TEST_ROUND with the reset sizes $ELASTIC_TEST_RESETS (comma-separated)."""

import os
import signal
import sys
import time

import torch

import hvdrun
import hvdrun.torch as hvd

STEPS = 300

hvd.init()
torch.manual_seed(hvd.rank())  # different until the state's sync
model = torch.nn.Linear(8, 1)
optimizer = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.01),
                                     named_parameters=model.named_parameters())
resets = []
first_step = os.environ.get("ELASTIC_TEST_FIRST_STEP")


def write_first_step():
    with open(first_step + ".new", "w", encoding="ascii") as out:
        out.write("%.6f\n" % time.time())
    os.replace(first_step + ".new", first_step)


@hvd.elastic.run
def train(state):
    while state.step < STEPS:
        data = torch.full((4, 8), float(state.step % 7))
        optimizer.zero_grad()
        model(data).pow(2).mean().backward()
        optimizer.step()
        state.step += 1
        if first_step and hvd.rank() == 0 and hvdrun._C.round() > 0 and not os.path.exists(first_step):
            write_first_step()
        if state.step % 10 == 0:
            state.commit()
        if state.step == 50 and hvd.rank() == 2:
            if os.environ.get("ELASTIC_TEST_KILL_SELF") == "1":  # run by hvdrun: no driver kills it
                os.kill(os.getpid(), signal.SIGKILL)
            open(os.environ["ELASTIC_TEST_PROGRESS"], "w").close()
        time.sleep(0.02)


state = hvd.elastic.TorchState(model, optimizer, step=0)
state.register_reset_callbacks([lambda: resets.append(hvd.size())])
train(state)
rows = hvd.allgather(torch.cat([p.detach().flatten() for p in model.parameters()]).unsqueeze(0))
identical = all(torch.equal(rows[0], row) for row in rows)
print("worker %s: rank %d of %d, round %d, step %d, resets %s, identical %s" % (
    os.environ["HVDRUN_WORKER_ID"], hvd.rank(), hvd.size(), hvdrun._C.round(), state.step, resets, identical),
      flush=True)
expected_resets = [int(size) for size in os.environ["ELASTIC_TEST_RESETS"].split(",") if size]
if not (identical and state.step == STEPS and hvdrun._C.round() == int(os.environ["ELASTIC_TEST_ROUND"])
        and resets == expected_resets):
    sys.exit(1)
