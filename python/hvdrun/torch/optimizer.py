"""DistributedOptimizer: averages gradients over the ranks while backward runs, as Horovod's.

A hook on each parameter's gradient accumulator runs once autograd has added a pass's gradient into
.grad; after `backward_passes_per_step` passes it starts an asynchronous allreduce of .grad (through
`compression`), named after the parameter, so that the later layers' gradients travel while the
earlier layers' are computed. step() first waits for them all (synchronize) and leaves the reduced
gradients in .grad, then runs the wrapped optimizer's step. Gradients are summed over the passes
locally and not divided by their number; with op=Average the sum over ranks is divided by the number
of ranks, split as 1/gradient_predivide_factor before the sum and gradient_predivide_factor/size after.
With `groups`, the gradients of a group's parameters are reduced together, by one grouped allreduce
started once every parameter of the group has had its passes. A sparse gradient (nn.Embedding(sparse=True))
goes through sparse_allreduce_async, or, with sparse_as_dense, as a dense allreduce made sparse again.
"""

import contextlib
import warnings

import torch

from hvdrun import _C
from hvdrun.torch import mpi_ops
from hvdrun.torch.basics import check_process_set
from hvdrun.torch.compression import Compression, wire_format
from hvdrun.torch.sparse import sparse_allreduce_async


