"""The autograd engine: graph structure, hooks, backward options, autograd.grad, functional API,
custom Functions, grad modes, deep graphs and the course's seed examples."""
import math

import numpy as np
import pytest
import torch
from core_helpers import assert_same, error_of, pair

import tinygrad_course as tc

# ---- the seed examples -------------------------------------------------------------------------------


def test_seed_polynomial():
    x = tc.tensor(3.0, requires_grad=True)
    y = x ** 2 + 2 * x + 1
    y.backward()
    assert y.item() == 16.0 and x.grad.item() == 8.0


def test_seed_fan_out_graph():
    a = tc.tensor(2.0, requires_grad=True)
    b = tc.tensor(3.0, requires_grad=True)
    c = a * b
    d = c + a
    L = d ** 2
    L.backward()
    assert (a.grad.item(), b.grad.item()) == (64.0, 32.0)


def test_seed_third_derivative():
    x = tc.tensor(3.0, requires_grad=True)
    y = x ** 3
    (g1,) = tc.autograd.grad(y, x, create_graph=True)
    (g2,) = tc.autograd.grad(g1, x, create_graph=True)
    (g3,) = tc.autograd.grad(g2, x)
    assert (y.item(), g1.item(), g2.item(), g3.item()) == (27.0, 27.0, 18.0, 6.0)


def test_seed_jacobian():
    f = lambda v: tc.stack([v[0] ** 2 + v[1], v[1] ** 3 * v[0]])  # noqa: E731  (the course's example)
    assert tc.autograd.functional.jacobian(f, tc.tensor([1.0, 2.0])).tolist() == [[2.0, 1.0], [8.0, 12.0]]
    J2 = tc.autograd.functional.jacobian(lambda a, b: a * b + a ** 2, (tc.tensor(2.0), tc.tensor(3.0)))
    assert [j.item() for j in J2] == [7.0, 2.0]
    g = lambda v: tc.stack([v[0] ** 2 * v[1], 5 * v[0] + v[1].sin()])  # noqa: E731
    assert_same(tc.autograd.functional.jacobian(g, tc.tensor([1.0, 2.0])),
                torch.autograd.functional.jacobian(lambda v: torch.stack([v[0] ** 2 * v[1], 5 * v[0] + v[1].sin()]),
                                                   torch.tensor([1.0, 2.0])))


def test_seed_neuron_with_bce():
    x1, w1, b = tc.tensor(1.1), tc.tensor(2.2, requires_grad=True), tc.tensor(0.0, requires_grad=True)
    a = (x1 * w1 + b).sigmoid()
    y = 1.0
    loss = -(y * a.log() + (1 - y) * (1 - a).log())
    loss.backward()
    assert round(w1.grad.item(), 4) == -0.0898
    tw = torch.tensor(2.2, requires_grad=True)
    ta = (torch.tensor(1.1) * tw + torch.tensor(0.0)).sigmoid()
    (-(ta.log())).backward()
    assert abs(w1.grad.item() - tw.grad.item()) < 1e-6


# ---- graph structure ---------------------------------------------------------------------------------

