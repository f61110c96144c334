"""In-place operations: PyTorch's leaf rule, version-counter errors, and correct gradients."""
import numpy as np
import pytest
import torch
from core_helpers import assert_same, error_of, pair

import tinygrad_course as tc


def _torch_message(fn):
    return error_of(fn)[1]


@pytest.mark.parametrize("op", [lambda t: t.add_(1), lambda t: t.mul_(2), lambda t: t.zero_(), lambda t: t.fill_(3),
                                lambda t: t.clamp_(0, 1), lambda t: t.__iadd__(1), lambda t: t.copy_(t * 0),
                                lambda t: t.__setitem__(0, 5.0), lambda t: t.sub_(1), lambda t: t.div_(2)])
def test_in_place_on_leaf_that_requires_grad_fails_like_torch(op):
    x, tx = pair(np.array([1.0, 2.0]), requires_grad=True)
    expected = _torch_message(lambda: op(tx))
    with pytest.raises(RuntimeError) as info:
        op(x)
    assert str(info.value).startswith(expected)


def test_in_place_on_a_view_of_a_leaf_fails_like_torch():
    x, tx = pair(np.array([1.0, 2.0]), requires_grad=True)
    expected = _torch_message(lambda: tx[0].add_(1))
    with pytest.raises(RuntimeError) as info:
        x[0].add_(1)
    assert str(info.value).startswith(expected)


def test_in_place_on_leaf_is_allowed_under_no_grad():
    x = tc.tensor([1.0, 2.0], requires_grad=True)
    with tc.no_grad():
        x.add_(1)
        x.mul_(2)
        x[0] = 10.0
        x.zero_()
    assert x.tolist() == [0.0, 0.0] and x.requires_grad and x.is_leaf and x.grad_fn is None


def _torch_error_prefix(msg):
    return msg.split(" Hint:")[0]


@pytest.mark.parametrize("case", ["saved_input", "saved_output", "zero", "setitem"])
def test_modifying_a_saved_tensor_fails_backward_with_torch_wording(case):
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        if case == "saved_input":
            b = x * 2
            c = b.sin()
            b.mul_(3)
            return c
        if case == "saved_output":
            y = x.exp()
            y.add_(1)
            return y
        if case == "zero":
            y = x * 1
            z = y * y
            y.zero_()
            return z
        y = x * 1
        z = y.pow(2)
        y[0] = 3.0
        return z

    expected = _torch_error_prefix(_torch_message(lambda: run(torch).sum().backward()))
    out = run(tc)
    with pytest.raises(RuntimeError) as info:
        out.sum().backward()
    message = str(info.value).replace("tc.", "torch.")
    expected = expected.replace("torch::autograd::", "")
    assert message.startswith(expected), f"\n ours: {message}\ntorch: {expected}"


INPLACE_PROGRAMS = {
    "mul_": lambda lib, x: (x * 1).mul_(3) + 0,
    "add_scaled": lambda lib, x: (x * 2).add_(x, alpha=2),
    "iadd_chain": lambda lib, x: _iadd_chain(x),
    "setitem_row": lambda lib, x: _setitem(x, lib),
    "setitem_tensor_value": lambda lib, x: _setitem_value(x),
    "view_mul_": lambda lib, x: _view_inplace(x),
    "slice_iadd": lambda lib, x: _slice_iadd(x),
    "sigmoid_": lambda lib, x: (x * 1).sigmoid_() * 2,
    "clamp_": lambda lib, x: (x * 2).clamp_(-1, 1),
    "masked_fill_": lambda lib, x: (x * 1).masked_fill_(x > 0, 0.5),
    "copy_": lambda lib, x: (x * 0).copy_(x.exp()),
    "zero_then_add": lambda lib, x: (x * 1).zero_() + x,
}


def _iadd_chain(x):
    y = x * 1
    y += x
    y *= x
    return y


def _setitem(x, lib):
    y = x * 1
    y[0] = 0.0
    return y * x


def _setitem_value(x):
    y = x * 1
    y[1] = x[0] * 3
    return y


