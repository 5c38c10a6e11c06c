"""Gradient compression as Horovod's Compression: compress before the allreduce, decompress after."""

import torch


class Compressor:
    """Turns a tensor into what is reduced, and the result back; `ctx` carries what decompress needs."""

    @staticmethod
    def compress(tensor):
        raise NotImplementedError

    @staticmethod
    def decompress(tensor, ctx):
        raise NotImplementedError


class NoneCompressor(Compressor):
    """Reduces tensors as they are."""

    @staticmethod
    def compress(tensor):
        return tensor, None

    @staticmethod
    def decompress(tensor, ctx):
        return tensor


class FP16Compressor(Compressor):
    """Floating-point tensors are reduced as float16 and cast back to their type; others as they are.

    An average of float16 values is divided by the number of ranks before the sum (hvdrun.torch's
    allreduce does so for every float16 average), so that the sum cannot overflow float16.
    """

    @staticmethod
    def compress(tensor):
        if tensor.dtype.is_floating_point and tensor.dtype != torch.float16:
            return tensor.to(torch.float16), tensor.dtype
        return tensor, None

    @staticmethod
    def decompress(tensor, ctx):
        return tensor if ctx is None else tensor.to(ctx)


class Compression:
    """The compressors DistributedOptimizer and allreduce take (compression=hvd.Compression.fp16)."""

    none = NoneCompressor
    fp16 = FP16Compressor
