"""Small example graphs shared by the viz tests (and run verbatim inside the browser-test notebook).

Uses tinygrad_course when its Tensor exists, PyTorch otherwise: both follow the same graph API.
"""

GRAPH_CELL = '''\
try:
    import tinygrad_course as fw
    fw.tensor
except AttributeError:  # the framework's Tensor is not there yet: PyTorch has the same graph API
    import torch as fw
import numpy as np
from tinygrad_course import viz

x = fw.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
W = fw.tensor(np.array([[0.5, -0.2], [0.1, 0.4], [-0.3, 0.2]], dtype=np.float32), requires_grad=True)
b = fw.tensor(np.array([0.1, -0.1], dtype=np.float32), requires_grad=True)
z = x @ W + b
a = z.sigmoid()
loss = (a * a).mean()
g = viz.graph(loss)
g
'''


def run_example():
    """Execute GRAPH_CELL here and return its Graph."""
    ns = {}
    exec(GRAPH_CELL, ns)
    return ns["g"]


def frameworks():
    """Framework names to run graph tests on: PyTorch (reference) and tc once its Tensor exists."""
    names = []
    try:
        import torch  # noqa: F401
        names.append("torch")
    except ImportError:
        pass
    try:
        import tinygrad_course as tc
        tc.tensor  # noqa: B018
        names.append("tc")
    except (ImportError, AttributeError):
        pass
    return names


def fw(name):
    """The module (torch or tinygrad_course) for a framework name."""
    if name == "torch":
        import torch
        return torch
    import tinygrad_course
    return tinygrad_course


def record(fw_name, output, nodes):
    """The engine's real backward order, recorded independently of tc.viz (node objects in order)."""
    if fw_name == "tc":
        from tinygrad_course.autograd.engine import record_backward
        with record_backward() as rec:
            output.backward(retain_graph=True)
        return [r[0] for r in rec]
    order, handles = [], []
    for n in nodes:
        handles.append(n.register_prehook(lambda grad_outputs, n=n: order.append(n)))
    try:
        output.backward(retain_graph=True)
    finally:
        for h in handles:
            h.remove()
    return order
