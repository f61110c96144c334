"""Catalogue of wrong answers, chapter 02b (the ops a model needs): each realistic mistake fails with a message
that names it, the hint waits for a second failure, and the unsolved stub fails."""
import numpy as np
import pytest

import tinygrad_course as tc

from .wrong_answers import assert_names_mistake, catalogue_tests, solution

Softmax, LogSoftmax, Gelu, Dropout, Embedding, MaskedFill, Cat, erf = solution(
    "02b", "Softmax", "LogSoftmax", "Gelu", "Dropout", "Embedding", "MaskedFill", "Cat", "erf")


def op(base, forward=None, backward=None):
    """A wrong variant of the solution's op class `base`, keeping its name (the framework's op it computes)."""
    body = {}
    if forward is not None:
        body["forward"] = staticmethod(forward)
    if backward is not None:
        body["backward"] = staticmethod(backward)
    return type(base.__name__, (base,), body)


def _softmax_unshifted(ctx, x, dim):
    ctx.dim, ctx.save_output = dim, True
    e = np.exp(x)
    return e / e.sum(axis=dim, keepdims=True)


def _softmax_over_everything(ctx, x, dim):
    ctx.dim, ctx.save_output = dim, True
    e = np.exp(x - x.max())
    return e / e.sum()


SoftmaxUnshifted = op(Softmax, forward=_softmax_unshifted)
SoftmaxOverEverything = op(Softmax, forward=_softmax_over_everything)
SoftmaxDiagonal = op(Softmax, backward=lambda ctx, grad: grad * ctx.saved_output * (1 - ctx.saved_output))
LogSoftmaxDiagonal = op(LogSoftmax, backward=lambda ctx, grad: grad - ctx.saved_output.exp() * grad)


def _gelu_tanh_always(ctx, x, approximate="none"):
    ctx.save_for_backward(x)
    ctx.approximate = "tanh"
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def _gelu_one_term(ctx, grad):
    x, = ctx.saved_tensors
    if ctx.approximate == "tanh":
        return Gelu.backward(ctx, grad)
    return grad * 0.5 * (1 + (x / np.sqrt(2.0)).erf())


GeluTanhAlways = op(Gelu, forward=_gelu_tanh_always)
GeluOneTerm = op(Gelu, backward=_gelu_one_term)
GeluWithoutX = op(Gelu, forward=lambda ctx, x, approximate="none": (
    ctx.save_for_backward(x), setattr(ctx, "approximate", approximate), 0.5 * (1 + erf(x / np.sqrt(2.0))))[2])
DropoutPassingGrad = op(Dropout, backward=lambda ctx, grad: (grad * 1.0, None))
DropoutUnscaled = op(Dropout, backward=lambda ctx, grad: (grad * tc.from_numpy((ctx.mask > 0).astype(ctx.mask.dtype)),
                                                          None))


def _embedding_assigned(ctx, grad):
    dim = grad.shape[-1]
    out = np.zeros((ctx.num_embeddings, dim), dtype=grad.numpy().dtype)
    out[ctx.indices.reshape(-1)] = grad.numpy().reshape(-1, dim)  # a repeated id keeps its last write
    return tc.from_numpy(out), None


EmbeddingAssigned = op(Embedding, backward=_embedding_assigned)
EmbeddingNotScattered = op(Embedding, backward=lambda ctx, grad: (grad * 1.0, None))
MaskedFillPassingGrad = op(MaskedFill, backward=lambda ctx, grad: (grad * 1.0, None, None))
MaskedFillSwapped = op(MaskedFill, forward=lambda ctx, x, mask, value: (
    ctx.save_for_backward(mask), np.where(mask, x, np.asarray(value, dtype=x.dtype)))[1])



def _cat_along_zero(ctx, *tensors, dim=0):
    ctx.dim, ctx.sizes = dim, [t.shape[dim] for t in tensors]
    return np.concatenate(tensors)


