"""`x[key]` for a basic key records the node PyTorch's last step records (Select, Unsqueeze, Slice or Alias)."""
import numpy as np
import torch
from hypothesis import given, settings, strategies as st

import tinygrad_course as tc

SHAPE = (4, 5, 6)
_ENTRY = st.one_of(st.integers(-4, 3), st.none(), st.just(Ellipsis),
                   st.builds(slice, st.one_of(st.none(), st.integers(0, 6)), st.one_of(st.none(), st.integers(0, 8)),
                             st.one_of(st.none(), st.integers(1, 3))))


def _valid(key):
    """At most one `...`, no more ints and slices than dims, ints in range of the dim they index."""
    if key.count(Ellipsis) > 1 or sum(1 for k in key if k is not None and k is not Ellipsis) > len(SHAPE):
        return False
    dim = 0
    for k in key:
        if k is Ellipsis:
            dim += len(SHAPE) - sum(1 for j in key if j is not None and j is not Ellipsis)
        elif type(k) is int:
            if not -SHAPE[dim] <= k < SHAPE[dim]:
                return False
            dim += 1
        elif k is not None:
            dim += 1
    return True


@settings(max_examples=150, deadline=None)
@given(st.lists(_ENTRY, min_size=1, max_size=4).map(tuple).filter(_valid))
def test_a_basic_key_records_pytorchs_node_and_values(key):
    data = np.arange(np.prod(SHAPE), dtype=np.float64).reshape(SHAPE)
    ours, theirs = tc.tensor(data, requires_grad=True)[key], torch.tensor(data, requires_grad=True)[key]
    assert ours.grad_fn.name() == type(theirs.grad_fn).__name__, key
    assert ours.tolist() == theirs.tolist()


def test_the_common_keys_name_their_node_as_pytorch_does():
    x = tc.ones(3, 4, requires_grad=True)
    names = [y.grad_fn.name() for y in (x[:, 1], x[None], x[...], x[1:3], x[:], x[0:3], x[:, None, 1:])]
    assert names == ["SelectBackward0", "UnsqueezeBackward0", "AliasBackward0", "SliceBackward0", "AliasBackward0",
                     "AliasBackward0", "SliceBackward0"]
