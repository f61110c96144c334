"""Chapter 02b (the ops a model needs): checks for Softmax/LogSoftmax, Gelu/Dropout, Embedding/MaskedFill, Cat, the
views Transpose/Expand, Gather and GetItem (x[key]), and View (to another shape), Clone (a row-major copy) and Narrow (a slice).

Each learner op class (forward on NumPy arrays, backward with tensor ops, as chapter 02's) is installed in the
framework for the check (`grading/learner_op.py`, as build mode installs it) and compared with NumPy on the exact
inputs shown, with finite differences and with the framework's own second derivatives; then it runs where a
model uses it (`F.softmax`, `nn.GELU`, `F.dropout`, `nn.Embedding`, a causal mask, a key/value cache).
"""
import math
from contextlib import contextmanager

import numpy as np

import tinygrad_course as tc

from ... import seams
from .. import mistakes
from ..checker import CheckFailed
from ..registry import exercise
from .ch02 import _backward, _forward, _installed, _is, _numeric_close, _second_derivatives


def _softmax(x, dim):
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def _log_softmax(x, dim):
    shifted = x - x.max(axis=dim, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))


def _overflow_check(t, name, cls, numpy_op):
    """A row of large scores: exp overflows unless the row's maximum is subtracted first."""
    big = np.array([[1000.0, 1001.0, 1002.0], [-2.0, 0.0, 2.0]])
    got = cls.forward(_ctx(), big, 1)
    finite = isinstance(got, np.ndarray) and np.isfinite(got).all()
    t.true(finite, f"{name}.forward(ctx, x, dim=1) to be finite for x = [[1000, 1001, 1002], [-2, 0, 2]]",
           why="exp(1000) overflows to inf, and inf / inf is nan", given={"x": big},
           hint="softmax does not change when the same number is subtracted from every score of a row: "
                "subtract the row's maximum (keepdims=True) before exp")
    t.close(got, numpy_op(big, 1), f"{name}.forward(ctx, x, dim=1) for x = [[1000, 1001, 1002], [-2, 0, 2]]")


class _Ctx:
    needs_input_grad = (True, False)

    def save_for_backward(self, *arrays):
        self.saved = arrays


def _ctx():
    return _Ctx()



@contextmanager
def _gradient_shape_explained(shape: str, what_went_wrong: str, fix: str):
    """The check of a backward whose gradient for input 0 (of `shape`) came back in another shape says what went
    wrong in this op's terms, with the fix held back for hint()."""
    try:
        yield
    except CheckFailed as failure:
        if f"for input 0 of shape {shape}" not in str(failure):
            raise
        raise CheckFailed(str(failure).split(": a gradient has")[0] + "\n  what went wrong: " + what_went_wrong,
                          fix) from None

@exercise("02b.1", title="softmax and log-softmax along a dim: Softmax, LogSoftmax", points=4)
def softmax_check(t, Softmax, LogSoftmax):
    rng = np.random.default_rng(21)
    x = rng.standard_normal((3, 5))
    g = rng.standard_normal((3, 5))
    for name, cls, numpy_op in (("Softmax", Softmax, _softmax), ("LogSoftmax", LogSoftmax, _log_softmax)):
        for dim in (-1, 0):
            whole = numpy_op(x.reshape(-1), 0).reshape(x.shape)
            _forward(t, name, cls, (x, dim), numpy_op(x, dim), {"x": x, "dim": dim}, [
                mistakes.custom(lambda got, e, whole=whole: np.allclose(got, whole),
                                f"this normalises over every element, not along dim={dim}",
                                "reduce with axis=dim and keepdims=True, so each row (or column) is its own "
                                "distribution"),
                mistakes.custom(lambda got, e, d=dim: np.allclose(got, numpy_op(x, 1 + d if d < 0 else d - 1))
                                and d in (-1, 0), f"this normalises along another dim than dim={dim}",
                                "use the dim forward receives: axis=dim")])
        _overflow_check(t, name, cls, numpy_op)
        p = _softmax(x, -1)
        with _installed({name: cls}):
            call = (lambda v: v.softmax(-1)) if name == "Softmax" else (lambda v: v.log_softmax(-1))
            gx, = _backward(t, name, call, (x,), g)
            if name == "Softmax":
                want = p * (g - (g * p).sum(-1, keepdims=True))
                found = [mistakes.custom(_is(g * p * (1 - p)), "this is only the diagonal of softmax's Jacobian: "
                                         "every output of a row depends on every input of it",
                                         "dp_i/dx_j = p_i (delta_ij - p_j): sum over the row"),
                         mistakes.custom(_is(g * p), "this scales grad by p but leaves out what the row's other "
                                         "outputs take away (the - p * sum(grad * p) term)",
                                         "dp_i/dx_j = p_i (delta_ij - p_j): sum over the row")]
            else:
                want = g - p * g.sum(-1, keepdims=True)
                found = [mistakes.custom(_is(g - p * g), "this is the diagonal only: every log-probability of a "
                                         "row depends on every score of it through the log-sum-exp",
                                         "d log p_i / d x_j = delta_ij - p_j: grad minus p times the row's sum of grad"),
                         mistakes.custom(_is(g * (1 - p)), "this treats log-softmax element by element; its "
                                         "log-sum-exp couples the whole row",
                                         "d log p_i / d x_j = delta_ij - p_j: grad minus p times the row's sum of grad")]
            method = "softmax" if name == "Softmax" else "log_softmax"
            t.close(gx, want, f"x.grad after x.{method}(-1).backward(grad), x of shape (3, 5)",
                    given={"grad": g, "x": x}, mistakes=found)
            weight = rng.standard_normal((3, 5))
            v = tc.tensor(x, requires_grad=True)
            (call(v) * tc.tensor(weight)).sum().backward()
            _numeric_close(t, name, call, (x,), weight, [v.grad])
            x32 = tc.tensor(x, dtype=tc.float32)
            out = tc.nn.functional.softmax(x32, dim=0) if name == "Softmax" else tc.nn.functional.log_softmax(x32, 0)
            t.equal(out.dtype, tc.float32, f"dtype of F.{name.lower().replace('logs', 'log_s')}(x, 0) for a float32 x",
                    hint="NumPy keeps float32 on float32 arrays; do not convert them")
            t.close(out, numpy_op(x.astype(np.float32), 0), f"F.{name.lower()}(x, dim=0) for a float32 x",
                    rtol=1e-5, atol=1e-6)
        _second_derivatives(t, name, {name: cls}, lambda v: (call(v) * v).sum(-1), (x,), rng)


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _gelu(x, approximate):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x ** 3)))
    return x * 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def _gelu_grad(g, x, approximate):
    if approximate == "tanh":
        t_ = np.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x ** 3))
        return g * (0.5 * (1 + t_) + 0.5 * x * (1 - t_ * t_) * _SQRT_2_OVER_PI * (1 + 3 * 0.044715 * x * x))
    cdf = 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))
    return g * (cdf + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi))


