"""The backward engine: runs graph nodes in reverse order and accumulates leaf gradients.

The order is PyTorch's: a node runs once every node that consumes its output has run
(dependency counting), and among ready nodes the most recently created goes first. No
recursion is involved, so graphs of any depth work. After a node runs, its saved tensors
are freed unless `retain_graph=True`.
"""
from __future__ import annotations

import contextlib
import heapq
import itertools
import sys

import numpy as np

from .. import seams
from ..factories import tensor as make_tensor
from ..factories import zeros_like
from ..tensor import Tensor, _wrap
from .anomaly_mode import check_gradients
from .anomaly_mode import state as _anomaly
from .grad_mode import _state
from .node import AccumulateGrad, Node, profilers
from .topological_sort import learner_order

_recorders = []  # lists receiving (node, grad_outputs, grad_inputs) while record_backward() is active
_final_callbacks = []  # one list per running backward pass (innermost last)


def queue_callback(callback):
    """Run `callback()` once the current backward pass has finished, like PyTorch's
    `Variable._execution_engine.queue_callback` (DDP uses it to wait for its gradient all-reduces)."""
    if not _final_callbacks:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    _final_callbacks[-1].append(callback)


@contextlib.contextmanager
def _callbacks_at_end():
    """Collect callbacks queued during the block and run them in order when it ends without error."""
    queue = []
    _final_callbacks.append(queue)
    try:
        yield
        i = 0
        while i < len(queue):  # a callback may queue further callbacks
            queue[i]()
            i += 1
    finally:
        _final_callbacks.remove(queue)


@contextlib.contextmanager
def record_backward():
    """Record every node the engine executes: yields a list of (node, grad_outputs, grad_inputs)."""
    events = []
    _recorders.append(events)
    try:
        yield events
    finally:
        _recorders.remove(events)


_ARRAY_TYPES = {}  # type -> whether it is a backend array type (NumPy or CuPy), filled as types are met


def _is_array_type(t):
    return hasattr(t, "__array_interface__") or hasattr(t, "__cuda_array_interface__")


def _make_root_grads(outputs, grad_outputs, create_graph):
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            if out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not out.dtype.is_floating_point:
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {out.dtype}")
            g = Tensor._ones_meta((out.shape, out.dtype, out.device))
        else:
            if not isinstance(g, Tensor):
                g = make_tensor(g, dtype=out.dtype, device=out.device)
            if tuple(g.shape) != tuple(out.shape):
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] has a shape of {out.shape}."
                )
            if g.device != out.device:
                raise RuntimeError(
                    f"invalid gradient at index {i} - expected device {out.device} but got {g.device}"
                )
            if g.dtype is not out.dtype:
                g = g.to(out.dtype)
            if not create_graph:
                g = g.detach()
        grads.append(g)
    return grads


def _root_node(t, i):
    if t._base is not None and t._view_version != t._version[0]:
        t._refresh_view_history()
    if t.grad_fn is not None:
        return t.grad_fn
    if t._requires_grad:
        return t._grad_accumulator()
    raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")


def _count_dependencies(roots):
    """Number of graph edges pointing at each node reachable from `roots`, and those nodes in DFS post-order."""
    deps = {}
    seen = set(roots)
    stack = list(seen)  # a node reached from two roots (outputs of one multi-output op) is walked once
    while stack:
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is None:
                continue
            deps[child] = deps.get(child, 0) + 1
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return deps, seen


_NODE_RELEASE = Node._release


def _nodes_leading_to(targets, nodes):
    """The subset of `nodes` from which some target node can be reached (including the targets)."""
    parents = {}
    for node in nodes:
        for child, _ in node.next_functions:
            if child is not None:
                parents.setdefault(child, []).append(node)
    needed = set()
    stack = [t for t in targets if t in nodes]
    while stack:
        node = stack.pop()
        if node in needed:
            continue
        needed.add(node)
        stack.extend(parents.get(node, ()))
    return needed


def _add_grads(a, b):
    """The sum of two gradients reaching one input; on arrays when no graph is being built and they share
    a float32/float64 dtype, shape and device (an Add op otherwise)."""
    if not _state.enabled and a.dtype is b.dtype and a.dtype.name in _ARRAY_SUM_DTYPES \
            and a._data.shape == b._data.shape and a._device == b._device:
        return _wrap(a._data + b._data)
    return a + b


