"""One rank's step times for scripts/bench/python_step_overhead.sh: hvdrun-trainer's fmnist-cnn, written
again in PyTorch, trained on one fixed synthetic batch with hvdrun.torch's DistributedOptimizer (SGD,
momentum 0.9, as the trainer). Rank 0 prints "step K/N: SECONDS s" per timed step, as hvdrun-trainer.

    hvdrun -np 2 --gloo /usr/bin/python3 scripts/bench/python_step_time.py --steps 50 --warmup-steps 10
"""

import argparse
import time

import torch
import torch.nn.functional as F

import hvdrun.torch as hvd


class FmnistCnn(torch.nn.Module):
    """examples/trainer/models/fmnist_cnn.cc's network: the same layers, shapes and order."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 16, 5, padding=2)
        self.conv2 = torch.nn.Conv2d(16, 32, 5, padding=2)
        self.fc1 = torch.nn.Linear(32 * 7 * 7, 128)
        self.fc2 = torch.nn.Linear(128, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc2(F.relu(self.fc1(x.flatten(1))))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--warmup-steps", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    hvd.init()
    torch.set_num_threads(1)
    torch.manual_seed(42)
    model = FmnistCnn()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01 * hvd.size(), momentum=0.9)
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters())
    images = torch.randn(args.batch_size, 1, 28, 28)
    labels = torch.randint(0, 10, (args.batch_size,))
    for step in range(args.warmup_steps + args.steps):
        started = time.perf_counter()
        optimizer.zero_grad()
        F.cross_entropy(model(images), labels).backward()
        optimizer.step()
        seconds = time.perf_counter() - started
        if step >= args.warmup_steps and hvd.rank() == 0:
            print("step %d/%d: %.6f s" % (step - args.warmup_steps + 1, args.steps, seconds), flush=True)


if __name__ == "__main__":
    main()
