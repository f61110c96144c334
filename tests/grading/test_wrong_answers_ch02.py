"""Catalogue of wrong answers, chapter 02 (autograd): each realistic mistake fails with a message that names
it, the hint waits for a second failure, and the unsolved stub fails."""
import numpy as np
import pytest

import tinygrad_course as tc

from .wrong_answers import assert_names_mistake, catalogue_tests, op, solution

Add, Sub, Mul, Div, Pow = solution("02", "Add", "Sub", "Mul", "Div", "Pow")
Neg, Exp, Log, Tanh, Relu, Sigmoid = solution("02", "Neg", "Exp", "Log", "Tanh", "Relu", "Sigmoid")
Matmul, Sum, Mean, Max, unreduce = solution("02", "Matmul", "Sum", "Mean", "Max", "unreduce")
BINARY = (Add, Sub, Mul, Div, Pow)
UNARY = (Neg, Exp, Log, Tanh, Relu, Sigmoid)


def binary(**replaced):
    """The solution's binary op classes with some replaced by a wrong one."""
    return tuple(replaced.get(c.__name__, c) for c in BINARY)


def unary(**replaced):
    return tuple(replaced.get(c.__name__, c) for c in UNARY)


def _saved_pair(ctx):
    return ctx.saved_tensors


MulSwapped = op(Mul, backward=lambda ctx, grad: (grad * _saved_pair(ctx)[0], grad * _saved_pair(ctx)[1]))
MulWithoutGrad = op(Mul, backward=lambda ctx, grad: (_saved_pair(ctx)[1] * 1.0, _saved_pair(ctx)[0] * 1.0))
MulThroughNumpy = op(Mul, backward=lambda ctx, grad: tuple(
    tc.tensor(grad.numpy() * x.detach().numpy()) for x in reversed(_saved_pair(ctx))))
SubSignFlipped = op(Sub, backward=lambda ctx, grad: (grad, grad))
SubReversed = op(Sub, forward=lambda ctx, a, b: b - a)


def _add_in_place(ctx, a, b):
    a += b
    return a


AddInPlace = op(Add, forward=_add_in_place)
DivMissingA = op(Div, backward=lambda ctx, grad: (grad / _saved_pair(ctx)[1], -grad / (_saved_pair(ctx)[1] ** 2)))
PowNotLowered = op(Pow, backward=lambda ctx, grad: (grad * _saved_pair(ctx)[1] * _saved_pair(ctx)[0] ** _saved_pair(ctx)[1], None))
MulNotSaving = op(Mul, forward=lambda ctx, a, b: a * b)
AddReturningTensor = op(Add, forward=lambda ctx, a, b: tc.tensor(a) + tc.tensor(b))
MulOneGradient = op(Mul, backward=lambda ctx, grad: grad * _saved_pair(ctx)[1])

TanhNotSquared = op(Tanh, backward=lambda ctx, grad: grad * (1 - ctx.saved_output))
TanhAppliedTwice = op(Tanh, backward=lambda ctx, grad: grad * (1 - ctx.saved_output.tanh() ** 2))
TanhNegated = op(Tanh, backward=lambda ctx, grad: grad * (ctx.saved_output ** 2 - 1))
ReluAtZero = op(Relu, forward=lambda ctx, x: (ctx.save_for_backward(x), np.maximum(x, 0))[1],
                backward=lambda ctx, grad: grad * (ctx.saved_tensors[0] >= 0))
SigmoidMissingFactor = op(Sigmoid, backward=lambda ctx, grad: grad * ctx.saved_output)
LogTimesX = op(Log, backward=lambda ctx, grad: grad * ctx.saved_tensors[0])
ExpWithoutGrad = op(Exp, backward=lambda ctx, grad: ctx.saved_output * 1.0)
ExpFloat64 = op(Exp, forward=lambda ctx, x: (setattr(ctx, "save_output", True), np.exp(x.astype(np.float64)))[1])

