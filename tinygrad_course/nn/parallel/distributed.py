"""`DistributedDataParallel`: keep one model copy per process identical by averaging gradients.

At construction rank 0's parameters and buffers are broadcast, so every copy starts the same. Each
parameter then gets a gradient hook: when backward has computed a parameter's gradient on this rank,
the hook all-reduces it with the other ranks and hands back the average, so after `loss.backward()`
every rank holds the same `.grad` (the gradient of the mean loss over all ranks' batches) and the same
optimizer step keeps the copies identical.

The engine runs gradient hooks in the same order on every rank (the graphs are the same), so the
ranks' all-reduces pair up. Each all-reduce also carries the parameter's index as a check: if ranks
disagree about which gradient comes next (the model took different paths on different ranks), the
step fails with a clear error instead of mixing gradients of different parameters.
"""
from __future__ import annotations

import contextlib

from ... import distributed as dist
from ...dtypes import float64
from ...factories import tensor
from ...tensor import _wrap
from ..modules.module import Module


class DistributedDataParallel(Module):
    """Data-parallel wrapper, like `torch.nn.parallel.DistributedDataParallel`.

    Call it like the wrapped model; `ddp.module` is the model itself (save `ddp.module.state_dict()`).
    After `loss.backward()` each parameter's `.grad` is the average over all processes.
    Parameters that no rank uses in a step keep `.grad = None` everywhere; a parameter used on some ranks
    but not on others is an error (`find_unused_parameters` is accepted for compatibility only).
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False):
        super().__init__()
        if not dist.is_initialized():
            raise ValueError(
                "Default process group has not been initialized, please make sure to call init_process_group. "
                "Hint: call tc.distributed.init_process_group(\"mpi\") before wrapping the model."
            )
        self.module = module
        self.device_ids = device_ids
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.world_size = dist.get_world_size()
        self._grad_params = [p for p in module.parameters() if p.requires_grad]
        if not self._grad_params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        self._check_same_model()
        self._broadcast_state()
        self._hook_handles = [p.register_hook(self._make_hook(i, p)) for i, p in enumerate(self._grad_params)]

    # ---- construction -----------------------------------------------------------------------------
    def _check_same_model(self):
        """Every rank must wrap a model with the same parameters (count and sizes)."""
        sizes = [p.numel() for p in self._grad_params]
        signature = tensor([len(sizes), sum(sizes), sum((i + 1) * n for i, n in enumerate(sizes))], dtype=float64)
        low, high = signature.clone(), signature.clone()
        dist.all_reduce(low, op=dist.ReduceOp.MIN)
        dist.all_reduce(high, op=dist.ReduceOp.MAX)
        if low.tolist() != high.tolist():
            raise RuntimeError(
                "DDP expects same model across all ranks, but the ranks' parameters differ in number or size "
                f"(this is rank {dist.get_rank()} with {len(sizes)} parameters). Hint: build the same model on "
                "every rank before wrapping it."
            )

    def _broadcast_state(self):
        """Copy rank 0's parameters and buffers to every rank."""
        for t in list(self.module.parameters()) + list(self.module.buffers()):
            dist.broadcast(t.detach(), src=0)

    # ---- gradient averaging -----------------------------------------------------------------------
    def _make_hook(self, index, param):
        world = self.world_size

        def average_gradient(grad):
            if not self.require_backward_grad_sync:
                return None  # inside no_sync(): accumulate locally, reduce at the next synced backward
            total = grad if param.grad is None else param.grad.detach() + grad
            data = total._data
            xp = total._xp
            n = data.size
            buf = xp.empty(n + 1, dtype=data.dtype)
            buf[:n] = data.reshape(-1)
            buf[n] = index
            dist.all_reduce(_wrap(buf))
            if buf[n] != index * world:
                raise RuntimeError(
                    f"DistributedDataParallel: rank {dist.get_rank()} reduced the gradient of parameter {index} "
                    "while another rank reduced a different one. Hint: every rank's forward must use the same "
                    "parameters (no data-dependent branches that skip layers on some ranks)."
                )
            param.grad = None  # the hook's result becomes the whole gradient, not an addition to it
            return _wrap(buf[:n].reshape(data.shape) / world)

        return average_gradient

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
        if self.broadcast_buffers and self.world_size > 1:
            for b in self.module.buffers():
                dist.broadcast(b, src=0)
        return self.module(*inputs, **kwargs)

    def extra_repr(self) -> str:
        return f"world_size={self.world_size}"
