"""hvdrun's Python package: hvdrun.torch is Horovod's PyTorch API over libhvdrun (docs/python.md)."""
