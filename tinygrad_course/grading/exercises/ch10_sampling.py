"""Chapter 10 (a GPT), exercise 10.11: what sampling runs -- the learner's `Topk` op (forward on arrays, backward
with tensor ops, as chapter 02's ops) and `multinomial` (PyTorch's exponential race).

`Topk` is called directly on small arrays with ties, then installed in the framework (`tc.topk`) for its gradient
and for top-k sampling; `multinomial` is compared with the framework's own draw from a generator of the same seed,
and must raise PyTorch's errors for distributions it cannot draw from.
"""
import numpy as np

import tinygrad_course as tc

from ... import seams
from .. import mistakes
from ..registry import exercise
from .ch02 import _Ctx, _installed

F = tc.nn.functional


def _stable_topk(x, k, dim, largest):
    """The k largest (smallest) of x along dim, largest first, equal values in their order: PyTorch's result."""
    order = np.argsort(-x if largest else x, axis=dim, kind="stable")
    idx = np.take(order, np.arange(k), axis=dim)
    return np.take_along_axis(x, idx, axis=dim), idx


def _pair(t, got, what, given):
    t.true(isinstance(got, tuple) and len(got) == 2, f"{what} to return a pair (values, indices) of NumPy arrays "
           f"(got {type(got).__name__})", hint="x.topk(k) returns both the values and where they are: return "
           "(values, indices)", given=given)
    return got


def _topk_forward(t, Topk):
    x = np.array([[0.5, 2.0, -1.0, 2.0, 1.5], [3.0, 0.0, 0.0, -2.0, 1.0]])
    given = {"x": x}
    what = "Topk.forward(ctx, x, 3, -1, True)"
    values, indices = _pair(t, Topk.forward(_Ctx(), x.copy(), 3, -1, True), what, given)
    want_v, want_i = _stable_topk(x, 3, -1, True)
    smallest_v, smallest_i = _stable_topk(x, 3, -1, False)
    t.close(values, want_v, f"the values of {what}", given=given, mistakes=[
        mistakes.custom(lambda g, e: np.shape(g) == e.shape and np.allclose(g, smallest_v),
                        "these are the 3 smallest: largest=True asks for the largest, largest first",
                        "sort -x (or reverse the order) when largest is True"),
        mistakes.custom(lambda g, e: np.shape(g) == e.shape and np.allclose(g, np.sort(e, axis=-1)),
                        "the right values, smallest first: topk returns the largest first",
                        "take the first k of a descending order")])
    tie_last = np.take(np.argsort(x, axis=-1, kind="stable")[:, ::-1], np.arange(3), axis=-1)
    t.equal(np.asarray(indices).tolist(), want_i.tolist(), f"the indices of {what}", given=given,
            why="equal values (the two 2.0 of row 0, the two 0.0 of row 1) come in reverse order: reversing an "
                "ascending sort reverses equal values too; PyTorch keeps them in their order"
            if np.asarray(indices).tolist() == tie_last.tolist() else None,
            hint="a stable ascending sort of -x keeps equal values in their order: np.argsort(-x, axis=dim, "
                 "kind='stable')")
    t.equal(np.asarray(indices).dtype, np.dtype(np.int64), f"the dtype of the indices of {what}",
            hint="np.argsort returns int64 positions; keep them")
    y = np.array([[4.0, -1.0, 0.5], [2.0, 3.0, 0.5], [-3.0, 3.0, 1.0], [0.0, 1.0, 0.5]])
    what = "Topk.forward(ctx, y, 2, 0, False)"
    values, indices = _pair(t, Topk.forward(_Ctx(), y.copy(), 2, 0, False), what, {"y": y})
    want_v, want_i = _stable_topk(y, 2, 0, False)
    last_dim = np.take_along_axis(y, np.take(np.argsort(y, axis=-1, kind="stable"), np.arange(2), axis=0), axis=0)
    t.close(values, want_v, f"the values of {what} (the 2 smallest of each column)", given={"y": y}, mistakes=[
        mistakes.custom(lambda g, e: np.shape(g) == e.shape and np.allclose(g, last_dim),
                        "the order was found along the last dim, not along dim=0 (down each column)",
                        "sort along axis=dim, and take along axis=dim"),
        mistakes.custom(lambda g, e: np.shape(g) == e.shape and np.allclose(g, _stable_topk(y, 2, 0, True)[0]),
                        "these are the largest: largest=False asks for the smallest, smallest first",
                        "sort x itself (not -x) when largest is False")])
    t.equal(np.asarray(indices).tolist(), want_i.tolist(), f"the indices of {what}", given={"y": y})


def _topk_backward(t, Topk):
    rng = np.random.default_rng(11)
    data = rng.standard_normal((3, 6))
    weight = rng.standard_normal((3, 2))
    with _installed({"Topk": Topk}):
        x = tc.tensor(data, requires_grad=True)
        values = tc.topk(x, 2, dim=-1).values
        (values * tc.tensor(weight)).sum().backward()
        got = x.grad
    want_i = _stable_topk(data, 2, -1, True)[1]
    expected = np.zeros_like(data)
    np.put_along_axis(expected, want_i, weight, axis=-1)
    first = np.zeros_like(data)
    first[:, :2] = weight
    t.close(got, expected, "x.grad after (tc.topk(x, 2).values * w).sum().backward()", given={"x": data, "w": weight},
            mistakes=[mistakes.custom(lambda g, e: np.shape(g) == e.shape and np.allclose(g, first),
                                      "the gradient went to the first k positions of each row, not to where the "
                                      "values came from", "scatter grad back to the saved indices along dim")])


