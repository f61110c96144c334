"""Chapter 02d, exercises 02d.2 and 02d.3: the engine the learner's ops run in -- a node's backward step
(`sum_to_shape`, `Node.apply`) and what it keeps for it (`save_for_backward`, `saved_tensors`, `saved_output`,
`release_variables`) in 02d.2; recording a call (`gradient_edge`, `Function.apply`) and a leaf's gradient
(`AccumulateGrad`) in 02d.3.

Each piece is called directly first, on exact inputs, so a failure names the piece and what it returned; the
recording runs ops written as the exercises write them (`build/probes_engine.py`), the backward step runs on
nodes the framework recorded. Build mode's probe then runs them inside the framework (`check()` ends with it).
"""
import numpy as np

import tinygrad_course as tc

from ...autograd.engine import AccumulateGrad as FrameworkAccumulateGrad
from ...autograd.engine import Op, grad_accumulator
from .. import mistakes
from ..registry import exercise


# ops written as chapter 02's exercises write them (forward on arrays, backward with tensor ops): what the
# recording is checked with here, and what build mode's probe of the engine runs (`build/probes_engine.py`)
class Add(Op):
    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, grad):
        return grad, grad


class Mul(Op):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * b, grad * a


class Pow(Op):
    @staticmethod
    def forward(ctx, a, exponent):
        ctx.save_for_backward(a, exponent)
        return a ** exponent

    @staticmethod
    def backward(ctx, grad):
        a, exponent = ctx.saved_tensors
        return grad * exponent * a ** (exponent - 1), None


class Tanh(Op):
    @staticmethod
    def forward(ctx, x):
        ctx.save_output = True
        return np.tanh(x)

    @staticmethod
    def backward(ctx, grad):
        out = ctx.saved_output
        return grad * (1 - out * out)


class Sum(Op):
    @staticmethod
    def forward(ctx, x, dim, keepdim):
        ctx.shape, ctx.dim, ctx.keepdim = x.shape, dim, keepdim
        return np.asarray(x.sum(axis=dim, keepdims=keepdim))

    @staticmethod
    def backward(ctx, grad):
        if ctx.dim is not None and not ctx.keepdim:
            for d in sorted(d % len(ctx.shape) for d in np.atleast_1d(ctx.dim)):
                grad = grad.unsqueeze(d)
        return grad.expand(*ctx.shape)


ENGINE_OPS = {"Add": Add, "Mul": Mul, "Pow": Pow, "Tanh": Tanh, "Sum": Sum}


def _method(learner_class, attr="apply"):
    """The function `attr` the learner's class defines (a classmethod's function for `Function.apply`)."""
    for klass in learner_class.__mro__[:-1]:
        found = vars(klass).get(attr)
        if found is not None:
            return getattr(found, "__func__", found)
    raise AttributeError(f"your {learner_class.__name__} defines no {attr}")


class _Widen(Op):
    """x * 2 whose backward returns float64 gradients for a float32 input (a gradient to cast back)."""

    node_name = "WidenBackward0"

    @staticmethod
    def forward(ctx, x):
        return x._data * 2

    @staticmethod
    def backward(ctx, grad):
        return grad.double() * 2


def _sum_to_shape_check(t, sum_to_shape):
    rng = np.random.default_rng(25)
    for grad_shape, shape in [((2, 3, 4), (3, 1)), ((4, 3), (3,)), ((2, 3), (2, 3)), ((5,), ()), ((2, 1, 3), (2, 1, 3)),
                              ((3, 2), (1, 2))]:
        g = rng.standard_normal(grad_shape)
        got = sum_to_shape(tc.tensor(g), shape)
        lead = len(grad_shape) - len(shape)
        want = g.sum(axis=tuple(range(lead))) if lead else g
        want = want.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1 and want.shape[i] != 1),
                        keepdims=True).reshape(shape)
        what = f"sum_to_shape(grad of shape {grad_shape}, {shape})"
        t.true(isinstance(got, tc.Tensor), f"{what} to return a tensor (got {type(got).__name__})",
               hint="compute it with tensor operations: grad.sum(dims, keepdim=True), then reshape")
        t.equal(tuple(got.shape), tuple(shape), f"the shape of {what}",
                hint="sum over the leading dimensions broadcasting added, and with keepdim=True over the dimensions "
                     "where the input has size 1 and grad does not; then reshape to the input's shape")
        t.close(got, want, what, given={"grad": g},
                mistakes=[mistakes.custom(lambda got, e: np.allclose(got * g.size / max(e.size, 1), e),
                                          "your values are means, not sums: a stretched element was read at every "
                                          "position, and each read adds its gradient")])


