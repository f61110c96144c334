"""Course visuals: the autograd graph widget, tensor/stride/broadcast pictures, training plots.

Module files are named differently from the functions they export (``graph_view.graph``), so a
submodule import never shadows a function. Nothing heavy is imported here: every name is loaded on first use, so ``import tinygrad_course``
stays fast and works without matplotlib or anywidget installed.
"""
from importlib import import_module

_EXPORTS = {
    "graph": ("graph_view", "graph"),
    "Graph": ("graph_view", "Graph"),
    "build_graph": ("graph_model", "build_graph"),
    "GraphModel": ("graph_model", "GraphModel"),
    "layout": ("sugiyama", "layout"),
    "storage": ("storage_view", "storage"),
    "StorageView": ("storage_view", "StorageView"),
    "broadcast": ("broadcast_view", "broadcast"),
    "BroadcastPicture": ("broadcast_view", "BroadcastPicture"),
    "TrainingPlot": ("training_plot", "TrainingPlot"),
    "progress": ("training_plot", "progress"),
    "loss_surface": ("surface_plot", "loss_surface"),
    "optimizer_path": ("surface_plot", "optimizer_path"),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    try:
        module_name, attr = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'tinygrad_course.viz' has no attribute {name!r}") from None
    value = getattr(import_module(f".{module_name}", __name__), attr)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
