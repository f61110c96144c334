"""Catalogue of wrong answers, chapter 02 (autograd): each realistic mistake fails with a message that names
it, the hint waits for a second failure, and the unsolved stub fails."""
import numpy as np
import pytest

import tinygrad_course as tc
from tinygrad_course.autograd.engine import grad_accumulator

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


topo_sort, backward_pass, root_gradient, backward = solution("02", "topo_sort", "backward_pass", "root_gradient",
                                                            "backward")


def root_as_a_number(output, gradient=None):
    if gradient is None:
        return tc.tensor(1.0)  # 0-d whatever the output's shape
    return root_gradient(output, gradient)


def root_as_the_output(output, gradient=None):
    return output if gradient is None else gradient


def root_ignoring_the_gradient(output, gradient=None):
    return tc.ones_like(output)


def root_without_shape_check(output, gradient=None):
    if gradient is not None:
        return gradient
    return root_gradient(output)


def pass_overwriting(root, grad):
    waiting = {root: grad}
    for node in topo_sort(root):
        g = waiting.pop(node, None)
        if g is not None:
            for (next_node, _), next_grad in zip(node.next_functions, node(g)):
                if next_node is not None and next_grad is not None:
                    waiting[next_node] = next_grad  # the second path's gradient replaces the first's


def pass_skipping_leaves(root, grad):
    waiting = {root: grad}
    for node in topo_sort(root):
        g = waiting.pop(node, None)
        if g is None or node.name() == "AccumulateGrad":
            continue
        for (next_node, _), next_grad in zip(node.next_functions, node(g)):
            if next_node is not None and next_grad is not None:
                waiting[next_node] = waiting[next_node] + next_grad if next_node in waiting else next_grad


def pass_setting_grad(root, grad):
    waiting = {root: grad}
    for node in topo_sort(root):
        g = waiting.pop(node, None)
        if g is None:
            continue
        if node.name() == "AccumulateGrad":
            node.variable.grad = g
            continue
        for (next_node, _), next_grad in zip(node.next_functions, node(g)):
            if next_node is not None and next_grad is not None:
                waiting[next_node] = waiting[next_node] + next_grad if next_node in waiting else next_grad


def topo_without_visited(root):
    order = []

    def visit(node):
        for nxt, _ in node.next_functions:
            if nxt is not None:
                visit(nxt)
        order.append(node)
    visit(root)
    return order[::-1]


def topo_not_reversed(root):
    order, seen = [], set()

    def visit(node):
        seen.add(node)
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt not in seen:
                visit(nxt)
        order.append(node)
    visit(root)
    return order


def topo_pre_order(root):
    order, seen = [], set()

    def visit(node):
        seen.add(node)
        order.append(node)
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt not in seen:
                visit(nxt)
    visit(root)
    return order


def topo_keeps_none(root):
    order, seen = [], set()

    def visit(node):
        seen.add(node)
        for nxt, _ in node.next_functions:
            if nxt not in seen:
                visit(nxt)
        order.append(node)
    visit(root)
    return order[::-1]


gradient_edge, Function, sum_to_shape, Node, AccumulateGrad = solution(
    "02", "gradient_edge", "Function", "sum_to_shape", "Node", "AccumulateGrad")
ENGINE = (gradient_edge, Function, sum_to_shape, Node, AccumulateGrad)


def engine(**replaced):
    """The solution's 02.5 pieces with some replaced by a wrong one."""
    return tuple(replaced.get(getattr(piece, "__name__", ""), piece) for piece in ENGINE)


def sum_to_shape_leading_only(grad, shape):
    lead = grad.dim() - len(shape)
    return grad.sum(tuple(range(lead))) if lead else grad


def sum_to_shape_mean(grad, shape):
    lead = grad.dim() - len(shape)
    dims = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and grad.shape[lead + i] != 1)
    return (grad.mean(dims, keepdim=True) if dims else grad).reshape(shape)


def gradient_edge_output_zero(t):
    if t.grad_fn is not None:
        return (t.grad_fn, 0)
    return gradient_edge(t)


class FunctionAlwaysRecording(Function):
    @classmethod
    def apply(cls, *args):
        ctx = cls._backward_cls()
        ctx.needs_input_grad = tuple(isinstance(a, tc.Tensor) and a.requires_grad for a in args)
        result = tc.from_numpy(cls.forward(ctx, *[a.detach().numpy() if isinstance(a, tc.Tensor) else a for a in args]))
        ctx.next_functions = tuple(gradient_edge(a) for a in args if isinstance(a, tc.Tensor))
        ctx.input_metadata = tuple((a.shape, a.dtype) if isinstance(a, tc.Tensor) else None for a in args)
        result.requires_grad_()
        result.grad_fn = ctx
        return result