SumExpandOnly = op(Sum, backward=lambda ctx, grad: grad.expand(ctx.shape))
SumUnsorted = op(Sum, backward=lambda ctx, grad: _unsqueezed_in_given_order(grad, ctx).expand(ctx.shape))
MeanNotDivided = op(Mean, backward=lambda ctx, grad: unreduce(grad, ctx.shape, ctx.dim, ctx.keepdim))


def _sum_in_x_dtype(ctx, x, dim=None, keepdim=False):
    """Sum in x's own dtype: a bool x's sum stays a bool instead of counting."""
    ctx.shape, ctx.dim, ctx.keepdim = x.shape, dim, keepdim
    return x.sum(axis=dim, keepdims=keepdim, dtype=x.dtype)


SumInXDtype = op(Sum, forward=_sum_in_x_dtype)


def _max_every_tie(ctx, x, dim=None, keepdim=False):
    """Max whose mask marks every element equal to its maximum: with a dim, ties all get the gradient."""
    out = Max.forward(ctx, x, dim, keepdim)
    if dim is not None:
        ctx.mask = (x == x.max(axis=dim, keepdims=True)).astype(x.dtype)
    return out


def _max_whole_to_ties(ctx, x, dim=None, keepdim=False):
    """Max without a dim whose mask is not divided by the number of ties."""
    out = Max.forward(ctx, x, dim, keepdim)
    if dim is None:
        ctx.mask = (x == out).astype(x.dtype)
    return out


def _max_last_index(ctx, x, dim=None, keepdim=False):
    """Max(dim) whose index on a tie is the last largest element's (argmax of the flipped array)."""
    if dim is None:
        return Max.forward(ctx, x)
    ctx.shape, ctx.dim, ctx.keepdim = x.shape, dim, keepdim
    index = np.expand_dims(x.shape[dim] - 1 - np.flip(x, dim).argmax(axis=dim), dim)
    ctx.mask = np.zeros_like(x)
    np.put_along_axis(ctx.mask, index, 1, axis=dim)
    values = np.take_along_axis(x, index, axis=dim)
    return (values, index) if keepdim else (values.squeeze(dim), index.squeeze(dim))


MaxEveryTie = op(Max, forward=_max_every_tie)
MaxWholeToTies = op(Max, forward=_max_whole_to_ties)
MaxLastIndex = op(Max, forward=_max_last_index)
MaxValuesOnly = op(Max, forward=lambda ctx, x, dim=None, keepdim=False: Max.forward(ctx, x, dim, keepdim)[0]
                   if dim is not None else Max.forward(ctx, x))
MaxNotUnreduced = op(Max, backward=lambda ctx, grad, grad_indices=None: grad * tc.from_numpy(ctx.mask))


def _unsqueezed_in_given_order(grad, ctx):
    if ctx.dim is not None and not ctx.keepdim:
        for d in ((ctx.dim,) if isinstance(ctx.dim, int) else ctx.dim):
            grad = grad.unsqueeze(d % len(ctx.shape))
    return grad


MatmulGradBTransposed = op(Matmul, backward=lambda ctx, grad: (grad @ ctx.saved_tensors[1].mT, grad.mT @ ctx.saved_tensors[0]))
MatmulSwapped = op(Matmul, backward=lambda ctx, grad: (ctx.saved_tensors[0].mT @ grad, grad @ ctx.saved_tensors[1].mT))
MatmulWithT = op(Matmul, backward=lambda ctx, grad: (grad @ ctx.saved_tensors[1].T, ctx.saved_tensors[0].T @ grad))
MatmulNegated = op(Matmul, backward=lambda ctx, grad: (-(grad @ ctx.saved_tensors[1].mT), -(ctx.saved_tensors[0].mT @ grad)))
MatmulWithDot = op(Matmul, forward=lambda ctx, a, b: (ctx.save_for_backward(a, b), np.dot(a, b))[1])  # not batched


