"""Finite-difference gradient checks (float64) for every differentiable op, plus second order."""
import numpy as np
import pytest

import tinygrad_course as tc
from tinygrad_course.autograd import gradcheck, gradgradcheck
from tinygrad_course.autograd.gradcheck import GradcheckError


def _x(*shape, positive=False, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 2.0, shape) if positive else rng.uniform(-2.0, 2.0, shape)
    return tc.tensor(a, dtype=tc.float64, requires_grad=True)


IDX = tc.tensor([[0, 2, 1], [1, 0, 0]])
IDX_UNIQUE = tc.tensor([[0, 2, 1], [1, 0, 2]])  # scatter with repeated targets has no defined gradient

# name -> (function, inputs factory)
CASES = {
    "add_broadcast": (lambda a, b: a + b, lambda: (_x(2, 3), _x(3, seed=1))),
    "sub_broadcast": (lambda a, b: a - b, lambda: (_x(2, 1), _x(1, 3, seed=1))),
    "mul_broadcast": (lambda a, b: a * b, lambda: (_x(2, 3), _x(2, 1, seed=1))),
    "div_broadcast": (lambda a, b: a / b, lambda: (_x(2, 3), _x(3, positive=True, seed=1))),
    "pow_tensor": (lambda a, b: a ** b, lambda: (_x(2, 3, positive=True), _x(2, 3, seed=1))),
    "pow_scalar": (lambda a: a ** 3, lambda: (_x(4),)),
    "rpow": (lambda a: 2.0 ** a, lambda: (_x(4),)),
    "rdiv": (lambda a: 1.0 / a, lambda: (_x(4, positive=True),)),
    "rsub": (lambda a: 1.0 - a, lambda: (_x(4),)),
    "add_alpha": (lambda a, b: a.add(b, alpha=-2.5), lambda: (_x(3), _x(3, seed=1))),
    "remainder": (lambda a, b: a % b, lambda: (_x(5) * 3, _x(5, positive=True, seed=1))),
    "maximum": (lambda a, b: a.maximum(b), lambda: (_x(5), _x(5, seed=1))),
    "minimum": (lambda a, b: a.minimum(b), lambda: (_x(5), _x(1, seed=1))),
    "where": (lambda a, b: tc.where(a > 0, a, b), lambda: (_x(2, 3), _x(3, seed=1))),
    "neg": (lambda a: -a, lambda: (_x(3),)),
    "abs": (lambda a: a.abs(), lambda: (_x(5),)),
    "exp": (lambda a: a.exp(), lambda: (_x(3),)),
    "log": (lambda a: a.log(), lambda: (_x(3, positive=True),)),
    "log1p": (lambda a: a.log1p(), lambda: (_x(3, positive=True),)),
    "sqrt": (lambda a: a.sqrt(), lambda: (_x(3, positive=True),)),
    "rsqrt": (lambda a: a.rsqrt(), lambda: (_x(3, positive=True),)),
    "sin": (lambda a: a.sin(), lambda: (_x(3),)),
    "cos": (lambda a: a.cos(), lambda: (_x(3),)),
    "tanh": (lambda a: a.tanh(), lambda: (_x(3),)),
    "sigmoid": (lambda a: a.sigmoid(), lambda: (_x(3),)),
    "relu": (lambda a: a.relu(), lambda: (_x(6),)),
    "clamp": (lambda a: a.clamp(-0.5, 0.5), lambda: (_x(6),)),
    "clamp_tensor": (lambda a, lo: a.clamp(min=lo), lambda: (_x(6), _x(6, seed=1))),
    "square": (lambda a: a.square(), lambda: (_x(3),)),
    "sum": (lambda a: a.sum(), lambda: (_x(2, 3),)),
    "sum_dim": (lambda a: a.sum((0, 2), keepdim=True), lambda: (_x(2, 3, 2),)),
    "mean_dim": (lambda a: a.mean(1), lambda: (_x(2, 3),)),
    "var": (lambda a: a.var(0), lambda: (_x(3, 2),)),
    "var_biased": (lambda a: a.var(unbiased=False), lambda: (_x(3, 2),)),
    "std": (lambda a: a.std(1, keepdim=True), lambda: (_x(2, 3),)),
    "max_all": (lambda a: a.max(), lambda: (_x(5),)),
    "max_dim": (lambda a: a.max(1).values, lambda: (_x(2, 3),)),
    "min_dim": (lambda a: a.min(0, keepdim=True)[0], lambda: (_x(2, 3),)),
    "amax": (lambda a: a.amax(1), lambda: (_x(2, 3),)),
    "prod": (lambda a: a.prod(), lambda: (_x(4),)),
    "prod_dim": (lambda a: a.prod(1), lambda: (_x(2, 3),)),
    "cumsum": (lambda a: a.cumsum(1), lambda: (_x(2, 3),)),
    "logsumexp": (lambda a: a.logsumexp(1), lambda: (_x(2, 3),)),
    "norm": (lambda a: a.norm(), lambda: (_x(2, 3),)),
    "norm_p3_dim": (lambda a: a.norm(3, dim=1), lambda: (_x(2, 3),)),
    "norm_1": (lambda a: a.norm(1), lambda: (_x(4),)),
    "matmul": (lambda a, b: a @ b, lambda: (_x(2, 3), _x(3, 4, seed=1))),
    "matmul_batch_broadcast": (lambda a, b: a @ b, lambda: (_x(2, 1, 2, 3), _x(3, 3, 2, seed=1))),
    "matvec": (lambda a, b: a @ b, lambda: (_x(2, 3), _x(3, seed=1))),
    "vecmat": (lambda a, b: a @ b, lambda: (_x(3), _x(3, 2, seed=1))),
    "dot": (lambda a, b: a.dot(b), lambda: (_x(3), _x(3, seed=1))),
    "bmm": (lambda a, b: a.bmm(b), lambda: (_x(2, 2, 3), _x(2, 3, 2, seed=1))),
    "view": (lambda a: a.view(3, 2) * 2, lambda: (_x(2, 3),)),
    "reshape_noncontig": (lambda a: a.t().reshape(6), lambda: (_x(2, 3),)),
    "flatten": (lambda a: a.flatten(), lambda: (_x(2, 3, 1),)),
    "squeeze_unsqueeze": (lambda a: a.squeeze(1).unsqueeze(0), lambda: (_x(2, 1, 3),)),
    "permute": (lambda a: a.permute(2, 0, 1), lambda: (_x(2, 3, 2),)),
    "transpose_t_mT": (lambda a: a.transpose(0, 1).t().mT, lambda: (_x(2, 3),)),
    "T": (lambda a: a.T, lambda: (_x(2, 3, 2),)),
    "expand": (lambda a: a.expand(3, 2, 4), lambda: (_x(2, 1),)),
    "slice": (lambda a: a[1:, ::2], lambda: (_x(3, 4),)),
    "select": (lambda a: a[1, 2] * a[0], lambda: (_x(3, 4),)),
    "none_ellipsis": (lambda a: a[None, ..., 1], lambda: (_x(3, 4),)),
    "int_index_repeated": (lambda a: a[tc.tensor([0, 2, 0])], lambda: (_x(3, 2),)),
    "mask_index": (lambda a: a[a > 0], lambda: (_x(3, 2),)),
    "two_tensor_index": (lambda a: a[tc.tensor([0, 1, 1]), tc.tensor([1, 0, 1])], lambda: (_x(2, 2),)),
    "setitem": (lambda a, v: _setitem(a, v), lambda: (_x(3, 3), _x(3, seed=1))),
    "cat": (lambda a, b: tc.cat([a, b], 1), lambda: (_x(2, 2), _x(2, 3, seed=1))),
    "stack": (lambda a, b: tc.stack([a, b], 1), lambda: (_x(2, 2), _x(2, 2, seed=1))),
    "split": (lambda a: a.split([1, 2], 1)[1] * 2, lambda: (_x(2, 3),)),
    "chunk": (lambda a: a.chunk(2)[0], lambda: (_x(3, 2),)),
    "unbind": (lambda a: a.unbind(1)[1], lambda: (_x(2, 3),)),
    "gather": (lambda a: a.gather(1, IDX), lambda: (_x(2, 3),)),
    "scatter": (lambda a, s: a.scatter(1, IDX_UNIQUE, s), lambda: (_x(2, 3), _x(2, 3, seed=1))),
    "scatter_add": (lambda a, s: a.scatter_add(0, IDX, s), lambda: (_x(3, 3), _x(2, 3, seed=1))),
    "repeat": (lambda a: a.repeat(2, 1, 3), lambda: (_x(2, 2),)),
    "flip": (lambda a: a.flip(0, 1), lambda: (_x(2, 3),)),
    "masked_fill": (lambda a: a.masked_fill(a > 0, 0.0), lambda: (_x(2, 3),)),
    "narrow": (lambda a: a.narrow(1, 1, 2), lambda: (_x(2, 3),)),
    "tril": (lambda a: a.tril(), lambda: (_x(3, 3),)),
    "index_select": (lambda a: a.index_select(0, tc.tensor([1, 1, 0])), lambda: (_x(2, 3),)),
    "clone_contiguous": (lambda a: a.t().contiguous().clone(), lambda: (_x(2, 3),)),
}


