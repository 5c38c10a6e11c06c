"""A Horovod PyTorch training script, as a lab writes it, run by hvdrun with hvdrun.torch underneath.

It has the structure of Horovod's examples/pytorch/pytorch_mnist.py (a small CNN; the learning rate
scaled by the number of ranks; parameters and optimizer state broadcast from rank 0; the
DistributedOptimizer, optionally with fp16 compression; each rank training on its shard through a
DistributedSampler; test loss and accuracy averaged over ranks by allreduce) and imports
horovod.torch, so it runs unchanged through hvdrun's compatibility package (docs/python.md). It
trains on Fashion-MNIST from Debian's dataset-fashion-mnist, offline:

    export PYTHONPATH=/usr/share/hvdrun/horovod-compat    # horovod.torch is hvdrun.torch
    hvdrun -np 2 --gloo /usr/bin/python3 pytorch_mnist.py --epochs 3
    /usr/bin/python3 pytorch_mnist.py --epochs 3           # one process, for comparison

(/usr/bin/python3: the interpreter Debian's python3-torch belongs to.) Rank 0 prints each epoch's
test loss and accuracy, and a last line "final accuracy: 0.8512". --steps-per-epoch and
--expect-accuracy make the short run the tests use (tests/python/).
"""

import argparse
import gzip
import os
import sys
import time

import torch
import torch.nn.functional as F
import torch.utils.data.distributed

import horovod.torch as hvd

FASHION_MNIST = "/usr/share/datasets/fashion-mnist"  # dataset-fashion-mnist; hvdrun-trainer's default too


def parse_arguments():
    parser = argparse.ArgumentParser(description="Fashion-MNIST under hvdrun, Horovod style")
    parser.add_argument("--batch-size", type=int, default=64, help="training batch size per rank")
    parser.add_argument("--test-batch-size", type=int, default=1000)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=0.01, help="learning rate of one rank (scaled by the ranks)")
    parser.add_argument("--momentum", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--log-interval", type=int, default=100, help="batches between progress lines")
    parser.add_argument("--fp16-allreduce", action="store_true", help="Compression.fp16 for the gradients")
    parser.add_argument("--use-adasum", action="store_true", help="Adasum (hvdrun.torch refuses it)")
    parser.add_argument("--gradient-predivide-factor", type=float, default=1.0)
    parser.add_argument("--data-dir", default=FASHION_MNIST, help="the four IDX .gz files of (Fashion-)MNIST")
    parser.add_argument("--steps-per-epoch", type=int, default=0, help="stop each epoch after this many batches")
    parser.add_argument("--expect-accuracy", type=float, default=0.0,
                        help="exit 1 when the final test accuracy is below this (a test's check)")
    return parser.parse_args()


def read_idx(path):
    """An IDX file (gzip-compressed) as a uint8 tensor of its dimensions."""
    with gzip.open(path, "rb") as source:
        data = source.read()
    dimensions = data[3]
    shape = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(dimensions)]
    values = torch.frombuffer(bytearray(data[4 + 4 * dimensions:]), dtype=torch.uint8)
    return values.view(shape)


def load(data_dir, split):
    images = read_idx(os.path.join(data_dir, "%s-images-idx3-ubyte.gz" % split))
    labels = read_idx(os.path.join(data_dir, "%s-labels-idx1-ubyte.gz" % split))
    # Normalized as Horovod's example normalizes MNIST.
    inputs = (images.float().div(255.0).unsqueeze(1) - 0.1307) / 0.3081
    return torch.utils.data.TensorDataset(inputs, labels.long())


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = torch.nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = torch.nn.Dropout2d()
        self.fc1 = torch.nn.Linear(320, 50)
        self.fc2 = torch.nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = F.relu(self.fc1(x.view(-1, 320)))
        x = F.dropout(x, training=self.training)
        return F.log_softmax(self.fc2(x), dim=1)


def metric_average(value, name):
    return hvd.allreduce(torch.tensor(value), name=name).item()


def train(epoch, model, optimizer, loader, sampler, args):
    model.train()
    sampler.set_epoch(epoch)  # a new shuffle each epoch, the same on every rank
    started = time.monotonic()
    for batch, (data, target) in enumerate(loader):
        if args.steps_per_epoch and batch >= args.steps_per_epoch:
            break
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()
        if batch % args.log_interval == 0 and hvd.rank() == 0:
            print("epoch %d: [%d/%d]\tloss %.4f" % (epoch, batch * len(data), len(sampler), loss.item()), flush=True)
    return time.monotonic() - started


def test(model, loader, sampler):
    model.eval()
    loss, correct = 0.0, 0.0
    with torch.no_grad():
        for data, target in loader:
            output = model(data)
            loss += F.nll_loss(output, target, reduction="sum").item()
            correct += output.argmax(dim=1).eq(target).float().sum().item()
    loss, accuracy = loss / len(sampler), correct / len(sampler)
    # Each rank tested its shard: the job's figures are the average over ranks.
    return metric_average(loss, "avg_loss"), metric_average(accuracy, "avg_accuracy")


def main():
    args = parse_arguments()
    hvd.init()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # one core per rank: the ranks share the host's cores

    train_set, test_set = load(args.data_dir, "train"), load(args.data_dir, "t10k")
    train_sampler = torch.utils.data.distributed.DistributedSampler(train_set, num_replicas=hvd.size(),
                                                                    rank=hvd.rank())
    test_sampler = torch.utils.data.distributed.DistributedSampler(test_set, num_replicas=hvd.size(),
                                                                   rank=hvd.rank(), shuffle=False)
    train_loader = torch.utils.data.DataLoader(train_set, batch_size=args.batch_size, sampler=train_sampler)
    test_loader = torch.utils.data.DataLoader(test_set, batch_size=args.test_batch_size, sampler=test_sampler)

    model = Net()
    # The effective batch is size() times larger: the learning rate grows with it (Adasum: only
    # with the ranks of one host, as Horovod scales it).
    lr_scaler = hvd.size() if not args.use_adasum else hvd.local_size()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr * lr_scaler, momentum=args.momentum)

    # Every rank starts from rank 0's weights and optimizer state.
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    hvd.broadcast_optimizer_state(optimizer, root_rank=0)

    compression = hvd.Compression.fp16 if args.fp16_allreduce else hvd.Compression.none
    optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters(),
                                         compression=compression,
                                         op=hvd.Adasum if args.use_adasum else hvd.Average,
                                         gradient_predivide_factor=args.gradient_predivide_factor)

    accuracy = 0.0
    for epoch in range(1, args.epochs + 1):
        seconds = train(epoch, model, optimizer, train_loader, train_sampler, args)
        loss, accuracy = test(model, test_loader, test_sampler)
        if hvd.rank() == 0:
            print("epoch %d: test loss %.4f, accuracy %.2f%% (%d ranks, %.1f s training)"
                  % (epoch, loss, 100.0 * accuracy, hvd.size(), seconds), flush=True)
    if hvd.rank() == 0:
        print("final accuracy: %.4f" % accuracy, flush=True)
    if accuracy < args.expect_accuracy:
        print("rank %d: accuracy %.4f is below the expected %.4f" % (hvd.rank(), accuracy, args.expect_accuracy),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
