"""Per-step states for stepping through the backward pass (engine order) and the forward pass."""
import re

from ._tensors import fmt_shape, preview, shape_of

# ops whose backward sums a broadcast gradient back to each input's shape
_ELEMENTWISE = {"Add", "Sub", "Rsub", "Mul", "Div", "Pow", "Maximum", "Minimum", "Where", "Atan2",
                "BinaryCrossEntropy", "MseLoss", "Hypot", "Fmod", "Remainder", "Copysign"}


def _op_family(name):
    return re.sub(r"Backward\d*$", "", name)


def broadcast_reduction(out_shape, in_shape):
    """Describe how a gradient of ``out_shape`` is summed back to ``in_shape`` (or '' if it is not)."""
    out_shape, in_shape = tuple(out_shape), tuple(in_shape)
    if out_shape == in_shape or len(in_shape) > len(out_shape):
        return ""
    padded = (1,) * (len(out_shape) - len(in_shape)) + in_shape
    if any(i not in (1, o) for i, o in zip(padded, out_shape)):
        return ""
    lead = len(out_shape) - len(in_shape)
    dims = [d for d, (i, o) in enumerate(zip(padded, out_shape)) if d < lead or (i == 1 and o != 1)]
    if not dims:
        return ""
    return f"sum over dim {tuple(dims)}: {fmt_shape(out_shape)} -> {fmt_shape(in_shape)}"


def _grad_info(g):
    if g is None:
        return {"value": "None", "shape": ""}
    return {"value": preview(g), "shape": fmt_shape(shape_of(g))}


def backward_steps(model, records):
    """Turn engine records ``(fn, grad_outputs, grad_inputs)`` into step dicts and edge gradients.

    Returns ``(steps, edge_grads)``: ``steps[k]`` describes the k-th node the engine executed (its
    graph node id, the gradient contributions flowing in and their sum, what it sends along each
    edge, broadcast reductions); ``edge_grads[edge_id]`` is the first step at which that edge carries
    a gradient, with the gradient's preview and shape.
    """
    by_src_slot = {(e.src, e.slot): e for e in model.edges if e.slot is not None}
    into = {}
    for e in model.edges:
        into.setdefault(e.dst, []).append(e)
    titles = {n.id: n.title for n in model.nodes}
    kinds = {n.id: n.kind for n in model.nodes}
    steps, edge_grads = [], {}
    for fn, grad_outputs, grad_inputs in records:
        node_id = model.fn_to_node.get(id(fn))
        if node_id is None:
            continue
        k = len(steps)
        node = model.node(node_id)
        g_out = next((g for g in grad_outputs if g is not None), None)
        # the edges gradients arrive on: directly, or through a named intermediate tensor box
        arriving = list(into.get(node_id, []))
        contributions = []
        for e in arriving:
            if kinds[e.src] == "tensor":
                contributions += [_contribution(c, titles, edge_grads) for c in into.get(e.src, [])]
            else:
                contributions.append(_contribution(e, titles, edge_grads))
        for e in arriving:
            if e.id not in edge_grads:
                edge_grads[e.id] = dict(step=k, **_grad_info(g_out))
        contributions = [c for c in contributions if c is not None]
        outgoing = []
        for slot, g in enumerate(grad_inputs):
            e = by_src_slot.get((node_id, slot))
            if e is None:
                continue
            info = _grad_info(g)
            reduced = ""
            if g is not None and g_out is not None and _op_family(node.title) in _ELEMENTWISE:
                reduced = broadcast_reduction(shape_of(g_out), shape_of(g))
            edge_grads[e.id] = dict(step=k, **info)
            outgoing.append(dict(edge=e.id, to=titles[e.dst], reduced=reduced, **info))
        step = {"node": node_id, "title": titles[node_id], "grad_in": _grad_info(g_out),
                "contributions": contributions, "outgoing": outgoing}
        if node.kind == "leaf":
            step["title"] = f"AccumulateGrad into {node.title}.grad"
        steps.append(step)
    return steps, edge_grads


def _contribution(edge, titles, edge_grads):
    g = edge_grads.get(edge.id)
    if g is None:
        return None
    return {"edge": edge.id, "from": titles[edge.src], "value": g["value"], "shape": g["shape"]}


def forward_steps(model):
    """Graph node ids in the order the forward pass created them (leaves just before first use)."""
    ops = [n for n in model.nodes if n.kind == "op"]
    if ops and all("sequence_nr" in n.details for n in ops):
        ops.sort(key=lambda n: n.details["sequence_nr"])
    else:  # reverse of discovery from the output is a valid forward order
        ops = ops[::-1]
    into = {}
    for e in model.edges:
        into.setdefault(e.src, []).append(e.dst)  # src uses dst's value in the forward pass
    tensor_of = {e.dst: e.src for e in model.edges if model.node(e.src).kind == "tensor"}
    order, seen = [], set()

    def emit(node_id):
        if node_id not in seen:
            seen.add(node_id)
            order.append(node_id)

    for op in ops:
        for dep in into.get(op.id, []):
            if model.node(dep).kind == "leaf":
                emit(dep)
        emit(op.id)
        if op.id in tensor_of:
            emit(tensor_of[op.id])
    emit(model.output_id)
    return [{"node": n, "title": model.node(n).title} for n in order]
