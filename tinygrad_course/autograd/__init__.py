"""Automatic differentiation, mirroring `torch.autograd`."""
from . import functional
from .anomaly_mode import detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from .engine import backward, grad, record_backward
from .engine import Function, Node
from .hooks import RemovableHandle
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import gradcheck, gradgradcheck
from .variable import Variable

__all__ = [
    "Function", "Node", "Variable", "RemovableHandle", "backward", "grad", "record_backward", "functional", "gradcheck",
    "gradgradcheck", "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
]
