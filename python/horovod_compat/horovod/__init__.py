"""Horovod's package name over hvdrun: `import horovod.torch as hvd` is hvdrun.torch.

This directory is put on PYTHONPATH on purpose (docs/python.md); it is never installed where it would
shadow a real Horovod. Only horovod.torch is provided.
"""
