"""Catalogue of wrong answers, chapter 02b (the ops a model needs): each realistic mistake fails with a message
that names it, the hint waits for a second failure, and the unsolved stub fails."""
import numpy as np
import pytest

import tinygrad_course as tc

from .wrong_answers import catalogue_tests, named_mistake_test, op, solution

Softmax, LogSoftmax, Gelu, Dropout, Embedding, MaskedFill, Cat, Transpose, Expand, Gather, GetItem, View, Clone, \
    Narrow, erf = solution("02b", "Softmax", "LogSoftmax", "Gelu", "Dropout", "Embedding", "MaskedFill", "Cat",
                           "Transpose", "Expand", "Gather", "GetItem", "View", "Clone", "Narrow", "erf")


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


def _transpose_reshaped(ctx, x, dim0, dim1):
    ctx.dims = (dim0, dim1)
    sizes = list(x.shape)
    sizes[dim0], sizes[dim1] = sizes[dim1], sizes[dim0]
    return x.reshape(sizes)


def _transpose_copied(ctx, x, dim0, dim1):
    ctx.dims = (dim0, dim1)
    return np.ascontiguousarray(x.swapaxes(dim0, dim1))


def _transpose_keeping_shape(ctx, x, dim0, dim1):
    ctx.dims, ctx.shape = (dim0, dim1), x.shape
    return x.swapaxes(dim0, dim1)


