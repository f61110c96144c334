"""The anywidget front end of :class:`~tinygrad_course.viz.graph.Graph` (ES module + CSS in ``static/``).

anywidget and traitlets are optional notebook dependencies, so the widget class is defined the first
time a widget is made (``graph_widget(graph)``), not when this module is imported.
"""
from pathlib import Path

STATIC = Path(__file__).parent / "static"

_widget_class = None


def _define_widget_class():
    import anywidget  # optional notebook dependency
    import traitlets

    class GraphWidget(anywidget.AnyWidget):
        """Interactive graph: node details on click, backward/forward step-through, zoom/pan, export.

        Synced state: ``step`` (-1 = before the first step), ``mode`` ('backward' or 'forward'),
        ``selected`` (id of the clicked node), ``expanded`` (module paths drawn open).
        """

        _esm = STATIC / "graph.js"
        _css = STATIC / "graph.css"
        data = traitlets.Dict().tag(sync=True)
        step = traitlets.Int(-1).tag(sync=True)
        mode = traitlets.Unicode("backward").tag(sync=True)
        selected = traitlets.Unicode("").tag(sync=True)
        expanded = traitlets.List(traitlets.Unicode()).tag(sync=True)
        collapsible = traitlets.Bool(False).tag(sync=True)
        height = traitlets.Int(0).tag(sync=True)  # 0: fit the graph

        def __init__(self, graph):
            self._graph = graph
            super().__init__(data=graph.data(), height=graph.height or 0,
                             collapsible=graph.expanded is not None,
                             expanded=sorted(graph.expanded) if graph.expanded is not None else [])
            self.observe(self._on_expanded, names="expanded")

        def _on_expanded(self, change):
            wanted = set(change["new"])
            if self._graph.expanded is None or wanted == self._graph.expanded:
                return
            self._graph.expanded = wanted
            self.data = self._graph.data()

    GraphWidget.__qualname__ = "GraphWidget"
    return GraphWidget


def widget_class():
    """The `GraphWidget` class (an `anywidget.AnyWidget`), defined on first use."""
    global _widget_class
    if _widget_class is None:
        _widget_class = _define_widget_class()
    return _widget_class


def graph_widget(graph):
    """A new interactive widget showing `graph` (a `tc.viz.Graph`)."""
    return widget_class()(graph)


def __getattr__(name):
    if name == "GraphWidget":
        return widget_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
