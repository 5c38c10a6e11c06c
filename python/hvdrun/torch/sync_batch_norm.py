"""SyncBatchNorm: batch normalization whose training statistics are those of every rank's batch, as Horovod's.

In training, each rank computes its batch's per-channel count, mean and (biased) variance; one sum
allreduce ('sync_batch_norm.stats', in float64) of count, count * mean and count * (variance + mean^2)
gives every rank the same mean and variance of the whole batch, with which it normalizes its own batch
and updates the running statistics (running_var with the unbiased variance of the whole batch, as
BatchNorm). Horovod allgathers every rank's count, mean and inverse deviation instead (three
allgathers); a named allreduce of a fixed size is what libhvdrun's response cache agrees on without a
full negotiation, so each layer's step waits for less.
Backward reduces the per-channel sums of the output gradient and of the gradient times the centred
input over the ranks with one sum allreduce ('sync_batch_norm.sum_dy'); the weight's and the bias's
gradients stay local, for the DistributedOptimizer to reduce. The names are reused by every layer,
one layer after another: libhvdrun allows a name again once its previous collective has completed.

In eval mode with running statistics, and in a job of one rank, it is torch's batch_norm on the local
batch. Unlike Horovod's, it takes CPU tensors as well as CUDA ones (whose allreduces run in device
memory in a --nccl job, staged through host memory otherwise: placement.py).
"""

import torch
import torch.nn.functional as F  # noqa: N812 (torch's own spelling)

from hvdrun import _C
from hvdrun.torch import mpi_ops


def _channel_shape(tensor):
    return [1, tensor.shape[1]] + [1] * (tensor.dim() - 2)


def _reduce_dims(tensor):
    return [0] + list(range(2, tensor.dim()))


def _stat_type(tensor):
    return torch.float64 if tensor.dtype == torch.float64 else torch.float32


class _SyncBatchNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, inputs, weight, bias, running_mean, running_var, eps, momentum):
        channels = inputs.shape[1]
        inputs = inputs.contiguous()
        stat_type = _stat_type(inputs)
        values = inputs.to(stat_type)
        var, mean = torch.var_mean(values, dim=_reduce_dims(inputs), unbiased=False)
        count = inputs.numel() // channels
        if count == 0:  # a rank without a batch contributes nothing
            mean, var = torch.zeros_like(mean), torch.zeros_like(var)
        mean, var = mean.double(), var.double()
        local = torch.cat([torch.full((1,), float(count), dtype=torch.float64, device=inputs.device),
                           mean * count, (var + mean * mean) * count])
        sums = mpi_ops.synchronize(mpi_ops.allreduce_async(local, name="sync_batch_norm.stats", op=mpi_ops.Sum))
        total = float(sums[0].item())
        if total <= 1:
            raise ValueError("hvdrun.torch.SyncBatchNorm: expected more than 1 value per channel over all ranks when "
                             "training, got input of size %s on rank %d" % (list(inputs.shape), _C.rank()))
        mean_all = sums[1:1 + channels] / total
        var_all = (sums[1 + channels:] / total - mean_all * mean_all).clamp_(min=0.0)
        if running_mean is not None:
            with torch.no_grad():
                running_mean.mul_(1.0 - momentum).add_(mean_all.to(running_mean.dtype), alpha=momentum)
                running_var.mul_(1.0 - momentum).add_((var_all * (total / (total - 1))).to(running_var.dtype),
                                                      alpha=momentum)
        shape = _channel_shape(inputs)
        mean = mean_all.to(stat_type)
        invstd = torch.rsqrt(var_all + eps).to(stat_type)
        output = (values - mean.view(shape)) * invstd.view(shape)
        if weight is not None:
            output = output * weight.to(stat_type).view(shape)
        if bias is not None:
            output = output + bias.to(stat_type).view(shape)
        ctx.save_for_backward(inputs, weight, mean, invstd)
        ctx.total = total
        return output.to(inputs.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        inputs, weight, mean, invstd = ctx.saved_tensors
        channels, shape, dims = inputs.shape[1], _channel_shape(inputs), _reduce_dims(inputs)
        stat_type = _stat_type(inputs)
        grads = grad_output.contiguous().to(stat_type)
        centred = inputs.to(stat_type) - mean.view(shape)
        sum_dy = grads.sum(dims)
        sum_dy_xmu = (grads * centred).sum(dims)
        grad_input = grad_weight = grad_bias = None
        if weight is not None and ctx.needs_input_grad[1]:
            grad_weight = (sum_dy_xmu * invstd).to(weight.dtype)
        if ctx.needs_input_grad[2]:
            grad_bias = sum_dy.to(weight.dtype if weight is not None else grad_output.dtype)
        if ctx.needs_input_grad[0]:
            sums = mpi_ops.synchronize(mpi_ops.allreduce_async(torch.cat([sum_dy, sum_dy_xmu]),
                                                               name="sync_batch_norm.sum_dy", op=mpi_ops.Sum))
            sum_dy_all, sum_dy_xmu_all = sums[:channels], sums[channels:]
            scale = invstd if weight is None else invstd * weight.to(stat_type)
            grad_input = (grads - (sum_dy_all / ctx.total).view(shape)
                          - centred * (invstd * invstd * sum_dy_xmu_all / ctx.total).view(shape)) * scale.view(shape)
            grad_input = grad_input.to(inputs.dtype)
        return grad_input, grad_weight, grad_bias, None, None, None, None


class SyncBatchNorm(torch.nn.modules.batchnorm._BatchNorm):  # pylint: disable=protected-access
    """Horovod's hvd.SyncBatchNorm: BatchNorm over the inputs of every rank's batch (see the module's
    documentation). Input: (N, C) or (N, C, ...), on the CPU or a CUDA device."""

    def _check_input_dim(self, input):  # pylint: disable=redefined-builtin  # torch's name
        if input.dim() < 2:
            raise ValueError("hvdrun.torch.SyncBatchNorm: expected at least 2-D input, got %d-D" % input.dim())

    def forward(self, input):  # pylint: disable=redefined-builtin,arguments-renamed
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # a cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked)
        if (not self.training and self.track_running_stats) or _C.size() == 1:
            return F.batch_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                                self.training or not self.track_running_stats, factor, self.eps)
        return _SyncBatchNormFunction.apply(input, self.weight, self.bias, self.running_mean, self.running_var,
                                            self.eps, factor)