class FunctionEdgePerArgument(Function):
    @classmethod
    def apply(cls, *args):
        result = Function.apply.__func__(cls, *args)
        if result.grad_fn is not None:
            result.grad_fn.next_functions = tuple(gradient_edge(a) if isinstance(a, tc.Tensor) else (None, 0)
                                                  for a in args)
        return result


class FunctionOnCopies(Function):
    @classmethod
    def apply(cls, *args):
        copies = [tc.tensor(a.tolist(), requires_grad=a.requires_grad) if isinstance(a, tc.Tensor) else a for a in args]
        return Function.apply.__func__(cls, *copies)


def _node_step(sum_back=True, cast=True, numbers=False):
    def apply(self, *grad_outputs):
        grads = self._forward_cls.backward(self, *grad_outputs)
        grads = grads if isinstance(grads, tuple) else (grads,)
        out = []
        for i, meta in enumerate(self.input_metadata):
            if meta is None:
                if numbers:
                    out.append(None)
                continue
            g = grads[i] if i < len(grads) else None
            if g is not None and sum_back and g.shape != meta[0]:
                g = sum_to_shape(g, meta[0])
            if g is not None and cast and g.dtype != meta[1]:
                g = g.to(meta[1])
            out.append(g)
        return tuple(out)
    return apply


NodeNotSummed = type("NodeNotSummed", (Node,), {"apply": _node_step(sum_back=False)})
NodeNotCast = type("NodeNotCast", (Node,), {"apply": _node_step(cast=False)})


NodeWithNumbers = type("NodeWithNumbers", (Node,), {"apply": _node_step(numbers=True)})


class NodeUncheckedVersions(Node):
    @property
    def saved_tensors(self):
        if self._released:
            raise RuntimeError("Trying to backward through the graph a second time (or directly access saved tensors "
                               "after they have already been freed).")
        return self._saved


class NodeWhichForEveryTensor(Node):
    @property
    def saved_tensors(self):
        for t, version in zip(self._saved, self._saved_versions):
            if version is not None and t._version[0] != version:
                raise RuntimeError("one of the variables needed for gradient computation has been modified by an "
                                   f"inplace operation: [{t.type()} [{', '.join(map(str, t.shape))}]], which is output "
                                   f"0 of Mul, is at version {t._version[0]}; expected version {version} instead. "
                                   "Hint: clone it.")
        return Node.saved_tensors.fget(self)


class NodeKeepingTheTensors(Node):
    def release_variables(self):
        self._released = True


class NodeSavingTheCounters(Node):
    def save_for_backward(self, *tensors):
        self._saved = tensors
        self._saved_versions = [t._version if isinstance(t, tc.Tensor) else None for t in tensors]


class NodeOutputUnchecked(Node):
    @property
    def saved_output(self):
        if self._released:
            return Node.saved_tensors.fget(self)  # the freed node's error
        return self._out_alias  # no version check: a changed output would give a wrong gradient silently


class NodeOutputUnnamed(Node):
    @property
    def saved_output(self):
        out = self._out_alias
        if not self._released and out._version[0] != self._out_version:
            raise RuntimeError(  # the version error without ", which is output 0 of Cumprod,"
                "one of the variables needed for gradient computation has been modified by an inplace operation: "
                f"[{out.type()} [3]] is at version {out._version[0]}; expected version {self._out_version} instead.")
        return Node.saved_output.fget(self)


class AccumulateKeeping(AccumulateGrad):
    def apply(self, grad):
        leaf = self.variable
        if leaf.grad is None:
            leaf.grad = grad
        else:
            leaf.grad.add_(grad)
        return ()


class AccumulateWithEdges(AccumulateGrad):
    def __init__(self, variable):
        self.variable = variable
        self._seq = float("inf")
        self.next_functions = ((None, 0),)  # an edge to nowhere: a leaf has none


class AccumulateRunLast(AccumulateGrad):
    def __init__(self, variable):
        self.variable = variable
        self._seq = 0  # the smallest priority: the leaf's .grad is written only at the end
        self.next_functions = ()


class AccumulateHoldingADetachedLeaf(AccumulateGrad):
    def __init__(self, variable):
        self.variable = variable.detach()  # not the leaf: its .grad would never be seen
        self._seq = float("inf")
        self.next_functions = ()


class AccumulateReplacing(AccumulateGrad):
    def apply(self, grad):
        self.variable.grad = grad.detach().clone()
        return ()


class AccumulateOutOfPlace(AccumulateGrad):
    def apply(self, grad):
        leaf = self.variable
        leaf.grad = grad.detach().clone() if leaf.grad is None else leaf.grad + grad
        return ()


def pass_never_freeing(root, grad, retain_graph=False):
    backward_pass(root, grad, retain_graph=True)


def pass_always_freeing(root, grad, retain_graph=False):
    backward_pass(root, grad)