NODE_PROGRAMS = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
    "pow": lambda a, b: a ** 2, "pow_tensor": lambda a, b: a ** b, "neg": lambda a, b: -a, "exp": lambda a, b: a.exp(),
    "log": lambda a, b: a.log(), "sigmoid": lambda a, b: a.sigmoid(), "tanh": lambda a, b: a.tanh(),
    "relu": lambda a, b: a.relu(), "sum": lambda a, b: a.sum(), "sum_dim": lambda a, b: a.sum(0),
    "mean": lambda a, b: a.mean(), "mean_dim": lambda a, b: a.mean(1), "mm": lambda a, b: a @ b.t(),
    "t": lambda a, b: a.t(), "view": lambda a, b: a.view(-1), "reshape": lambda a, b: a.reshape(3, 2),
    "transpose": lambda a, b: a.transpose(0, 1), "permute": lambda a, b: a.permute(1, 0),
    "unsqueeze": lambda a, b: a.unsqueeze(0), "squeeze": lambda a, b: a[:1].squeeze(0),
    "expand": lambda a, b: a[:1].expand(4, 3), "select": lambda a, b: a[0], "slice": lambda a, b: a[:, 1:],
    "index": lambda a, b: a[tc.tensor([0]) if isinstance(a, tc.Tensor) else torch.tensor([0])],
    "cat": lambda a, b: (tc if isinstance(a, tc.Tensor) else torch).cat([a, b]),
    "stack": lambda a, b: (tc if isinstance(a, tc.Tensor) else torch).stack([a, b]),
    "clone": lambda a, b: a.clone(), "abs": lambda a, b: a.abs(), "sqrt": lambda a, b: a.sqrt(),
    "max_dim": lambda a, b: a.max(1)[0], "max": lambda a, b: a.max(), "clamp": lambda a, b: a.clamp(0, 1),
    "maximum": lambda a, b: a.maximum(b), "where": lambda a, b: a.where(a > 1, b), "var": lambda a, b: a.var(),
    "std": lambda a, b: a.std(), "logsumexp": lambda a, b: a.logsumexp(1), "to": lambda a, b: a.float(),
    "gather": lambda a, b: a.gather(1, (tc if isinstance(a, tc.Tensor) else torch).tensor([[0], [1]])),
    "masked_fill": lambda a, b: a.masked_fill(a > 1, 0.0), "norm": lambda a, b: a.norm(),
    "prod": lambda a, b: a.prod(), "cumsum": lambda a, b: a.cumsum(0), "flip": lambda a, b: a.flip(0),
    "repeat": lambda a, b: a.repeat(2, 1), "split": lambda a, b: a.split(1)[0], "unbind": lambda a, b: a.unbind()[0],
    "sin": lambda a, b: a.sin(), "cos": lambda a, b: a.cos(), "rsqrt": lambda a, b: a.rsqrt(),
    "floor": lambda a, b: a.floor(), "sign": lambda a, b: a.sign(), "dot": lambda a, b: a[0].dot(b[0]),
    "mv": lambda a, b: a.mv(b[0]), "narrow": lambda a, b: a.narrow(0, 0, 1), "flatten": lambda a, b: a.flatten(),
    "amax": lambda a, b: a.amax(0), "log1p": lambda a, b: a.log1p(), "minimum": lambda a, b: a.minimum(b),
}


@pytest.mark.parametrize("name", sorted(NODE_PROGRAMS))
def test_grad_fn_names_match_torch(name):
    a, ta = pair(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), requires_grad=True)
    b, tb = pair(np.array([[0.5, 2.5, 1.0], [3.0, 1.0, 7.0]]), requires_grad=True)
    out, tout = NODE_PROGRAMS[name](a, b), NODE_PROGRAMS[name](ta, tb)
    assert out.grad_fn.name() == tout.grad_fn.name()


def test_next_functions_structure():
    a = tc.tensor([1.0, 2.0], requires_grad=True)
    b = tc.tensor([3.0, 4.0])
    c = a * b
    d = c + a
    assert d.grad_fn.name() == "AddBackward0"
    (n0, i0), (n1, i1) = d.grad_fn.next_functions
    assert n0 is c.grad_fn and n0.name() == "MulBackward0" and i0 == 0
    assert n1.name() == "AccumulateGrad" and n1.variable is a
    acc, none = c.grad_fn.next_functions
    assert acc[0] is n1 and none == (None, 0)  # the same AccumulateGrad node for `a`; b needs no grad
    ta = torch.tensor([1.0, 2.0], requires_grad=True)
    td = ta * torch.tensor([3.0, 4.0]) + ta
    assert [n.name().replace("torch::autograd::", "") for n, _ in td.grad_fn.next_functions] == \
        [n.name() for n, _ in d.grad_fn.next_functions]
    v, idx = tc.tensor([[1.0, 5.0]], requires_grad=True).max(1)
    assert not idx.requires_grad and v.grad_fn.name() == "MaxBackward0"


def test_is_leaf_and_requires_grad_propagation():
    a = tc.tensor([1.0], requires_grad=True)
    b = tc.tensor([2.0])
    assert a.is_leaf and b.is_leaf
    c = a * b
    assert not c.is_leaf and c.requires_grad
    d = b * 2
    assert d.is_leaf and not d.requires_grad and d.grad_fn is None
    assert not (a > 0).requires_grad and a.argmax().grad_fn is None
    assert a.detach().is_leaf


