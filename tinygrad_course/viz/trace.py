"""Replaying a backward pass while recording what the autograd engine does, without side effects.

For tinygrad_course tensors this uses ``tc.autograd.engine.record_backward()``; for PyTorch tensors
(used to cross-check) node hooks record the same ``(node, grad_outputs, grad_inputs)`` triples.
Leaf ``.grad`` values are restored afterwards, so visualizing does not change the learner's state.
"""
import contextlib
from importlib import import_module


def _framework(t):
    return type(t).__module__.split(".", 1)[0]


@contextlib.contextmanager
def _torch_recorder(nodes):
    records, handles = [], []
    for node in nodes:
        def hook(grad_inputs, grad_outputs, node=node):
            records.append((node, tuple(grad_outputs), tuple(grad_inputs)))
        try:
            handles.append(node.register_hook(hook))
        except Exception:
            pass
    try:
        yield records
    finally:
        for h in handles:
            h.remove()


@contextlib.contextmanager
def _engine_recorder(engine, nodes):
    """``engine.record_backward()`` plus leaf hooks for AccumulateGrad steps the engine may not report.

    Leaf hooks run at the moment the engine accumulates into ``.grad``, so appending to the same
    list keeps the real execution order. If the engine reports AccumulateGrad itself, the hook
    entries are dropped again.
    """
    synthetic, handles = set(), []
    with engine.record_backward() as records:
        for node in nodes:
            variable = getattr(node, "variable", None)
            if variable is None or not hasattr(variable, "register_hook"):
                continue

            def hook(grad, node=node):
                entry = (node, (grad,), ())
                synthetic.add(id(entry))
                records.append(entry)

            handles.append(variable.register_hook(hook))
        out = []
        try:
            yield out
        finally:
            for h in handles:
                h.remove()
            reported = {id(r[0]) for r in records if id(r) not in synthetic and getattr(r[0], "variable", None) is not None}
            out.extend(r for r in records if id(r) not in synthetic or id(r[0]) not in reported)


def recorder_for(output, nodes):
    """The context manager that records backward execution for ``output``'s framework."""
    if _framework(output) == "torch":
        return _torch_recorder(nodes)
    engine = import_module(f"{_framework(output)}.autograd.engine")
    return _engine_recorder(engine, nodes)


def replay_backward(output, nodes, leaves, grad_output=None):
    """Run ``output.backward(retain_graph=True)`` under a recorder and return its records.

    ``leaves`` are tensors whose ``.grad`` is saved before and restored after. Raises whatever the
    framework raises (e.g. when the graph was already freed by an earlier ``backward()``).
    """
    saved = [(leaf, leaf.grad) for leaf in leaves]
    for leaf, grad in saved:  # detach existing grads so in-place accumulation cannot touch them
        if grad is not None:
            leaf.grad = None
    try:
        with recorder_for(output, nodes) as records:
            output.backward(grad_output, retain_graph=True)
        return list(records)
    finally:
        for leaf, grad in saved:
            try:
                leaf.grad = grad
            except Exception:
                pass
