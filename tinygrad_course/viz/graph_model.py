"""The autograd graph as plain data: nodes, edges (in the direction gradients flow) and module groups.

Built by walking ``grad_fn.next_functions`` from an output tensor. Works with any framework that
follows PyTorch's graph API (tinygrad_course and PyTorch itself).
"""
from dataclasses import dataclass, field

from ._tensors import device_name, dtype_name, fmt_shape, full_text, is_tensor, preview, shape_of
from .names import Names


@dataclass
class GraphNode:
    """One box in the picture. ``kind`` is 'output', 'tensor' (named intermediate), 'leaf' or 'op'."""
    id: str
    kind: str
    title: str
    lines: list
    details: dict
    modules: tuple = ()          # module paths, outermost first, e.g. ('', 'fc1')
    module_labels: tuple = ()    # 'fc1 (Linear)' for each entry of ``modules``
    fn: object = field(default=None, repr=False)      # the autograd node (op or AccumulateGrad)
    tensor: object = field(default=None, repr=False)  # the tensor shown (output/leaf/intermediate)


@dataclass
class GraphEdge:
    """Gradient flows from ``src`` to ``dst``; ``slot`` is the index in src's ``next_functions``."""
    id: str
    src: str
    dst: str
    slot: int = None


@dataclass
class GraphModel:
    """Nodes and edges of one backward graph plus lookups used by steps, collapsing and layout."""
    nodes: list
    edges: list
    output_id: str
    fn_to_node: dict  # id(autograd node) -> GraphNode.id of its op/leaf box

    def node(self, node_id):
        """The node with id `node_id`."""
        return self._by_id[node_id]

    def __post_init__(self):
        self._by_id = {n.id: n for n in self.nodes}


def _tensor_details(t, name):
    d = {"name": name or "", "shape": fmt_shape(shape_of(t)), "dtype": dtype_name(t),
         "device": device_name(t), "requires_grad": bool(t.requires_grad),
         "is_leaf": bool(getattr(t, "is_leaf", t.grad_fn is None)), "value": full_text(t)}
    grad = getattr(t, "grad", None) if d["is_leaf"] else None
    if grad is not None:
        d["grad"] = full_text(grad)
    return d


def _tensor_lines(t, name):
    return [f"{fmt_shape(shape_of(t))} {dtype_name(t)}" + ("" if device_name(t) == "cpu" else f" {device_name(t)}"),
            preview(t)]


def _saved_tensors(fn):
    """{label: text} of what an op saved for backward (tc's ``saved_tensors``, torch's ``_saved_*``)."""
    out = {}
    try:
        saved = getattr(fn, "saved_tensors", None)
        if saved is not None:
            for i, t in enumerate(saved):
                out[f"saved[{i}]"] = _describe_saved(t)
            return out
    except Exception as exc:  # freed after backward
        return {"saved": f"({type(exc).__name__}: freed after backward)"}
    for attr in sorted(a for a in dir(fn) if a.startswith("_saved_") and not a.endswith("_raw_saved")):
        try:
            out[attr[len("_saved_"):]] = _describe_saved(getattr(fn, attr))
        except Exception:
            out[attr[len("_saved_"):]] = "(freed after backward)"
    return out


def _describe_saved(v):
    if is_tensor(v):
        return f"{fmt_shape(shape_of(v))} {dtype_name(v)}: {preview(v, 6)}"
    return repr(v)


def _fn_name(fn):
    name = getattr(fn, "name", None)
    return name() if callable(name) else type(fn).__name__


def _module_chain(mods, names, counters):
    paths, labels = [], []
    for m in mods:
        path = names.module_name(m)
        if path is None:
            key = type(m).__name__
            counters[key] = counters.get(key, 0) + 1
            path = f"{key}{counters[key]}"
            names.modules[id(m)] = path
            names.objects[id(m)] = m
        paths.append(path)
        labels.append(f"{path} ({type(m).__name__})" if path != type(m).__name__ else path)
    return tuple(paths), tuple(labels)