def _view_inplace(x):
    y = x * 1
    y[:, 0].mul_(3)
    row = y[1]
    row += y[0]
    return y


def _slice_iadd(x):
    y = x * 2
    y[:, 1:] *= x[:, 1:]
    return y


@pytest.mark.parametrize("name", sorted(INPLACE_PROGRAMS))
def test_in_place_on_non_leaf_gives_torch_values_and_grads(name):
    prog = INPLACE_PROGRAMS[name]
    x, tx = pair(np.array([[0.5, -1.0, 2.0], [1.5, 0.2, -0.3]]), requires_grad=True)
    out, tout = prog(tc, x), prog(torch, tx)
    assert_same(out, tout)
    g = np.arange(6.0).reshape(2, 3)
    out.backward(tc.tensor(g))
    tout.backward(torch.tensor(g))
    assert_same(x.grad, tx.grad)


def test_in_place_grad_fn_names_and_versions():
    x = tc.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    v0 = y._version[0]
    y.add_(1)
    assert y.grad_fn.name() == "AddBackward0" and y._version[0] == v0 + 1
    y[0] = 0.0
    assert y.grad_fn.name() == "CopySlices"
    t = torch.tensor([1.0, 2.0], requires_grad=True) * 1
    t[0] = 0.0
    assert t.grad_fn.name().endswith("CopySlices")
    for method, name in (("zero_", "ZeroBackward0"), ("fill_", "FillBackward0")):
        z = x * 1
        args = (2.0,) if method == "fill_" else ()
        assert getattr(z, method)(*args).grad_fn.name() == name


def test_in_place_dtype_rules():
    x, tx = pair(np.array([1, 2]))
    assert error_of(lambda: tx.add_(1.5))[0] is RuntimeError
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        x.add_(1.5)
    f, tf = pair(np.array([1.0, 2.0], dtype=np.float32))
    f.add_(tc.tensor([1, 2]))
    tf.add_(torch.tensor([1, 2]))
    assert_same(f, tf)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        f.add_(tc.ones(2, 2))


def test_in_place_returns_self_and_shares_storage():
    x = tc.zeros(3)
    assert x.add_(1) is x and x.mul_(2) is x and x.zero_() is x and x.fill_(4) is x
    v = x[1:]
    v.fill_(7)
    assert x.tolist() == [4.0, 7.0, 7.0]


def test_parameter_updates_through_data_and_no_grad_match_torch():
    def train(lib):
        w = lib.tensor([1.0, -2.0], requires_grad=True)
        for _ in range(3):
            (w * w * w).sum().backward()
            w.data -= 0.1 * w.grad
            with lib.no_grad():
                w -= 0.05 * w.grad
                w[0] = w[0] * 0.5
            w.data[1] += 0.25
            w.detach().mul_(0.9)
            w.grad.zero_()
        return w

    w, tw = train(tc), train(torch)
    assert_same(w, tw)
    assert w.is_leaf and w.requires_grad and w.grad.tolist() == [0.0, 0.0]


def test_in_place_on_a_plain_view_copies_history_into_its_base():
    x, tx = pair(np.array([1.0, 2.0]), requires_grad=True)
    for lib, src in ((tc, x), (torch, tx)):
        b = lib.zeros(4, dtype=lib.float64)
        b[1:3].copy_(src * 3)
        (b * b).sum().backward()
    assert_same(x.grad, tx.grad)


VIEW_THEN_MODIFY = {
    "select_then_base_mul_": lambda x: _view_then(x, lambda y: y[0], lambda y: y.mul_(2)),
    "slice_then_setitem": lambda x: _view_then(x, lambda y: y[:, 1:], lambda y: y.__setitem__((0, 2), 5.0)),
    "transpose_then_other_view_add_": lambda x: _view_then(x, lambda y: y.t(), lambda y: y[1].add_(y[0])),
    "view_then_exp_": lambda x: _view_then(x, lambda y: y.view(-1), lambda y: y.exp_()),
}