def pass_without_retain_graph(root, grad):
    backward_pass(root, grad)


def _start(t):
    return t.grad_fn if t.grad_fn is not None else grad_accumulator(t)


def backward_recording(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    backward_pass(_start(self), root_gradient(self, gradient), retain_graph)  # grad mode stays on


def backward_from_grad_fn(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    with tc.no_grad():
        backward_pass(self.grad_fn, root_gradient(self, gradient), retain_graph)  # a leaf has none


def backward_always_freeing(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    with tc.no_grad():
        backward_pass(_start(self), root_gradient(self, gradient))


def backward_from_ones(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    with tc.no_grad():
        backward_pass(_start(self), tc.ones_like(self), retain_graph)


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
    ("02.4", (topo_without_visited, backward_pass, root_gradient, backward), ["a node appears twice"]),
    ("02.4", (topo_not_reversed, backward_pass, root_gradient, backward), ["the order starts with AccumulateGrad, not with the output's node PowBackward0"]),
    ("02.4", (topo_pre_order, backward_pass, root_gradient, backward), ["comes before", "which sends it a gradient"]),
    ("02.4", (topo_keeps_none, backward_pass, root_gradient, backward), ["your code raised AttributeError"]),
    ("02.4", (topo_sort, pass_overwriting, root_gradient, backward), ["part of the gradient is missing", "L = (a * b + a) ** 2"]),
    ("02.4", (topo_sort, pass_skipping_leaves, root_gradient, backward), ["it is None: no gradient reached that leaf"]),
    ("02.4", (topo_sort, pass_setting_grad, root_gradient, backward), ["the old a.grad was overwritten, not added to"]),
    ("02.4", (topo_sort, pass_never_freeing, root_gradient, backward), ["a third backward_pass through q's graph to raise"]),
    ("02.4", (topo_sort, pass_always_freeing, root_gradient, backward), ["the first pass freed the graph although retain_graph=True"]),
    ("02.4", (topo_sort, pass_without_retain_graph, root_gradient, backward), ["unexpected keyword argument 'retain_graph'"]),
    ("02.4", (topo_sort, backward_pass, root_as_a_number, backward), ["root_gradient(out).shape for an output of shape (1, 1)",
                                                          "a one-element output that is not 0-d"]),
    ("02.4", (topo_sort, backward_pass, root_as_the_output, backward), ["you returned the loss itself"]),
    ("02.4", (topo_sort, backward_pass, root_ignoring_the_gradient, backward), ["you returned ones: a given gradient"]),
    ("02.4", (topo_sort, backward_pass, root_without_shape_check, backward), ["root_gradient(x * 3, tc.ones(2))",
                                                                   "expected RuntimeError to be raised"]),
    ("02.4", (topo_sort, backward_pass, root_gradient, backward_recording), ["tc.is_grad_enabled() was True inside it"]),
    ("02.4", (topo_sort, backward_pass, root_gradient, backward_from_grad_fn), ["w.grad after backward(w) for a leaf",
                                                                              "your backward raised AttributeError"]),
    ("02.4", (topo_sort, backward_pass, root_gradient, backward_always_freeing), ["the first one freed the graph "
                                                                                "although retain_graph=True"]),
    ("02.4", (topo_sort, backward_pass, root_gradient, backward_from_ones), ["the given gradient was not used"]),
    ("02.5", engine(sum_to_shape=sum_to_shape_leading_only), ["the shape of sum_to_shape(grad of shape (2, 3, 4), "
                                                               "(3, 1))", "expected (3, 1)"]),
    ("02.5", engine(sum_to_shape=sum_to_shape_mean), ["your values are means, not sums", "input: grad = "]),
    ("02.5", engine(gradient_edge=gradient_edge_output_zero), ["sends its gradient to the node's output 2"]),
    ("02.5", engine(Function=FunctionAlwaysRecording), ["a call under tc.no_grad() to record nothing"]),
    ("02.5", engine(Function=FunctionEdgePerArgument), ["(no edge for the number)"]),
    ("02.5", engine(Function=FunctionOnCopies), ["forward to receive the tensors' own arrays", "input: a = "]),
    ("02.5", engine(Node=NodeNotSummed), ["the shape of b's gradient from Node.apply((a * b).grad_fn, grad)",
                                          "expected (3,), got (2, 3)"]),
    ("02.5", engine(Node=NodeNotCast), ["the gradient of a float32 input to be float32", "got tc.float64"]),
    ("02.5", engine(Node=NodeWithNumbers), ["Node.apply of a * 2.5 to return 1 gradient"]),
    ("02.5", engine(Node=NodeUncheckedVersions), ["node.saved_tensors after h.add_(1)",
                                                  "expected RuntimeError to be raised"]),
    ("02.5", engine(Node=NodeWhichForEveryTensor), ["[tc.FloatTensor [2]] is at version 1", "which is output 0 of Mul"]),
    ("02.5", engine(Node=NodeKeepingTheTensors), ["release_variables() to drop the saved tensors"]),
    ("02.5", engine(Node=NodeSavingTheCounters), ["node._saved_versions after save_for_backward(x, h, c, 2.5)"]),
    ("02.5", engine(AccumulateGrad=AccumulateKeeping), ["shares its storage with g1"]),
    ("02.5", engine(AccumulateGrad=AccumulateReplacing), ["the old w.grad was replaced, not added to"]),
    ("02.5", engine(Node=NodeOutputUnchecked), ["y.grad_fn.saved_output after y.mul_(2)",
                                               "expected RuntimeError to be raised"]),
    ("02.5", engine(Node=NodeOutputUnnamed), ["which is output 0 of Cumprod,", "comes from the node itself"]),
    ("02.5", engine(AccumulateGrad=AccumulateWithEdges), ["AccumulateGrad(w).next_functions", "the graph ends"]),
    ("02.5", engine(AccumulateGrad=AccumulateRunLast), ["AccumulateGrad(w)._seq", "the largest sequence number"]),
    ("02.5", engine(AccumulateGrad=AccumulateHoldingADetachedLeaf), ["AccumulateGrad(w).variable to be w itself"]),
    ("02.5", engine(AccumulateGrad=AccumulateOutOfPlace), ["in place (as PyTorch's AccumulateGrad does"]),
    ("02.6", (forward_difference, gradient_check), ["one-sided (forward) difference", "input: x = "]),
    ("02.6", (leaves_x_perturbed, gradient_check), ["x was changed by numerical_grad"]),
    ("02.6", (numerical_grad, check_exactly), ["gradient_check(sum(x**3), x) (a correct gradient): expected True, "
                                               "got False"]),
    ("02.6", (numerical_grad, check_with_backward), ["gradient_check to leave x.grad untouched"]),
    ("02.7", (ema_without_no_grad, scaled_sigmoid), ["a leaf Variable that requires grad is being used in an in-place "
                                                     "operation", "ema_update(target, online, decay=0.75)"]),
    ("02.7", (ema_rebinding_names, scaled_sigmoid), ["the target tensors did not change", "decay = 0.75"]),
    ("02.7", (ema_replacing_list_items, scaled_sigmoid), ["new tensors were put into the list"]),
    ("02.7", (ema_decay_swapped, scaled_sigmoid), ["decay weighs the online tensor instead of the target"]),
    ("02.7", (ema_update, sigmoid_doubled_in_place), ["modified by an inplace operation", "input: x = "]),
    ("02.7", (ema_update, sigmoid_detached), ["without recording a graph"]),
    ("02.8", (SoftplusWithoutGrad,), ["the upstream gradient is missing", "upstream gradient = "]),
    ("02.8", (SoftplusSignFlipped,), ["the sign inside the sigmoid is flipped", "input: x = "]),
    ("02.8", (SoftplusExpOnly,), ["the derivative of the log was left out"]),
    ("02.9", (jacobian_transposed, hessian), ["rows and columns are swapped", "input: f(v) = "]),
    ("02.9", (jacobian_accumulating, hessian), ["x.grad kept accumulating"]),
    ("02.9", (jacobian_on_x_itself, hessian), ["jacobian(f, x) to leave x as it was"]),
    ("02.9", (jacobian, hessian_without_create_graph), ["cannot be differentiated a second time"]),
    ("02.9", (jacobian, hessian_of_gradient_rows), ["every row (or column) is the gradient itself"]),
]


@pytest.mark.parametrize("exercise, wrong, phrases", CATALOGUE,
                         ids=[f"{e}-{'-'.join(w.__name__ for w in ws)}" for e, ws, _ in CATALOGUE])
def test_a_wrong_answer_fails_naming_its_mistake(exercise, wrong, phrases):
    assert_names_mistake(exercise, wrong, *phrases)


NAMES = {"02.1": ("Add", "Sub", "Mul", "Div", "Pow"), "02.2": ("Neg", "Exp", "Log", "Tanh", "Relu", "Sigmoid"),
         "02.3": ("Matmul", "Sum", "Mean", "Max"), "02.4": ("topo_sort", "backward_pass", "root_gradient", "backward"),
         "02.5": ("gradient_edge", "Function", "sum_to_shape", "Node", "AccumulateGrad"), "02.6": ("numerical_grad", "gradient_check"),
         "02.7": ("ema_update", "scaled_sigmoid"), "02.8": ("Softplus",), "02.9": ("jacobian", "hessian")}


test_the_stub_fails, test_every_exercise_has_two_wrong_answers = catalogue_tests(NAMES, CATALOGUE, "02")