def _difference(f, x, eps, forward=False, restore=True):
    point = x.detach().clone() if restore else x.detach()
    grad = tc.zeros_like(point)
    flat, grad_flat = point.view(-1), grad.view(-1)
    base = f(point).item()
    for i in range(flat.numel()):
        original = flat[i].item()
        flat[i] = original + eps
        plus = f(point).item()
        if forward:
            grad_flat[i] = (plus - base) / eps
        else:
            flat[i] = original - eps
            grad_flat[i] = (plus - f(point).item()) / (2 * eps)
        if restore:
            flat[i] = original
    return grad


def forward_difference(f, x, eps=1e-6):
    return _difference(f, x, eps, forward=True)


def leaves_x_perturbed(f, x, eps=1e-6):
    return _difference(f, x, eps, restore=False)


def central_difference(f, x, eps=1e-6):
    return _difference(f, x, eps)


def check_exactly(f, x):
    analytical, = tc.autograd.grad(f(x), x)
    return bool((analytical == central_difference(f, x)).all())


def check_with_backward(f, x):
    f(x).backward()
    return bool(((x.grad - central_difference(f, x)).abs() <= 1e-5 + 1e-3 * x.grad.abs()).all())


numerical_grad, gradient_check = solution("02", "numerical_grad", "gradient_check")


def ema_without_no_grad(target, online, decay):
    for p, q in zip(target, online):
        p.mul_(decay).add_((1 - decay) * q)


def ema_rebinding_names(target, online, decay):
    for p, q in zip(target, online):
        p = decay * p + (1 - decay) * q  # noqa: F841 (the mistake: a new tensor, bound to a name)


def ema_replacing_list_items(target, online, decay):
    with tc.no_grad():
        for i, q in enumerate(online):
            target[i] = decay * target[i] + (1 - decay) * q


def ema_decay_swapped(target, online, decay):
    with tc.no_grad():
        for p, q in zip(target, online):
            p.mul_(1 - decay).add_(decay * q)


def sigmoid_doubled_in_place(x):
    y = x.sigmoid()
    y.mul_(2)
    return y


def sigmoid_detached(x):
    return 2 * x.sigmoid().detach()


ema_update, scaled_sigmoid = solution("02", "ema_update", "scaled_sigmoid")


def _softplus_class(forward, backward):
    return type("Softplus", (tc.autograd.Function,),
                {"forward": staticmethod(forward), "backward": staticmethod(backward)})


def _save_and_softplus(ctx, x):
    ctx.save_for_backward(x)
    return (1 + x.exp()).log()


def _sigmoid_without_grad(ctx, grad):
    x, = ctx.saved_tensors
    return x.sigmoid()


def _sigmoid_of_minus_x(ctx, grad):
    x, = ctx.saved_tensors
    return grad * (-x).sigmoid()


def _exp_only(ctx, grad):
    x, = ctx.saved_tensors
    return grad * x.exp()


SoftplusWithoutGrad = _softplus_class(_save_and_softplus, _sigmoid_without_grad)
SoftplusSignFlipped = _softplus_class(_save_and_softplus, _sigmoid_of_minus_x)
SoftplusExpOnly = _softplus_class(_save_and_softplus, _exp_only)


def jacobian_transposed(f, x):
    v = x.detach().requires_grad_(True)
    out = f(v)
    return tc.stack([tc.autograd.grad(out[i], v, retain_graph=True)[0] for i in range(out.shape[0])]).T


def jacobian_accumulating(f, x):
    v = x.detach().requires_grad_(True)
    out = f(v)
    rows = []
    for i in range(out.shape[0]):
        out[i].backward(retain_graph=True)
        rows.append(v.grad.clone())
    return tc.stack(rows)


def jacobian_on_x_itself(f, x):
    x.requires_grad_(True)
    out = f(x)
    return tc.stack([tc.autograd.grad(out[i], x, retain_graph=True)[0] for i in range(out.shape[0])])