@exercise("02b.2", title="GELU and dropout's multiply: Gelu, Dropout", points=4)
def gelu_dropout_check(t, Gelu, Dropout):
    rng = np.random.default_rng(22)
    x = np.linspace(-3, 3, 12).reshape(3, 4)
    g = rng.standard_normal((3, 4))
    for approximate in ("none", "tanh"):
        other = _gelu(x, "tanh" if approximate == "none" else "none")
        cdf = 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))
        _forward(t, "Gelu", Gelu, (x, approximate), _gelu(x, approximate), {"x": x, "approximate": approximate}, [
            mistakes.custom(_is(other), f"this is the {'tanh approximation' if approximate == 'none' else 'exact GELU'}"
                            f", but approximate={approximate!r} asks for the "
                            f"{'exact GELU, x * Phi(x)' if approximate == 'none' else 'tanh approximation'}",
                            "read the approximate argument: 'none' is x * Phi(x) with erf, 'tanh' the formula with tanh"),
            mistakes.custom(_is(cdf), "this is Phi(x), the normal CDF, without the factor x",
                            "GELU(x) = x * Phi(x)")])
        with _installed({"Gelu": Gelu}):
            call = (lambda v, a=approximate: tc.nn.functional.gelu(v, approximate=a))
            gx, = _backward(t, "Gelu", call, (x,), g)
            t.close(gx, _gelu_grad(g, x, approximate), f"x.grad after F.gelu(x, approximate={approximate!r})"
                    ".backward(grad), x = 12 points in [-3, 3]", given={"grad": g, "x": x}, mistakes=[
                        mistakes.custom(_is(g * cdf), "this is grad * Phi(x), only one term of the product rule: "
                                        "x * Phi(x) changes through x and through Phi(x)",
                                        "d/dx x Phi(x) = Phi(x) + x phi(x), phi(x) = exp(-x**2/2) / sqrt(2 pi)"),
                        mistakes.custom(_is(_gelu_grad(np.ones_like(g), x, approximate)),
                                        "the upstream gradient `grad` is missing from your result",
                                        "multiply the local derivative by grad")])
            weight = rng.standard_normal((3, 4))
            v = tc.tensor(x, requires_grad=True)
            (call(v) * tc.tensor(weight)).sum().backward()
            _numeric_close(t, "Gelu", call, (x,), weight, [v.grad])
            out = tc.nn.GELU(approximate)(tc.tensor(x, dtype=tc.float32))
            t.equal(out.dtype, tc.float32, f"dtype of nn.GELU({approximate!r}) on a float32 x",
                    hint="keep the input's dtype: erf(x) and NumPy's arithmetic on float32 arrays stay float32")
            t.close(out, _gelu(x, approximate).astype(np.float32), f"nn.GELU({approximate!r}) on a float32 x",
                    rtol=1e-5, atol=1e-6)
        _second_derivatives(t, "Gelu", {"Gelu": Gelu}, call, (x,), rng)
    # dropout: the framework draws the mask (zeros and 1 / (1 - p)); the op multiplies by it
    mask = (rng.random((3, 4)) > 0.25) / 0.75
    _forward(t, "Dropout", Dropout, (x, mask), x * mask, {"x": x, "mask": mask})
    with _installed({"Dropout": Dropout}):
        tc.manual_seed(5)
        v = tc.tensor(x, requires_grad=True)
        out = tc.nn.functional.dropout(v, p=0.25)
        if out.grad_fn is None or out.grad_fn._learner_backward is None:
            t.fail("Dropout", "your Dropout did not compute F.dropout of a float tensor: the framework's ran instead")
        out.backward(tc.tensor(g))
    kept = out.detach().numpy() != 0
    drawn = kept / 0.75
    t.close(out, x * drawn, "F.dropout(x, p=0.25) in training through your Dropout (seed 5)")
    t.close(v.grad, g * drawn, "x.grad after F.dropout(x, p=0.25).backward(grad)", given={"grad": g}, mistakes=[
        mistakes.custom(_is(g), "the dropped elements still pass their gradient: they did not reach the output",
                        "the output is x * mask, so its gradient with respect to x is grad * mask"),
        mistakes.custom(_is(g * kept), "the kept elements' gradient is missing the factor 1 / (1 - p) that "
                        "their values got", "the output is x * mask, so its gradient with respect to x is grad * mask")])


