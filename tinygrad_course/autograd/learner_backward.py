"""A learner's backward pass (build mode, chapter 02): `backward_pass(root, grad, retain_graph)` runs every node
below `root` in the learner's topological order, adds up the gradients that reach each node, hands each
leaf's total to its `AccumulateGrad` node, which writes `.grad`, and frees each node's saved tensors after it
ran (`node.release_variables()`) unless `retain_graph`.

A learner's `Tensor.backward` (exercise 02d.1, a method slot) calls their `backward_pass` itself for a plain
`tensor.backward()`; this seam serves the calls that reach the engine with only `backward_pass` installed (or
`tc.autograd.backward(...)`). `engine.run_backward` offers it the plain case only: `tensor.backward()` from one
output whose nodes each have one output, without hooks on the nodes, `create_graph`, `autograd.grad`'s inputs,
the profiler, anomaly detection or `record_backward()` traces. Everything else stays the engine's. The learner's
pass runs without recording a graph (as the engine's does without `create_graph`).
"""
from __future__ import annotations

from .. import seams
from .anomaly_mode import state as _anomaly
from .grad_mode import _state


def _plain(nodes) -> bool:
    for node in nodes:
        if node._num_outputs != 1 or node._tensor_pre_hooks or node._retain_hooks or node._pre_hooks or \
                node._post_hooks:
            return False
    return True


def run_learner_pass(roots, grads, nodes, retain_graph, create_graph, capture, tracers) -> bool:
    """Run the backward pass with the learner's `backward_pass` when one is installed and the call is the plain
    case it covers; True when it ran (the engine then has nothing left to do), False to let the engine run."""
    learner = seams.ACTIVE.get("backward_pass")
    if learner is None or create_graph or capture is not None or tracers or _anomaly.enabled or len(roots) != 1:
        return False
    root = roots[0]
    if hasattr(root, "variable") or not _plain(nodes):  # a leaf's own backward, or hooks and multi-output nodes
        return False
    seams.count_call("backward_pass")
    previous = _state.enabled
    _state.enabled = False
    try:
        learner(root, grads[0], retain_graph)
    finally:
        _state.enabled = previous
    return True
