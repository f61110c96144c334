"""`tc.utils.checkpoint`: activation checkpointing, PyTorch's way of trading compute for memory. Here the
function simply runs and keeps its activations: results and gradients are the same as PyTorch's, only the
memory saving is absent."""
from __future__ import annotations

__all__ = ["checkpoint", "checkpoint_sequential"]


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default", debug=False,
               preserve_rng_state=True, **kwargs):
    """`function(*args, **kwargs)`, like `torch.utils.checkpoint.checkpoint` (without recomputation)."""
    return function(*args, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Runs the modules of `functions` (a Sequential or a list) one after another on `input`."""
    for fn in (functions.children() if hasattr(functions, "children") else functions):
        input = fn(input)
    return input
