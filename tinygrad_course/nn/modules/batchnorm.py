"""Batch normalisation: `BatchNorm1d`, `BatchNorm2d`, `BatchNorm3d`, like `torch.nn.modules.batchnorm`."""
from __future__ import annotations

from ..._unsupported import getattr_for
from ...dtypes import int64
from ...factories import ones, tensor, zeros
from .. import functional as F
from .module import Module
from .normalization import _init_scale_and_shift

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]
__getattr__ = getattr_for("tc.nn", __name__)  # Lazy*, SyncBatchNorm: PyTorch names not implemented


class _BatchNorm(Module):
    """Shared code of BatchNorm1d/2d: per-channel normalisation with running statistics."""

    _expected_dims = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum=0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _init_scale_and_shift(self, affine, bias, num_features, device, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        """Running mean back to 0, running variance to 1, batch count to 0."""
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def _check_input_dim(self, input):
        if input.ndim not in self._expected_dims:
            expected = " or ".join(f"{d}D" for d in self._expected_dims)
            raise ValueError(f"expected {expected} input (got {input.ndim}D input)")

    def forward(self, input):
        """Normalise with batch statistics in training (updating the running ones), else the running ones."""
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked)
        use_batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        track = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if track else None, self.running_var if track else None,
                            self.weight, self.bias, use_batch_stats, factor, self.eps)

    def extra_repr(self) -> str:
        """The layer's settings, as shown inside its `repr`."""
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L) input."""

    _expected_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm over (N, C, H, W) input."""

    _expected_dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch norm over (N, C, D, H, W) input."""

    _expected_dims = (5,)
