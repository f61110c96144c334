"""`DistributedDataParallel`: keep one model copy per process identical by averaging gradients.

At construction rank 0's parameters and buffers are broadcast, so every copy starts the same. The
gradients are then averaged by a `Reducer` (reducer.py), bucket by bucket as PyTorch does: parameters are
grouped into buckets of about `bucket_cap_mb`, and each bucket is all-reduced with one non-blocking
collective as soon as backward has produced all its gradients (and the buckets before it have started),
overlapping the rest of backward; after the first step the buckets follow the order gradients arrive. After
`loss.backward()` every rank holds the same `.grad` (the gradient of the mean loss over all ranks' batches),
so the same optimizer step keeps the copies identical.
"""
from __future__ import annotations

import contextlib

from ...autograd.grad_mode import is_grad_enabled
from ...distributed.collectives import all_reduce, broadcast
from ...distributed.process_group import get_rank, get_world_size, is_initialized
from ...distributed.reduce_op import ReduceOp
from ...dtypes import float64
from ...factories import tensor
from ..modules.module import Module
from .reducer import Reducer


class DistributedDataParallel(Module):
    """Data-parallel wrapper, like `torch.nn.parallel.DistributedDataParallel`.

    Call it like the wrapped model; `ddp.module` is the model itself (save `ddp.module.state_dict()`).
    After `loss.backward()` each parameter's `.grad` is the average over all processes.
    Gradients are all-reduced in buckets of about `bucket_cap_mb` MiB (default 25), always in bucket order.
    The first step uses one bucket; the next forward rebuilds the buckets once in the order the gradients
    became ready (rank 0's order, with a first bucket of 1 MiB by default). By default every parameter must
    get a gradient in each backward (otherwise a helpful error). With `find_unused_parameters=True` a missing
    gradient counts as zero: a parameter used on some ranks only gets sum(grads) / world_size on every rank,
    one that no rank used keeps its `.grad` (None after `zero_grad()`); the buckets then stay in reverse
    parameter order (first bucket 1 MiB by default) and are not rebuilt.
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False):
        super().__init__()
        if not is_initialized():
            raise ValueError(
                "Default process group has not been initialized, please make sure to call init_process_group. "
                "Hint: call tc.distributed.init_process_group(\"mpi\") before wrapping the model."
            )
        self.module = module
        self.device_ids = device_ids
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.world_size = get_world_size()
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        self._grad_params = [p for _, p in named]
        if not self._grad_params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        self._check_same_model()
        self._broadcast_state()
        self.static_graph = static_graph
        self.reducer = Reducer(self._grad_params, [n for n, _ in named], bucket_cap_mb, find_unused_parameters,
                               static_graph)
        self._hook_handles = [p.register_hook(self._make_hook(i)) for i, p in enumerate(self._grad_params)]

    # ---- construction -----------------------------------------------------------------------------
    def _check_same_model(self):
        """Every rank must wrap a model with the same parameters (count and sizes)."""
        sizes = [p.numel() for p in self._grad_params]
        signature = tensor([len(sizes), sum(sizes), sum((i + 1) * n for i, n in enumerate(sizes))], dtype=float64)
        low, high = signature.clone(), signature.clone()
        all_reduce(low, op=ReduceOp.MIN)
        all_reduce(high, op=ReduceOp.MAX)
        if low.tolist() != high.tolist():
            raise RuntimeError(
                "DDP expects same model across all ranks, but the ranks' parameters differ in number or size "
                f"(this is rank {get_rank()} with {len(sizes)} parameters). Hint: build the same model on "
                "every rank before wrapping it."
            )

    def _broadcast_state(self):
        """Copy rank 0's parameters and buffers to every rank."""
        for t in list(self.module.parameters()) + list(self.module.buffers()):
            broadcast(t.detach(), src=0)

    # ---- gradient averaging -----------------------------------------------------------------------
    def _make_hook(self, index):
        mark_ready = self.reducer.hook_for(index)

        def hook(grad):
            if self.require_backward_grad_sync:
                mark_ready(grad)
            else:  # inside no_sync(): accumulate locally, reduce at the next synced backward
                self.reducer.mark_used(index)
            return None

        return hook

    @contextlib.contextmanager
    def no_sync(self):
        """Skip the gradient all-reduce in backward passes inside this block (gradient accumulation);
        the next backward outside it averages the accumulated gradients."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    # ---- forward ----------------------------------------------------------------------------------
    def forward(self, *inputs, **kwargs):
        """Run the wrapped module; in grad mode, arm the reducer to all-reduce its gradients in backward."""
        self.reducer.prepare_for_forward()
        if self.broadcast_buffers and self.world_size > 1:
            for b in self.module.buffers():
                broadcast(b, src=0)
        output = self.module(*inputs, **kwargs)
        if is_grad_enabled() and self.require_backward_grad_sync:
            self.reducer.prepare_for_backward(output)
        return output

    def extra_repr(self) -> str:
        """The world size, as shown inside the `repr`."""
        return f"world_size={self.world_size}"
