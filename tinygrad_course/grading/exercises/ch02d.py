"""Chapter 02d (the engine): the topological sort, the backward pass, its root gradient and `Tensor.backward`
(02d.1), a node's backward step and what it keeps (02d.2), recording a call and a leaf's gradient (02d.3).

The learner's topological sort orders a real graph whose nodes are then run in that order; the backward pass,
root gradient and Tensor.backward are checked in `ch02d_backward`, the node and the recording in `ch02d_engine`.
"""
import tinygrad_course as tc

from ..checker import CheckFailed
from ..registry import exercise
from . import ch02d_backward
from . import ch02d_engine  # noqa: F401  (registers 02d.2 and 02d.3)


# ---- 02d.1 -------------------------------------------------------------------------------------------------
def _reachable(root):
    seen, stack = {root}, [root]
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def _run_in_order(root_tensor, order):
    """Backpropagate through the graph running the nodes in `order`; the gradient each leaf receives."""
    pending = {root_tensor.grad_fn: tc.ones_like(root_tensor)}
    leaf_grads = {}
    with tc.no_grad():
        for node in order:
            grad = pending.pop(node, None)
            if grad is None:
                continue  # nothing has arrived (yet): a wrong order loses this contribution
            if node.name() == "AccumulateGrad":
                leaf_grads[id(node.variable)] = grad
                continue
            for (nxt, _), g in zip(node.next_functions, node(grad)):
                if nxt is not None and g is not None:
                    pending[nxt] = pending[nxt] + g if nxt in pending else g
    return leaf_grads


def _check_order(t, order, root_tensor, what):
    root = root_tensor.grad_fn
    if order is None:
        t.fail(what, "your topo_sort returned None: did you forget a `return` statement?")
    order = list(order)
    nodes = _reachable(root)
    if any(n is None for n in order):
        t.fail(what, "the order contains None\n  hint: next_functions holds (None, 0) for inputs that need no "
                     "gradient: skip them")
    if len(set(map(id, order))) != len(order):
        t.fail(what, "a node appears twice\n  hint: a node reached along two paths (like `a` in c=a*b; d=c+a) "
                     "must be listed once: keep a set of visited nodes")
    missing = [n.name() for n in nodes if n not in set(order)]
    if missing:
        t.fail(what, f"{len(missing)} node(s) of the graph are missing, e.g. {missing[0]}\n  hint: follow "
                     "next_functions all the way down to the AccumulateGrad nodes of the leaves")
    extra = [n for n in order if n not in nodes]
    if extra:
        t.fail(what, f"{extra[0]!r} is not part of this graph")
    if order[0] is not root:
        t.fail(what, f"the order starts with {order[0].name()}, not with the output's node {root.name()}\n  hint: "
                     "backward starts at the output: reverse a post-order of the graph")
    position = {n: i for i, n in enumerate(order)}
    for node in order:
        for nxt, _ in node.next_functions:
            if nxt is not None and position[nxt] < position[node]:
                t.fail(what, f"{nxt.name()} comes before {node.name()}, which sends it a gradient\n  hint: a node "
                             "may run only after every node that uses its output; record a node after all its "
                             "inputs (post-order) and reverse the list")
    t.count += 1
    return order


@exercise("02d.1", title="topological sort, the backward pass, its root gradient and Tensor.backward", points=4)
def topo_sort_check(t, topo_sort, backward_pass, root_gradient, backward):
    # the tape example: a fans out (it feeds both c = a*b and d = c + a)
    a = tc.tensor(2.0, requires_grad=True)
    b = tc.tensor(3.0, requires_grad=True)
    c = a * b
    d = c + a
    loss = d ** 2
    _check_order(t, topo_sort(loss.grad_fn), loss, "topo_sort(L.grad_fn) for c=a*b; d=c+a; L=d**2")
    # a graph where a depth-first PRE-order is wrong: e is used twice, once through f
    x = tc.tensor([0.5, -1.0], requires_grad=True)
    w = tc.tensor([2.0, 3.0])  # needs no gradient: a None in next_functions
    e = (x * w).exp()
    f = e * 2.0
    g = (e + f).sum()
    try:
        order = topo_sort(g.grad_fn)
    except AttributeError as exc:
        raise CheckFailed(f"your code raised AttributeError: {exc}\n  hint: next_functions holds (None, 0) for "
                          "inputs that need no gradient: skip the None entries") from None
    order = _check_order(t, order, g, "topo_sort(g.grad_fn) for e = exp(x * w); g = sum(e + 2 * e)")
    # plugged into a real backward pass: run the graph's nodes in the learner's order
    grads = _run_in_order(g, order)
    g.backward()
    t.close(grads.get(id(x)), x.grad, "x's gradient from running the nodes in your order vs g.backward()",
            given={"x": x, "w": w, "g": "(e + 2 * e).sum() with e = exp(x * w)"})
    ch02d_backward.backward_pass_check(t, backward_pass)
    ch02d_backward.root_gradient_check(t, root_gradient)
    ch02d_backward.tensor_backward_check(t, backward)
