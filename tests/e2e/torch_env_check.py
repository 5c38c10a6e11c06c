"""A plain torch.distributed program, as a user would write it for torchrun: env:// init, Gloo.

Nothing in it knows about hvdrun. Each rank prints one line that the end-to-end test checks:
its rank and world size as torch.distributed sees them, and the results of an all_reduce, a
broadcast and an all_gather.
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