def _view_then(x, make_view, modify):
    y = x * 1
    v = make_view(y)
    modify(y)
    return v * v  # uses the view made before the in-place op: its values and gradient include it


@pytest.mark.parametrize("name", sorted(VIEW_THEN_MODIFY))
def test_view_made_before_an_in_place_op_on_its_base_gets_correct_grads(name):
    x, tx = pair(np.array([[0.5, -1.0, 2.0], [1.5, 0.2, -0.3]]), requires_grad=True)
    out, tout = VIEW_THEN_MODIFY[name](x), VIEW_THEN_MODIFY[name](tx)
    assert_same(out, tout)
    g = np.arange(float(tout.numel())).reshape(tuple(tout.shape))
    out.backward(tc.tensor(g))
    tout.backward(torch.tensor(g))
    assert_same(x.grad, tx.grad)


def test_detached_tensor_made_to_require_grad_is_a_leaf():
    x = tc.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    d = y.detach().requires_grad_()
    y.mul_(2)  # bumps the shared version counter
    (d * d).sum().backward()
    assert d.grad.tolist() == [12.0, 24.0] and x.grad is None


def _version_message(lib, case):
    """The in-place error's text up to PyTorch's "instead." for a saved input (no grad_fn), a built-in op's saved
    output and a custom Function's saved output, each modified in place before backward."""
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)

    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out = x ** 3
            ctx.save_for_backward(x, out)
            return out

        @staticmethod
        def backward(ctx, grad):
            x, out = ctx.saved_tensors
            return grad * 3 * out / x

    if case == "input":
        b = lib.tensor([1.0, 2.0, 3.0])
        y = a * b
        b.add_(1)
    else:
        y = a.exp() if case == "op output" else Cube.apply(a)
        with lib.no_grad():
            y.add_(1)
    with pytest.raises(RuntimeError) as error:
        y.sum().backward()
    text = str(error.value)
    # on the (stand-in) GPU the tensor is a tc.cuda.FloatTensor, as PyTorch names a GPU tensor
    return text[:text.index("instead.") + len("instead.")].replace("torch.", "tc.").replace("tc.cuda.", "tc.")


@pytest.mark.parametrize("case", ["input", "op output", "custom output"])
def test_the_in_place_error_names_the_op_of_a_saved_output_only_as_pytorch(case):
    assert _version_message(tc, case) == _version_message(torch, case)


_OTHER_OPERAND_CASES = {
    "addcmul_": lambda x, g: x.addcmul_(g, g, value=0.5),
    "addcdiv_": lambda x, g: x.addcdiv_(g, g + 2),
    "lerp_": lambda x, g: x.lerp_(g, 0.3),
    "mul_": lambda x, g: x.mul_(g),
    "pow_": lambda x, g: x.pow_(g),
    "atan2_": lambda x, g: x.atan2_(g),
    "xlogy_": lambda x, g: x.xlogy_(g),
    "addmm_": lambda x, g: x.addmm_(g, g),
    "scatter_add_": lambda x, g: x.scatter_add_(0, (g * 0).long(), g),
}


@pytest.mark.parametrize("name", sorted(_OTHER_OPERAND_CASES))
def test_an_inplace_op_is_recorded_when_only_another_operand_requires_grad(name):
    """x.addcmul_(g, g) with only g requiring grad records the op, as PyTorch does (the operands used to be
    hidden from the recording decision)."""
    data = np.random.default_rng(0).uniform(0.5, 1.5, (3, 3))
    grads, names = [], []
    for lib in (tc, torch):
        x, g = lib.tensor(data.copy()), lib.tensor(data * 1.1, requires_grad=True)
        y = _OTHER_OPERAND_CASES[name](x, g)
        y.sum().backward()
        names.append(y.grad_fn.name() if lib is tc else type(y.grad_fn).__name__)
        grads.append(np.array(g.grad.tolist()))
    assert names[0] == names[1]
    assert np.allclose(grads[0], grads[1], rtol=1e-10, atol=1e-12)
