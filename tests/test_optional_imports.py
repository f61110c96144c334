"""Importing the package's modules pulls in none of the optional heavy dependencies: the MPI and NCCL backends,
the anywidget front end and the plots import mpi4py, cupy, anywidget and matplotlib only when used."""
import json
import subprocess
import sys

HEAVY = ["mpi4py", "cupy", "anywidget", "ipywidgets", "traitlets", "matplotlib", "torch"]
MODULES = ["tinygrad_course", "tinygrad_course.distributed.process_group", "tinygrad_course.distributed.nccl_backend",
           "tinygrad_course.distributed.mpi_backend", "tinygrad_course.nn.parallel", "tinygrad_course.utils.data",
           "tinygrad_course.viz.graph_view", "tinygrad_course.viz.graph_widget", "tinygrad_course.viz.storage_view",
           "tinygrad_course.viz.surface_plot", "tinygrad_course.viz.training_plot", "tinygrad_course.profiler",
           "tinygrad_course.amp.grad_scaler", "tinygrad_course.serialization", "tinygrad_course.optim.lr_scheduler"]

PROBE = f"""
import importlib, json, sys
for name in {MODULES!r}:
    importlib.import_module(name)
print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))
"""


def test_importing_modules_loads_no_heavy_optional_dependency():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=120)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_graph_widget_class_is_defined_on_first_use():
    probe = ("import sys, tinygrad_course.viz.graph_widget as gw; before = 'anywidget' in sys.modules; "
             "cls = gw.GraphWidget; import anywidget; "
             "print(before, issubclass(cls, anywidget.AnyWidget), gw.widget_class() is cls, cls.__module__, cls.__name__)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.split() == ["False", "True", "True", "tinygrad_course.viz.graph_widget", "GraphWidget"]
