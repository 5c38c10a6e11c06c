"""hvdrun.torch in an installed hvdrun, run under hvdrun by the package and bundle tests:

    hvdrun -np 2 --gloo python3 hvdrun_torch_check.py hvdrun|horovod

One allreduce in closed form, and a step of DistributedOptimizer with fp16 compression whose
averaged gradient every rank must see the same; imports hvdrun.torch, or horovod.torch through the
compatibility directory. Each rank prints one line the tests expect.
"""
import sys

import torch

if sys.argv[1] == "horovod":
    import horovod.torch as hvd
else:
    import hvdrun.torch as hvd
hvd.init()
summed = hvd.allreduce(torch.full((4,), float(hvd.rank() + 1)), op=hvd.Sum, name="x")
model = torch.nn.Linear(4, 1)
hvd.broadcast_parameters(model.state_dict(), root_rank=0)
optimizer = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1),
                                     named_parameters=model.named_parameters(),
                                     compression=hvd.Compression.fp16)
model(torch.full((1, 4), float(hvd.rank()))).sum().backward()
optimizer.step()
weights = hvd.allgather(model.weight.detach().reshape(1, 4))
same = bool((weights == weights[0]).all())
print(f"{sys.argv[1]} rank {hvd.rank()} of {hvd.size()}: sum {summed.tolist()}, same weights {same}")
