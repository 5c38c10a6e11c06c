"""Times for scripts/bench/elastic_bench.sh, run under hvdrun (docs/benchmarks.md, "Elastic jobs").

    elastic_timing.py recovery DIR   every rank trains a small model, committing every 10 steps; at step 100
                                     the last rank writes the time into DIR/killed and SIGKILLs itself; rank 0
                                     writes into DIR/first_step the time its first step of the next round
                                     ended, and into DIR/step_s the median step time of round 0
    elastic_timing.py commit DIR     ResNet-50 (torchvision's 25,557,032 parameters, written again here) with
                                     SGD and momentum in a TorchState: rank 0 writes into DIR/commit the median
                                     time of state.commit() and of one training step (batch 8 of 3x64x64)
"""

import os
import signal
import statistics
import sys
import time

import torch

import hvdrun
import hvdrun.torch as hvd


def write(directory, name, value):
    with open(os.path.join(directory, name + ".new"), "w", encoding="ascii") as out:
        out.write("%.6f\n" % value)
    os.replace(os.path.join(directory, name + ".new"), os.path.join(directory, name))


def recovery(directory):
    model = torch.nn.Linear(64, 1)
    optimizer = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.01),
                                         named_parameters=model.named_parameters())
    data = torch.ones(8, 64)
    steps = []

    @hvd.elastic.run
    def train(state):
        while state.step < 200:
            started = time.time()
            optimizer.zero_grad()
            model(data).pow(2).mean().backward()
            optimizer.step()
            state.step += 1
            ended = time.time()
            if hvdrun._C.round() == 0:
                steps.append(ended - started)
            elif hvd.rank() == 0 and not os.path.exists(os.path.join(directory, "first_step")):
                write(directory, "first_step", ended)
                write(directory, "step_s", statistics.median(steps))
            if state.step % 10 == 0:
                state.commit()
            if state.step == 100 and hvd.rank() == hvd.size() - 1 and hvdrun._C.round() == 0:
                write(directory, "killed", time.time())
                os.kill(os.getpid(), signal.SIGKILL)

    train(hvd.elastic.TorchState(model, optimizer, step=0))


class Bottleneck(torch.nn.Module):
    def __init__(self, inplanes, planes, stride):
        super().__init__()
        width = planes * 4
        self.conv1 = torch.nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(planes)
        self.conv2 = torch.nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(planes)
        self.conv3 = torch.nn.Conv2d(planes, width, 1, bias=False)
        self.bn3 = torch.nn.BatchNorm2d(width)
        self.downsample = None
        if stride != 1 or inplanes != width:
            self.downsample = torch.nn.Sequential(torch.nn.Conv2d(inplanes, width, 1, stride, bias=False),
                                                  torch.nn.BatchNorm2d(width))

    def forward(self, x):
        out = torch.relu(self.bn1(self.conv1(x)))
        out = torch.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return torch.relu(out + (x if self.downsample is None else self.downsample(x)))


def resnet50():
    layers = [torch.nn.Conv2d(3, 64, 7, 2, 3, bias=False), torch.nn.BatchNorm2d(64), torch.nn.ReLU(),
              torch.nn.MaxPool2d(3, 2, 1)]
    inplanes = 64
    for planes, blocks, stride in [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]:
        for block in range(blocks):
            layers.append(Bottleneck(inplanes, planes, stride if block == 0 else 1))
            inplanes = planes * 4
    layers += [torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(2048, 1000)]
    return torch.nn.Sequential(*layers)


def commit(directory):
    torch.manual_seed(0)
    model = resnet50()
    assert sum(p.numel() for p in model.parameters()) == 25557032
    optimizer = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9),
                                         named_parameters=model.named_parameters())
    images = torch.randn(8, 3, 64, 64)
    labels = torch.randint(0, 1000, (8,))
    state = hvd.elastic.TorchState(model, optimizer, step=0)
    state.sync()
    steps, commits = [], []
    for step in range(14):
        started = time.time()
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(images), labels).backward()
        optimizer.step()
        state.step += 1
        if step >= 2:  # warm-up
            steps.append(time.time() - started)
        if step % 2 == 1:
            started = time.time()
            state.commit()
            commits.append(time.time() - started)
    if hvd.rank() == 0:
        write(directory, "commit", statistics.median(commits))
        write(directory, "step", statistics.median(steps))


hvd.init()
{"recovery": recovery, "commit": commit}[sys.argv[1]](sys.argv[2])