_ARRAY_SUM_DTYPES = ("float32", "float64")


def _sole_view(data):
    """True when `data` is a reshaped or transposed view of a whole NumPy array that nothing else references
    (a backward's fresh result, such as a Linear weight's gradient transposed back): kept as `.grad` it
    aliases nothing, so it needs no copy -- as PyTorch's AccumulateGrad keeps a gradient no one else holds.
    (The reference count 2 is `data`'s own reference to its base plus the call's argument.)"""
    return type(data.base) is np.ndarray and data.base.nbytes == data.nbytes and sys.getrefcount(data.base) == 2


def _accumulate(var, grad, create_graph):
    """Add `grad` into `var.grad`, running the leaf's hooks first (PyTorch's AccumulateGrad)."""
    if var._hooks:
        for hook in list(var._hooks.values()):
            res = hook(grad)
            if res is not None:
                grad = res
    if var.grad is None:
        if not create_graph:
            grad = grad.detach()
            data = grad._data
            if not data.flags.writeable or not data.flags.c_contiguous or (data.base is not None
                                                                          and not _sole_view(data)):
                grad = _wrap(data.copy())  # its own storage (a clone; no graph is recorded here)
        var.grad = grad
    elif create_graph or var.grad._requires_grad:
        var.grad = var.grad + grad
    else:
        data = var.grad._data
        if data.flags.writeable and data.shape == grad._data.shape:
            data += grad._data
            var.grad._version[0] += 1
        else:
            var.grad = (var.grad + grad).detach()


def _run_tensor_pre_hooks(node, grads):
    grads = list(grads)
    if node._tensor_pre_hooks:
        for nr, hooks in node._tensor_pre_hooks.items():
            for hook in list(hooks.values()):
                if grads[nr] is not None:
                    res = hook(grads[nr])
                    if res is not None:
                        grads[nr] = res
    if node._retain_hooks:
        for nr, ref in node._retain_hooks.items():
            t = ref()
            if t is not None and grads[nr] is not None:
                g = grads[nr] if _state.enabled else grads[nr].detach()
                t.grad = g.clone() if t.grad is None else t.grad + g
    if node._pre_hooks:
        for hook in list(node._pre_hooks.values()):
            res = hook(tuple(grads))
            if res is not None:
                grads = list(res)
    return grads


