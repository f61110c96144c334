"""The anywidget front end of :class:`~tinygrad_course.viz.graph.Graph` (ES module + CSS in ``static/``)."""
from pathlib import Path

import anywidget
import traitlets

STATIC = Path(__file__).parent / "static"


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