def test_retain_grad_and_non_leaf_grad_is_none():
    x = tc.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    z = y * y
    y.retain_grad()
    assert y.retains_grad
    z.sum().backward()
    assert y.grad.tolist() == [6.0, 12.0]
    assert x.grad.tolist() == [18.0, 36.0]
    w = x * 2
    (w * 1).sum().backward()
    assert w.grad is None


def test_register_hook_on_leaf_and_non_leaf():
    x = tc.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(("leaf", g.tolist())))
    y = x * 2
    handle = y.register_hook(lambda g: g * 10)
    (y * y).sum().backward()
    assert x.grad.tolist() == [80.0, 160.0]  # 2 * (10 * 2y)
    assert seen == [("leaf", [80.0, 160.0])]
    handle.remove()
    x.grad = None
    y = x * 2
    (y * y).sum().backward()
    assert x.grad.tolist() == [8.0, 16.0]
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        tc.zeros(1).register_hook(lambda g: g)


def test_leaf_gradients_accumulate():
    x = tc.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]
    x.grad.zero_()
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_backward_needs_gradient_for_non_scalar():
    x, tx = pair(np.array([1.0, 2.0]), requires_grad=True)
    te, tm = error_of(lambda: (tx * 2).backward())
    with pytest.raises(te) as info:
        (x * 2).backward()
    assert str(info.value) == tm
    (x * x).backward(tc.tensor([1.0, 0.5], dtype=tc.float64))
    (tx * tx).backward(torch.tensor([1.0, 0.5], dtype=torch.float64))
    assert_same(x.grad, tx.grad)
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * 2).backward(tc.ones(3))


def test_backward_twice_fails_unless_retain_graph():
    x, tx = pair(np.array([1.0, 2.0]), requires_grad=True)
    y, ty = (x.exp() * x).sum(), (tx.exp() * tx).sum()
    y.backward(retain_graph=True)
    y.backward()
    ty.backward(retain_graph=True)
    ty.backward()
    assert_same(x.grad, tx.grad)
    te, tm = error_of(lambda: ty.backward())
    with pytest.raises(te) as info:
        y.backward()
    assert str(info.value).startswith(tm)


def test_backward_of_tensor_without_grad_fails_like_torch():
    te, tm = error_of(lambda: torch.tensor(1.0).backward())
    with pytest.raises(te) as info:
        tc.tensor(1.0).backward()
    assert str(info.value) == tm


def test_saved_tensors_freed_after_backward():
    x = tc.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    assert y.grad_fn.saved_tensors[0] is not None
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.grad_fn.saved_tensors


def test_autograd_grad_options():
    x, tx = pair(np.array([1.0, 2.0]), requires_grad=True)
    u, tu = pair(np.array([3.0]), requires_grad=True)
    y, ty = (x ** 3).sum(), (tx ** 3).sum()
    (g,) = tc.autograd.grad(y, x, create_graph=True)
    (tg,) = torch.autograd.grad(ty, tx, create_graph=True)
    assert_same(g, tg)
    assert g.requires_grad and x.grad is None
    (gg,) = tc.autograd.grad(g.sum(), x)
    (tgg,) = torch.autograd.grad(tg.sum(), tx)
    assert_same(gg, tgg)
    y2 = (x * 2).sum()
    te, tm = error_of(lambda: torch.autograd.grad((tx * 2).sum(), [tx, tu]))
    with pytest.raises(te) as info:
        tc.autograd.grad(y2, [x, u], retain_graph=True)
    assert str(info.value) == tm
    gx, gu = tc.autograd.grad(y2, [x, u], allow_unused=True)
    assert gx.tolist() == [2.0, 2.0] and gu is None
    gx, gu = tc.autograd.grad((x * 2).sum(), [x, u], materialize_grads=True)
    assert gu.tolist() == [0.0]
    (gv,) = tc.autograd.grad(x * x, x, grad_outputs=tc.tensor([1.0, -1.0], dtype=tc.float64))
    assert gv.tolist() == [2.0, -4.0]


