"""Instance normalisation: `InstanceNorm1d`, `InstanceNorm2d`, `InstanceNorm3d`, like
`torch.nn.modules.instancenorm`."""
from __future__ import annotations

from ..._unsupported import getattr_for
from .. import functional as F
from .batchnorm import _BatchNorm

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]
__getattr__ = getattr_for("tc.nn", __name__)  # LazyInstanceNorm*: PyTorch names not implemented


class _InstanceNorm(_BatchNorm):
    """Shared code of InstanceNorm1d/2d/3d: per-sample, per-channel normalisation over the spatial dims."""

    _spatial = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device=None, dtype=None, *, bias: bool = True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def forward(self, input):
        """Normalise each sample and channel over its spatial dimensions."""
        batched = self._spatial + 2
        if input.ndim not in (batched - 1, batched):
            raise ValueError(f"expected {batched - 1}D or {batched}D input (got {input.ndim}D input)")
        channel = 1 if input.ndim == batched else 0
        if input.shape[channel] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={channel} to match num_features ({self.num_features}), "
                                 f"but got: {input.shape[channel]}.")
            import warnings

            warnings.warn(f"input's size at dim={channel} does not match num_features. You can silence this warning "
                          "by not passing in num_features, which is not used because affine=False", stacklevel=2)
        x = input if input.ndim == batched else input.unsqueeze(0)
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats, self.momentum if self.momentum is not None
                              else 0.1, self.eps)
        return out if input.ndim == batched else out.squeeze(0)


class InstanceNorm1d(_InstanceNorm):
    """Instance norm over (N, C, L) or (C, L) input (no affine parameters or running statistics by default)."""

    _spatial = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance norm over (N, C, H, W) or (C, H, W) input (no affine parameters or running statistics by default)."""

    _spatial = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance norm over (N, C, D, H, W) or (C, D, H, W) input."""

    _spatial = 3