def hessian_without_create_graph(f, x):
    v = x.detach().requires_grad_(True)
    grad, = tc.autograd.grad(f(v), v)
    return tc.stack([tc.autograd.grad(grad[i], v, retain_graph=True)[0] for i in range(v.shape[0])])


def hessian_of_gradient_rows(f, x):
    v = x.detach().requires_grad_(True)
    grad, = tc.autograd.grad(f(v), v)
    return tc.stack([grad.detach()] * v.shape[0])


jacobian, hessian = solution("02", "jacobian", "hessian")

CATALOGUE = [
    ("02.1", binary(Mul=MulSwapped), ["gradients of a and b are swapped", "input: grad = "]),
    ("02.1", binary(Mul=MulWithoutGrad), ["the upstream gradient `grad` is missing"]),
    ("02.1", binary(Mul=MulThroughNumpy), ["the gradient your backward returns is not differentiable"]),
    ("02.1", binary(Mul=MulNotSaving), ["Mul.backward raised ValueError", "nothing in ctx.saved_tensors"]),
    ("02.1", binary(Mul=MulOneGradient), ["Mul.backward returned 1 gradient(s), but Mul has 2 input(s)"]),
    ("02.1", binary(Sub=SubSignFlipped), ["b's gradient has the wrong sign: a - b falls as b grows"]),
    ("02.1", binary(Add=AddInPlace), ["it changed its input a in place", "input: a = "]),
    ("02.1", binary(Sub=SubReversed), ["the operands are in the wrong order", "input: a = "]),
    ("02.1", binary(Div=DivMissingA), ["b's gradient is missing the factor a"]),
    ("02.1", binary(Pow=PowNotLowered), ["the power was not lowered by one"]),
    ("02.1", binary(Add=AddReturningTensor), ["returned a tc.Tensor, but forward receives NumPy arrays"]),
    ("02.2", unary(Tanh=TanhNotSquared), ["1 - tanh(x), which is not the derivative of tanh"]),
    ("02.2", unary(Tanh=TanhAppliedTwice), ["tanh was applied a second time", "input: grad = "]),
    ("02.2", unary(Tanh=TanhNegated), ["your local derivative has the opposite sign"]),
    ("02.2", unary(Relu=ReluAtZero), ["at x = 0 your gradient is grad"]),
    ("02.2", unary(Sigmoid=SigmoidMissingFactor), ["the factor (1 - sigmoid(x)) is missing"]),
    ("02.2", unary(Log=LogTimesX), ["your local derivative is x, not 1 / x"]),
    ("02.2", unary(Exp=ExpWithoutGrad), ["the upstream gradient `grad` is missing"]),
    ("02.2", unary(Exp=ExpFloat64), ["dtype float64", "expected shape (3, 4) and dtype float32"]),
    ("02.3", (MatmulGradBTransposed, Sum, Mean, Max), ["shape (2, 3) for input 1 of shape (3, 2)", "grad_b must have the shape (3, 2)"]),
    ("02.3", (MatmulSwapped, Sum, Mean, Max), ["for input 0 of shape (4, 3)"]),
    ("02.3", (MatmulNegated, Sum, Mean, Max), ["a.grad after (a @ b).backward(grad)", "what went wrong: your result has the opposite sign"]),
    ("02.3", (MatmulWithT, Sum, Mean, Max), ["transpose only the last two dimensions"]),
    ("02.3", (MatmulWithDot, Sum, Mean, Max), ["np.dot does not batch", "input: a = "]),
    ("02.3", (Matmul, SumExpandOnly, Mean, Max), ["Sum.backward for dim=1, keepdim=False", "could not be put back"]),
    ("02.3", (Matmul, SumUnsorted, Mean, Max), ["Sum.backward for dim=(2, 0), keepdim=False"]),
    ("02.3", (Matmul, SumInXDtype, Mean, Max), ["your Sum.forward returned an array of shape () and dtype bool",
                                                "expected shape () and dtype int64"]),
    ("02.3", (Matmul, Sum, MeanNotDivided, Max), ["times too large: a mean divides by the number of elements"]),
    ("02.3", (Matmul, Sum, Mean, MaxEveryTie), ["every largest element of a row received the gradient",
                                                 "input: grad = "]),
    ("02.3", (Matmul, Sum, Mean, MaxWholeToTies), ["each of the two largest elements received the whole gradient"]),
    ("02.3", (Matmul, Sum, Mean, MaxLastIndex), ["on a tie your index is the last largest element's", "input: x = "]),
    ("02.3", (Matmul, Sum, Mean, MaxValuesOnly), ["returned ndarray, expected a pair (values, indices)"]),
    ("02.3", (Matmul, Sum, Mean, MaxNotUnreduced), ["Max.backward for x.max(1)", "could not be put back"]),
    ("02.4", (forward_difference, gradient_check), ["one-sided (forward) difference", "input: x = "]),
    ("02.4", (leaves_x_perturbed, gradient_check), ["x was changed by numerical_grad"]),
    ("02.4", (numerical_grad, check_exactly), ["gradient_check(sum(x**3), x) (a correct gradient): expected True, "
                                               "got False"]),
    ("02.4", (numerical_grad, check_with_backward), ["gradient_check to leave x.grad untouched"]),
    ("02.5", (ema_without_no_grad, scaled_sigmoid), ["a leaf Variable that requires grad is being used in an in-place "
                                                     "operation", "ema_update(target, online, decay=0.75)"]),
    ("02.5", (ema_rebinding_names, scaled_sigmoid), ["the target tensors did not change", "decay = 0.75"]),
    ("02.5", (ema_replacing_list_items, scaled_sigmoid), ["new tensors were put into the list"]),
    ("02.5", (ema_decay_swapped, scaled_sigmoid), ["decay weighs the online tensor instead of the target"]),
    ("02.5", (ema_update, sigmoid_doubled_in_place), ["modified by an inplace operation", "input: x = "]),
    ("02.5", (ema_update, sigmoid_detached), ["without recording a graph"]),
    ("02.6", (SoftplusWithoutGrad,), ["the upstream gradient is missing", "upstream gradient = "]),
    ("02.6", (SoftplusSignFlipped,), ["the sign inside the sigmoid is flipped", "input: x = "]),
    ("02.6", (SoftplusExpOnly,), ["the derivative of the log was left out"]),
    ("02.7", (jacobian_transposed, hessian), ["rows and columns are swapped", "input: f(v) = "]),
    ("02.7", (jacobian_accumulating, hessian), ["x.grad kept accumulating"]),
    ("02.7", (jacobian_on_x_itself, hessian), ["jacobian(f, x) to leave x as it was"]),
    ("02.7", (jacobian, hessian_without_create_graph), ["cannot be differentiated a second time"]),
    ("02.7", (jacobian, hessian_of_gradient_rows), ["every row (or column) is the gradient itself"]),
]


@pytest.mark.parametrize("exercise, wrong, phrases", CATALOGUE,
                         ids=[f"{e}-{'-'.join(w.__name__ for w in ws)}" for e, ws, _ in CATALOGUE])
def test_a_wrong_answer_fails_naming_its_mistake(exercise, wrong, phrases):
    assert_names_mistake(exercise, wrong, *phrases)


NAMES = {"02.1": ("Add", "Sub", "Mul", "Div", "Pow"), "02.2": ("Neg", "Exp", "Log", "Tanh", "Relu", "Sigmoid"),
         "02.3": ("Matmul", "Sum", "Mean", "Max"), "02.4": ("numerical_grad", "gradient_check"),
         "02.5": ("ema_update", "scaled_sigmoid"), "02.6": ("Softplus",), "02.7": ("jacobian", "hessian")}


test_the_stub_fails, test_every_exercise_has_two_wrong_answers = catalogue_tests(NAMES, CATALOGUE, "02")
