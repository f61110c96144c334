"""Storage explorer, broadcasting picture, training plot, loss surface, and the lazy package import."""
import math
import subprocess
import sys

import numpy as np
import pytest

from tinygrad_course import viz
from tinygrad_course.viz.broadcast_view import broadcast_shape
from tinygrad_course.viz.storage_view import addresses
from viz_examples import frameworks, fw


def test_viz_import_is_light_and_names_are_functions():
    code = ("import sys, tinygrad_course.viz as v; "
            "assert 'anywidget' not in sys.modules and 'matplotlib' not in sys.modules; "
            "import tinygrad_course.viz.graph_view; assert callable(v.graph) and not hasattr(v.graph, '__path__')")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_addresses_follow_offset_plus_index_times_stride():
    a = np.arange(12).reshape(3, 4)
    for view in (a, a.T, a[1:, ::2], a[:, 2]):
        strides = tuple(s // a.itemsize for s in view.strides)
        offset = (view.__array_interface__["data"][0] - a.__array_interface__["data"][0]) // a.itemsize
        assert np.array_equal(a.reshape(-1)[addresses(view.shape, strides, offset)], view)


@pytest.mark.parametrize("name", frameworks())
def test_storage_view_of_transpose_and_slice(name):
    F = fw(name)
    x = F.arange(6.0).reshape(2, 3)
    s = viz.storage(x, x.T, x[:, 1], names=["x", "x.T", "x[:, 1]"])
    text = repr(s)
    assert "x.T: shape (3, 2) strides (1, 3) offset 0" in text
    assert "x[:, 1]: shape (2,) strides (3,) offset 1" in text
    assert s.storage.size == 6 and list(s.storage) == [0, 1, 2, 3, 4, 5]
    html = s._repr_html_()
    assert "not contiguous" in html and "storage[1 + 1*3] = storage[4]" in html


def test_storage_view_names_come_from_caller_variables():
    a = np.arange(4.0)
    assert "a: shape (4,)" in repr(viz.storage(a))


def test_broadcast_picture_marks_stretched_dims():
    b = viz.broadcast((3, 1), (1, 4))
    assert repr(b) == "(3, 1) + (1, 4) -> (3, 4)"
    html = b._repr_html_()
    assert html.count("stride 0") >= 2 and "result (3, 4)" in html
    assert broadcast_shape((2, 1, 3), (4, 1)) == (2, 4, 3)
    with pytest.raises(ValueError, match="dimension -1 has sizes \\[3, 4\\]"):
        viz.broadcast((2, 3), (4,))


def test_training_plot_records_and_renders(capsys):
    plot = viz.TrainingPlot(total_steps=20, every=0)
    for i in range(20):
        plot.step(loss=math.exp(-i / 5), accuracy=i / 20)
    plot.epoch(val_loss=0.2, val_accuracy=0.8)
    assert plot.n_step == 20 and plot.epochs["val_loss"] == [(20, 0.2)]
    out = capsys.readouterr().out  # outside a notebook it prints progress lines
    assert "step 20/20, epoch 1" in out
    bundle = plot._repr_mimebundle_()
    assert "<progress value=\"20\" max=\"20\"" in bundle["text/html"] and "data:image/png;base64," in bundle["text/html"]
    assert len(plot.figure().axes) == 2


def test_progress_yields_everything():
    assert list(viz.progress(range(5), desc="epoch")) == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("name", frameworks())
def test_optimizer_path_descends_and_surface_draws(name):
    F = fw(name)
    f = lambda x, y: x ** 2 + 10 * y ** 2  # noqa: E731
    try:
        F.optim.SGD  # noqa: B018
    except (ImportError, AttributeError) as exc:
        pytest.skip(f"{name}.optim.SGD is not available: {exc}")
    path = viz.optimizer_path(f, lambda ps: F.optim.SGD(ps, lr=0.05), (1.5, 1.0), steps=30, framework=F)
    assert path.shape == (31, 2)
    assert f(*path[-1]) < 0.05 * f(*path[0])
    fig = viz.loss_surface(f, paths={"SGD": path}, log=True)
    ax = fig.axes[0]
    assert ax.get_legend().get_texts()[0].get_text() == "SGD (30 steps)"
