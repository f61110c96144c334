"""tinygrad_course: a small deep-learning framework that mirrors PyTorch (import it as `tc`)."""
from __future__ import annotations

import importlib
import warnings as _warnings

from . import dtypes as _dtypes
from ._backend import device, get_default_device, set_default_device
from ._functions import *  # noqa: F401,F403  (tc.exp, tc.sum, ...)
from ._functions import broadcast_shapes, broadcast_tensors, is_floating_point, is_tensor
from ._printing import set_printoptions
from ._unsupported import missing as _missing
from ._threads import get_num_threads, set_num_threads
from ._settings import *  # noqa: F401,F403  (set_float32_matmul_precision, contiguous_format, pi, ...)
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .dtypes import (bfloat16, float16, float32, float64, get_default_dtype, int8, int16, int32, int64,
                     promote_types, result_type, set_default_dtype, uint8)
from .dtypes import bool_ as bool  # noqa: A001  (tc.bool, like torch.bool)
from .dtypes import dtype
from .factories import (as_tensor, bernoulli, empty_like, from_numpy, full_like, multinomial, normal, ones_like,
                        rand_like, randint_like, randn_like, tensor, zeros_like)
from .generator import (Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed,
                        set_rng_state)
from .shapes import Size
from .tensor import Tensor
from .methods.aliases import *  # noqa: F401,F403  (standalone functions: tc.prelu, tc.einsum, tc.meshgrid, ...)
from .methods.legacy_types import *  # noqa: F401,F403  (tc.FloatTensor, tc.LongTensor, ...)
from .methods.linalg import *  # noqa: F401,F403
from .methods.pointwise import *  # noqa: F401,F403
from .methods.sorting import *  # noqa: F401,F403
from .methods.stacking import *  # noqa: F401,F403
from .ops.sparse_coo import sparse_coo, sparse_coo_tensor, strided
from .ops.sparse_coo import mm as spmm

__version__ = "0.1.0"

# PyTorch computes inf/nan results (1/0, log(-1), inf - inf, exp overflow) silently; NumPy warns about each.
# Silence exactly those warnings when they come from the framework's own code (the learner's NumPy code keeps
# its warnings), instead of paying for an np.errstate context on every op.
_warnings.filterwarnings(
    "ignore", category=RuntimeWarning, module=r"tinygrad_course\.",
    message=r"(divide by zero|invalid value|overflow|underflow) encountered|Mean of empty slice|Degrees of freedom <= 0")

float = float32  # noqa: A001
double = float64
half = float16
long = int64
int = int32  # noqa: A001
short = int16

# Subpackages load on first use, so `import tinygrad_course` stays fast.
_LAZY = {"nn", "optim", "utils", "cuda", "viz", "grading", "datasets", "transforms", "amp", "distributed",
         "profiler", "autograd", "debugging", "linalg", "accelerator", "backends", "jit", "onnx", "serialization",
         "multiprocessing", "sparse", "build", "seams", "special",
         "fft", "distributions", "cpu", "xpu", "mps"}
_LAZY_ATTRS = {"save": "serialization", "load": "serialization", "autocast": "amp", "use_learner": "build",
               "compile": "jit"}


def __getattr__(name):
    if name in _LAZY:
        return importlib.import_module(f".{name}", __name__)
    if name in _LAZY_ATTRS:
        return getattr(importlib.import_module(f".{_LAZY_ATTRS[name]}", __name__), name)
    raise _missing("tc", name, f"module 'tinygrad_course' has no attribute '{name}'")