def test_backward_inputs_argument():
    x = tc.tensor([1.0], requires_grad=True)
    w = tc.tensor([2.0], requires_grad=True)
    (x * w).sum().backward(inputs=[w])
    assert w.grad.tolist() == [1.0] and x.grad is None


def test_create_graph_backward_gives_differentiable_grad():
    x, tx = pair(np.array([0.5, 1.5]), requires_grad=True)
    (x.sin() * x).sum().backward(create_graph=True)
    (tx.sin() * tx).sum().backward(create_graph=True)
    assert x.grad.requires_grad
    g, tg = x.grad.sum(), tx.grad.sum()
    x.grad, tx.grad = None, None
    g.backward()
    tg.backward()
    assert_same(x.grad, tx.grad)


# ---- functional -----------------------------------------------------------------------------------------

def _f_tc(a, b):
    return (a.exp() * b.sum()).tanh()


def _f_torch(a, b):
    return (a.exp() * b.sum()).tanh()


def test_functional_jacobian_hessian_vjp_match_torch():
    a, ta = pair(np.array([0.1, -0.2, 0.3]))
    b, tb = pair(np.array([0.5, 0.25]))
    assert_same(tc.autograd.functional.jacobian(_f_tc, (a, b)), torch.autograd.functional.jacobian(_f_torch, (ta, tb)))
    h = lambda v: (v ** 3).sum() * v.prod()  # noqa: E731
    assert_same(tc.autograd.functional.hessian(h, a), torch.autograd.functional.hessian(h, ta))
    v, tv = pair(np.array([1.0, 2.0, -1.0]))
    assert_same(tc.autograd.functional.vjp(lambda x: _f_tc(x, b), a, v),
                torch.autograd.functional.vjp(lambda x: _f_torch(x, tb), ta, tv))
    assert_same(tc.autograd.functional.jvp(lambda x: _f_tc(x, b), a, v),
                torch.autograd.functional.jvp(lambda x: _f_torch(x, tb), ta, tv))
    hess2 = tc.autograd.functional.hessian(lambda x, y: (x * y.sum()).sum() ** 2, (a, b))
    thess2 = torch.autograd.functional.hessian(lambda x, y: (x * y.sum()).sum() ** 2, (ta, tb))
    assert_same(hess2, thess2)


# ---- custom Function ------------------------------------------------------------------------------------

class Cube(tc.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return x ** 3 * scale

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x ** 2 * ctx.scale, None


class SortWithIndex(tc.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        values = x * 1
        idx = tc.arange(x.shape[0])
        ctx.mark_non_differentiable(idx)
        return values, idx

    @staticmethod
    def backward(ctx, g_values, g_idx):
        assert g_idx is None or not g_idx.detach()._data.any()
        return g_values


class Needs(tc.autograd.Function):
    seen = None

    @staticmethod
    def forward(ctx, a, b):
        Needs.seen = ctx.needs_input_grad
        return a * b

    @staticmethod
    def backward(ctx, g):
        return g, g


def test_custom_function_apply_and_backward():
    x = tc.tensor([1.0, 2.0], dtype=tc.float64, requires_grad=True)
    y = Cube.apply(x, 2.0)
    assert y.grad_fn.name() == "CubeBackward"
    assert y.tolist() == [2.0, 16.0]
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 24.0]
    assert tc.autograd.gradcheck(lambda t: Cube.apply(t, 1.5), (tc.tensor([0.3, -1.2], dtype=tc.float64,
                                                                                 requires_grad=True),))
    with tc.no_grad():
        assert Cube.apply(x, 1.0).grad_fn is None


def test_custom_function_non_differentiable_and_needs_input_grad():
    x = tc.tensor([1.0, 2.0], requires_grad=True)
    v, idx = SortWithIndex.apply(x)
    assert v.requires_grad and not idx.requires_grad
    v.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]
    Needs.apply(x, tc.tensor([1.0, 1.0]))
    assert Needs.seen == (True, False)