def _gradient_edge_check(t, gradient_edge):
    leaf = tc.tensor([1.0, 2.0, 3.0], requires_grad=True)
    t.true(gradient_edge(leaf) == (grad_accumulator(leaf), 0),
           f"gradient_edge(leaf) to be (its AccumulateGrad node, 0), got {gradient_edge(leaf)!r}",
           hint="a leaf that requires grad has no grad_fn: its gradient goes to grad_accumulator(t), output 0")
    parts = (leaf * 2).unbind(0)
    got = gradient_edge(parts[2])
    t.true(got == (parts[2].grad_fn, 2),
           f"gradient_edge(x.unbind(0)[2]) to be (UnbindBackward0, 2), got {got!r}",
           why="the third output of a node sends its gradient to the node's output 2" if got == (parts[2].grad_fn, 0)
           else None, hint="a computed tensor's edge is (t.grad_fn, t.output_nr)")
    constant = tc.tensor([1.0, 2.0])
    t.true(gradient_edge(constant) == (None, 0), f"gradient_edge of a tensor that needs no gradient to be (None, 0), "
           f"got {gradient_edge(constant)!r}", hint="no grad_fn and requires_grad=False: no node receives its gradient")


def _function_apply_check(t, Function):
    apply = _method(Function)
    received = []

    def spy(ctx, *arrays):
        received.append(arrays)
        return Mul.forward(ctx, *arrays)

    op = type("Mul", (Mul,), {"node_name": "MulBackward0", "forward": staticmethod(spy)})
    a = tc.tensor([[1.0, -2.0, 0.5], [3.0, 0.0, -1.0]], requires_grad=True)
    b = tc.tensor([2.0, 0.5, -1.0])
    given = {"a": a, "b (requires_grad=False)": b}
    y = apply(op, a, b)
    arrays = received[-1] if received else ()
    if any(isinstance(x, tc.Tensor) for x in arrays):
        t.fail("Function.apply(Mul, a, b)", "forward received tensors", hint="forward computes on the operands' "
               "arrays: pass a.detach().numpy() for each tensor argument (Python numbers as they are)", given=given)
    t.true(len(arrays) == 2 and arrays[0] is a.detach().numpy() and arrays[1] is b.detach().numpy(),
           "forward to receive the tensors' own arrays (a.detach().numpy(), not a copy)", given=given,
           hint="backward reads the tensors whose arrays forward saved: a copy is no tensor's array")
    t.true(isinstance(y, tc.Tensor), f"Function.apply(Mul, a, b) to return a tensor (got {type(y).__name__})",
           hint="wrap the array forward returns: tc.from_numpy(...)")
    t.close(y, a.detach().numpy() * b.numpy(), "Function.apply(Mul, a, b)", given=given)
    node = y.grad_fn
    t.true(node is not None and type(node) is op._backward_cls and y.requires_grad,
           f"the result's grad_fn to be a new MulBackward0 node (cls._backward_cls()) and requires_grad=True, got "
           f"grad_fn={node!r}, requires_grad={y.requires_grad}", given=given,
           hint="a call with an input that requires grad is recorded: the result requires grad and its grad_fn is "
                "the node forward received as ctx")
    t.true(tuple(node.next_functions) == ((grad_accumulator(a), 0), (None, 0)),
           f"y.grad_fn.next_functions to be ((a's AccumulateGrad, 0), (None, 0)), got {node.next_functions!r}",
           given=given, hint="one edge per tensor argument: gradient_edge(a)")
    t.equal(tuple(node.needs_input_grad), (True, False), "y.grad_fn.needs_input_grad", given=given)
    t.equal([tuple(m[0]) + (str(m[1]),) for m in node.input_metadata],
            [(2, 3, "tc.float32"), (3, "tc.float32")], "y.grad_fn.input_metadata as (shape..., dtype)", given=given,
            hint="one (shape, dtype) per argument of forward: (a.shape, a.dtype), ...")
    z = apply(op, y, 2.5)
    t.true(z.grad_fn is not None and tuple(z.grad_fn.next_functions) == ((node, 0),),
           f"Function.apply(Mul, y, 2.5).grad_fn.next_functions to be ((y.grad_fn, 0),) (no edge for the number), "
           f"got {getattr(z.grad_fn, 'next_functions', None)!r}",
           hint="next_functions has an edge for each tensor argument only")
    t.true(len(z.grad_fn.input_metadata) == 2 and z.grad_fn.input_metadata[1] is None,
           f"the input_metadata of a call with a Python number to hold None for the number, got "
           f"{z.grad_fn.input_metadata!r}", hint="(shape, dtype) for a tensor argument, None for anything else")
    with tc.no_grad():
        plain = apply(op, a, b)
    t.true(plain.grad_fn is None and not plain.requires_grad, "a call under tc.no_grad() to record nothing "
           f"(got grad_fn={plain.grad_fn!r}, requires_grad={plain.requires_grad})",
           hint="record only when tc.is_grad_enabled() and an input requires grad")
    plain = apply(op, b, b)
    t.true(plain.grad_fn is None and not plain.requires_grad, "a call on tensors that need no gradient to record "
           f"nothing (got grad_fn={plain.grad_fn!r})", hint="record only when an input requires grad")


