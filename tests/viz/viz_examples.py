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

# one tensor feeding seven consumers (cubed, exp, sin, and an attention-like p @ p.T): crowded labels
FAN_OUT_CELL = '''\
try:
    import tinygrad_course as fw
    fw.tensor
except AttributeError:
    import torch as fw
import numpy as np
from tinygrad_course import viz

p = fw.tensor(np.random.default_rng(1).uniform(-1, 1, (2, 3)).astype(np.float32), requires_grad=True)
out = (p * p * p + p.exp() + p.sin()).sum() + ((p @ p.T).softmax(-1) @ p).sum()
g = viz.graph(out)
g
'''


def run_example(cell=GRAPH_CELL):
    """Execute ``cell`` (GRAPH_CELL or FAN_OUT_CELL) here and return its Graph."""
    ns = {}
    exec(cell, ns)
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


def fan_out_examples(F):
    """``{name: (output, kwargs for viz.graph)}``: graphs where tensors feed several consumers.

    Built with framework module ``F`` (torch or tinygrad_course); names come from this function's
    variables, as they would from a notebook cell.
    """
    import numpy as np

    def t(shape, seed, grad=True):
        values = np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)
        return F.tensor(values, requires_grad=grad)

    out = {}
    x = t((3,), 0)
    y = x * x + x.exp()
    out["x*x + exp(x)"] = (y.sum(), {})

    h = x.relu()
    total = h.sum() + (h * 2).sum()
    out["relu used twice"] = (total, {})

    p = t((2, 3), 1)
    uses4 = (p * p * p + p.exp() + p.sin()).sum()
    out["tensor used four times"] = (uses4, {})

    inp, target = t((4, 3), 2, grad=False), t((4, 3), 3, grad=False)
    W, b = t((3, 3), 4), t((3,), 5)
    h1 = (inp @ W + b).tanh()
    h2 = (h1 @ W + b).tanh()
    mlp_loss = ((h2 - target) ** 2).mean()
    out["MLP reusing its weight"] = (mlp_loss, {})

    q = t((4, 3), 6)
    scores = (q @ q.T / 3 ** 0.5).softmax(-1)
    attn = (scores @ q).sum()
    out["attention-like x @ x.T"] = (attn, {})

    a, c = t((), 7), t((), 8)
    ac = a * c
    d = ac + a
    L = d ** 2
    out["curriculum c = a*b; d = c + a"] = (L, {})

    F.manual_seed(0)
    model = F.nn.Sequential(F.nn.Linear(3, 4), F.nn.ReLU(), F.nn.Linear(4, 4), F.nn.Tanh(), F.nn.Linear(4, 2))
    logits = model(inp)
    ce = F.nn.functional.cross_entropy(logits, F.tensor(np.array([0, 1, 1, 0])))
    out["Sequential MLP"] = (ce, {"model": model, "collapse": False})
    out["Sequential MLP, collapsed"] = (ce, {"model": model, "collapse": True})
    return out
