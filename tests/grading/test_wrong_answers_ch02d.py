"""Catalogue of wrong answers, chapter 02d (the engine): each realistic mistake fails with a message that names
it, the hint waits for a second failure, and the unsolved stub fails."""
import pytest

import tinygrad_course as tc
from tinygrad_course.autograd.engine import grad_accumulator

from .wrong_answers import assert_names_mistake, catalogue_tests, solution

topo_sort, backward_pass, root_gradient, backward = solution("02d", "topo_sort", "backward_pass", "root_gradient",
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


sum_to_shape, Node, gradient_edge, Function, AccumulateGrad = solution(
    "02d", "sum_to_shape", "Node", "gradient_edge", "Function", "AccumulateGrad")
NODE = (sum_to_shape, Node)
RECORDING = (gradient_edge, Function, AccumulateGrad)


def node(**replaced):
    """The solution's 02d.2 pieces (sum_to_shape, Node) with some replaced by a wrong one."""
    return tuple(replaced.get(getattr(piece, "__name__", ""), piece) for piece in NODE)


def recording(**replaced):
    """The solution's 02d.3 pieces (gradient_edge, Function, AccumulateGrad) with some replaced by a wrong one."""
    return tuple(replaced.get(getattr(piece, "__name__", ""), piece) for piece in RECORDING)


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


CATALOGUE = [
    ("02d.1", (topo_without_visited, backward_pass, root_gradient, backward), ["a node appears twice"]),
    ("02d.1", (topo_not_reversed, backward_pass, root_gradient, backward), ["the order starts with AccumulateGrad, not with the output's node PowBackward0"]),
    ("02d.1", (topo_pre_order, backward_pass, root_gradient, backward), ["comes before", "which sends it a gradient"]),
    ("02d.1", (topo_keeps_none, backward_pass, root_gradient, backward), ["your code raised AttributeError"]),
    ("02d.1", (topo_sort, pass_overwriting, root_gradient, backward), ["part of the gradient is missing", "L = (a * b + a) ** 2"]),
    ("02d.1", (topo_sort, pass_skipping_leaves, root_gradient, backward), ["it is None: no gradient reached that leaf"]),
    ("02d.1", (topo_sort, pass_setting_grad, root_gradient, backward), ["the old a.grad was overwritten, not added to"]),
    ("02d.1", (topo_sort, pass_never_freeing, root_gradient, backward), ["a third backward_pass through q's graph to raise"]),
    ("02d.1", (topo_sort, pass_always_freeing, root_gradient, backward), ["the first pass freed the graph although retain_graph=True"]),
    ("02d.1", (topo_sort, pass_without_retain_graph, root_gradient, backward), ["unexpected keyword argument 'retain_graph'"]),
    ("02d.1", (topo_sort, backward_pass, root_as_a_number, backward), ["root_gradient(out).shape for an output of shape (1, 1)",
                                                          "a one-element output that is not 0-d"]),
    ("02d.1", (topo_sort, backward_pass, root_as_the_output, backward), ["you returned the loss itself"]),
    ("02d.1", (topo_sort, backward_pass, root_ignoring_the_gradient, backward), ["you returned ones: a given gradient"]),
    ("02d.1", (topo_sort, backward_pass, root_without_shape_check, backward), ["root_gradient(x * 3, tc.ones(2))",
                                                                   "expected RuntimeError to be raised"]),
    ("02d.1", (topo_sort, backward_pass, root_gradient, backward_recording), ["tc.is_grad_enabled() was True inside it"]),
    ("02d.1", (topo_sort, backward_pass, root_gradient, backward_from_grad_fn), ["w.grad after backward(w) for a leaf",
                                                                              "your backward raised AttributeError"]),
    ("02d.1", (topo_sort, backward_pass, root_gradient, backward_always_freeing), ["the first one freed the graph "
                                                                                "although retain_graph=True"]),
    ("02d.1", (topo_sort, backward_pass, root_gradient, backward_from_ones), ["the given gradient was not used"]),
    ("02d.2", node(sum_to_shape=sum_to_shape_leading_only), ["the shape of sum_to_shape(grad of shape (2, 3, 4), "
                                                               "(3, 1))", "expected (3, 1)"]),
    ("02d.2", node(sum_to_shape=sum_to_shape_mean), ["your values are means, not sums", "input: grad = "]),
    ("02d.2", node(Node=NodeNotSummed), ["the shape of b's gradient from Node.apply((a * b).grad_fn, grad)",
                                          "expected (3,), got (2, 3)"]),
    ("02d.2", node(Node=NodeNotCast), ["the gradient of a float32 input to be float32", "got tc.float64"]),
    ("02d.2", node(Node=NodeWithNumbers), ["Node.apply of a * 2.5 to return 1 gradient"]),
    ("02d.2", node(Node=NodeUncheckedVersions), ["node.saved_tensors after h.add_(1)",
                                                  "expected RuntimeError to be raised"]),
    ("02d.2", node(Node=NodeWhichForEveryTensor), ["[tc.FloatTensor [2]] is at version 1", "which is output 0 of Mul"]),
    ("02d.2", node(Node=NodeKeepingTheTensors), ["release_variables() to drop the saved tensors"]),
    ("02d.2", node(Node=NodeSavingTheCounters), ["node._saved_versions after save_for_backward(x, h, c, 2.5)"]),
    ("02d.2", node(Node=NodeOutputUnchecked), ["y.grad_fn.saved_output after y.mul_(2)",
                                               "expected RuntimeError to be raised"]),
    ("02d.2", node(Node=NodeOutputUnnamed), ["which is output 0 of Cumprod,", "comes from the node itself"]),
    ("02d.3", recording(gradient_edge=gradient_edge_output_zero), ["sends its gradient to the node's output 2"]),
    ("02d.3", recording(Function=FunctionAlwaysRecording), ["a call under tc.no_grad() to record nothing"]),
    ("02d.3", recording(Function=FunctionEdgePerArgument), ["(no edge for the number)"]),
    ("02d.3", recording(Function=FunctionOnCopies), ["forward to receive the tensors' own arrays", "input: a = "]),
    ("02d.3", recording(AccumulateGrad=AccumulateKeeping), ["shares its storage with g1"]),
    ("02d.3", recording(AccumulateGrad=AccumulateReplacing), ["the old w.grad was replaced, not added to"]),
    ("02d.3", recording(AccumulateGrad=AccumulateWithEdges), ["AccumulateGrad(w).next_functions", "the graph ends"]),
    ("02d.3", recording(AccumulateGrad=AccumulateRunLast), ["AccumulateGrad(w)._seq", "the largest sequence number"]),
    ("02d.3", recording(AccumulateGrad=AccumulateHoldingADetachedLeaf), ["AccumulateGrad(w).variable to be w itself"]),
    ("02d.3", recording(AccumulateGrad=AccumulateOutOfPlace), ["in place (as PyTorch's AccumulateGrad does"]),
]


@pytest.mark.parametrize("exercise, wrong, phrases", CATALOGUE,
                         ids=[f"{e}-{'-'.join(w.__name__ for w in ws)}" for e, ws, _ in CATALOGUE])
def test_a_wrong_answer_fails_naming_its_mistake(exercise, wrong, phrases):
    assert_names_mistake(exercise, wrong, *phrases)


NAMES = {"02d.1": ("topo_sort", "backward_pass", "root_gradient", "backward"), "02d.2": ("sum_to_shape", "Node"),
         "02d.3": ("gradient_edge", "Function", "AccumulateGrad")}


test_the_stub_fails, test_every_exercise_has_two_wrong_answers = catalogue_tests(NAMES, CATALOGUE, "02d")