def build_graph(output, names=None, intermediates=True):
    """Walk the backward graph of ``output`` into a :class:`GraphModel`.

    ``names`` (a :class:`~tinygrad_course.viz.names.Names`) labels leaves, parameters, modules and
    named intermediate tensors; with ``intermediates`` a named intermediate (``z = x * w``) becomes
    its own tensor box between the op that made it and the ops that use it.
    """
    names = names or Names()
    if not is_tensor(output):
        raise TypeError(f"tc.viz.graph expects a tensor, got {type(output).__name__}")
    nodes, edges, fn_to_node = [], [], {}
    named_outputs = {}  # id(grad_fn) -> (name, tensor) for named intermediates
    if intermediates:
        for obj_id, name in names.tensors.items():
            t = names.objects.get(obj_id)
            if t is not None and is_tensor(t) and t.grad_fn is not None and t is not output:
                named_outputs.setdefault(id(t.grad_fn), (name, t))
    counters = {}

    out_name = names.tensor_name(output) or "output"
    out_id = "t0"
    nodes.append(GraphNode(out_id, "output", out_name, _tensor_lines(output, None),
                           _tensor_details(output, out_name), tensor=output))
    root = output.grad_fn
    if root is None:
        return GraphModel(nodes, edges, out_id, fn_to_node)

    def add_edge(src, dst, slot=None):
        edges.append(GraphEdge(f"e{len(edges)}", src, dst, slot))

    entry = {}  # id(fn) -> id of the box gradients for fn's output enter (tensor box or op box)
    order, stack, seen = [], [root], {id(root)}
    while stack:  # iterative DFS, deterministic: children in next_functions order
        fn = stack.pop()
        order.append(fn)
        for child, _ in reversed(tuple(fn.next_functions)):
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                stack.append(child)

    for k, fn in enumerate(order):
        node_id = f"n{k}"
        fn_to_node[id(fn)] = node_id
        name = _fn_name(fn)
        variable = getattr(fn, "variable", None)
        chain = tuple(getattr(fn, "modules", ()) or ())
        if variable is not None and id(variable) in names.param_modules:
            chain = names.param_modules[id(variable)]
        mods, mod_labels = _module_chain(chain, names, counters)
        if variable is not None:  # AccumulateGrad: drawn as the leaf tensor it accumulates into
            vname = names.tensor_name(variable) or f"leaf{k}"
            details = _tensor_details(variable, vname)
            details["op"] = name
            nodes.append(GraphNode(node_id, "leaf", vname, _tensor_lines(variable, None), details,
                                   mods, mod_labels, fn=fn, tensor=variable))
            entry[id(fn)] = node_id
            continue
        details = {"op": name, "saved": _saved_tensors(fn)}
        seq = getattr(fn, "_sequence_nr", None)
        if callable(seq):
            details["sequence_nr"] = int(seq())
        if mod_labels:
            details["modules"] = " > ".join(mod_labels)
        nodes.append(GraphNode(node_id, "op", name, [], details, mods, mod_labels, fn=fn))
        entry[id(fn)] = node_id
        if id(fn) in named_outputs and fn is not root:
            tname, t = named_outputs[id(fn)]
            tid = f"t{k}"
            nodes.append(GraphNode(tid, "tensor", tname, _tensor_lines(t, None), _tensor_details(t, tname),
                                   mods, mod_labels, tensor=t))
            add_edge(tid, node_id)
            entry[id(fn)] = tid

    add_edge(out_id, fn_to_node[id(root)])
    for fn in order:
        for slot, (child, _) in enumerate(fn.next_functions):
            if child is not None:
                add_edge(fn_to_node[id(fn)], entry[id(child)], slot)
    return GraphModel(nodes, edges, out_id, fn_to_node)
