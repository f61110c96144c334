"""Module collapsing on a duck-typed graph whose nodes carry ``.modules`` (the tc graph contract)."""
import numpy as np
import pytest

from tinygrad_course import viz

from tinygrad_course.viz.graph_view import Graph
from tinygrad_course.viz.names import collect_names


class FakeTensor:
    def __init__(self, value, grad_fn=None, requires_grad=False):
        self.value = np.asarray(value, dtype=np.float32)
        self.shape, self.dtype, self.device = self.value.shape, "float32", "cpu"
        self.grad_fn, self.requires_grad, self.grad = grad_fn, requires_grad, None
        self.is_leaf = grad_fn is None

    def detach(self):
        return self

    def numpy(self):
        return self.value


class FakeFn:
    def __init__(self, name, nexts=(), modules=(), variable=None, seq=0):
        self._name, self.next_functions, self.modules, self.variable = name, tuple(nexts), modules, variable
        self.saved_tensors, self._seq = (), seq

    def name(self):
        return self._name

    def _sequence_nr(self):
        return self._seq


class FakeModule:
    def __init__(self, **children):
        self.children, self.params = children, {}

    def named_modules(self, prefix=""):
        yield prefix, self
        for name, child in self.children.items():
            yield from child.named_modules(f"{prefix}.{name}" if prefix else name)

    def named_parameters(self):
        for mname, m in self.named_modules():
            for pname, p in m.params.items():
                yield (f"{mname}.{pname}" if mname else pname), p


def mlp_graph():
    """loss <- fc2(relu(fc1(x))) with fc1/fc2 as modules inside a root module (named by its class)."""
    fc1, fc2 = FakeModule(), FakeModule()
    root = FakeModule(fc1=fc1, fc2=fc2)
    seq = iter(range(100))
    for m in (fc1, fc2):
        m.params = {"weight": FakeTensor([[1.0]], requires_grad=True), "bias": FakeTensor([0.0], requires_grad=True)}
    acc = {id(p): FakeFn("AccumulateGrad", variable=p) for m in (fc1, fc2) for p in m.params.values()}

    def linear(inp, m):
        mm = FakeFn("MmBackward0", [(inp, 0), (acc[id(m.params["weight"])], 0)], (root, m), seq=next(seq))
        return FakeFn("AddBackward0", [(mm, 0), (acc[id(m.params["bias"])], 0)], (root, m), seq=next(seq))

    h = linear(None, fc1)
    r = FakeFn("ReluBackward0", [(h, 0)], (root,), seq=next(seq))
    out = linear(r, fc2)
    loss = FakeFn("MeanBackward0", [(out, 0)], (), seq=next(seq))
    return FakeTensor(1.0, grad_fn=loss), root


def make(collapse):
    loss, root = mlp_graph()
    return Graph(loss, collect_names(model=root), collapse=collapse, steps=False), loss


def titles(data):
    return sorted(n["title"] for n in data["nodes"])


def test_collapsed_model_shows_one_box_per_submodule():
    g, _ = make(collapse=True)
    data = g.data()
    boxes = [n for n in data["nodes"] if n["kind"] == "module"]
    assert [b["title"] for b in boxes] == ["fc2 (FakeModule)", "fc1 (FakeModule)"]
    assert titles(data) == sorted(["output", "MeanBackward0", "ReluBackward0", "fc1 (FakeModule)",
                                   "fc2 (FakeModule)"])
    assert boxes[0]["lines"] == ["2 ops, 2 params (click to expand)"]
    # edges between boxes are merged: output -> Mean -> fc2 -> Relu -> fc1
    assert len(data["edges"]) == 4
    assert {m["path"]: m["expanded"] for m in data["modules"]} == {"FakeModule": True, "fc1": False, "fc2": False}


def test_expand_and_collapse_again():
    g, _ = make(collapse=True)
    g.expand("fc1")
    data = g.data()
    assert "fc1.weight" in titles(data) and "fc2 (FakeModule)" in titles(data)
    assert sum(n["kind"] == "module" for n in data["nodes"]) == 1
    g.collapse("fc1")
    assert "fc1.weight" not in titles(g.data())


def test_uncollapsed_graph_names_parameters_and_modules():
    g, _ = make(collapse=False)
    data = g.data()
    assert {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"} <= set(titles(data))
    mm = next(n for n in g.model.nodes if n.title == "MmBackward0")
    assert mm.details["modules"] in ("FakeModule > fc1 (FakeModule)", "FakeModule > fc2 (FakeModule)")
    assert g.expanded is None


def test_steps_map_onto_module_boxes():
    loss, root = mlp_graph()
    fns = []
    stack = [loss.grad_fn]
    while stack:  # a plausible engine order: depth-first from the output
        fn = stack.pop()
        fns.append(fn)
        stack += [c for c, _ in fn.next_functions if c is not None]
    records = [(fn, (None,), tuple(None for _ in fn.next_functions)) for fn in fns]
    g = Graph(loss, collect_names(model=root), collapse=True, trace=records)
    data = g.data()
    ids = {n["id"] for n in data["nodes"]}
    assert len(data["steps"]) == len(fns)
    assert all(s["node"] in ids for s in data["steps"])
    assert data["steps"][2]["node"].startswith("m:")  # fc2's AddBackward0 is drawn as fc2's box


def test_real_tc_model_collapses_into_submodule_boxes():
    tc = pytest.importorskip("tinygrad_course")
    try:
        nn = tc.nn
        nn.Module, nn.Linear  # noqa: B018
    except (ImportError, AttributeError) as exc:
        pytest.skip(f"tc.nn is not available yet: {exc}")

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(3, 4), nn.Linear(4, 2)

        def forward(self, x):
            return self.fc2(self.fc1(x).relu())

    model = MLP()
    loss = model(tc.ones(5, 3)).pow(2).mean()
    g = viz.graph(loss, model=model, collapse=True)
    shown = titles(g.data())
    assert "fc1 (Linear)" in shown and "fc2 (Linear)" in shown and "fc1.weight" not in shown
    g.expand("fc1")
    assert "fc1.weight" in titles(g.data())
