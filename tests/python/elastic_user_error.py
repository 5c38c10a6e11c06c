"""An hvd.elastic script whose own code raises on rank 1 of every round once it has reached step 20 (after
its second commit), for elastic_user_error.sh: each attempt loses that rank's host, until too few are left."""

import time

import torch

import hvdrun.torch as hvd

hvd.init()
model = torch.nn.Linear(4, 1)
optimizer = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.01),
                                     named_parameters=model.named_parameters())
state = hvd.elastic.TorchState(model=model, optimizer=optimizer, step=0)


@hvd.elastic.run
def train(state):
    while state.step < 1000:
        if hvd.rank() == 1 and state.step >= 20:
            raise ValueError("the user's code fails on rank 1 at step %d" % state.step)
        optimizer.zero_grad()
        model(torch.ones(2, 4)).sum().backward()
        optimizer.step()
        state.step += 1
        if state.step % 10 == 0:
            state.commit()
        time.sleep(0.01)


train(state)
