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


class WireCompressor(NoneCompressor):
    """hvdrun's own: the tensor is handed to libhvdrun as it is, and libhvdrun sends float32 sums and
    averages in `wire_format` (docs/compression.md), with the job's fp8 safeguards (block scaling,
    float32 sums, error feedback: hvdrun's --fp8-* flags); tensors of other types travel as they are."""

    wire_format = None


class BF16Compressor(WireCompressor):
    """float32 sums and averages travel as bfloat16 (divided before the sum for an average)."""

    wire_format = "bf16"


class FP8Compressor(WireCompressor):
    """float32 sums and averages travel as fp8 E4M3, with hvdrun's fp8 safeguards."""

    wire_format = "fp8-e4m3"


class FP8E5M2Compressor(WireCompressor):
    """float32 sums and averages travel as fp8 E5M2, with hvdrun's fp8 safeguards."""

    wire_format = "fp8-e5m2"


def wire_format(compression):
    """The libhvdrun wire format a compressor asks for; None for Horovod's own compressors."""
    return getattr(compression, "wire_format", None)


class Compression:
    """The compressors DistributedOptimizer and allreduce take (compression=hvd.Compression.fp16).

    none and fp16 are Horovod's: fp16 casts the tensor to float16 before the allreduce. bf16, fp8 and
    fp8_e5m2 are hvdrun's: libhvdrun converts float32 values on the wire. Compression.none leaves the
    job's own compression (hvdrun --compression) in force.
    """

    none = NoneCompressor
    fp16 = FP16Compressor
    bf16 = BF16Compressor
    fp8 = FP8Compressor
    fp8_e5m2 = FP8E5M2Compressor
