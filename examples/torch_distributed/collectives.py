"""A plain torch.distributed program, as you would write it for torchrun: env:// init, Gloo.

Nothing in it knows about hvdrun: hvdrun gives every rank the variables env:// reads (RANK,
WORLD_SIZE, MASTER_ADDR, MASTER_PORT, and LOCAL_RANK), so it runs unchanged, on one host or several:

    hvdrun -np 2 /usr/bin/python3 collectives.py
    hvdrun -np 4 -H server1:2,server2:2 /usr/bin/python3 collectives.py

(/usr/bin/python3 is the interpreter Debian's python3-torch belongs to.) Each rank prints one
line: its rank and world size as torch.distributed sees them, its local rank, and the results of
an all_reduce (the sum of rank + 1 over ranks), a broadcast from the last rank and an all_gather
of rank * rank:

    [0]<stdout>:rank 0 of 2 local 0: sum 3 broadcast 1001 gather 0,1

tests/e2e/examples_e2e_test.cc runs it under hvdrun and checks every rank's line.
"""
import os

import torch
import torch.distributed as dist


def main():
    dist.init_process_group(backend="gloo", init_method="env://")
    rank = dist.get_rank()
    world = dist.get_world_size()

    total = torch.tensor([float(rank + 1)])
    dist.all_reduce(total, op=dist.ReduceOp.SUM)

    token = torch.tensor([1000.0 + rank])
    dist.broadcast(token, src=world - 1)

    gathered = [torch.zeros(1) for _ in range(world)]
    dist.all_gather(gathered, torch.tensor([float(rank * rank)]))

    print(
        f"rank {rank} of {world} local {os.environ['LOCAL_RANK']}: "
        f"sum {total.item():g} broadcast {token.item():g} "
        f"gather {','.join(f'{t.item():g}' for t in gathered)}",
        flush=True,
    )
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