class _DistributedOptimizerMethods:
    """The methods a DistributedOptimizer adds to (or puts in front of) the wrapped optimizer's class."""

    def _hvd_setup(self, named_parameters, compression, backward_passes_per_step, op, gradient_predivide_factor,
                   groups, process_set=None):
        self._hvd_compression = compression
        self._hvd_process_set = process_set
        self._hvd_passes = backward_passes_per_step
        self._hvd_op = op
        self._hvd_predivide = gradient_predivide_factor
        params = [p for group in self.param_groups for p in group["params"]]
        if named_parameters is not None:
            named = list(named_parameters)
            if not all(isinstance(item, tuple) and len(item) == 2 for item in named):
                raise ValueError("hvdrun.torch.DistributedOptimizer: named_parameters must be (name, parameter) tuples, "
                                 "as model.named_parameters() gives")
            names = [name for name, _ in named]
            if len(set(names)) != len(names):
                duplicates = sorted({name for name in names if names.count(name) > 1})
                raise ValueError("hvdrun.torch.DistributedOptimizer: named_parameters has duplicate names: %s"
                                 % ", ".join(duplicates))
            by_param = {id(p): name for name, p in named}
            unnamed = [index for index, p in enumerate(params) if id(p) not in by_param]
            if unnamed:
                raise ValueError("hvdrun.torch.DistributedOptimizer: %d of the optimizer's parameters are not in "
                                 "named_parameters (the first is number %d); pass model.named_parameters() of the "
                                 "model the optimizer trains" % (len(unnamed), unnamed[0]))
            self._hvd_names = {id(p): by_param[id(p)] for p in params}
        else:  # Horovod's names: allreduce.noname.<group index>.<index in the group>
            self._hvd_names = {id(p): "allreduce.noname.%d.%d" % (i, j)
                               for i, group in enumerate(self.param_groups) for j, p in enumerate(group["params"])}
        self._hvd_params = [p for p in params if p.requires_grad]
        self._hvd_groups = _gradient_groups(self._hvd_params, groups)
        self._hvd_group_of = {id(p): index for index, group in enumerate(self._hvd_groups) for p in group}
        self._hvd_passes_left = {id(p): backward_passes_per_step for p in self._hvd_params}
        self._hvd_done = {index: set() for index in range(len(self._hvd_groups))}  # params whose passes are done
        self._hvd_handles = {}  # group index -> (handle, [(compressed gradient, compression context)])
        self._hvd_should_synchronize = True
        self._hvd_synchronized = False
        self._hvd_accumulators = []
        if _C.size() > 1 and self._hvd_included():
            for p in self._hvd_params:
                # The accumulator autograd adds p's gradient with; held, since p holds it weakly.
                accumulator = p.expand_as(p).grad_fn.next_functions[0][0]
                accumulator.register_hook(self._hvd_make_hook(p))
                self._hvd_accumulators.append(accumulator)

    def _hvd_included(self):
        """Whether this rank reduces gradients: in the process set (as Horovod's, a rank outside it steps on its own
        gradients)."""
        return self._hvd_process_set is None or bool(self._hvd_process_set.included())

    def _hvd_make_hook(self, param):
        def hook(*unused):
            key = id(param)
            index = self._hvd_group_of[key]
            if index in self._hvd_handles or self._hvd_passes_left[key] == 0:
                raise AssertionError(
                    "hvdrun.torch.DistributedOptimizer: parameter '%s' got a gradient after its allreduce started: "
                    "more backward passes than backward_passes_per_step=%d before step() or synchronize()"
                    % (self._hvd_names[key], self._hvd_passes))
            self._hvd_passes_left[key] -= 1
            if self._hvd_passes_left[key] == 0:
                self._hvd_done[index].add(key)
                if len(self._hvd_done[index]) == len(self._hvd_groups[index]):
                    self._hvd_start(index)

        return hook

    def _hvd_start(self, index):
        """Starts the allreduce of group `index`'s gradients: one allreduce for a parameter alone, a grouped
        allreduce (named after its first parameter) for a group."""
        group = self._hvd_groups[index]
        grads = [p.grad.to_dense() if p.grad.is_sparse and self._hvd_sparse_as_dense else p.grad for p in group]
        if grads[0].is_sparse and len(group) == 1:
            # As Horovod's: a sparse gradient goes through sparse_allreduce_async, uncompressed.
            handle = sparse_allreduce_async(grads[0], "grad." + self._hvd_names[id(group[0])], self._hvd_op,
                                            process_set=self._hvd_process_set)
            self._hvd_handles[index] = (handle, [(None, None)])
            return
        if any(grad.is_sparse for grad in grads):
            raise ValueError("hvdrun.torch.DistributedOptimizer: parameter '%s' has a sparse gradient in a group of "
                             "parameters; pass sparse_as_dense=True, or leave it out of groups"
                             % self._hvd_names[id(next(p for p, g in zip(group, grads) if g.is_sparse))])
        compressed = [self._hvd_compression.compress(grad) for grad in grads]
        options = {"op": self._hvd_op, "wire_format": wire_format(self._hvd_compression),
                   "process_set": self._hvd_process_set}
        if self._hvd_op is mpi_ops.Average:
            options.update(prescale_factor=1.0 / self._hvd_predivide, postscale_factor=self._hvd_predivide)
        if len(group) == 1:
            handle = mpi_ops.allreduce_async_(compressed[0][0], name="grad." + self._hvd_names[id(group[0])], **options)
        else:
            handle = mpi_ops.grouped_allreduce_async_([value for value, _ in compressed],
                                                      name="grad_group." + self._hvd_names[id(group[0])], **options)
        self._hvd_handles[index] = (handle, compressed)

    def synchronize(self):
        """Waits for every gradient's allreduce (starting those of groups whose parameters got fewer passes
        or none, as zeros where .grad is None) and leaves the results in .grad."""
        # Reductions in flight are waited for even on one rank: an elastic job that shrank to one keeps the
        # hooks of its larger rounds.
        if not self._hvd_handles and (_C.size() == 1 or not self._hvd_included()):
            self._hvd_synchronized = True
            return
        for index, group in enumerate(self._hvd_groups):
            if index not in self._hvd_handles:
                for p in group:
                    if p.grad is None:
                        p.grad = torch.zeros_like(p)
                self._hvd_start(index)
        for index, (handle, compressed) in list(self._hvd_handles.items()):
            result = mpi_ops.synchronize(handle)
            for p, (value, ctx) in zip(self._hvd_groups[index], compressed):
                self._hvd_passes_left[id(p)] = self._hvd_passes
                reduced = result if value is None else self._hvd_compression.decompress(value, ctx)
                with torch.no_grad():
                    if p.grad.is_sparse:  # as Horovod's: set_() does not take sparse gradients
                        p.grad.zero_().add_(reduced if reduced.is_sparse else reduced.to_sparse())
                    elif value is not p.grad:
                        p.grad.copy_(reduced)
            self._hvd_done[index].clear()
        self._hvd_handles.clear()
        self._hvd_synchronized = True

    def _hvd_abandon(self):
        """Forgets the gradients' reductions in flight and counts backward passes afresh: hvd.elastic's state
        calls it when the job re-forms, as those reductions belonged to a round that is over (each handle is
        waited for, which a broken or ended runtime completes at once, and released)."""
        for handle, _ in self._hvd_handles.values():
            try:
                mpi_ops.synchronize(handle)
            except Exception:  # pylint: disable=broad-except  # the lost round's failure, known already
                pass
        self._hvd_handles.clear()
        for done in self._hvd_done.values():
            done.clear()
        self._hvd_passes_left = {id(p): self._hvd_passes for p in self._hvd_params}
        self._hvd_synchronized = False

    @contextlib.contextmanager
    def skip_synchronize(self):
        """Within it, step() does not synchronize: for a step after an explicit synchronize()."""
        self._hvd_should_synchronize = False
        try:
            yield
        finally:
            self._hvd_should_synchronize = True

    def step(self, closure=None):
        if self._hvd_should_synchronize:
            if self._hvd_synchronized:
                warnings.warn("hvdrun.torch.DistributedOptimizer: step() after synchronize() reduces the gradients "
                              "again; call step() inside optimizer.skip_synchronize()")
            self.synchronize()
        self._hvd_synchronized = False
        return self._hvd_base.step(self, closure)

    def zero_grad(self, *args, **kwargs):
        if self._hvd_handles:
            raise AssertionError("hvdrun.torch.DistributedOptimizer: zero_grad() while gradients are being reduced: "
                                 "call step() or synchronize() between backward() and zero_grad()")
        return self._hvd_base.zero_grad(self, *args, **kwargs)