@exercise("02b.3", title="embedding lookup and masked_fill: Embedding, MaskedFill", points=4)
def embedding_masked_fill_check(t, Embedding, MaskedFill):
    rng = np.random.default_rng(23)
    weight = rng.standard_normal((5, 3))
    indices = np.array([[0, 2, 2, 4], [1, 2, 0, 0]])
    _forward(t, "Embedding", Embedding, (weight, indices, None), weight[indices],
             {"weight": weight, "indices": indices, "padding_idx": None})
    g = rng.standard_normal((2, 4, 3))
    added = np.zeros_like(weight)
    np.add.at(added, indices.reshape(-1), g.reshape(-1, 3))
    assigned = np.zeros_like(weight)
    assigned[indices.reshape(-1)] = g.reshape(-1, 3)
    with _installed({"Embedding": Embedding}):
        with _gradient_shape_explained("(5, 3)", "weight's gradient has weight's shape (5, 3), one row per "
                                       "embedding; grad has one row per lookup (2 x 4 of them), and each must be "
                                       "added into the row its index looked up",
                                       "index_add(0, indices, rows) or scatter_add adds each row of "
                                       "grad.reshape(-1, dim) into its row of a zero (num_embeddings, dim) tensor"):
            gw, = _backward(t, "Embedding", lambda w: tc.nn.functional.embedding(tc.tensor(indices), w), (weight,), g)
        t.close(gw, added, "weight.grad after F.embedding(indices, weight).backward(grad), weight (5, 3), "
                "indices [[0, 2, 2, 4], [1, 2, 0, 0]]", given={"grad": g}, mistakes=[
                    mistakes.custom(_is(assigned), "row 0 and row 2 are looked up three times each, but their "
                                    "gradient holds only one of the three: an assignment keeps the last write",
                                    "a row used k times receives the sum of its k gradients: scatter_add / "
                                    "index_add adds where repeated indices meet"),
                    mistakes.custom(lambda got, e: np.allclose(got, (np.abs(added) > 0) * np.abs(added)),
                                    "the gradients were not signed as grad is", "add grad's rows as they are")])
        weight_ = rng.standard_normal((5, 3))
        v = tc.tensor(weight_, requires_grad=True)
        w_mix = rng.standard_normal((2, 4, 3))
        call = (lambda w: tc.nn.functional.embedding(tc.tensor(indices), w))
        (call(v) * tc.tensor(w_mix)).sum().backward()
        _numeric_close(t, "Embedding", call, (weight_,), w_mix, [v.grad])
        tc.manual_seed(0)
        layer = tc.nn.Embedding(7, 4)
        tokens = tc.tensor([[6, 1, 6]])
        out = layer(tokens)
        out.sum().backward()
        t.close(out, layer.weight.detach().numpy()[[[6, 1, 6]]], "nn.Embedding(7, 4)(tokens [[6, 1, 6]]) through "
                "your Embedding")
        t.close(layer.weight.grad.numpy()[[1, 6, 0]].sum(axis=1), np.array([4.0, 8.0, 0.0]),
                "the row sums of nn.Embedding(7, 4).weight.grad for tokens [[6, 1, 6]] (rows 1, 6 and an unused 0)")
    _second_derivatives(t, "Embedding", {"Embedding": Embedding},
                        lambda w: tc.nn.functional.embedding(tc.tensor(indices), w) ** 2, (weight,), rng)
    # masked_fill: the mask broadcasts to x's shape; filled positions do not depend on x
    x = rng.standard_normal((3, 4))
    mask = np.array([[True, False, False, True]])
    for value in (-np.inf, 0.5):
        _forward(t, "MaskedFill", MaskedFill, (x, mask, value), np.where(mask, value, x),
                 {"x": x, "mask": mask, "value": value}, [
                     mistakes.custom(_is(np.where(mask, x, value)), "the value went where the mask is False",
                                     "masked_fill writes value where mask is True and keeps x elsewhere")])
    g = rng.standard_normal((3, 4))
    with _installed({"MaskedFill": MaskedFill}):
        m = tc.tensor(mask)
        gx, = _backward(t, "MaskedFill", lambda v: v.masked_fill(m, 0.5), (x,), g)
        t.close(gx, np.where(mask, 0.0, g), "x.grad after x.masked_fill(mask, 0.5).backward(grad), mask [[True, "
                "False, False, True]] broadcast over x (3, 4)", given={"grad": g}, mistakes=[
                    mistakes.custom(_is(g), "the filled positions pass their gradient, but their output is the "
                                    "constant value: it does not depend on x there", "zero grad where mask is True"),
                    mistakes.custom(_is(np.where(mask, g, 0.0)), "the gradient was kept where the mask is True and "
                                    "zeroed elsewhere: the other way round", "zero grad where mask is True")])
        # used for real: a causal mask on attention scores, then softmax
        scores = tc.tensor(rng.standard_normal((4, 4)), requires_grad=True)
        causal = tc.tensor(np.tril(np.ones((4, 4), dtype=bool)))
        p = scores.masked_fill(~causal, float("-inf")).softmax(-1)
        p.sum().backward()
    t.close(p, _softmax(np.where(np.tril(np.ones((4, 4), bool)), scores.detach().numpy(), -np.inf), -1),
            "softmax of 4x4 scores masked with a causal mask through your MaskedFill")
    t.close(np.triu(scores.grad.numpy(), 1), np.zeros((4, 4)), "the gradient of the masked (future) scores "
            "(filled positions are constants: they get no gradient)")
    _second_derivatives(t, "MaskedFill", {"MaskedFill": MaskedFill},
                        lambda v: v.masked_fill(tc.tensor(mask), 0.5) ** 2, (x,), rng)


@exercise("02b.4", title="joining tensors along a dim: Cat", points=2)
def cat_check(t, Cat):
    rng = np.random.default_rng(24)
    same = [rng.standard_normal((2, 3)), rng.standard_normal((2, 3))]
    got = Cat.forward(_Ctx(), *same, dim=1)
    what = "Cat.forward(ctx, a, b, dim=1) with a and b of shape (2, 3)"
    t.true(np.shape(got) == (2, 6), f"{what} to have shape (2, 6) (got {np.shape(got)})",
           why="the arrays were joined along dim 0, not dim=1" if np.shape(got) == (4, 3) else
           "the sizes add up along dim only", hint="np.concatenate(arrays, axis=dim)",
           given={"a": same[0], "b": same[1]})
    t.close(got, np.concatenate(same, axis=1), what, given={"a": same[0], "b": same[1]})
    parts = [rng.standard_normal((2, 1, 3)), rng.standard_normal((2, 3, 3)), rng.standard_normal((2, 2, 3))]
    for dim in (1, -2):
        got = Cat.forward(_Ctx(), *parts, dim=dim)
        t.true(isinstance(got, np.ndarray), f"Cat.forward(ctx, a, b, c, dim={dim}) to return a NumPy array (got "
               f"{type(got).__name__})", hint="np.concatenate joins a list of arrays along axis=dim")
        t.close(got, np.concatenate(parts, axis=1), f"Cat.forward(ctx, a, b, c, dim={dim}) with a (2, 1, 3), "
                "b (2, 3, 3), c (2, 2, 3)", given={"a": parts[0], "b": parts[1], "c": parts[2]})
    g = rng.standard_normal((2, 6, 3))
    with _installed({"Cat": Cat}):
        try:
            grads = _backward(t, "Cat", lambda a, b, c: tc.cat([a, b, c], dim=1), parts, g)
        except CheckFailed as failure:
            if "returned a gradient of shape" not in str(failure) and "gradient(s)" not in str(failure):
                raise
            raise CheckFailed(str(failure).split(": a gradient has")[0] + "\n  what went wrong: each input's "
                              "gradient is the slice of grad that its elements became: sizes 1, 3 and 2 along dim 1, "
                              "in order",
                              "keep the sizes along dim in forward; grad.split(sizes, dim) cuts grad back into them") \
                from None
        for k, (got, start, stop) in enumerate(zip(grads, (0, 1, 4), (1, 4, 6))):
            t.close(got, g[:, start:stop], f"the gradient of input {k} after tc.cat([a, b, c], dim=1).backward(grad)",
                    given={"grad": g}, mistakes=[
                        mistakes.custom(lambda got, e, k=k: np.shape(got) == e.shape and k and np.allclose(
                            got, g[:, :e.shape[1]]), "every input got the first slice of grad: each one's slice "
                            "starts where the previous input's ends", "split grad at the running sum of the sizes")])
        weight = rng.standard_normal((2, 6, 3))
        xs = [tc.tensor(v, requires_grad=True) for v in parts]
        (tc.cat(xs, dim=1) * tc.tensor(weight)).sum().backward()
        _numeric_close(t, "Cat", lambda a, b, c: tc.cat([a, b, c], dim=1), parts, weight, [x.grad for x in xs])
        # used for real: a key/value cache grows by one position per generated token
        cache = tc.tensor(rng.standard_normal((1, 2, 4, 3)), dtype=tc.float32)
        step = tc.tensor(rng.standard_normal((1, 2, 1, 3)), dtype=tc.float32)
        grown = tc.cat([cache, step], dim=2)
        t.equal(tuple(grown.shape), (1, 2, 5, 3), "the shape of tc.cat([cache (1, 2, 4, 3), new (1, 2, 1, 3)], dim=2)")
        t.equal(grown.dtype, tc.float32, "the dtype of a cache of float32 keys",
                hint="np.concatenate keeps float32 arrays float32; do not convert them")
    t.close(grown, np.concatenate([cache.numpy(), step.numpy()], axis=2), "a key/value cache grown by one position")
    _second_derivatives(t, "Cat", {"Cat": Cat}, lambda a, b: tc.cat([a * a, b], dim=0) ** 2,
                        (rng.standard_normal((2, 3)), rng.standard_normal((1, 3))), rng)