def run_backward(outputs, grad_outputs, retain_graph, create_graph, inputs=None, allow_unused=False,
                 accumulate=True):
    """Backpropagate from `outputs`. With `accumulate`, leaf grads go into `.grad` (tensor.backward);
    otherwise the gradients of `inputs` are returned (autograd.grad)."""
    grads = _make_root_grads(outputs, grad_outputs, create_graph)
    roots = [_root_node(t, i) for i, t in enumerate(outputs)]
    deps, nodes = _count_dependencies(roots)

    capture = None  # (node, output_nr) -> position in inputs
    needed = None
    if inputs is not None:
        capture = {}
        for pos, t in enumerate(inputs):
            if not t._requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            key = (t.grad_fn, t._output_nr) if t.grad_fn is not None else (t._grad_accumulator(), 0)
            capture.setdefault(key, []).append(pos)
        needed = _nodes_leading_to([k[0] for k in capture], nodes)
    captured = [None] * (len(inputs) if inputs is not None else 0)

    buffers = {}
    for node, t, g in zip(roots, outputs, grads):
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node._num_outputs
        nr = t._output_nr if t.grad_fn is not None else 0
        buf[nr] = g if buf[nr] is None else buf[nr] + g

    tie = itertools.count()
    ready = [(-node._seq, next(tie), node) for node in buffers if deps.get(node, 0) == 0]
    heapq.heapify(ready)
    # build mode: a learner's topological sort decides the order (checked); nothing to call otherwise
    order = learner_order(roots, nodes) if seams.ACTIVE else None
    pending = iter(order) if order is not None else None
    heappop, heappush = heapq.heappop, heapq.heappush
    prev_mode = _state.enabled
    _state.enabled = create_graph
    try:
        while True:
            if pending is None:
                if not ready:
                    break
                node = heappop(ready)[2]
            else:
                node = next(pending, None)
                if node is None:
                    break
                if node not in buffers:  # no gradient reached it
                    continue
            node_grads = buffers.pop(node)
            if needed is not None and node not in needed:
                out = (None,) * len(node.next_functions)
            else:
                if node._tensor_pre_hooks or node._retain_hooks or node._pre_hooks:
                    node_grads = _run_tensor_pre_hooks(node, node_grads)
                if capture is not None:
                    for nr, g in enumerate(node_grads):
                        for pos in capture.get((node, nr), ()):
                            captured[pos] = g
                if type(node) is AccumulateGrad:
                    if accumulate and node_grads[0] is not None:
                        _accumulate(node.variable, node_grads[0], create_graph)
                    for events in _recorders:
                        events.append((node, tuple(node_grads), ()))
                    continue
                # `is None`, never `==`: comparing tensors would run the element-wise comparison op
                no_grads = node_grads[0] is None if node._num_outputs == 1 else all(g is None for g in node_grads)
                if no_grads or (
                        needed is not None and not any(c in needed for c, _ in node.next_functions)):
                    out = (None,) * len(node.next_functions)
                else:
                    if profilers:
                        out = profilers[-1].record(node.name(), node.apply, node_grads, {})
                    else:
                        out = node.apply(*node_grads)
                    if _anomaly.enabled:
                        check_gradients(node, out)
                    if node._post_hooks:
                        for hook in list(node._post_hooks.values()):
                            res = hook(out, tuple(node_grads))
                            if res is not None:
                                out = tuple(res)
                if _recorders:
                    for events in _recorders:
                        events.append((node, tuple(node_grads), tuple(out)))
                if not retain_graph:
                    # free what this node kept for its backward now that it has run (Node._release),
                    # including the arrays a built-in op's forward stored on it, as PyTorch frees saved
                    # variables (a custom Function's own ctx attributes stay, as in PyTorch)
                    node._saved = ()
                    node._out_alias = None
                    node._released = True
                    kept = node.__dict__ if not node._fn._check_grads else {}
                    for name, value in list(kept.items()):
                        is_array = _ARRAY_TYPES.get(type(value))
                        if is_array is None:
                            is_array = _ARRAY_TYPES[type(value)] = _is_array_type(type(value))
                        if is_array:
                            del kept[name]
                            node._freed = True
                    if type(node)._release is not _NODE_RELEASE:  # an op that frees more itself (a fused RNN)
                        node._release()
            for (child, nr), g in zip(node.next_functions, out):
                if child is None:
                    continue
                buf = buffers.get(child)
                if buf is None:
                    buf = buffers[child] = [None] * child._num_outputs
                if g is not None:
                    buf[nr] = g if buf[nr] is None else _add_grads(buf[nr], g)
                left = deps[child] - 1
                deps[child] = left
                if left == 0 and pending is None:
                    heappush(ready, (-child._seq, next(tie), child))
    finally:
        _state.enabled = prev_mode

    if inputs is not None:
        for pos, g in enumerate(captured):
            if g is None and not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {pos} appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior."
                )
            if g is not None and not create_graph:
                captured[pos] = g.detach()
        return tuple(captured)
    return None


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate gradients of `tensors` into the leaves' `.grad`, like `torch.autograd.backward`."""
    tensors = (tensors,) if isinstance(tensors, Tensor) else tuple(tensors)
    if grad_tensors is None:
        grad_tensors = (None,) * len(tensors)
    elif isinstance(grad_tensors, Tensor):
        grad_tensors = (grad_tensors,)
    else:
        grad_tensors = tuple(grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    with _callbacks_at_end():
        if inputs is not None:
            inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
            grads = run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs=inputs,
                                 allow_unused=True, accumulate=False)
            for t, g in zip(inputs, grads):
                if g is not None:
                    _accumulate(t, g, create_graph)
            return
        run_backward(tensors, grad_tensors, retain_graph, create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=None,
         is_grads_batched=False, materialize_grads=False):
    """Gradients of `outputs` with respect to `inputs`, returned (not accumulated), like `torch.autograd.grad`."""
    outputs = (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    elif isinstance(grad_outputs, Tensor):
        grad_outputs = (grad_outputs,)
    else:
        grad_outputs = tuple(grad_outputs)
    if retain_graph is None:
        retain_graph = create_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    with _callbacks_at_end():
        result = run_backward(outputs, grad_outputs, retain_graph, create_graph, inputs=inputs,
                              allow_unused=allow_unused, accumulate=False)
    if materialize_grads:
        result = tuple(zeros_like(t) if g is None else g for t, g in zip(inputs, result))
    return result