def _setitem(a, v):
    out = a * 1
    out[1] = v
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck(name):
    fn, make = CASES[name]
    assert gradcheck(fn, make(), eps=1e-6, atol=1e-5, rtol=1e-3)


SECOND_ORDER = ["mul_broadcast", "div_broadcast", "pow_tensor", "exp", "log", "sqrt", "tanh", "sigmoid", "sin",
                "sum_dim", "var", "std", "logsumexp", "norm", "matmul", "matmul_batch_broadcast", "gather", "cat",
                "slice", "expand", "prod", "abs", "max_dim", "where"]


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_gradgradcheck(name):
    fn, make = CASES[name]
    assert gradgradcheck(fn, make(), eps=1e-6, atol=1e-4, rtol=1e-3)


def test_gradcheck_detects_a_wrong_backward():
    class WrongSquare(tc.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x  # should be 2 * x

    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradcheck(WrongSquare.apply, (_x(3),))
    assert gradcheck(WrongSquare.apply, (_x(3),), raise_exception=False) is False


def test_gradcheck_with_a_non_contiguous_input():
    x = tc.tensor(np.arange(6.0).reshape(2, 3) / 5, dtype=tc.float64).t().detach().requires_grad_()
    assert not x.is_contiguous()
    assert gradcheck(lambda t: (t * t).sum(0), (x,))