def _view_of(t, name, got, x, what, hint):
    """The learner's forward returned a view of x's array (it shares x's memory), not a copy."""
    t.true(isinstance(got, np.ndarray) and np.may_share_memory(got, x), f"{what} to return a view of x's array",
           why="it returned a new array: a change of x in place would not show in it, as it does in PyTorch",
           hint=hint, given={"x": x})


@exercise("02b.5", title="views that move no numbers: Transpose, Expand", points=3)
def views_check(t, Transpose, Expand):
    rng = np.random.default_rng(25)
    x = rng.standard_normal((2, 3))
    what = "Transpose.forward(ctx, x, 0, 1) with x of shape (2, 3)"
    got = Transpose.forward(_Ctx(), x, 0, 1)
    t.true(np.shape(got) == (3, 2), f"{what} to have shape (3, 2) (got {np.shape(got)})",
           hint="x.swapaxes(dim0, dim1) swaps the two sizes (and strides)", given={"x": x})
    t.close(got, x.T, what, given={"x": x}, mistakes=[
        mistakes.custom(_is(x.reshape(3, 2)), "this reshapes: the elements keep their row-major order, while a "
                        "transpose moves element [i, j] to [j, i]", "x.swapaxes(dim0, dim1), not x.reshape")])
    _view_of(t, "Transpose", got, x, what, "x.swapaxes(dim0, dim1) returns a view (np.ascontiguousarray or .copy() "
             "make a copy)")
    x3 = rng.standard_normal((2, 3, 4))
    got = Transpose.forward(_Ctx(), x3, 1, -1)
    t.true(np.shape(got) == (2, 4, 3), f"Transpose.forward(ctx, x, 1, -1) with x of shape (2, 3, 4) to have shape "
           f"(2, 4, 3) (got {np.shape(got)})", why="x.T reverses every dim; transpose swaps only dim0 and dim1"
           if np.shape(got) == (4, 3, 2) else None, hint="use the dims forward receives: x.swapaxes(dim0, dim1)")
    t.close(got, x3.swapaxes(1, 2), "Transpose.forward(ctx, x, 1, -1) with x of shape (2, 3, 4)")
    g = rng.standard_normal((2, 4, 3))
    with _installed({"Transpose": Transpose}):
        gx, = _backward(t, "Transpose", lambda v: v.transpose(1, -1), (x3,), g)
        t.close(gx, g.swapaxes(1, 2), "the gradient of x after x.transpose(1, -1).backward(grad)", given={"grad": g},
                mistakes=[mistakes.custom(_is(g.reshape(2, 3, 4)), "this reshapes grad to x's shape: its elements "
                                          "keep their order, but element [i, j, k] of the output came from x[i, k, j]",
                                          "transpose grad back along the same two dims")])
        weight = rng.standard_normal((2, 4, 3))
        v = tc.tensor(x3, requires_grad=True)
        (v.transpose(1, -1) * tc.tensor(weight)).sum().backward()
        _numeric_close(t, "Transpose", lambda a: a.transpose(1, -1), (x3,), weight, [v.grad])
        # used for real: Linear's x @ w.T, and a view that sees its base change in place
        w = tc.tensor(rng.standard_normal((3, 2)))
        wt = w.T
        w.mul_(2.0)
    t.true(np.allclose(wt.numpy(), w.numpy().T), "w.T to show w.mul_(2.0) (a view sees its base change in place)",
           why="w.T kept w's old numbers", hint="return x.swapaxes(dim0, dim1) itself, not a copy of it")
    _second_derivatives(t, "Transpose", {"Transpose": Transpose}, lambda a: a.transpose(0, 1) ** 3,
                        (rng.standard_normal((2, 3)),), rng)

    # Expand: a size-1 dim (or a new leading one) read many times, with stride 0
    x = rng.standard_normal((3, 1))
    what = "Expand.forward(ctx, x, (2, 3, 4)) with x of shape (3, 1)"
    got = Expand.forward(_Ctx(), x, (2, 3, 4))
    t.true(np.shape(got) == (2, 3, 4), f"{what} to have shape (2, 3, 4) (got {np.shape(got)})",
           hint="np.broadcast_to(x, shape)", given={"x": x})
    t.close(got, np.broadcast_to(x, (2, 3, 4)), what, given={"x": x})
    _view_of(t, "Expand", got, x, what, "np.broadcast_to(x, shape) makes a view whose stretched dims have stride 0 "
             "(np.tile and np.repeat copy)")
    ctx = _Ctx()
    Expand.forward(ctx, x, (2, 3, 4))
    g = rng.standard_normal((2, 3, 4))
    back = Expand.backward(ctx, tc.tensor(g))
    back = back[0] if isinstance(back, (tuple, list)) else back
    shape = tuple(back.shape) if isinstance(back, tc.Tensor) else np.shape(back)
    t.true(shape == (3, 1), f"Expand.backward(ctx, grad) with grad of shape (2, 3, 4) to have x's shape (3, 1) "
           f"(got {shape})", why="each element of x was read at every position of the stretched dims",
           hint="sum grad over the dims forward added in front, and (keepdim=True) over the dims that were 1",
           given={"grad": g})
    t.close(back, g.sum(axis=(0, 2), keepdims=True)[0], "Expand.backward(ctx, grad) with grad of shape (2, 3, 4)",
            given={"grad": g}, mistakes=[
                mistakes.custom(_is(g.mean(axis=(0, 2), keepdims=True)[0]), "this averages: each element of x "
                                "reached 8 positions of the output, and a change of it moves all 8",
                                "sum over the stretched dims, not mean")])
    with _installed({"Expand": Expand}):
        weight = rng.standard_normal((2, 3, 4))
        v = tc.tensor(x, requires_grad=True)
        (v.expand(2, 3, 4) * tc.tensor(weight)).sum().backward()
        _numeric_close(t, "Expand", lambda a: a.expand(2, 3, 4), (x,), weight, [v.grad])
        b = tc.tensor(rng.standard_normal((1, 4)))
        wide = b.expand(3, 4)
        b.add_(1.0)
    t.true(np.allclose(wide.numpy(), np.broadcast_to(b.numpy(), (3, 4))), "b.expand(3, 4) to show b.add_(1.0) (a "
           "view sees its base change in place)", why="the expanded tensor kept b's old numbers",
           hint="return np.broadcast_to(x, shape) itself, not a copy of it")
    _second_derivatives(t, "Expand", {"Expand": Expand}, lambda a: a.expand(2, 3, 4) ** 3,
                        (rng.standard_normal((3, 1)),), rng)


