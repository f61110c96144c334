"""Learning-rate schedules, mirroring `torch.optim.lr_scheduler` (same formulas, so the same lr sequences).

A scheduler changes `group["lr"]` of its optimizer's param groups each time `scheduler.step()` is called
(usually once per epoch, after `optimizer.step()`); `get_last_lr()` returns the current values.
The schedulers live by kind: `base` (LRScheduler), `step_based` (a factor per epoch), `cyclic` (cosine,
cyclic and 1cycle curves), `plateau` (ReduceLROnPlateau) and `composite` (SequentialLR, ChainedScheduler).
"""
from .base import LRScheduler, _LRScheduler
from .composite import ChainedScheduler, SequentialLR
from .cyclic import CosineAnnealingLR, CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR
from .plateau import ReduceLROnPlateau
from .step_based import (ConstantLR, ExponentialLR, LambdaLR, LinearLR, MultiplicativeLR, MultiStepLR,
                         PolynomialLR, StepLR)

__all__ = ["LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
           "ExponentialLR", "SequentialLR", "PolynomialLR", "CosineAnnealingLR", "ChainedScheduler",
           "ReduceLROnPlateau", "CyclicLR", "CosineAnnealingWarmRestarts", "OneCycleLR"]
