"""Horovod's examples/pytorch/pytorch_synthetic_benchmark.py, as written today, run over hvdrun.torch.

    hvdrun -np 2 --gloo python3 pytorch_synthetic_benchmark.py --no-cuda --threads 1 --image-size 224 --batch-size 8

The training loop is Horovod's: a ResNet whose batch normalization is hvd.SyncBatchNorm, SGD wrapped
in hvd.DistributedOptimizer with compression (--fp16-allreduce) and op (hvd.Average, or hvd.Adasum
with --use-adasum, which hvdrun.torch refuses in one line), parameters and optimizer state broadcast
from rank 0, then timed batches of fixed synthetic images. It imports `horovod.torch` when that is
on the path (hvdrun's compatibility alias, docs/python.md) and hvdrun.torch otherwise.

hvdrun's additions, none of which changes the loop: --image-size (Horovod's is 224), --threads
(torch's intra-op threads per rank), --local-batch-norm (torch's BatchNorm2d instead of
hvd.SyncBatchNorm, to measure what synchronizing costs), --check (after the benchmark, every rank's parameters, buffers
and SyncBatchNorm running statistics must equal rank 0's, else the script exits 1), and a ResNet
written here for machines without torchvision (Debian's python3-torch has none): torchvision's
bottleneck ResNet-50 layout (and ResNet-18's basic blocks) with its `norm_layer` argument.
"""

import argparse
import sys
import timeit

import torch
import torch.backends.cudnn as cudnn
import torch.nn.functional as F  # noqa: N812 (Horovod's spelling)
import torch.optim as optim

try:
    import horovod.torch as hvd
except ImportError:
    import hvdrun.torch as hvd


class BasicBlock(torch.nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride, norm_layer):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = norm_layer(planes)
        self.conv2 = torch.nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = norm_layer(planes)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = torch.nn.Sequential(torch.nn.Conv2d(inplanes, planes, 1, stride, bias=False),
                                                  norm_layer(planes))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + (x if self.downsample is None else self.downsample(x)))


class Bottleneck(torch.nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride, norm_layer):
        super().__init__()
        width = planes * self.expansion
        self.conv1 = torch.nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = norm_layer(planes)
        self.conv2 = torch.nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
        self.bn2 = norm_layer(planes)
        self.conv3 = torch.nn.Conv2d(planes, width, 1, bias=False)
        self.bn3 = norm_layer(width)
        self.downsample = None
        if stride != 1 or inplanes != width:
            self.downsample = torch.nn.Sequential(torch.nn.Conv2d(inplanes, width, 1, stride, bias=False),
                                                  norm_layer(width))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = F.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return F.relu(out + (x if self.downsample is None else self.downsample(x)))


class ResNet(torch.nn.Module):
    """torchvision's ResNet layout: a 7x7 stem, four stages, global average pooling, 1000 classes."""

    def __init__(self, block, layers, norm_layer=torch.nn.BatchNorm2d, num_classes=1000):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = norm_layer(64)
        stages, inplanes = [], 64
        for index, (planes, blocks) in enumerate(zip((64, 128, 256, 512), layers)):
            stage = []
            for number in range(blocks):
                stage.append(block(inplanes, planes, 2 if number == 0 and index > 0 else 1, norm_layer))
                inplanes = planes * block.expansion
            stages.append(torch.nn.Sequential(*stage))
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.fc = torch.nn.Linear(inplanes, num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 3, 2, 1)
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


MODELS = {"resnet18": (BasicBlock, [2, 2, 2, 2]), "resnet50": (Bottleneck, [3, 4, 6, 3])}


def make_model(name, norm_layer):
    try:
        from torchvision import models  # pylint: disable=import-outside-toplevel
    except ImportError:
        models = None
    if models is not None:
        return getattr(models, name)(norm_layer=norm_layer)
    if name not in MODELS:
        sys.exit("pytorch_synthetic_benchmark: without torchvision the models are %s, not %s" % (", ".join(MODELS), name))
    block, layers = MODELS[name]
    return ResNet(block, layers, norm_layer)


def check_same_as_rank_zero(model):
    """Every rank's parameters and buffers (SyncBatchNorm's running statistics) must be rank 0's."""
    differing = []
    for name, tensor in list(model.named_parameters()) + list(model.named_buffers()):
        root = hvd.broadcast(tensor.detach(), root_rank=0, name="check." + name)
        if not torch.equal(root, tensor.detach()):
            differing.append(name)
    if differing:
        print("rank %d: %d tensors differ from rank 0's, the first %s" % (hvd.rank(), len(differing), differing[0]),
              file=sys.stderr)
        return False
    return True


