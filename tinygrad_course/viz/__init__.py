"""Course visuals: the autograd graph widget, tensor/stride/broadcast pictures, training plots.

Nothing heavy is imported here: every name is loaded on first use, so ``import tinygrad_course``
stays fast and works without matplotlib or anywidget installed.
"""
from importlib import import_module

_EXPORTS = {
    "graph": ("graph", "graph"),
    "Graph": ("graph", "Graph"),
    "build_graph": ("graph_model", "build_graph"),
    "GraphModel": ("graph_model", "GraphModel"),
    "layout": ("layout", "layout"),
    "storage": ("storage", "storage"),
    "StorageView": ("storage", "StorageView"),
    "broadcast": ("broadcast", "broadcast"),
    "BroadcastPicture": ("broadcast", "BroadcastPicture"),
    "TrainingPlot": ("training", "TrainingPlot"),
    "progress": ("training", "progress"),
    "loss_surface": ("surface", "loss_surface"),
    "optimizer_path": ("surface", "optimizer_path"),
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
