"""horovod.torch as hvdrun.torch provides it (docs/python.md): this module *is* hvdrun.torch."""

import sys

import hvdrun.torch

sys.modules[__name__] = hvdrun.torch
sys.modules[__name__ + ".elastic"] = hvdrun.torch.elastic  # `from horovod.torch.elastic import ...`
