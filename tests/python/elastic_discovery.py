"""An elastic training script whose hosts change through hvdrun's host discovery (tests/python/
elastic_discovery.sh runs it): at step 50 of round 0, rank 0 rewrites the discovery script's hosts file
($ELASTIC_TEST_HOSTS_FILE) to the hosts in $ELASTIC_TEST_NEW_HOSTS. hvdrun starts a rank on a host added (or
removes the ranks of a host gone), and the ranks re-form at their next commit (HostsUpdatedInterrupt): the
new rank gets the state from rank 0, a removed one exits 0 in hvd.init(). Each rank that trains to the end
prints one line: its worker, rank, size and round, the step count, the sizes its resets saw and whether every
rank ends with the same parameters. It exits 1 unless it ran every step and ends with rank 0's parameters in
round 1 with $ELASTIC_TEST_SIZE ranks, having reset once (a rank started in round 1: never)."""

import os
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


def change_hosts():
    """Replaces the hosts file at once: the discovery script never reads half of it."""
    path = os.environ["ELASTIC_TEST_HOSTS_FILE"]
    with open(path + ".new", "w", encoding="ascii") as hosts:
        hosts.write("\n".join(os.environ["ELASTIC_TEST_NEW_HOSTS"].split()) + "\n")
    os.replace(path + ".new", path)


@hvd.elastic.run
def train(state):
    while state.step < STEPS:
        data = torch.full((4, 8), float(state.step % 7))
        optimizer.zero_grad()
        model(data).pow(2).mean().backward()
        optimizer.step()
        state.step += 1
        if state.step == 50 and hvd.rank() == 0 and hvdrun._C.round() == 0:
            change_hosts()
        if state.step % 10 == 0:
            state.commit()
        time.sleep(0.02)


state = hvd.elastic.TorchState(model, optimizer, step=0)
state.register_reset_callbacks([lambda: resets.append(hvd.size())])
train(state)
rows = hvd.allgather(torch.cat([p.detach().flatten() for p in model.parameters()]).unsqueeze(0))
identical = all(torch.equal(rows[0], row) for row in rows)
print("worker %s: rank %d of %d, round %d, step %d, resets %s, identical %s" % (
    os.environ["HVDRUN_WORKER_ID"], hvd.rank(), hvd.size(), hvdrun._C.round(), state.step, resets, identical),
      flush=True)
size = int(os.environ["ELASTIC_TEST_SIZE"])
expected_resets = [] if os.environ["HVDRUN_ROUND"] == "1" else [size]
if not (identical and state.step == STEPS and hvdrun._C.round() == 1 and hvd.size() == size
        and resets == expected_resets):
    sys.exit(1)
