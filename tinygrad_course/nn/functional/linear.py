"""Linear maps in `tc.nn.functional`: linear (x W^T + b), bilinear (x1^T A x2 + b) and flatten."""
from __future__ import annotations

from ...autograd.grad_mode import _state
from ...ops.matmul import Addmm as _Addmm
from ...ops.matmul import linear_unrecorded as _linear_unrecorded
from ...tensor_base import _wrap
from ._utils import _shape_str


def linear(input, weight, bias=None):
    """input @ weight.T + bias (one fused addmm for 2-D input), like `F.linear`."""
    if not _state.enabled or not (input._requires_grad or weight._requires_grad or
                                  bias is not None and bias._requires_grad):
        out = _linear_unrecorded(input, weight, bias)
        if out is not None:  # no graph recorded: the product computed directly, no op to run
            return _wrap(out)
    if input.ndim == 2 and bias is not None:
        return _Addmm.apply(bias, input, weight.t())
    if input.ndim == 1 and bias is not None:  # PyTorch records view -> addmm -> view
        return _Addmm.apply(bias, input.reshape(1, -1), weight.t()).reshape(weight.shape[0])
    if input.ndim > 2 and bias is not None:
        lead = input.shape[:-1]
        out = _Addmm.apply(bias, input.reshape(-1, input.shape[-1]), weight.t())
        return out.reshape(*lead, weight.shape[0])
    out = input @ weight.t()
    return out if bias is None else out + bias


def bilinear(input1, input2, weight, bias=None):
    """y = x1^T A x2 + b for each pair of rows: weight (out, in1, in2), inputs (*, in1) and (*, in2)."""
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got {_shape_str(input1.shape[:-1])} and "
                           f"{_shape_str(input2.shape[:-1])}")
    out_f, in1, in2 = weight.shape
    lead = tuple(input1.shape[:-1])
    x1, x2 = input1.reshape(-1, in1), input2.reshape(-1, in2)
    t = (x1 @ weight.permute(1, 0, 2).reshape(in1, out_f * in2)).reshape(-1, out_f, in2)
    out = (t * x2.unsqueeze(1)).sum(-1)
    if bias is not None:
        out = out + bias
    return out.reshape(*lead, out_f)


def flatten(input, start_dim=0, end_dim=-1):
    """Dims start_dim..end_dim merged into one, like `torch.flatten`."""
    return input.flatten(start_dim, end_dim)