def _node_apply_check(t, Node):
    step = _method(Node)
    a = tc.tensor([[1.0, -2.0, 0.5], [3.0, 0.0, -1.0]], requires_grad=True)
    b = tc.tensor([2.0, 0.5, -1.0], requires_grad=True)
    g = tc.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])
    given = {"a (2, 3)": a, "b (3,)": b, "grad": g}
    grads = step((a * b).grad_fn, g)
    t.true(isinstance(grads, tuple) and len(grads) == 2,
           f"Node.apply of a * b to return a tuple of 2 gradients, one per entry of next_functions (got {grads!r})",
           given=given, hint="call self._forward_cls.backward(self, *grad_outputs), then make each gradient fit its input")
    t.equal(tuple(grads[1].shape), (3,), "the shape of b's gradient from Node.apply((a * b).grad_fn, grad)",
            given=given, hint="b was broadcast to (2, 3): sum its gradient back to b's shape (sum_to_shape)")
    t.close(grads[0], g.numpy() * b.detach().numpy(), "a's gradient from Node.apply((a * b).grad_fn, grad)",
            given=given)
    t.close(grads[1], (g.numpy() * a.detach().numpy()).sum(0), "b's gradient from Node.apply((a * b).grad_fn, grad)",
            given=given)
    scaled = step((a * 2.5).grad_fn, g)
    t.true(isinstance(scaled, tuple) and len(scaled) == 1,
           f"Node.apply of a * 2.5 to return 1 gradient: the number has no entry in next_functions (got "
           f"{len(scaled) if isinstance(scaled, tuple) else scaled!r})",
           hint="skip the arguments whose input_metadata is None")
    t.close(scaled[0], g.numpy() * 2.5, "a's gradient from Node.apply((a * 2.5).grad_fn, grad)", given=given)
    x = tc.tensor([1.0, 2.0], dtype=tc.float32, requires_grad=True)
    widened = step(_Widen.apply(x).grad_fn, tc.ones(2))
    t.true(widened[0].dtype == tc.float32, f"the gradient of a float32 input to be float32 when the op's backward "
           f"returns float64 (got {widened[0].dtype})", hint="cast each gradient to its input's dtype: g.to(dtype)")


def _accumulate_init_check(t, AccumulateGrad):
    """AccumulateGrad(variable): the leaf in .variable, no edges, the largest sequence number (run when ready)."""
    init = next((vars(k)["__init__"] for k in AccumulateGrad.__mro__[:-1] if "__init__" in vars(k)), None)
    t.true(init is not None, "your AccumulateGrad to define __init__(self, variable)",
           hint="def __init__(self, variable): self.variable = variable; ...")
    w = tc.tensor([1.0, 2.0], requires_grad=True)
    node = FrameworkAccumulateGrad.__new__(FrameworkAccumulateGrad)
    init(node, w)
    t.true(node.__dict__.get("variable") is w, "AccumulateGrad(w).variable to be w itself",
           why="apply writes the gradient into self.variable.grad: the node must hold the leaf, not a copy of it",
           hint="self.variable = variable")
    t.equal(node.__dict__.get("next_functions", "missing"), (), what="AccumulateGrad(w).next_functions",
            why="a leaf is where the graph ends: the engine follows next_functions from every node it runs, and a "
                "leaf's node has nothing before it", hint="self.next_functions = ()")
    t.equal(node.__dict__.get("_seq", "missing"), float("inf"), what="AccumulateGrad(w)._seq",
            why="the engine runs the ready node with the largest sequence number first; PyTorch gives AccumulateGrad "
                "the largest one, so a leaf's .grad is written as soon as its gradient is complete",
            hint='self._seq = float("inf")')