@exercise("02b.6", title="picking elements: Gather (along a dim), GetItem (x[key])", points=4)
def gather_check(t, Gather, GetItem):
    _gather_part(t, Gather)
    _getitem_part(t, GetItem)


def _gather_part(t, Gather):
    rng = np.random.default_rng(26)
    x = rng.standard_normal((3, 4))
    index = np.array([[0], [2], [1]])
    what = "Gather.forward(ctx, x, 1, index) with x of shape (3, 4) and index [[0], [2], [1]]"
    got = Gather.forward(_Ctx(), x, 1, index)
    along_zero = np.take_along_axis(x, index, 0)  # rows picked whole, broadcast along dim 1
    why = "the result has one element per index"
    if np.shape(got) == (3, 1, 4):
        why = "x[index] picks whole rows of x (NumPy's indexing along dim 0)"
    elif np.shape(got) == (3, 4) and np.allclose(got, along_zero):
        why = "this picks along dim 0 (whole rows): the index gives, for each row, the column to read"
    t.true(np.shape(got) == (3, 1), f"{what} to have the index's shape (3, 1) (got {np.shape(got)})", why=why,
           hint="np.take_along_axis(x, index, axis=dim), along the dim forward receives", given={"x": x})
    t.close(got, np.take_along_axis(x, index, 1), what, given={"x": x})
    x3 = rng.standard_normal((2, 3, 4))
    index3 = rng.integers(0, 3, (2, 5, 4))
    got = Gather.forward(_Ctx(), x3, -2, index3)
    t.close(got, np.take_along_axis(x3, index3, -2), "Gather.forward(ctx, x, -2, index) with x (2, 3, 4) and "
            "index (2, 5, 4) (an index may repeat a position, and be longer than x along dim)")
    idx = np.array([[0, 0, 3], [2, 1, 2], [1, 1, 1]])
    g = rng.standard_normal((3, 3))
    want = np.zeros((3, 4))
    np.add.at(want, (np.arange(3)[:, None], idx), g)
    last = np.zeros((3, 4))
    last[np.arange(3)[:, None], idx] = g
    with _installed({"Gather": Gather}):
        gx, = _backward(t, "Gather", lambda v: v.gather(1, tc.tensor(idx)), (x,), g)
        t.close(gx, want, "the gradient of x after x.gather(1, index).backward(grad), index [[0, 0, 3], [2, 1, 2], "
                "[1, 1, 1]]", given={"grad": g}, mistakes=[
                    mistakes.custom(_is(last), "a position picked twice receives only one of its gradients: "
                                    "writing grad into the zeros keeps the last write", "add the gradients of "
                                    "repeated positions: zeros(...).scatter_add(dim, index, grad)")])
        weight = rng.standard_normal((3, 3))
        v = tc.tensor(x, requires_grad=True)
        (v.gather(1, tc.tensor(idx)) * tc.tensor(weight)).sum().backward()
        _numeric_close(t, "Gather", lambda a: a.gather(1, tc.tensor(idx)), (x,), weight, [v.grad])
        # used for real: a classification loss picks each row's log-probability of its label
        scores = tc.tensor(rng.standard_normal((4, 3)), dtype=tc.float32, requires_grad=True)
        labels = tc.tensor([2, 0, 0, 1])
        picked = scores.log_softmax(1).gather(1, labels[:, None])
    t.close(picked.detach()[:, 0], scores.detach().log_softmax(1).numpy()[np.arange(4), labels.numpy()],
            "log_softmax(scores).gather(1, labels[:, None]), each row's log-probability of its label")
    _second_derivatives(t, "Gather", {"Gather": Gather}, lambda a: a.gather(0, tc.tensor([[1, 0, 1]])) ** 3,
                        (rng.standard_normal((2, 3)),), rng)


def _key_text(key):
    """A key as the framework hands it to GetItem.forward, written as Python would print it (slices as a:b:c)."""
    def one(k):
        if type(k) is slice:
            return ":".join("" if v is None else str(v) for v in (k.start, k.stop)) + \
                ("" if k.step is None else f":{k.step}")
        return "..." if k is Ellipsis else np.array2string(k, separator=", ") if isinstance(k, np.ndarray) else repr(k)
    return "(" + ", ".join(one(k) for k in key) + ")"