def _probs():
    tc.manual_seed(5)
    logits = tc.randn(3, 7)
    return F.softmax(logits, dim=-1)


def _multinomial_part(t, multinomial):
    reference = seams.reference("multinomial")
    probs = _probs()
    mine, ref = tc.Generator().manual_seed(7), tc.Generator().manual_seed(7)
    tc.manual_seed(123)  # what a draw that ignores generator= would come from
    got = multinomial(probs, 1, generator=mine)
    unseeded = reference(probs, 1, generator=tc.Generator().manual_seed(123))
    expected = reference(probs, 1, generator=ref)
    what = "multinomial(probs, 1, generator=tc.Generator().manual_seed(7)) for the (3, 7) probs shown"
    t.true(isinstance(got, tc.Tensor) and got.dtype == tc.int64 and tuple(got.shape) == (3, 1),
           f"{what} to be an int64 tensor of shape (3, 1) (got {getattr(got, 'dtype', type(got).__name__)} of shape "
           f"{tuple(getattr(got, 'shape', ()))})", hint="argmax(dim=-1, keepdim=True) keeps one column per row",
           given={"probs": probs})
    q = probs.numpy() / tc.empty_like(probs).exponential_(generator=tc.Generator().manual_seed(7)).numpy()
    times = probs.numpy() * tc.empty_like(probs).exponential_(generator=tc.Generator().manual_seed(7)).numpy()
    t.close(got, expected, what, given={"probs": probs}, mistakes=[
        mistakes.custom(lambda g, e: not np.array_equal(e, unseeded.numpy()) and np.array_equal(g, unseeded.numpy()),
                        "these are draws from the default generator: the generator passed in was not used",
                        "pass generator=generator on to exponential_"),
        mistakes.custom(lambda g, e: np.array_equal(g, np.argmax(times, axis=-1)[:, None]),
                        "the winner of p * q: a category's exponential time is divided into its probability, "
                        "p / q (multiplying favours no one in the right way)", "q = probs / exponential samples"),
        mistakes.custom(lambda g, e: np.array_equal(g, np.argmin(q, axis=-1)[:, None]),
                        "the smallest p / q won: the largest p / q is the category drawn", "argmax, not argmin")])
    several = multinomial(probs, 4, generator=mine)
    t.equal(several.tolist(), reference(probs, 4, generator=ref).tolist(),
            "multinomial(probs, 4) without replacement, the next draw of the same generator",
            why="the draws differ from PyTorch's from the same generator state" if tuple(several.shape) == (3, 4)
            else f"the shape is {tuple(several.shape)}, expected (3, 4)",
            hint="several draws without replacement are the num_samples largest p / q, largest first (topk), from "
                 "one exponential sample per category, drawn with the generator given")
    row = tc.tensor([0.1, 0.0, 0.6, 0.3], dtype=tc.float64)
    t.equal(multinomial(row, 3, generator=mine).tolist(), reference(row, 3, generator=ref).tolist(),
            "multinomial of the 1-D row [0.1, 0.0, 0.6, 0.3], 3 draws (a category of probability 0 is never drawn "
            "while others remain)", hint="a 1-D input draws along its only dim: use dim=-1 throughout")
    t.equal(tc.rand(2, generator=mine).tolist(), tc.rand(2, generator=ref).tolist(),
            "the generator's next draws after yours (each multinomial draws one exponential per probability)",
            hint="tc.empty_like(input).exponential_(generator=generator) draws exactly one value per category")


def _multinomial_errors(t, multinomial):
    errors = [((tc.ones(2, 2, 2), 1), "prob_dist must be 1 or 2 dim"),
              ((tc.ones(3), 4), "cannot sample n_sample > prob_dist.size(-1) samples without replacement"),
              ((tc.tensor([[0.5, -0.1, 0.6]]), 1), "probability tensor contains either `inf`, `nan` or element < 0"),
              ((tc.tensor([[1.0, float("nan")]]), 1), "probability tensor contains either `inf`, `nan` or element < 0"),
              ((tc.zeros(2, 3), 1), "invalid multinomial distribution (sum of probabilities <= 0)")]
    for (probs, n), message in errors:
        shown = f"multinomial(tensor of shape {tuple(probs.shape)} {probs.tolist()}, {n})"
        raised = t.raises(RuntimeError, multinomial, probs, n, what=shown,
                          hint="check the distribution first, with PyTorch's messages (see the exercise text)")
        if isinstance(raised, NotImplementedError):  # (a RuntimeError too) the released stub
            raise raised
        t.equal(str(raised), message, f"the message of the RuntimeError of {shown}")


@exercise("10.11", title="what sampling runs: Topk and multinomial", points=3)
def sampling_check(t, Topk, multinomial):
    _topk_forward(t, Topk)
    _topk_backward(t, Topk)
    _multinomial_part(t, multinomial)
    _multinomial_errors(t, multinomial)
    # used for real: top-k sampling of the next token, with the learner's Topk inside tc.topk
    with _installed({"Topk": Topk}):
        probs = _probs()
        kth = probs.topk(3, dim=-1).values[:, -1:]
        kept = probs.masked_fill(probs < kth, 0.0)
        drawn = multinomial(kept, 1, generator=tc.Generator().manual_seed(9))
    t.true(bool((kept.gather(1, drawn) > 0).all()), "every token drawn after top-3 filtering to be one of the 3 "
           "kept", hint="a probability of 0 makes p / q = 0: it never wins while a positive one remains")
