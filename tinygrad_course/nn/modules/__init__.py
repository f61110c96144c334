"""The layer classes of `tc.nn`, one family per file."""
from .activation import GELU, LeakyReLU, LogSoftmax, ReLU, Sigmoid, SiLU, Softmax, Tanh
from .container import ModuleDict, ModuleList, Sequential
from .conv import Conv2d
from .dropout import Dropout, Embedding
from .linear import Flatten, Identity, Linear, Unflatten
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from .module import Module
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d

__all__ = [
    "Module", "Sequential", "ModuleList", "ModuleDict", "Linear", "Identity", "Flatten", "Unflatten", "ReLU",
    "LeakyReLU", "Sigmoid", "Tanh", "GELU", "SiLU", "Softmax", "LogSoftmax", "Dropout", "Embedding", "LayerNorm",
    "BatchNorm1d", "BatchNorm2d", "Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "CrossEntropyLoss",
    "NLLLoss", "MSELoss", "L1Loss", "BCELoss", "BCEWithLogitsLoss",
]