def _getitem_part(t, GetItem):
    rng = np.random.default_rng(30)
    x = rng.standard_normal((3, 4))
    rows = np.array([2, 0, 2])
    # the key as `x[...]` hands it over: normalised, with `...` at its end (NumPy's x[key] is then a view even of
    # ints only); a basic key gives a view, an index array a copy of the rows it names
    for key, call in (((1, Ellipsis), "x[1]"), ((slice(None), slice(1, 4, 2), Ellipsis), "x[:, 1:4:2]"),
                      ((None, 0, Ellipsis), "x[None, 0]"), ((2, 3, Ellipsis), "x[2, 3]")):
        what = f"GetItem.forward(ctx, x, {_key_text(key)}) (the key of {call}) with x of shape (3, 4)"
        got = GetItem.forward(_Ctx(), x, key)
        want = x[key]
        t.true(np.shape(got) == want.shape, f"{what} to have shape {want.shape} (got {np.shape(got)})",
               why="an int removes its dim, a slice keeps it, None inserts a dim of size 1", given={"x": x},
               hint="NumPy's x[key] reads a key of ints, slices, None and ... as PyTorch does")
        t.close(got, want, what, given={"x": x})
        _view_of(t, "GetItem", got, x, what, "x[key] of ints, slices, None and ... is a view (x[key].copy(), "
                 "np.array(x[key]) and x.take copy)")
    for key, call in (((rows, Ellipsis), "x[tensor([2, 0, 2])]"), ((slice(None), rows, Ellipsis),
                                                                     "x[:, tensor([2, 0, 2])]")):
        what = f"GetItem.forward(ctx, x, {_key_text(key)}) (the key of {call}) with x of shape (3, 4)"
        got = GetItem.forward(_Ctx(), x, key)
        want = x[key]
        flat = np.take(x, rows)
        t.true(np.shape(got) == want.shape, f"{what} to have shape {want.shape} (got {np.shape(got)})",
               why="np.take without an axis reads x flattened: the index picks rows (or columns), each of them "
                   "whole" if np.shape(got) == flat.shape and np.allclose(got, flat) else
               "an index array puts its own shape where its dim was", given={"x": x},
               hint="x[key]: NumPy's indexing by an int array picks whole rows (or columns), as PyTorch's does")
        t.close(got, want, what, given={"x": x})
    # backward: grad goes back into zeros of x's shape at the positions the key read
    g = rng.standard_normal((2, 2))
    want = np.zeros((3, 4))
    want[1:, ::2] = g
    at_start = np.zeros((3, 4))
    at_start[:2, :2] = g
    with _installed({"GetItem": GetItem}):
        with _gradient_shape_explained("(3, 4)", "x's gradient has x's shape (3, 4): grad (2, 2) belongs at the "
                                       "positions x[1:, ::2] read, and every element of x the key did not read gets 0",
                                       "keep x's shape and the key in forward; in backward write grad into "
                                       "tc.zeros(shape, dtype=grad.dtype) at the key"):
            gx, = _backward(t, "GetItem", lambda v: v[1:, ::2], (x,), g)
        t.close(gx, want, "x.grad after x[1:, ::2].backward(grad), x of shape (3, 4)", given={"grad": g}, mistakes=[
            mistakes.custom(_is(at_start), "grad went to the first rows and columns of x; x[1:, ::2] read rows 1 "
                            "and 2, columns 0 and 2", "write grad at the same key forward read: zeros[key] = grad")])
        g = rng.standard_normal((3, 4))
        added = np.zeros((3, 4))
        np.add.at(added, rows, g)
        assigned = np.zeros((3, 4))
        assigned[rows] = g
        gx, = _backward(t, "GetItem", lambda v: v[tc.tensor(rows)], (x,), g)
        t.close(gx, added, "x.grad after x[tensor([2, 0, 2])].backward(grad), x of shape (3, 4)", given={
            "grad": g}, mistakes=[
                mistakes.custom(_is(assigned), "row 2 of x is read twice (positions 0 and 2 of the index), but its "
                                "gradient holds only one of the two rows of grad: an assignment keeps the last "
                                "write", "a row read k times receives the sum of its k gradients: index_add (or "
                                "np.add.at on arrays) adds where repeated indices meet; zeros[idx] = grad does not")])
        cols = np.array([[3, 1], [3, 3]])
        g3 = rng.standard_normal((3, 2, 2))
        added3 = np.zeros((3, 4))
        np.add.at(added3, (slice(None), cols), g3)
        gx, = _backward(t, "GetItem", lambda v: v[:, tc.tensor(cols)], (x,), g3)
        t.close(gx, added3, "x.grad after x[:, tensor([[3, 1], [3, 3]])].backward(grad) (column 3 read three "
                "times), x of shape (3, 4)", given={"grad": g3})
        for call in (lambda a: a[1:, ::2], lambda a: a[tc.tensor(rows)], lambda a: a[:, tc.tensor(cols)],
                     lambda a: a[None, 2, 1:]):
            v = tc.tensor(x, requires_grad=True)
            weight = rng.standard_normal(tuple(call(v).shape))
            (call(v) * tc.tensor(weight)).sum().backward()
            _numeric_close(t, "GetItem", call, (x,), weight, [v.grad])
        # used for real: a batch's rows, the last position's logits (the GPT), a window of int64 token ids
        features = tc.tensor(rng.standard_normal((6, 3)), dtype=tc.float32, requires_grad=True)
        batch = features[tc.tensor([4, 1, 4])]
        logits = tc.tensor(rng.standard_normal((2, 5, 3)), dtype=tc.float32)
        last = logits[:, -1, :]
        before = seams.calls().get("GetItem", 0)
        window = tc.arange(12).reshape(2, 6)[:, -4:]
        read_ints = seams.calls().get("GetItem", 0) > before
        (batch * tc.tensor([[1.0], [2.0], [3.0]])).sum().backward()
        b = tc.tensor(rng.standard_normal((2, 3)))
        row = b[1]
        b.mul_(2.0)
    if batch.grad_fn is None or batch.grad_fn._learner_backward is None or not read_ints:
        t.fail("GetItem", "your GetItem did not compute features[tensor([4, 1, 4])] or an int64 tensor's window: "
               "the framework's ran instead")
    t.equal(batch.dtype, tc.float32, "the dtype of a float32 tensor's rows", hint="x[key] keeps x's dtype")
    t.close(features.grad.numpy()[[0, 1, 4]].sum(axis=1), np.array([0.0, 6.0, 12.0]),
            "the row sums of features.grad after (features[tensor([4, 1, 4])] * [[1], [2], [3]]).sum().backward() "
            "(row 4 read twice, row 0 not at all)")
    t.close(last, logits.numpy()[:, -1, :], "logits[:, -1, :], the last position's scores")
    t.equal(window.numpy().tolist(), [[2, 3, 4, 5], [8, 9, 10, 11]], "tc.arange(12).reshape(2, 6)[:, -4:]",
            hint="x[key] reads an int64 array as it reads a float one")
    t.true(np.allclose(row.numpy(), b.numpy()[1]), "b[1] to show b.mul_(2.0) (a view sees its base change in "
           "place)", why="b[1] kept b's old numbers", hint="return x[key] itself, not a copy of it")
    _second_derivatives(t, "GetItem", {"GetItem": GetItem}, lambda a: a[1:, ::2] ** 3, (x,), rng)
    _second_derivatives(t, "GetItem", {"GetItem": GetItem}, lambda a: a[tc.tensor(rows)] ** 3, (x,), rng)


