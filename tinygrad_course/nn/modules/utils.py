"""The argument helpers of `torch.nn.modules.utils` that layers and programs use: `_single`, `_pair`,
`_triple`, `_quadruple` (a number repeated, or a sequence as a tuple), `_reverse_repeat_tuple` and
`consume_prefix_in_state_dict_if_present` (drop the "module." of a state dict saved from DDP)."""
from __future__ import annotations

from collections.abc import Iterable
from itertools import repeat

__all__: list[str] = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n, name="parse"):
    def parse(x):
        if isinstance(x, Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """Reverse the order of `t` and repeat each element `n` times (the padding layout of `F.pad`)."""
    return tuple(x for x in reversed(t) for _ in range(n))


def consume_prefix_in_state_dict_if_present(state_dict, prefix: str) -> None:
    """Strip `prefix` from the keys of `state_dict` in place (and of its `_metadata`, if any), like PyTorch's."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is not None:
        for key in list(metadata.keys()):
            if key and (key == prefix.replace(".", "") or key.startswith(prefix)):
                metadata[key[len(prefix):]] = metadata.pop(key)
