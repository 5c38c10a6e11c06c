"""The PyTorch-eager twin of hvdrun-trainer's synthetic step, for scripts/gpu-check.sh.

usage: python3 eager_train.py --model resnet50 --batch-size 64 --image-size 224 --device cuda
                              [--warmup-steps 5] [--steps 20] --json FILE

The same step as hvdrun-trainer --synthetic: torchvision's model (hvdrun-trainer's ResNets and VGG
are torchvision's layer for layer), one fixed batch of random images and labels, cross-entropy,
SGD with momentum 0.9 at lr 0.1, float32; the loss read back every step, as the trainer does.
Writes {"model", "batch_size", "step_time_s" (mean of the timed steps), "img_per_sec_total"}.
"""
import argparse
import json
import os
import sys
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="resnet50")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--image-size", type=int, default=224)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--warmup-steps", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--json", required=True)
    args = parser.parse_args()

    import torch
    import torchvision

    builders = {"resnet18": torchvision.models.resnet18, "resnet50": torchvision.models.resnet50,
                "vgg16": torchvision.models.vgg16}
    if args.model not in builders:
        sys.exit(f"eager_train.py: --model: unknown model '{args.model}' (known: {', '.join(builders)})")
    device = torch.device(args.device)
    torch.manual_seed(42)
    model = builders[args.model](num_classes=1000).to(device)
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    images = torch.randn(args.batch_size, 3, args.image_size, args.image_size, device=device)
    labels = torch.randint(1000, (args.batch_size,), device=device)
    loss_fn = torch.nn.CrossEntropyLoss()

    times = []
    for i in range(args.warmup_steps + args.steps):
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(images), labels)
        loss.backward()
        optimizer.step()
        loss.item()
        if i >= args.warmup_steps:
            times.append(time.perf_counter() - start)
    step = sum(times) / len(times)
    document = {"model": args.model, "batch_size": args.batch_size, "step_time_s": step,
                "img_per_sec_total": args.batch_size / step}
    with open(args.json + ".tmp", "w") as f:
        json.dump(document, f)
    os.replace(args.json + ".tmp", args.json)


if __name__ == "__main__":
    main()