@exercise("02b.7", title="views and copies: View (view, reshape, squeeze, unsqueeze), Clone (contiguous, clone), "
                   "Narrow (narrow, split)", points=4)
def view_check(t, View, Clone, Narrow):
    _view_part(t, View)
    _clone_part(t, Clone)
    _narrow_part(t, Narrow)


def _view_part(t, View):
    rng = np.random.default_rng(27)
    x = rng.standard_normal((2, 3, 4))
    what = "View.forward(ctx, x, (6, 4)) with x of shape (2, 3, 4)"
    got = View.forward(_Ctx(), x, (6, 4))
    t.true(np.shape(got) == (6, 4), f"{what} to have shape (6, 4) (got {np.shape(got)})",
           hint="x.reshape(shape) reads the same elements in their row-major order", given={"x": x})
    t.close(got, x.reshape(6, 4), what, given={"x": x}, mistakes=[
        mistakes.custom(_is(x.reshape(6, 4, order="F")), "this fills the new shape column by column (Fortran "
                        "order); a view of a row-major tensor keeps the elements' row-major order",
                        "x.reshape(shape), with NumPy's default order")])
    _view_of(t, "View", got, x, what, "x.reshape(shape) of a row-major array is a view (np.array(x), x.copy() and "
             "x.flatten() copy)")
    ctx = _Ctx()
    View.forward(ctx, x, (6, 4))
    g = rng.standard_normal((6, 4))
    back = View.backward(ctx, tc.tensor(g))
    back = back[0] if isinstance(back, (tuple, list)) else back
    shape = tuple(back.shape) if isinstance(back, tc.Tensor) else np.shape(back)
    t.true(shape == (2, 3, 4), f"View.backward(ctx, grad) with grad of shape (6, 4) to have x's shape (2, 3, 4) "
           f"(got {shape})", why="it kept the output's shape: forward must keep x's shape, not the new one"
           if shape == (6, 4) else "each element of the output is one element of x, so the gradient has x's shape",
           hint="keep x.shape in forward (ctx.shape = x.shape) and reshape grad to it", given={"grad": g})
    t.close(back, g.reshape(2, 3, 4), "View.backward(ctx, grad) with grad of shape (6, 4)", given={"grad": g})
    g = rng.standard_normal((4, 6))
    with _installed({"View": View}):
        gx, = _backward(t, "View", lambda v: v.view(4, -1), (x,), g)
        t.close(gx, g.reshape(2, 3, 4), "the gradient of x after x.view(4, -1).backward(grad)", given={"grad": g})
        weight = rng.standard_normal((4, 6))
        v = tc.tensor(x, requires_grad=True)
        (v.view(4, -1) * tc.tensor(weight)).sum().backward()
        _numeric_close(t, "View", lambda a: a.view(4, -1), (x,), weight, [v.grad])
        # used for real: squeeze and unsqueeze are views to a shape (a loss squeezes its picked column)
        a = tc.tensor(rng.standard_normal((3, 1)), dtype=tc.float32, requires_grad=True)
        squeezed, unsqueezed = a.squeeze(1), a.unsqueeze(0)
        for out, call in ((squeezed, "a.squeeze(1)"), (unsqueezed, "a.unsqueeze(0)")):
            if out.grad_fn is None or out.grad_fn._learner_backward is None:
                t.fail("View", f"your View did not compute {call} of a float tensor: the framework's ran instead")
        (squeezed * tc.tensor([1.0, 2.0, 3.0])).sum().backward()
        b = tc.tensor(rng.standard_normal((2, 3)))
        flat = b.view(-1)
        b.mul_(2.0)
    t.equal(tuple(unsqueezed.shape), (1, 3, 1), "the shape of a.unsqueeze(0) for a of shape (3, 1)")
    t.equal(squeezed.dtype, tc.float32, "the dtype of a.squeeze(1) for a float32 a",
            hint="a view keeps x's dtype: reshape the array itself")
    t.close(a.grad, [[1.0], [2.0], [3.0]], "a.grad after (a.squeeze(1) * [1, 2, 3]).sum().backward()")
    t.true(np.allclose(flat.numpy(), b.numpy().reshape(-1)), "b.view(-1) to show b.mul_(2.0) (a view sees its base "
           "change in place)", why="the view kept b's old numbers", hint="return x.reshape(shape) itself, not a copy")
    _second_derivatives(t, "View", {"View": View}, lambda a: a.view(6, 4) ** 3, (x,), rng)
    # a strided x: attention's q.view(B, T, H, d) of a slice of the last dim (what split gives)
    wide = rng.standard_normal((2, 3, 8))
    part = wide[:, :, 4:]
    what = "View.forward(ctx, x, (2, 3, 2, 2)) with x = wide[:, :, 4:], a strided slice of shape (2, 3, 4)"
    got = View.forward(_Ctx(), part, (2, 3, 2, 2))
    t.close(got, part.reshape(2, 3, 2, 2), what, given={"x": part})
    _view_of(t, "View", got, part, what, "x.reshape(shape) gives a view of a strided array whenever its strides "
             "allow one (np.ascontiguousarray(x) copies a strided x first)")
    weight = rng.standard_normal((2, 3, 2, 2))
    with _installed({"View": View}):
        w = tc.tensor(wide, requires_grad=True)
        heads = w.split(4, dim=2)[1].view(2, 3, 2, 2)
        if heads.grad_fn is None or heads.grad_fn._learner_backward is None:
            t.fail("View", "your View did not compute k.view(2, 3, 2, 2) of a strided k: the framework's ran instead")
        (heads * tc.tensor(weight)).sum().backward()
    want = np.zeros((2, 3, 8))
    want[:, :, 4:] = weight.reshape(2, 3, 4)
    t.close(w.grad, want, "w.grad after (w.split(4, dim=2)[1].view(2, 3, 2, 2) * weight).sum().backward()")


