"""Common mistakes raise PyTorch's exception types and messages (ours may add a one-sentence hint)."""
import pytest
import torch
from core_helpers import assert_same_error

import tinygrad_course as tc

MISTAKES = {
    "broadcast_add": lambda m: m.ones(2, 3) + m.ones(4),
    "broadcast_mul_2d": lambda m: m.ones(2, 3) * m.ones(3, 2),
    "broadcast_where": lambda m: m.where(m.ones(2, 3) > 0, m.ones(2, 3), m.ones(4)),
    "matmul_shapes": lambda m: m.ones(2, 3) @ m.ones(2, 3),
    "matmul_vec": lambda m: m.ones(3) @ m.ones(4),
    "matmul_0d": lambda m: m.ones(()) @ m.ones(3),
    "matmul_dtype": lambda m: m.ones(2, 2) @ m.ones(2, 2, dtype=m.float64),
    "dim_out_of_range_sum": lambda m: m.ones(2, 3).sum(2),
    "dim_out_of_range_neg": lambda m: m.ones(2, 3).mean(-3),
    "dim_out_of_range_softmax_like": lambda m: m.ones(2).unsqueeze(3),
    "transpose_dim": lambda m: m.ones(2, 3).transpose(0, 2),
    "view_numel": lambda m: m.ones(2, 3).view(4, 2),
    "view_two_minus_one": lambda m: m.ones(2, 3).view(-1, -1),
    "view_noncontiguous": lambda m: m.ones(2, 3).t().view(6),
    "reshape_numel": lambda m: m.ones(6).reshape(4, -1),
    "index_out_of_range": lambda m: m.ones(3)[3],
    "too_many_indices": lambda m: m.ones(3)[0, 0],
    "item_many": lambda m: m.ones(3).item(),
    "bool_ambiguous": lambda m: bool(m.ones(3)),
    "int_requires_grad": lambda m: m.tensor([1, 2], requires_grad=True),
    "numpy_requires_grad": lambda m: m.ones(2, requires_grad=True).numpy(),
    "backward_non_scalar": lambda m: (m.ones(2, requires_grad=True) * 2).backward(),
    "backward_no_grad": lambda m: m.ones(1).sum().backward(),
    "cat_sizes": lambda m: m.cat([m.ones(2, 3), m.ones(2, 4)]),
    "cat_zero_dim": lambda m: m.cat([m.tensor(1.0), m.tensor(2.0)]),
    "cat_ndims": lambda m: m.cat([m.ones(2, 3), m.ones(3)]),
    "stack_sizes": lambda m: m.stack([m.ones(2), m.ones(3)]),
    "expand_size": lambda m: m.ones(2, 3).expand(4, 3),
    "permute_len": lambda m: m.ones(2, 3).permute(0),
    "mean_int": lambda m: m.tensor([1, 2]).mean(),
    "sub_bool": lambda m: m.tensor([True]) - m.tensor([False]),
    "neg_bool": lambda m: -m.tensor([True]),
    "len_0d": lambda m: len(m.tensor(1.0)),
    "gather_index_dtype": lambda m: m.ones(2, 2).gather(0, m.tensor([[0.0]])),
    "split_sizes": lambda m: m.ones(4).split([1, 2]),
    "t_3d": lambda m: m.ones(2, 2, 2).t(),
    "mm_1d": lambda m: m.mm(m.ones(3), m.ones(3, 1)),
    "bmm_2d": lambda m: m.bmm(m.ones(3, 3), m.ones(3, 3)),
    "dot_2d": lambda m: m.dot(m.ones(2, 2), m.ones(2, 2)),
    "negative_dim_size": lambda m: m.zeros(-1, 2),
    "arange_step_zero": lambda m: m.arange(0, 5, 0),
    "inplace_leaf": lambda m: m.ones(2, requires_grad=True).add_(1),
    "inplace_cast": lambda m: m.ones(2, dtype=m.int64).mul_(1.5),
    "grad_unused": lambda m: m.autograd.grad(m.ones(1, requires_grad=True).sum(), [m.ones(1, requires_grad=True)]),
    "clamp_no_bounds": lambda m: m.ones(2).clamp(),
    "flatten_dims": lambda m: m.ones(2, 3).flatten(1, 0),
    "chunk_zero": lambda m: m.ones(2).chunk(0),
    "squeeze_dim": lambda m: m.ones(2, 3).squeeze(2),
    "new_tensor_ragged": lambda m: m.tensor([[1, 2], [3]]),
}


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_common_mistake_matches_torch(name):
    assert_same_error(lambda: MISTAKES[name](tc), lambda: MISTAKES[name](torch))


def test_hint_is_one_extra_sentence():
    with pytest.raises(RuntimeError) as info:
        tc.ones(2, 3) @ tc.ones(2, 3)
    assert "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)" in str(info.value)
    assert "Hint:" in str(info.value)


MULTINOMIAL_ERRORS = {
    "zero_sum": lambda m: m.multinomial(m.tensor([0.0, 0.0]), 1),
    "too_many_without_replacement": lambda m: m.multinomial(m.tensor([1.0, 2.0]), 3),
    "nan": lambda m: m.multinomial(m.tensor([1.0, float("nan")]), 1),
    "negative": lambda m: m.multinomial(m.tensor([1.0, -1.0]), 1),
    "three_dims": lambda m: m.multinomial(m.ones(2, 2, 2), 1),
}


@pytest.mark.parametrize("name", sorted(MULTINOMIAL_ERRORS))
def test_multinomial_rejects_bad_distributions_like_torch(name):
    fn = MULTINOMIAL_ERRORS[name]
    assert_same_error(lambda: fn(tc), lambda: fn(torch))


@pytest.mark.parametrize("tensor_shape, target", [((3, 4), (2, 3)), ((3, 1, 4), (2, 5, 3)), ((3, 4), (5, 4))])
def test_expand_reports_the_mismatch_torch_reports(tensor_shape, target):
    with pytest.raises(RuntimeError) as theirs:
        torch.ones(*tensor_shape).expand(*target)
    with pytest.raises(RuntimeError) as ours:
        tc.ones(*tensor_shape).expand(*target)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("shapes", [((4, 3), (4, 2)), ((3,), (1, 3), (2, 2)), ((2, 1), (3,), (4, 1)), ((0, 1), (1, 3)),
                                    (3, (2, 1))])
def test_broadcast_functions_match_torch(shapes):
    def outcome(lib, fn):
        try:
            return tuple(fn(lib))
        except RuntimeError as error:
            return str(error)

    for fn in (lambda m: m.broadcast_shapes(*shapes),
               lambda m: m.broadcast_tensors(*(m.ones(s) for s in shapes))[0].shape):
        assert outcome(tc, fn) == outcome(torch, fn)


def test_matmul_batch_mismatch_names_the_dimension_torch_names():
    with pytest.raises(RuntimeError) as theirs:
        torch.ones(2, 3, 4, 5) @ torch.ones(3, 2, 5, 6)
    with pytest.raises(RuntimeError) as ours:
        tc.ones(2, 3, 4, 5) @ tc.ones(3, 2, 5, 6)
    assert str(ours.value) == str(theirs.value)
