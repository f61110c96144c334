"""``tc.viz.graph``: the backward graph of a tensor, as an interactive widget with a static SVG fallback."""
from .collapse import default_expanded, make_view
from .graph_model import build_graph
from .graph_widget import graph_widget
from .sugiyama import layout
from .names import caller_frame, collect_names
from .steps import backward_steps, forward_steps
from .svg_graph import render_svg
from .trace import replay_backward

CHAR_W, TITLE_W, LINE_H = 7.3, 7.9, 15.0
# gradient labels: 10 px monospace, 11 px bold while their step is the current one (static/graph.js);
# reserve the larger size (advance 0.6 em, line box about 1.2 em) so highlighting never makes them collide
LABEL_CHAR_W, LABEL_H = 6.7, 14.0
AUTO_COLLAPSE_NODES = 60


def box_size(node):
    """Width/height of a node box from its text (monospace font, see static/graph.css)."""
    w = max([len(node["title"]) * TITLE_W] + [len(s) * CHAR_W for s in node["lines"]]) + 20
    h = 26 + LINE_H * len(node["lines"]) if node["lines"] else 28
    return round(max(w, 44.0), 1), h


def label_size(text):
    """Width/height reserved for an edge's gradient label ``text`` (drawn centred on the edge's lx, ly)."""
    return round(len(text) * LABEL_CHAR_W + 4, 1), LABEL_H