def _expand_tiled(ctx, x, shape):
    ctx.lead = len(shape) - x.ndim
    ctx.stretched = tuple(ctx.lead + i for i, n in enumerate(x.shape) if n == 1 and shape[ctx.lead + i] != 1)
    return np.tile(x, tuple(s // n for s, n in zip(shape, (1,) * ctx.lead + x.shape)))


def _expand_mean(ctx, grad):
    if ctx.stretched:
        grad = grad.mean(ctx.stretched, keepdim=True)
    return grad.mean(tuple(range(ctx.lead))) if ctx.lead else grad


TransposeReshaped = op(Transpose, forward=_transpose_reshaped)
TransposeCopied = op(Transpose, forward=_transpose_copied)
TransposeGradReshaped = op(Transpose, forward=_transpose_keeping_shape,
                          backward=lambda ctx, grad: grad.reshape(ctx.shape))
ExpandTiled = op(Expand, forward=_expand_tiled)
ExpandPassingGrad = op(Expand, backward=lambda ctx, grad: grad)
ExpandMean = op(Expand, backward=_expand_mean)


def _gather_rows(ctx, x, dim, index):
    ctx.dim, ctx.shape = dim, x.shape
    ctx.save_for_backward(index)
    return x[index]


def _gather_along_zero(ctx, x, dim, index):
    ctx.dim, ctx.shape = dim, x.shape
    ctx.save_for_backward(index)
    return np.take_along_axis(x, index, axis=0)


def _gather_assigned(ctx, grad):
    index, = ctx.saved_tensors
    return tc.zeros(ctx.shape, dtype=grad.dtype).scatter(ctx.dim, index, grad)


GatherRows = op(Gather, forward=_gather_rows)
GatherAlongZero = op(Gather, forward=_gather_along_zero)
GatherAssigned = op(Gather, backward=_gather_assigned)


def _getitem_assigned(ctx, grad):
    out = tc.zeros(ctx.shape, dtype=grad.dtype)
    out[ctx.key] = grad  # an index tensor's repeated rows keep only their last gradient
    return out


def _getitem_copied(ctx, x, key):
    ctx.shape, ctx.key = x.shape, key
    return x[key].copy()


def _getitem_flat(ctx, x, key):
    ctx.shape, ctx.key = x.shape, key
    arrays = [k for k in key if isinstance(k, np.ndarray)]
    return np.take(x, arrays[0]) if arrays else x[key]  # np.take without an axis reads x flattened


GetItemAssigned = op(GetItem, backward=_getitem_assigned)
GetItemCopied = op(GetItem, forward=_getitem_copied)
GetItemFlat = op(GetItem, forward=_getitem_flat)
GetItemPassingGrad = op(GetItem, backward=lambda ctx, grad: grad)


def _view_keeping_new_shape(ctx, x, shape):
    ctx.shape = shape  # the output's shape, where backward needs x's
    return x.reshape(shape)


def _view_copied(ctx, x, shape):
    ctx.shape = x.shape
    return x.flatten().reshape(shape)


ViewKeepingNewShape = op(View, forward=_view_keeping_new_shape)
ViewCopied = op(View, forward=_view_copied)
ViewColumnOrder = op(View, forward=lambda ctx, x, shape: (setattr(ctx, "shape", x.shape), x.reshape(shape, order="F"))[1])
ViewContiguousFirst = op(View, forward=lambda ctx, x, shape: (setattr(ctx, "shape", x.shape),
                                                              np.ascontiguousarray(x).reshape(shape))[1])
CloneItself = op(Clone, forward=lambda ctx, x: x)
CloneKeepingOrder = op(Clone, forward=lambda ctx, x: np.copy(x))  # np.copy keeps x's memory order (order="K")


def _narrow_positive_dim_only(ctx, x, dim, start, length):
    ctx.dim, ctx.before, ctx.after = dim, start, x.shape[dim] - start - length
    return x[(slice(None),) * dim + (slice(start, start + length),)]  # a negative dim slices dim 0


def _narrow_grad_at_start(ctx, grad):
    rest = grad.shape[:ctx.dim] + (ctx.before + ctx.after,) + grad.shape[ctx.dim + 1:]
    return tc.cat([grad, tc.zeros(rest, dtype=grad.dtype)], ctx.dim)


NarrowPositiveDimOnly = op(Narrow, forward=_narrow_positive_dim_only)
NarrowGradUnpadded = op(Narrow, backward=lambda ctx, grad: grad)
NarrowGradAtStart = op(Narrow, backward=_narrow_grad_at_start)

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
    ("02b.5", (TransposeReshaped, Expand), ["this reshapes: the elements keep their row-major order", "input: x = "]),
    ("02b.5", (TransposeCopied, Expand), ["to return a view of x's array", "it returned a new array"]),
    ("02b.5", (TransposeGradReshaped, Expand), ["this reshapes grad to x's shape", "input: grad = "]),
    ("02b.5", (Transpose, ExpandTiled), ["to return a view of x's array", "it returned a new array"]),
    ("02b.5", (Transpose, ExpandPassingGrad), ["to have x's shape (3, 1) (got (2, 3, 4))",
                                               "read at every position of the stretched dims"]),
    ("02b.5", (Transpose, ExpandMean), ["this averages: each element of x reached 8 positions"]),
    ("02b.6", (GatherRows, GetItem), ["to have the index's shape (3, 1) (got (3, 1, 4))", "picks whole rows", "input: x = "]),
    ("02b.6", (GatherAlongZero, GetItem), ["this picks along dim 0"]),
    ("02b.6", (GatherAssigned, GetItem), ["a position picked twice receives only one of its gradients", "input: grad = "]),
    ("02b.6", (Gather, GetItemAssigned), ["row 2 of x is read twice (positions 0 and 2 of the index)",
                                          "an assignment keeps the last write", "input: grad = "]),
    ("02b.6", (Gather, GetItemCopied), ["(the key of x[1])", "to return a view of x's array", "it returned a new array"]),
    ("02b.6", (Gather, GetItemFlat), ["(the key of x[tensor([2, 0, 2])])", "to have shape (3, 4) (got (3,))",
                                      "np.take without an axis reads x flattened"]),
    ("02b.6", (Gather, GetItemPassingGrad), ["for input 0 of shape (3, 4)", "x's gradient has x's shape (3, 4)"]),
    ("02b.7", (ViewKeepingNewShape, Clone, Narrow), ["to have x's shape (2, 3, 4) (got (6, 4))",
                                                     "it kept the output's shape"]),
    ("02b.7", (ViewCopied, Clone, Narrow), ["to return a view of x's array", "it returned a new array"]),
    ("02b.7", (ViewColumnOrder, Clone, Narrow), ["this fills the new shape column by column", "input: x = "]),
    ("02b.7", (ViewContiguousFirst, Clone, Narrow), ["with x = wide[:, :, 4:], a strided slice",
                                                     "to return a view of x's array"]),
    ("02b.7", (View, CloneItself, Narrow), ["to return a copy with its own memory", "writing into the clone"]),
    ("02b.7", (View, CloneKeepingOrder, Narrow), ["to be row-major", "np.copy(x) keeps x's memory order"]),
    ("02b.7", (View, Clone, NarrowPositiveDimOnly), ["Narrow.forward(ctx, x, -1, 2, 2)",
                                                     "a negative dim counts from the end"]),
    ("02b.7", (View, Clone, NarrowGradUnpadded), ["to have x's shape (3, 5) (got (3, 3))",
                                                  "it kept the slice's shape"]),
    ("02b.7", (View, Clone, NarrowGradAtStart), ["grad went to the first positions of dim 1", "input: grad = "]),
]


test_a_wrong_answer_fails_naming_its_mistake = named_mistake_test(CATALOGUE)


def test_the_solutions_pass():
    from tinygrad_course.grading import check, reset_attempts

    reset_attempts()
    check("02b.1", Softmax, LogSoftmax)
    check("02b.2", Gelu, Dropout)
    check("02b.3", Embedding, MaskedFill)
    check("02b.4", Cat)
    check("02b.5", Transpose, Expand)
    check("02b.6", Gather, GetItem)
    check("02b.7", View, Clone, Narrow)


NAMES = {"02b.1": ("Softmax", "LogSoftmax"), "02b.2": ("Gelu", "Dropout"), "02b.3": ("Embedding", "MaskedFill"),
         "02b.4": ("Cat",), "02b.5": ("Transpose", "Expand"), "02b.6": ("Gather", "GetItem"),
         "02b.7": ("View", "Clone", "Narrow")}

test_the_stub_fails, test_every_exercise_has_two_wrong_answers = catalogue_tests(NAMES, CATALOGUE, "02b")