CatAlongZero = op(Cat, forward=_cat_along_zero)
CatEqualChunks = op(Cat, backward=lambda ctx, grad: grad.chunk(len(ctx.sizes), ctx.dim))
CatWholeGrad = op(Cat, backward=lambda ctx, grad: tuple(grad * 1.0 for _ in ctx.sizes))
CatFirstSliceEach = op(Cat, backward=lambda ctx, grad: tuple(grad.narrow(ctx.dim, 0, n) for n in ctx.sizes))

CATALOGUE = [
    ("02b.1", (SoftmaxUnshifted, LogSoftmax), ["to be finite for x = [[1000, 1001, 1002], [-2, 0, 2]]",
                                               "exp(1000) overflows"]),
    ("02b.1", (SoftmaxOverEverything, LogSoftmax), ["normalises over every element, not along dim=-1", "input: x = "]),
    ("02b.1", (SoftmaxDiagonal, LogSoftmax), ["only the diagonal of softmax's Jacobian", "input: grad = "]),
    ("02b.1", (Softmax, LogSoftmaxDiagonal), ["this is the diagonal only", "log-sum-exp"]),
    ("02b.2", (GeluTanhAlways, Dropout), ["this is the tanh approximation, but approximate='none'"]),
    ("02b.2", (GeluWithoutX, Dropout), ["this is Phi(x), the normal CDF, without the factor x"]),
    ("02b.2", (GeluOneTerm, Dropout), ["only one term of the product rule"]),
    ("02b.2", (Gelu, DropoutPassingGrad), ["the dropped elements still pass their gradient"]),
    ("02b.2", (Gelu, DropoutUnscaled), ["missing the factor 1 / (1 - p)"]),
    ("02b.3", (EmbeddingAssigned, MaskedFill), ["an assignment keeps the last write", "input: grad = "]),
    ("02b.3", (EmbeddingNotScattered, MaskedFill), ["Embedding.backward returned a gradient of shape (2, 4, 3) for "
                                                    "input 0 of shape (5, 3)", "one row per lookup"]),
    ("02b.3", (Embedding, MaskedFillPassingGrad), ["the filled positions pass their gradient"]),
    ("02b.3", (Embedding, MaskedFillSwapped), ["the value went where the mask is False", "input: x = "]),
    ("02b.4", (CatAlongZero,), ["the arrays were joined along dim 0, not dim=1", "input: a = "]),
    ("02b.4", (CatEqualChunks,), ["for input 1 of shape (2, 3, 3)", "sizes 1, 3 and 2 along dim 1"]),
    ("02b.4", (CatWholeGrad,), ["returned a gradient of shape (2, 6, 3) for input 1", "the slice of grad that its "
                                                                                      "elements became"]),
    ("02b.4", (CatFirstSliceEach,), ["every input got the first slice of grad"]),
]


@pytest.mark.parametrize("exercise, wrong, phrases", CATALOGUE,
                         ids=[f"{e}-{'-'.join(w.__name__ for w in ws)}-{k}" for k, (e, ws, _) in enumerate(CATALOGUE)])
def test_a_wrong_answer_fails_naming_its_mistake(exercise, wrong, phrases):
    assert_names_mistake(exercise, wrong, *phrases)


def test_the_solutions_pass():
    from tinygrad_course.grading import check, reset_attempts

    reset_attempts()
    check("02b.1", Softmax, LogSoftmax)
    check("02b.2", Gelu, Dropout)
    check("02b.3", Embedding, MaskedFill)
    check("02b.4", Cat)


NAMES = {"02b.1": ("Softmax", "LogSoftmax"), "02b.2": ("Gelu", "Dropout"), "02b.3": ("Embedding", "MaskedFill"),
         "02b.4": ("Cat",)}

test_the_stub_fails, test_every_exercise_has_two_wrong_answers = catalogue_tests(NAMES, CATALOGUE, "02b")