def parse_args():
    parser = argparse.ArgumentParser(description="PyTorch Synthetic Benchmark",
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--fp16-allreduce", action="store_true", default=False,
                        help="use fp16 compression during allreduce")
    parser.add_argument("--model", type=str, default="resnet50", help="model to benchmark")
    parser.add_argument("--batch-size", type=int, default=32, help="input batch size")
    parser.add_argument("--num-warmup-batches", type=int, default=10,
                        help="number of warm-up batches that don't count towards benchmark")
    parser.add_argument("--num-batches-per-iter", type=int, default=10, help="number of batches per benchmark iteration")
    parser.add_argument("--num-iters", type=int, default=10, help="number of benchmark iterations")
    parser.add_argument("--no-cuda", action="store_true", default=False, help="disables CUDA training")
    parser.add_argument("--use-adasum", action="store_true", default=False, help="use adasum algorithm to do reduction")
    parser.add_argument("--image-size", type=int, default=224, help="(hvdrun) height and width of the synthetic images")
    parser.add_argument("--threads", type=int, default=0, help="(hvdrun) torch threads per rank; 0: torch's default")
    parser.add_argument("--local-batch-norm", action="store_true", default=False,
                        help="(hvdrun) torch.nn.BatchNorm2d instead of hvd.SyncBatchNorm")
    parser.add_argument("--check", action="store_true", default=False,
                        help="(hvdrun) afterwards, check that every rank's model is rank 0's")
    args = parser.parse_args()
    args.cuda = not args.no_cuda and torch.cuda.is_available()
    return args


def make_training(args):
    """Horovod's set-up: the model, and the DistributedOptimizer over it, both as rank 0 has them."""
    # Set up standard model.
    model = make_model(args.model, torch.nn.BatchNorm2d if args.local_batch_norm else hvd.SyncBatchNorm)

    # By default, Adasum doesn't need scaling up learning rate.
    lr_scaler = hvd.size() if not args.use_adasum else 1

    if args.cuda:
        # Move model to GPU.
        model.cuda()
        # If using GPU Adasum allreduce, scale learning rate by local_size.
        if args.use_adasum and hvd.nccl_built():
            lr_scaler = hvd.local_size()

    optimizer = optim.SGD(model.parameters(), lr=0.01 * lr_scaler)

    # Horovod: (optional) compression algorithm.
    compression = hvd.Compression.fp16 if args.fp16_allreduce else hvd.Compression.none

    # Horovod: wrap optimizer with DistributedOptimizer.
    optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters(), compression=compression,
                                         op=hvd.Adasum if args.use_adasum else hvd.Average)

    # Horovod: broadcast parameters & optimizer state.
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    hvd.broadcast_optimizer_state(optimizer, root_rank=0)
    return model, optimizer


def fake_batch(args):
    """Fixed fake data (hvdrun: a different batch on every rank, so that SyncBatchNorm has something to
    synchronize)."""
    torch.manual_seed(hvd.rank())
    data = torch.randn(args.batch_size, 3, args.image_size, args.image_size)
    target = torch.LongTensor(args.batch_size).random_() % 1000
    if args.cuda:
        data, target = data.cuda(), target.cuda()
    return data, target


def log(s, nl=True):
    if hvd.rank() != 0:
        return
    print(s, end="\n" if nl else "", flush=True)


def run_benchmark(args, benchmark_step):
    """Horovod's warm-up, timed iterations and result lines (rank 0 prints them)."""
    log("Model: %s" % args.model)
    log("Batch size: %d" % args.batch_size)
    device = "GPU" if args.cuda else "CPU"
    log("Number of %ss: %d" % (device, hvd.size()))

    # Warm-up
    log("Running warmup...")
    timeit.timeit(benchmark_step, number=args.num_warmup_batches)

    # Benchmark
    log("Running benchmark...")
    img_secs = []
    for x in range(args.num_iters):
        time = timeit.timeit(benchmark_step, number=args.num_batches_per_iter)
        img_sec = args.batch_size * args.num_batches_per_iter / time
        log("Iter #%d: %.1f img/sec per %s" % (x, img_sec, device))
        img_secs.append(img_sec)

    # Results
    img_sec_mean = sum(img_secs) / len(img_secs)
    img_sec_conf = 1.96 * (sum((v - img_sec_mean) ** 2 for v in img_secs) / len(img_secs)) ** 0.5
    log("Img/sec per %s: %.1f +-%.1f" % (device, img_sec_mean, img_sec_conf))
    log("Total img/sec on %d %s(s): %.1f +-%.1f" %
        (hvd.size(), device, hvd.size() * img_sec_mean, hvd.size() * img_sec_conf))


def main():
    args = parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)

    hvd.init()

    if args.cuda:
        # Horovod: pin GPU to local rank.
        torch.cuda.set_device(hvd.local_rank())

    cudnn.benchmark = True

    model, optimizer = make_training(args)
    data, target = fake_batch(args)

    def benchmark_step():
        optimizer.zero_grad()
        output = model(data)
        loss = F.cross_entropy(output, target)
        loss.backward()
        optimizer.step()

    run_benchmark(args, benchmark_step)

    if args.check:
        if not check_same_as_rank_zero(model):
            sys.exit(1)
        log("Every rank's model is rank 0's")


if __name__ == "__main__":
    main()