class Graph:
    """The backward graph of one output tensor, its layout, and the step-through states.

    Display it in a notebook (widget; static SVG in the same output for GitHub/nbviewer), or use
    :meth:`to_svg` / :meth:`save` for slides. ``step`` and ``mode`` on :attr:`widget` follow the
    learner's clicks.
    """

    def __init__(self, output, names, collapse=None, steps=True, trace=None, grad_output=None, height=None):
        self.output = output
        self.model = build_graph(output, names)
        self.height = height
        self.note = ""
        records = trace
        if records is None and steps and output.grad_fn is not None:
            leaves = [n.tensor for n in self.model.nodes if n.kind == "leaf"]
            fns = [n.fn for n in self.model.nodes if n.fn is not None]
            try:
                records = replay_backward(output, fns, leaves, grad_output)
            except Exception as exc:  # graph already freed, non-scalar output, ...
                self.note = (f"No backward step-through: {type(exc).__name__}: {exc}. Call tc.viz.graph(loss) "
                             "before loss.backward(), or pass trace= from tc.autograd.engine.record_backward().")
                records = None
        self.steps, self.edge_grads = backward_steps(self.model, records or [])
        for step in self.steps:  # the gradient an op receives has its output's shape
            node = self.model.node(step["node"])
            if node.kind == "op" and step["grad_in"]["shape"]:
                node.details.setdefault("output_shape", step["grad_in"]["shape"])
        self.forward = forward_steps(self.model)
        has_modules = any(n.modules for n in self.model.nodes)
        if collapse is None:
            collapse = has_modules and len(self.model.nodes) > AUTO_COLLAPSE_NODES
        self.expanded = default_expanded(self.model) if collapse and has_modules else None
        self._widget = None

    # ---- data for drawing ---------------------------------------------------------------------
    def data(self):
        """Everything the front end draws, as JSON-ready dicts (layout included)."""
        key = None if self.expanded is None else frozenset(self.expanded)
        cached = getattr(self, "_cache", None)
        if cached is not None and cached[0] == key:
            return cached[1]
        self._cache = (key, self._compute_data())
        return self._cache[1]

    def _compute_data(self):
        view = make_view(self.model, self.expanded)
        sizes = {n["id"]: box_size(n) for n in view.nodes}
        grad_of = {}
        for e in view.edges:
            grads = [self.edge_grads[m] for m in e["members"] if m in self.edge_grads]
            grad_of[e["id"]] = min(grads, key=lambda g: g["step"]) if grads else None
        label_sizes = {eid: label_size(g["value"]) for eid, g in grad_of.items() if g}
        lay = layout([n["id"] for n in view.nodes], sizes, [(e["id"], e["src"], e["dst"]) for e in view.edges],
                     label_sizes)
        nodes = []
        for n in view.nodes:
            w, h = sizes[n["id"]]
            nodes.append({"id": n["id"], "kind": n["kind"], "title": n["title"], "lines": n["lines"],
                          "module": n["module"], "x": lay.x[n["id"]], "y": lay.y[n["id"]], "w": w, "h": h,
                          "details": _jsonable(n["details"])})
        edges = []
        for e in view.edges:
            lx, ly = lay.label_at.get(e["id"], (None, None))  # the centre of its label, if it has one
            edges.append({"id": e["id"], "src": e["src"], "dst": e["dst"], "d": lay.paths[e["id"]],
                          "lx": lx, "ly": ly, "grad": grad_of[e["id"]]})
        steps = []
        for s in self.steps:
            s = dict(s, node=view.node_of[s["node"]])
            s["outgoing"] = [dict(o, edge=view.edge_of.get(o["edge"])) for o in s["outgoing"]]
            s["contributions"] = [dict(c, edge=view.edge_of.get(c["edge"])) for c in s["contributions"]]
            steps.append(s)
        forward = [dict(f, node=view.node_of[f["node"]]) for f in self.forward]
        return {"width": lay.width, "height": lay.height, "nodes": nodes, "edges": edges, "steps": steps,
                "forward": forward, "modules": view.modules, "note": self.note}

    def to_svg(self):
        """A static SVG picture of the graph (what GitHub/nbviewer show)."""
        return render_svg(self.data())

    def save(self, path):
        """Write the graph as SVG (``.svg``). For PNG use the widget's PNG button."""
        if not str(path).lower().endswith(".svg"):
            raise ValueError("Graph.save writes SVG; use a .svg path (the widget's PNG button exports PNG)")
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_svg())

    # ---- module collapsing -----------------------------------------------------------------------
    def expand(self, path):
        """Show the nodes inside module ``path`` (e.g. 'fc1')."""
        if self.expanded is not None:
            self.expanded = self.expanded | {path}
            self._refresh()

    def collapse(self, path):
        """Draw module ``path`` (and everything inside it) as one box."""
        if self.expanded is None:
            self.expanded = set()
            for n in self.model.nodes:
                self.expanded.update(n.modules)
        self.expanded = self.expanded - {path}
        self._refresh()

    def _refresh(self):
        if self._widget is not None:
            self._widget.expanded = sorted(self.expanded) if self.expanded is not None else []
            self._widget.data = self.data()

    # ---- notebook display ----------------------------------------------------------------------
    @property
    def widget(self):
        """The interactive anywidget (created on first use)."""
        if self._widget is None:
            self._widget = graph_widget(self)
        return self._widget

    def __repr__(self):
        return (f"<tc.viz.Graph: {len(self.model.nodes)} nodes, {len(self.model.edges)} edges, "
                f"{len(self.steps)} backward steps>")

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = {"text/plain": repr(self), "image/svg+xml": self.to_svg()}
        try:
            widget_bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude)
        except ImportError:
            return bundle
        if isinstance(widget_bundle, tuple):
            widget_bundle = widget_bundle[0]
        for key, value in (widget_bundle or {}).items():
            if key != "text/plain":
                bundle[key] = value
        return bundle


def _jsonable(d):
    out = {}
    for k, v in d.items():
        out[k] = v if isinstance(v, (str, int, float, bool)) or v is None else (
            _jsonable(v) if isinstance(v, dict) else str(v))
    return out


def graph(tensor, params=None, model=None, *, collapse=None, steps=True, trace=None, grad_output=None,
          height=None):
    """Show the backward graph of ``tensor`` with a step-through of backpropagation.

    params: ``{name: tensor}`` (e.g. ``dict(model.named_parameters())``) to label tensors.
    model: an ``nn.Module`` whose parameters and submodules give names and collapsible boxes.
    Variables in the calling cell (``x``, ``w1``, ``z``...) are used as names too.
    collapse: draw each submodule as one box (None: only for graphs over 60 nodes).
    steps: replay ``backward(retain_graph=True)`` to record the engine's steps (``.grad`` of leaves
      is restored afterwards); trace: records from ``tc.autograd.engine.record_backward()`` instead.
    grad_output: the gradient to start from for a non-scalar ``tensor``.
    height: canvas height in pixels (None: fit the graph, 260-720).
    """
    names = collect_names(params, model, caller_frame())
    return Graph(tensor, names, collapse=collapse, steps=steps, trace=trace, grad_output=grad_output,
                 height=height)