def test_custom_function_saving_its_output_supports_double_backward():
    class Exp(tc.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    x = tc.tensor(0.5, dtype=tc.float64, requires_grad=True)
    (g,) = tc.autograd.grad(Exp.apply(x), x, create_graph=True)
    (gg,) = tc.autograd.grad(g, x)
    assert math.isclose(gg.item(), math.exp(0.5))


# ---- grad modes -------------------------------------------------------------------------------------------

def test_grad_mode_context_managers_and_decorators():
    x = tc.tensor([1.0], requires_grad=True)
    with tc.no_grad():
        assert not tc.is_grad_enabled()
        assert (x * 2).grad_fn is None
        with tc.enable_grad():
            assert (x * 2).requires_grad
    assert tc.is_grad_enabled()

    @tc.no_grad()
    def f(t):
        return t * 2

    @tc.enable_grad()
    def g(t):
        return t * 2

    assert not f(x).requires_grad
    with tc.no_grad():
        assert g(x).requires_grad
    with tc.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert tc.is_grad_enabled()
    tc.set_grad_enabled(False)
    assert not tc.is_grad_enabled()
    tc.set_grad_enabled(True)
    with tc.inference_mode():
        assert not (x * 2).requires_grad
    with tc.inference_mode(False):
        assert (x * 2).requires_grad

    @tc.inference_mode()
    def h(t):
        return t * 2

    assert not h(x).requires_grad

    @tc.set_grad_enabled(False)
    def k(t):
        return t * 2

    assert tc.is_grad_enabled() and not k(x).requires_grad and tc.is_grad_enabled()
    with tc.autograd.no_grad():
        assert not tc.autograd.is_grad_enabled()


def test_grad_mode_restored_after_exception():
    with pytest.raises(ValueError):
        with tc.no_grad():
            raise ValueError
    assert tc.is_grad_enabled()


# ---- deep graphs --------------------------------------------------------------------------------------------

def test_backward_through_100000_op_chain():
    x = tc.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.backward()
    assert x.grad.item() == 1.0


def test_diamond_graph_grads_match_torch():
    x, tx = pair(np.array([0.3, -0.7]), requires_grad=True)
    def prog(t):
        a = t.exp()
        b = a * t
        c = a + b.sin()
        return (c * a).sum() + b.sum()
    prog(x).backward()
    prog(tx).backward()
    assert_same(x.grad, tx.grad)


def test_dtype_conversion_gradient():
    x, tx = pair(np.array([1.5, 2.5], dtype=np.float32), requires_grad=True)
    (x.double() ** 2).sum().backward()
    (tx.double() ** 2).sum().backward()
    assert_same(x.grad, tx.grad)


def _custom_functions(lib):
    class TwoOutputs(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x * k, x + 1

        @staticmethod
        def backward(ctx, ga, gb):
            (x,) = ctx.saved_tensors
            return ga * ctx.k + gb * 2 * x, None

    class SetupContextExp(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    return TwoOutputs, SetupContextExp


def test_custom_functions_with_two_outputs_and_setup_context_match_torch():
    results = {}
    for lib in (tc, torch):
        two, exp = _custom_functions(lib)
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        a, b = two.apply(x, 3.0)
        (a.sum() + b.sum()).backward()
        both = x.grad
        x.grad = None
        two.apply(x, 3.0)[0].sum().backward()  # the unused output's gradient arrives as zeros
        only_first = x.grad
        (g,) = lib.autograd.grad(exp.apply(x).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        results[lib.__name__] = (both, only_first, g, gg)
    assert_same(results["tinygrad_course"], results["torch"])


@pytest.mark.parametrize("convert", [lambda x: x.long(), lambda x: x.int(), lambda x: x.bool(),
                                     lambda x: (x * 2).to(dtype=x.long().dtype)])
def test_an_integer_or_bool_result_never_requires_grad_as_in_pytorch(convert):
    mine, theirs = convert(tc.ones(3, requires_grad=True)), convert(torch.ones(3, requires_grad=True))
    assert (mine.requires_grad, mine.grad_fn is None) == (theirs.requires_grad, theirs.grad_fn is None) == (False, True)
    assert convert(tc.ones(3, requires_grad=True)).float().requires_grad is False


def test_a_float_conversion_of_a_tensor_that_requires_grad_is_recorded():
    x = tc.ones(3, requires_grad=True)
    y = x.double()
    assert y.requires_grad and y.grad_fn.name() == "ToCopyBackward0"
    y.sum().backward()
    assert x.grad.dtype == tc.float32 and x.grad.tolist() == [1.0, 1.0, 1.0]