def _accumulate_check(t, AccumulateGrad):
    apply = _method(AccumulateGrad)
    w = tc.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    node = grad_accumulator(w)
    first = tc.tensor([[1.0, 3.0], [2.0, 4.0], [0.5, 0.25]]).T  # a transposed (strided) gradient
    second = tc.full((2, 3), 10.0)
    kept = first.numpy().copy()
    apply(node, first)
    t.close(w.grad, kept, "w.grad after AccumulateGrad.apply(node, g1) with w.grad None", given={"g1": kept})
    t.true(not np.shares_memory(w.grad.numpy(), first.numpy()),
           "the first gradient to be copied into w.grad (it shares its storage with g1)",
           hint="g1 may be another tensor's gradient too; adding the next one in place would change it: keep "
                "grad.clone()")
    t.true(w.grad.is_contiguous(), "w.grad to be row-major (contiguous) like w",
           hint="clone() copies into a row-major tensor")
    held = w.grad
    apply(node, second)
    t.close(w.grad, kept + 10.0, "w.grad after a second AccumulateGrad.apply(node, g2) with g2 = 10",
            given={"g1": kept},
            mistakes=[mistakes.custom(lambda got, e: np.allclose(got, 10.0), "the old w.grad was replaced, not added to",
                                      "gradients accumulate: add the new one to the .grad already there")])
    t.true(w.grad is held, "the second gradient to be added into the same .grad tensor, in place (as PyTorch's "
           "AccumulateGrad does: whoever holds w.grad sees the sum)", hint="leaf.grad.add_(grad)")
    t.close(first, kept, "g1 after both calls (your accumulation must not change a gradient it received)")


_FREED = "Trying to backward through the graph a second time (or directly access saved tensors after they have " \
         "already been freed)."