def _clone_part(t, Clone):
    rng = np.random.default_rng(28)
    xt = rng.standard_normal((3, 4)).T
    what = "Clone.forward(ctx, x) with x a transposed array of shape (4, 3)"
    got = Clone.forward(_Ctx(), xt)
    t.close(got, xt, what, given={"x": xt})
    t.true(isinstance(got, np.ndarray) and not np.may_share_memory(got, xt), f"{what} to return a copy with its own "
           "memory", why="it returned x's own memory: writing into the clone would change x",
           hint="copy the numbers: x.copy()")
    t.true(got.flags.c_contiguous, f"{what} to be row-major (contiguous)", why="this copy kept x's transposed "
           "strides (np.copy(x) keeps x's memory order), so a view of it to another shape is still impossible",
           hint="x.copy() (the array's method) or np.ascontiguousarray(x) copy into row-major order")
    g = rng.standard_normal((4, 3))
    with _installed({"Clone": Clone}):
        gx, = _backward(t, "Clone", lambda v: v.clone(), (xt.copy(),), g)
        t.close(gx, g, "the gradient of x after x.clone().backward(grad)", given={"grad": g})
        # used for real: reshape of a transposed tensor is a copy then a view (CloneBackward0 -> UnsafeViewBackward0)
        v = tc.tensor(rng.standard_normal((2, 3)), requires_grad=True)
        flat = v.t().reshape(6)
        copy = flat.grad_fn.next_functions[0][0] if flat.grad_fn is not None else None
        if copy is None or copy.name() != "CloneBackward0" or copy._learner_backward is None:
            t.fail("Clone", "your Clone did not compute the copy of v.t().reshape(6): the framework's ran instead")
        (flat * tc.arange(6.0, dtype=tc.float64)).sum().backward()
    t.close(flat, v.detach().numpy().T.reshape(6), "v.t().reshape(6) for v of shape (2, 3)")
    t.close(v.grad, np.arange(6.0).reshape(3, 2).T, "v.grad after (v.t().reshape(6) * arange(6)).sum().backward()")
    _second_derivatives(t, "Clone", {"Clone": Clone}, lambda a: a.t().contiguous() ** 3, (xt.T.copy(),), rng)


def _narrowed(x, dim, start, length):
    return np.moveaxis(np.moveaxis(x, dim, 0)[start:start + length], 0, dim)


def _narrow_part(t, Narrow):
    rng = np.random.default_rng(29)
    x = rng.standard_normal((3, 5))
    for dim, start, length in ((1, 1, 3), (-1, 2, 2), (0, 1, 2)):
        what = f"Narrow.forward(ctx, x, {dim}, {start}, {length}) with x of shape (3, 5)"
        got = Narrow.forward(_Ctx(), x, dim, start, length)
        want = _narrowed(x, dim, start, length)
        t.true(np.shape(got) == want.shape, f"{what} to have shape {want.shape} (got {np.shape(got)})",
               why="a negative dim counts from the end (-1 is the last dim)" if dim < 0 else
               f"narrow keeps {length} elements of dim {dim}, from index {start}, and every element of the other dims",
               hint="slice along dim only: x[(slice(None),) * dim + (slice(start, start + length),)], with dim "
                    "made positive first (dim % x.ndim)", given={"x": x})
        t.close(got, want, what, given={"x": x})
        _view_of(t, "Narrow", got, x, what, "a basic slice of an array is a view (x[...].copy() and np.take copy)")
    ctx = _Ctx()
    Narrow.forward(ctx, x, 1, 1, 3)
    g = rng.standard_normal((3, 3))
    back = Narrow.backward(ctx, tc.tensor(g))
    back = back[0] if isinstance(back, (tuple, list)) else back
    shape = tuple(back.shape) if isinstance(back, tc.Tensor) else np.shape(back)
    what = "Narrow.backward(ctx, grad) with grad of shape (3, 3), after forward(ctx, x, 1, 1, 3) with x (3, 5)"
    t.true(shape == (3, 5), f"{what} to have x's shape (3, 5) (got {shape})",
           why="it kept the slice's shape: the elements of x outside the slice are inputs too (their gradient is 0)",
           hint="write grad into zeros of x's shape along dim, e.g. tc.cat([zeros, grad, zeros], dim)",
           given={"grad": g})
    want = np.zeros((3, 5))
    want[:, 1:4] = g
    at_start = np.zeros((3, 5))
    at_start[:, :3] = g
    t.close(back, want, what, given={"grad": g}, mistakes=[
        mistakes.custom(_is(at_start), "grad went to the first positions of dim 1; the slice began at start=1",
                        "put `start` zeros before grad and the rest after it")])
    g = rng.standard_normal((3, 2))
    with _installed({"Narrow": Narrow}):
        gx, = _backward(t, "Narrow", lambda v: v.narrow(-1, 3, 2), (x,), g)
        want = np.zeros((3, 5))
        want[:, 3:] = g
        t.close(gx, want, "the gradient of x after x.narrow(-1, 3, 2).backward(grad)", given={"grad": g})
        weight = rng.standard_normal((2, 5))
        v = tc.tensor(x, requires_grad=True)
        (v.narrow(0, 1, 2) * tc.tensor(weight)).sum().backward()
        _numeric_close(t, "Narrow", lambda a: a.narrow(0, 1, 2), (x,), weight, [v.grad])
        # used for real: split is a narrow per piece (attention's q, k, v out of one projection)
        w = tc.tensor(x, requires_grad=True)
        pieces = w.split([2, 3], dim=1)
        if any(p.grad_fn is None or p.grad_fn._learner_backward is None for p in pieces):
            t.fail("Narrow", "your Narrow did not compute x.split([2, 3], dim=1): the framework's ran instead")
        (pieces[0].sum() * 2 + (pieces[1] * pieces[1]).sum()).backward()
    t.close(w.grad, np.concatenate([np.full((3, 2), 2.0), 2 * x[:, 2:]], 1),
            "w.grad after (a.sum() * 2 + (b * b).sum()).backward() for a, b = w.split([2, 3], dim=1)")
    _second_derivatives(t, "Narrow", {"Narrow": Narrow}, lambda a: a.narrow(1, 1, 3) ** 3, (x,), rng)