def _gradient_groups(params, groups):
    """The parameters in groups whose gradients are reduced together, as Horovod's `groups`: an int n
    splits the parameters (in the optimizer's order, the same on every rank when the model is built the
    same way) into n contiguous groups of sizes that differ by one at most; a list of lists of parameters
    gives the groups, every parameter in none of them is a group of its own. None or 0: no groups."""
    if groups is None or (isinstance(groups, int) and groups == 0):
        return [(p,) for p in params]
    if isinstance(groups, int):
        if groups < 0:
            raise ValueError("hvdrun.torch.DistributedOptimizer: groups must be a non-negative int or a list of lists "
                             "of parameters, got %d" % groups)
        count = min(groups, len(params))
        base, extra = divmod(len(params), count) if count else (0, 0)
        result, start = [], 0
        for index in range(count):
            end = start + base + (1 if index < extra else 0)
            result.append(tuple(params[start:end]))
            start = end
        return result
    if not isinstance(groups, (list, tuple)) or not all(isinstance(group, (list, tuple)) for group in groups):
        raise ValueError("hvdrun.torch.DistributedOptimizer: groups must be a non-negative int or a list of lists of "
                         "parameters, got %r" % (type(groups).__name__,))
    trained = {id(p) for p in params}
    placed = set()
    result = []
    for number, group in enumerate(groups):
        members = []
        for p in group:
            if id(p) not in trained:
                raise ValueError("hvdrun.torch.DistributedOptimizer: groups[%d] holds a tensor that is not a parameter "
                                 "the optimizer trains (with requires_grad)" % number)
            if id(p) in placed:
                raise ValueError("hvdrun.torch.DistributedOptimizer: a parameter is in more than one of groups (again "
                                 "in groups[%d])" % number)
            placed.add(id(p))
            members.append(p)
        if members:
            result.append(tuple(members))
    result.extend((p,) for p in params if id(p) not in placed)
    return result


def DistributedOptimizer(optimizer, named_parameters=None, compression=Compression.none,  # noqa: N802 (Horovod's name)
                         backward_passes_per_step=1, op=mpi_ops.Average, gradient_predivide_factor=1.0,
                         num_groups=0, groups=None, sparse_as_dense=False, process_set=None):
    """An optimizer of `optimizer`'s class, over its parameter groups and state, that averages (op) the
    gradients over all ranks before each step. See the module's documentation."""
    check_process_set(process_set)
    if op is mpi_ops.Adasum:
        mpi_ops.unsupported("Adasum (hvdrun.torch.DistributedOptimizer(op=hvd.Adasum))", "use op=hvd.Average (or hvd.Sum)")
    if op not in (mpi_ops.Average, mpi_ops.Sum, mpi_ops.Min, mpi_ops.Max):
        raise ValueError("hvdrun.torch.DistributedOptimizer: op must be hvd.Average, hvd.Sum, hvd.Min or hvd.Max")
    if num_groups and groups is not None:
        raise ValueError("hvdrun.torch.DistributedOptimizer: pass groups= or num_groups= (deprecated), not both")
    if num_groups:
        groups = int(num_groups)
    if gradient_predivide_factor != 1.0 and op is not mpi_ops.Average:
        raise ValueError("hvdrun.torch.DistributedOptimizer: gradient_predivide_factor needs op=hvd.Average")
    if int(backward_passes_per_step) < 1:
        raise ValueError("hvdrun.torch.DistributedOptimizer: backward_passes_per_step must be at least 1, got %r"
                         % (backward_passes_per_step,))
    base = optimizer.__class__
    methods = {name: value for name, value in vars(_DistributedOptimizerMethods).items()
               if not name.startswith("__")}
    methods["_hvd_base"] = base
    cls = type(base.__name__, (base,), methods)
    distributed = cls.__new__(cls)
    distributed.__dict__.update(optimizer.__dict__)  # the same parameter groups, defaults and state
    distributed._hvd_sparse_as_dense = bool(sparse_as_dense)  # pylint: disable=protected-access
    distributed._hvd_setup(named_parameters, compression, int(backward_passes_per_step), op,  # pylint: disable=protected-access
                           float(gradient_predivide_factor), groups, process_set)
    return distributed