def _version_message(desc, which, version, expected):
    return ("one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"[{desc}]{which} is at version {version}; expected version {expected} instead. Hint: ")


def _saved_tensors_check(t, Node):
    """The node's saved-tensor API: what save_for_backward keeps (and each tensor's version), saved_tensors with
    PyTorch's errors for a tensor modified in place and for a released node, release_variables dropping them."""
    save = _method(Node, "save_for_backward")
    found = next((vars(k)["saved_tensors"] for k in Node.__mro__[:-1] if "saved_tensors" in vars(k)), None)
    if not isinstance(found, property):
        t.fail("Node.saved_tensors", f"it is {type(found).__name__}, not a property",
               hint="backward reads ctx.saved_tensors without calling it: put @property above def saved_tensors(self)")
    saved, release = found.fget, _method(Node, "release_variables")
    x = tc.tensor([1.0, 2.0, 3.0], requires_grad=True)
    h = x * 2.0
    c = tc.tensor([0.5, -1.0])
    node = Mul._backward_cls()
    save(node, x, h, c, 2.5)
    given = {"x (a leaf)": x, "h = x * 2": h, "c (needs no grad)": c}
    t.true(tuple(node._saved) == (x, h, c, 2.5) if isinstance(node.__dict__.get("_saved"), tuple) else False,
           f"save_for_backward(x, h, c, 2.5) to keep the tuple (x, h, c, 2.5) in node._saved, got "
           f"{node.__dict__.get('_saved')!r}", given=given, hint="self._saved = tensors (the tuple *tensors collects)")
    t.equal(list(node.__dict__.get("_saved_versions", ())), [0, 0, 0, None],
            "node._saved_versions after save_for_backward(x, h, c, 2.5) on tensors at version 0", given=given,
            hint="one entry per saved value: t._version[0] for a tensor, None for a number")
    got = saved(node)
    t.true(tuple(got) == (x, h, c, 2.5), f"node.saved_tensors to give back (x, h, c, 2.5), got {got!r}", given=given,
           hint="return self._saved")
    with tc.no_grad():
        h.add_(1.0)  # h changes in place: version 0 -> 1
    error = t.raises(RuntimeError, saved, node, what="node.saved_tensors after h.add_(1): a saved tensor changed in "
                     "place since it was saved", hint="compare each saved tensor's t._version[0] with the version "
                     "save_for_backward kept for it")
    want = _version_message("tc.FloatTensor [3]", ", which is output 0 of Mul,", 1, 0)
    t.true(str(error).startswith(want), f"the message of that RuntimeError to be PyTorch's, {want}... (then your "
           f"hint), got {str(error)!r}", hint="[t.type() [shape]], then ', which is output <t.output_nr> of <its "
           "node's name before Backward>,' for a tensor with a grad_fn; the version now and the version saved")
    node = Mul._backward_cls()
    save(node, c, 2.5)
    c.add_(1.0)  # c needs no grad and has no grad_fn: no ", which is output ... of ...," part
    error = t.raises(RuntimeError, saved, node, what="node.saved_tensors after c.add_(1) for a saved c that "
                     "needs no gradient", hint="check every saved tensor, whether or not it requires grad")
    want = _version_message("tc.FloatTensor [2]", "", 1, 0)
    t.true(str(error).startswith(want), f"the message of that RuntimeError to be PyTorch's, {want}... (then your "
           f"hint), got {str(error)!r}", hint="the ', which is output ... of ...,' part is only for a tensor with a "
           "grad_fn")
    node = Mul._backward_cls()
    save(node, x, h)
    release(node)
    t.true(node.__dict__.get("_saved") == (), f"release_variables() to drop the saved tensors (node._saved == ()), "
           f"got {node.__dict__.get('_saved')!r}", why="the point of freeing is the memory: a node that still holds "
           "its tensors keeps the forward pass's values alive", hint="self._saved = ()")
    error = t.raises(RuntimeError, saved, node, what="node.saved_tensors after release_variables()",
                     hint="release_variables sets self._released = True; saved_tensors raises PyTorch's error then")
    t.true(str(error).startswith(_FREED), f"the message of that RuntimeError to be PyTorch's, starting {_FREED!r}, "
           f"got {str(error)!r}", hint="copy PyTorch's message from the exercise text")


def _saved_output_check(t, Node):
    """saved_output: the op's own output kept by forward, with saved_tensors' two errors (named as the node's
    output 0)."""
    found = next((vars(k)["saved_output"] for k in Node.__mro__[:-1] if "saved_output" in vars(k)), None)
    if not isinstance(found, property):
        t.fail("Node.saved_output", f"it is {type(found).__name__}, not a property",
               hint="backward reads ctx.saved_output without calling it: put @property above def saved_output(self)")
    saved = found.fget
    x = tc.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.cumprod(0)
    node = y.grad_fn  # CumprodBackward0: its forward set ctx.save_output = True
    given = {"y = x.cumprod(0)": y}
    got = saved(node)
    t.true(isinstance(got, tc.Tensor) and got.tolist() == [1.0, 2.0, 6.0] and got.grad_fn is None,
           f"y.grad_fn.saved_output to be the output the engine kept, tensor([1., 2., 6.]) without a grad_fn, got "
           f"{got!r}", given=given, hint="return self._out_alias")
    with tc.no_grad():
        y.mul_(2.0)  # the output changes in place: version 0 -> 1
    error = t.raises(RuntimeError, saved, node, what="y.grad_fn.saved_output after y.mul_(2): the output changed in "
                     "place since forward", hint="compare self._out_alias._version[0] with self._out_version")
    want = _version_message("tc.FloatTensor [3]", ", which is output 0 of Cumprod,", 1, 0)
    t.true(str(error).startswith(want), f"the message of that RuntimeError to be PyTorch's, {want}... (then your "
           f"hint), got {str(error)!r}", why="the kept output has no grad_fn, so the part ', which is output 0 of "
           "Cumprod,' comes from the node itself", hint="the node's name up to 'Backward': self.name()[:self.name()"
           ".index('Backward')]")
    z = x.cumprod(0)
    node = z.grad_fn
    node._released = True  # what release_variables does
    error = t.raises(RuntimeError, saved, node, what="saved_output of a released node", hint="check self._released "
                     "first, as saved_tensors does")
    t.true(str(error).startswith(_FREED), f"the message of that RuntimeError to be PyTorch's, starting {_FREED!r}, "
           f"got {str(error)!r}")


@exercise("02d.2", title="a node: its backward step and what it keeps for it", points=3)
def node_check(t, sum_to_shape, Node):
    _sum_to_shape_check(t, sum_to_shape)
    _node_apply_check(t, Node)
    _saved_tensors_check(t, Node)
    _saved_output_check(t, Node)


@exercise("02d.3", title="recording a call and a leaf's gradient", points=2)
def recording_check(t, gradient_edge, Function, AccumulateGrad):
    _gradient_edge_check(t, gradient_edge)
    _function_apply_check(t, Function)
    _accumulate_init_check(t, AccumulateGrad)
    _accumulate_check(t, AccumulateGrad)
