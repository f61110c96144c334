"""Chapter 02d's engine as the learner's (exercises 02d.2 and 02d.3): `Function.apply` records the calls of the learner's ops,
`Node.apply` runs their nodes' backward steps, `AccumulateGrad.apply` writes the leaves' gradients; what the
exercise leaves out (hooks, create_graph, anomaly detection, the reference's own ops) stays the reference's, and a
wrong engine is named, never repaired."""
import numpy as np
import pytest

import tinygrad_course as tc
from tinygrad_course import seams
from tinygrad_course.autograd import engine
from tinygrad_course.build import session
from tinygrad_course.build.checks import verdict
from tinygrad_course.build.components import BY_NAME
from tinygrad_course.build.probes_engine import engine_probe
from tinygrad_course.grading.exercises.ch02d_engine import ENGINE_OPS
from tinygrad_course.grading.learner_op import runner

import build_helpers
from build_helpers import solution_cell

ENGINE = ("Function.apply", "Node.apply", "AccumulateGrad.apply")


def _solution():
    namespace = {"tc": tc, "np": np, "Op": engine.Op, "grad_accumulator": engine.grad_accumulator}
    exec(solution_cell("02d_engine.ipynb", "ex02d_2"), namespace)
    exec(solution_cell("02d_engine.ipynb", "ex02d_3"), namespace)
    return {"Function.apply": namespace["Function"], "Node.apply": namespace["Node"],
            "AccumulateGrad.apply": namespace["AccumulateGrad"], "AccumulateGrad.__init__": namespace["AccumulateGrad"]}


@pytest.fixture
def installed():
    """The solution's engine and the exercise-shaped ops, installed as build mode installs them (guarded)."""
    seams.uninstall()
    seams.reset_calls()
    for name, op in ENGINE_OPS.items():
        seams.install(name, session._guarded(runner(op, name), name, "a test", seams.reference(name)))
    for name, obj in _solution().items():
        component = BY_NAME[name]
        fallback = seams.reference(name) if component.pure else None
        seams.install(name, session._guarded(component.adapt(obj), name, "a test", fallback))
    yield
    seams.uninstall()
    seams.reset_calls()


def test_the_engine_records_and_runs_the_learners_ops(installed, monkeypatch):
    recorded = []
    monkeypatch.setattr(engine, "_record", lambda *args: recorded.append(args) or pytest.fail("reference recorded"))
    a = tc.tensor([[1.0, -2.0, 0.5], [3.0, 0.0, -1.0]], requires_grad=True)
    b = tc.tensor([2.0, 0.5, -1.0], requires_grad=True)
    y = ((a * b + 1.5).tanh() ** 2).sum()
    assert y.grad_fn.name() == "SumBackward0" and not recorded
    node = y.grad_fn.next_functions[0][0]
    assert node.name() == "PowBackward0" and node.input_metadata[1] is None
    assert seams.calls()["Function.apply"] == 5
    y.backward()  # (the ops' backward calls the ops again, recorded by Function.apply under no_grad)
    calls = seams.calls()
    assert calls["Node.apply"] == 5 and calls["AccumulateGrad.apply"] == 2
    an, bn = a.detach().numpy(), b.detach().numpy()
    t = np.tanh(an * bn + 1.5)
    ga = 2 * t * (1 - t * t)
    np.testing.assert_allclose(a.grad.numpy(), ga * bn, rtol=1e-5)
    np.testing.assert_allclose(b.grad.numpy(), (ga * an).sum(0), rtol=1e-5)
    with pytest.raises(RuntimeError, match="a second time"):
        y.backward()


def test_what_the_engine_does_not_cover_stays_the_references(installed):
    w = tc.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    w.register_hook(lambda g: seen.append(g) or g * 10)  # a leaf with a hook: the reference accumulates
    (w * w).sum().backward()
    assert seen and w.grad.tolist() == [20.0, 40.0] and "AccumulateGrad.apply" not in seams.calls()
    v = tc.tensor([0.5, -1.0], dtype=tc.float64, requires_grad=True)
    g, = tc.autograd.grad((v * v * v).sum(), v, create_graph=True)  # create_graph: the reference's step
    second, = tc.autograd.grad(g.sum(), v)
    np.testing.assert_allclose(second.numpy(), 6 * v.detach().numpy())
    with pytest.warns(UserWarning, match="Anomaly"), tc.autograd.detect_anomaly():  # the reference records (traces)
        before = seams.calls().get("Function.apply", 0)
        (v * 2.0).sum().backward()
        assert seams.calls().get("Function.apply", 0) == before
    x = tc.tensor([1, 2])  # integer tensors: not the learner's ops, so not their engine
    assert (x * 2).tolist() == [2, 4]


def test_every_leafs_node_is_made_by_the_learners_init_and_the_reference_is_back_after(installed):
    w = tc.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    assert engine.AccumulateGrad.__init__ is not seams.reference("AccumulateGrad.__init__")  # the slot is theirs
    acc = engine.grad_accumulator(w)
    assert acc is engine.grad_accumulator(w) and acc.variable is w  # made once per leaf, then shared
    assert acc.next_functions == () and acc._seq == float("inf") and w.grad.tolist() == [2.0, 4.0]
    seams.uninstall()
    assert engine.AccumulateGrad.__init__ is seams.reference("AccumulateGrad.__init__")


def test_an_accumulate_grad_that_runs_last_fails_its_check_naming_the_sequence_number():
    cell = solution_cell("02d_engine.ipynb", "ex02d_2") + "\n\n" + solution_cell("02d_engine.ipynb", "ex02d_3")
    wrong = cell.replace('self._seq = float("inf")', "self._seq = 0")
    assert wrong != cell
    namespace = {"tc": tc, "np": np, "Op": engine.Op, "grad_accumulator": engine.grad_accumulator}
    exec(wrong, namespace)
    problem = verdict("AccumulateGrad.__init__", namespace)
    assert problem is not None and "AccumulateGrad(w)._seq" in problem, problem


def test_the_probe_sees_the_learners_engine():
    seams.uninstall()
    want = engine_probe()
    for name, obj in _solution().items():
        seams.install(name, BY_NAME[name].adapt(obj))
    try:
        got = engine_probe()
    finally:
        seams.uninstall()
    assert set(got) == set(want)
    for key in want:
        np.testing.assert_allclose(got[key], want[key], rtol=1e-6, err_msg=key)


def test_a_wrong_node_step_is_named_and_the_reference_takes_over(installed):
    class Node:
        def apply(self, *grad_outputs):  # forgets to sum a broadcast gradient back
            grads = self._forward_cls.backward(self, *grad_outputs)
            return tuple(g for g, m in zip(grads, self.input_metadata) if m is not None)

    seams.install("Node.apply", session._guarded(BY_NAME["Node.apply"].adapt(Node), "Node.apply", "a test",
                                                 seams.reference("Node.apply")))
    session._state.setdefault("loaded", [])
    session._state.setdefault("refused", {})
    a = tc.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = tc.tensor([1.0, -1.0], requires_grad=True)
    with pytest.warns(UserWarning, match=r"your Node.apply .* returned a gradient of shape \(2, 2\)"):
        (a * b).sum().backward()
    assert b.grad.tolist() == [4.0, 6.0] and "Node.apply" not in seams.installed()


def test_a_wrong_recording_is_left_out_and_the_reference_records(installed):
    class Function:
        @classmethod
        def apply(cls, *args):  # records nothing
            arrays = [a.detach().numpy() if isinstance(a, tc.Tensor) else a for a in args]
            return tc.from_numpy(cls.forward(cls._backward_cls(), *arrays))

    seams.install("Function.apply", session._guarded(BY_NAME["Function.apply"].adapt(Function), "Function.apply",
                                                     "a test", seams.reference("Function.apply")))
    session._state.setdefault("loaded", [])
    session._state.setdefault("refused", {})
    a = tc.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="your Function.apply .* whose grad_fn is NoneType"):
        y = a * a
    assert y.grad_fn.name() == "MulBackward0" and "Function.apply" not in seams.installed()
    y.sum().backward()
    assert a.grad.tolist() == [2.0, 4.0]


def test_a_wrong_op_inside_the_learners_recording_is_the_ops_fault(installed):
    class Mul(ENGINE_OPS["Mul"]):
        @staticmethod
        def forward(ctx, a, b):
            return (a * b).sum()  # the wrong shape

    seams.install("Mul", session._guarded(runner(Mul, "Mul"), "Mul", "a test", seams.reference("Mul")))
    session._state.setdefault("loaded", [])
    session._state.setdefault("refused", {})
    a = tc.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match=r"your Mul .* returned an array of shape \(\)"):
        y = a * a
    assert y.tolist() == [1.0, 4.0] and "Mul" not in seams.installed() and "Function.apply" in seams.installed()



def test_a_view_recorded_by_the_learners_engine_is_a_view_of_its_input(installed, monkeypatch):
    ns = {"np": np, "tc": tc, "Op": engine.Op}
    exec(solution_cell("02b_ops.ipynb", "ex02b_5"), ns)
    seams.install("Transpose", session._guarded(runner(ns["Transpose"], "Transpose"), "Transpose", "a test",
                                                seams.reference("Transpose")))
    monkeypatch.setattr(engine, "_record", lambda *args: pytest.fail("the reference recorded"))
    w = tc.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    wt = w.T
    assert wt.grad_fn.name() == "TBackward0" and seams.calls()["Function.apply"] == 1
    assert wt._base is w and wt._version is w._version  # the framework made the learner's result a view
    exec(solution_cell("02b_ops.ipynb", "ex02b_7"), ns)
    seams.install("View", session._guarded(runner(ns["View"], "View"), "View", "a test", seams.reference("View")))
    col = w.view(6).unsqueeze(1).squeeze(1)
    assert col.grad_fn.name() == "SqueezeBackward1" and col._base is w and "View" in seams.installed()
    (wt * 3.0).sum().backward()
    assert w.grad.tolist() == [[3.0] * 3] * 2
    loss = (wt * wt).sum()  # saves wt at w's version
    with tc.no_grad():
        w.mul_(2.0)
    assert wt.detach().numpy().tolist() == [[2.0, 8.0], [4.0, 10.0], [6.0, 12.0]]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


class _LogSoftmax(tc.autograd.Function):  # chapter 05's shape: forward and backward on tensors, its output saved
    @staticmethod
    def forward(ctx, x, dim):
        out = x - x.exp().sum(dim, keepdim=True).log()
        ctx.save_for_backward(out)
        ctx.dim = dim
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return grad - out.exp() * grad.sum(ctx.dim, keepdim=True), None


def test_a_custom_function_is_recorded_by_the_learners_engine(installed, monkeypatch):
    _LogSoftmax.__module__ = "a_learners_notebook"
    recorded = []
    real = engine._record
    monkeypatch.setattr(engine, "_record", lambda *args: recorded.append(args[0]) or real(*args))
    x = tc.tensor([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]], requires_grad=True)
    y = _LogSoftmax.apply(x, 1)
    assert y.grad_fn.name() == "_LogSoftmaxBackward" and not recorded
    assert y.grad_fn.input_metadata[1] is None and y.grad_fn._learner_backward is not None
    weights = tc.tensor([[1.0, 0.0, 2.0], [0.5, 0.5, 0.0]])
    (y * weights).sum().backward()
    assert seams.calls()["Node.apply"] >= 1
    p = np.exp(y.detach().numpy())
    expected = weights.numpy() - p * weights.numpy().sum(1, keepdims=True)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)
    z = _LogSoftmax.apply(x, 1)
    loss = (z * 2.0).sum()
    with tc.no_grad():
        z.add_(1.0)  # the saved output changed in place: its backward must refuse, as the reference's does
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_custom_functions_the_learners_engine_does_not_record_stay_the_references(installed):
    class Pair(tc.autograd.Function):  # two outputs
        @staticmethod
        def forward(ctx, x):
            return x * 2.0, x * 3.0

        @staticmethod
        def backward(ctx, ga, gb):
            return ga * 2.0 + gb * 3.0

    class Scale(tc.autograd.Function):  # changes its input in place
        @staticmethod
        def forward(ctx, x):
            x.mul_(2.0)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2.0

    class Broken(tc.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            raise ValueError("the Function's own mistake")

    for fn in (Pair, Scale, Broken):
        fn.__module__ = "a_learners_notebook"
    x = tc.tensor([1.0, 2.0], requires_grad=True)
    a, b = Pair.apply(x)
    (a + b).sum().backward()
    assert x.grad.tolist() == [5.0, 5.0] and a.grad_fn.name() == "PairBackward"
    leaf = tc.tensor([1.0, 2.0], requires_grad=True)
    v = leaf * 1.0
    out = Scale.apply(v)
    assert out is v and v.tolist() == [2.0, 4.0] and v._version[0] == 2  # forward ran once (mul_, mark_dirty)
    out.sum().backward()
    assert leaf.grad.tolist() == [2.0, 2.0]
    with pytest.raises(ValueError, match="the Function's own mistake"):
        Broken.apply(x)
    assert "Function.apply" in seams.installed()  # the learner's engine is not blamed for it


def test_a_lab_step_on_the_solutions_components_records_nothing_in_the_reference_engine(tmp_path, monkeypatch):
    """The lab's network, loss (chapter 05's custom LogSoftmax and nll_loss, chapter 01's pick) and backward with
    the released solutions' ops, views and engine: every node is recorded by the learner's Function.apply (the
    loss's last node divides the picked sum by the number of counted targets)."""
    from tinygrad_course.build.milestone_runs import lab_loss
    from tinygrad_course.build.notebooks import extract
    from tinygrad_course.build.package import load
    from tinygrad_course.build.runs import MILESTONES

    extract(build_helpers.ROOT / "solutions", tmp_path / "mytorch")
    needed = MILESTONES["lab"][2]
    seams.uninstall()
    session.install([item for item in load(tmp_path / "mytorch") if item.component.name in needed])
    try:
        tc.manual_seed(0)
        model = tc.nn.Sequential(tc.nn.Linear(8, 5), tc.nn.Tanh(), tc.nn.Linear(5, 3))
        monkeypatch.setattr(engine, "_record", lambda *args: pytest.fail(f"the reference recorded {args[0].name()}"))
        loss = lab_loss(model(tc.randn(4, 8)), tc.tensor([0, 2, 1, 2]))
        loss.backward()
    finally:
        seams.uninstall()
    assert loss.grad_fn.name() == "DivBackward0" and all(p.grad is not None for p in model.parameters())


def test_sqrt_is_the_learners_pow_to_one_half_under_pytorchs_node_name(installed, monkeypatch):
    monkeypatch.setattr(engine, "_record", lambda *args: pytest.fail("the reference engine recorded a node"))
    x = tc.tensor([0.25, 4.0, 9.0], requires_grad=True)
    y = x.sqrt()
    assert y.grad_fn.name() == "SqrtBackward0" and seams.calls()["Pow"] == 1
    y.sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), [0.5, 2.0, 3.0])
    np.testing.assert_allclose(x.grad.numpy(), 0.5 / np.sqrt([0.25, 4.0, 9.0]), rtol=1e-6)
    calls = seams.calls()["Pow"]
    assert tc.tensor([4], dtype=tc.int64).sqrt().item() == 2.0 and seams.calls()["Pow"] == calls  # int: the reference


def test_a_gpt_step_on_the_solutions_components_records_nothing_in_the_reference_engine(tmp_path, monkeypatch):
    """A step of chapter 10's GPT (a small config) on the released solutions' pieces and earlier components, as
    the GPT milestone installs them: split's pieces (the learner's Narrow), q.view of a strided slice (View),
    reshape of the transposed heads (Clone, then View) and the rest are recorded by the learner's Function.apply."""
    from tinygrad_course.build import gpt_milestone as gm
    from tinygrad_course.build.notebooks import extract
    from tinygrad_course.build.package import load
    from tinygrad_course.optim import AdamW

    extract(build_helpers.ROOT / "solutions", tmp_path / "mytorch")
    pieces_dir = tmp_path / "ch10"
    pieces_dir.mkdir()
    assert gm._write_pieces(build_helpers.ROOT / "solutions", pieces_dir) == []
    seams.uninstall()
    session.install([item for item in load(tmp_path / "mytorch") if item.component.name in gm.EARLIER])
    names = set()
    try:
        pieces = dict(gm.REFERENCE)
        for name, _, defines in gm.PIECES:
            pieces[name] = getattr(gm._import_file(pieces_dir / f"{name}.py", f"_test_ch10_{name}"), defines)
        gm._wire(pieces)
        tc.manual_seed(0)
        model = pieces["GPT"](11, block_size=8, n_embd=8, n_head=2, n_layer=1)
        optimizer = AdamW(pieces["param_groups"](model, 0.1), lr=1e-3)
        monkeypatch.setattr(engine, "_record", lambda *args: pytest.fail(f"the reference recorded {args[0].name()}"))
        idx = tc.tensor(np.arange(16).reshape(2, 8) % 11)
        _, loss = model(idx, tc.tensor((np.arange(16).reshape(2, 8) + 1) % 11))
        stack, seen = [loss.grad_fn], set()
        while stack:
            node = stack.pop()
            if node is not None and id(node) not in seen:
                seen.add(id(node))
                names.add(node.name())
                stack.extend(f for f, _ in node.next_functions)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    finally:
        seams.uninstall()
    assert {"SliceBackward0", "ViewBackward0", "CloneBackward0", "UnsafeViewBackward0"} <= names
    assert all(p.grad is not None for p in model.parameters())


# ---- exercise 02d.1's Tensor.backward: the plain call is the learner's ----------------------------------------
def _backward_cell():
    namespace = {"tc": tc, "np": np, "grad_accumulator": engine.grad_accumulator}
    exec(solution_cell("02d_engine.ipynb", "ex02d_1"), namespace)
    return namespace


@pytest.fixture
def learner_backward():
    """The solution's Tensor.backward (with its cell's root_gradient and backward_pass), installed as build mode
    installs a method slot (guarded, its calls counted)."""
    seams.uninstall()
    seams.reset_calls()
    cell = _backward_cell()
    for name, defines in (("Tensor.backward", "backward"), ("backward_pass", "backward_pass"),
                          ("root_gradient", "root_gradient")):
        component = BY_NAME[name]
        seams.install(name, session._guarded(component.adapt(cell[defines]), name, "a test",
                                             seams.reference(name) if component.pure else None,
                                             name if seams.is_slot(name) else None))
    yield
    seams.uninstall()
    seams.reset_calls()


def test_a_plain_backward_is_the_learners_without_the_reference_entry(learner_backward, monkeypatch):
    for name in ("run_backward", "backward", "_count_dependencies", "_callbacks_at_end"):
        monkeypatch.setattr(engine, name, lambda *args, _name=name, **kwargs: pytest.fail(f"the reference's {_name} ran"))
    w = tc.tensor([1.0, -2.0, 0.5], requires_grad=True)
    x = tc.tensor([[0.5, 1.0, 2.0], [1.0, -1.0, 0.0]])
    (x * w).tanh().sum().backward()
    want = ((1 - np.tanh(x.numpy() * w.detach().numpy()) ** 2) * x.numpy()).sum(0)
    np.testing.assert_allclose(w.grad.numpy(), want, rtol=1e-6)
    (w * 3.0).backward(tc.tensor([1.0, 10.0, 100.0]))  # a given gradient, accumulated
    np.testing.assert_allclose(w.grad.numpy(), want + [3.0, 30.0, 300.0], rtol=1e-6)
    leaf = tc.tensor([2.0, 3.0], requires_grad=True)
    leaf.backward(tc.ones(2))  # a leaf's own pass: its AccumulateGrad
    assert leaf.grad.tolist() == [1.0, 1.0] and not leaf.grad.requires_grad
    kept = (w * w).sum()
    kept.backward(retain_graph=True)
    kept.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        kept.backward()
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (w * 2.0).backward()
    calls = seams.calls()
    assert calls["Tensor.backward"] == 7 and calls["backward_pass"] == calls["root_gradient"] == 7
    assert "Tensor.backward" in seams.installed()


def test_calls_beyond_the_plain_one_stay_the_references(learner_backward, monkeypatch):
    ran = []
    reference = engine.run_backward
    monkeypatch.setattr(engine, "run_backward", lambda *args, **kwargs: ran.append(1) or reference(*args, **kwargs))
    w = tc.tensor([1.0, 2.0], requires_grad=True)
    h = w * 2.0
    h.register_hook(lambda g: g * 10.0)  # a hook on an intermediate tensor
    (h * h).sum().backward()
    assert w.grad.tolist() == [80.0, 160.0]
    w.grad = None
    h = w * 2.0
    h.retain_grad()
    (h * h).sum().backward()
    assert h.grad.tolist() == [4.0, 8.0] and w.grad.tolist() == [8.0, 16.0]
    v = tc.tensor([1.0, 2.0], dtype=tc.float64, requires_grad=True)
    (v ** 3).sum().backward(create_graph=True)
    (v.grad * 1.0).sum().backward(inputs=[v])  # d/dv of 3 v^2: 6 v, added to 3 v^2
    assert v.grad.detach().tolist() == [9.0, 24.0]
    (w * 1.0).sum().backward(tc.tensor(2.0, dtype=tc.float64))  # a gradient of another dtype: cast by the engine
    hooked = tc.tensor([1.0], requires_grad=True)
    hooked.register_hook(lambda g: g * 0.5)  # a hook on a leaf
    (hooked * 4.0).sum().backward()
    assert hooked.grad.tolist() == [2.0]
    with pytest.warns(UserWarning, match="Anomaly Detection"), tc.autograd.detect_anomaly():
        (w * w).sum().backward()
    assert len(ran) == 7 and seams.calls()["Tensor.backward"] == 7


def test_the_probe_sees_the_learners_tensor_backward():
    from tinygrad_course.build.checks import in_framework

    seams.uninstall()
    assert in_framework("Tensor.backward", _backward_cell()["backward"]) is None

    def without_no_grad(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        cell["backward_pass"](self.grad_fn, cell["root_gradient"](self, gradient), retain_graph)  # misses leaves

    cell = _backward_cell()
    assert in_framework("Tensor.backward", without_no_grad) is not None


# ---- exercise 02d.2's saved-tensor API: every node's ------------------------------------------------------------
NODE_METHODS = ("Node.save_for_backward", "Node.saved_tensors", "Node.saved_output", "Node.release_variables")


@pytest.fixture
def learner_node():
    """The solution's Node methods, installed as build mode installs method slots (guarded, counted)."""
    seams.uninstall()
    seams.reset_calls()
    node = _solution()["Node.apply"]
    for name in NODE_METHODS:
        component = BY_NAME[name]
        seams.install(name, session._guarded(component.adapt(node), name, "a test",
                                             seams.reference(name) if component.pure else None, name))
    yield
    seams.uninstall()
    seams.reset_calls()


def test_an_ops_own_output_is_read_through_the_learners_saved_output(learner_node):
    x = tc.tensor([1.0, 2.0, 3.0], dtype=tc.float64, requires_grad=True)
    y = x.cumprod(0)
    y.sum().backward(retain_graph=True)  # CumprodBackward0 reads ctx.saved_output
    assert seams.calls()["Node.saved_output"] == 1
    assert x.grad.tolist() == [9.0, 4.0, 2.0]  # d/dx of x0 + x0 x1 + x0 x1 x2
    with tc.no_grad():
        y.mul_(2.0)
    with pytest.raises(RuntimeError, match=r"\[tc.DoubleTensor \[3\]\], which is output 0 of Cumprod, is at version 1; "
                                           r"expected version 0 instead. Hint: "):
        y.sum().backward()
    v = tc.tensor([0.5, 2.0], dtype=tc.float64, requires_grad=True)
    g, = tc.autograd.grad(v.cumprod(0).sum(), v, create_graph=True)  # create_graph: the reference relinks it
    second, = tc.autograd.grad(g.sum(), v)
    assert second.tolist() == [1.0, 1.0]
    assert seams.reference("Node.saved_output") is not vars(engine.Node)["saved_output"].fget


def test_every_node_saves_reads_and_frees_through_the_learners_methods(learner_node):
    x = tc.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x * x).sin()  # the framework's own ops save their inputs through the learner's save_for_backward
    node = y.grad_fn.next_functions[0][0]
    assert node.name() == "MulBackward0" and node._saved == (x, x) and node._saved_versions == [0, 0]
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(x.detach().numpy() ** 2) * 2 * x.detach().numpy(), rtol=1e-6)
    assert node._saved == () and node._released
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.sum().backward()
    h = x * 2.0
    z = h * h
    with tc.no_grad():
        h.add_(1.0)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation: \[tc.FloatTensor \[3\]\], which is "
                                           r"output 0 of Mul, is at version 1; expected version 0 instead. Hint: "):
        z.sum().backward()
    calls = seams.calls()
    assert calls["Node.save_for_backward"] >= 4 and calls["Node.saved_tensors"] >= 2
    assert calls["Node.release_variables"] >= 3


class Cube(tc.autograd.Function):
    """x ** 3, a custom Function that saves its own output (its backward reads it through saved_tensors)."""

    @staticmethod
    def forward(ctx, x):
        out = x ** 3
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        return grad * 3 * out / x


def test_a_custom_functions_saved_output_under_create_graph_stays_the_references(learner_node):
    x = tc.tensor([1.0, 2.0], dtype=tc.float64, requires_grad=True)
    g, = tc.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)  # 3 x^2, through the saved output
    g.sum().backward()
    assert g.detach().tolist() == [3.0, 12.0] and x.grad.tolist() == [6.0, 12.0]


def test_the_built_in_ops_own_state_is_still_freed_after_the_learners_release(learner_node):
    x = tc.tensor([[1.0, 5.0], [3.0, 2.0]], requires_grad=True)
    y = x.max(1).values.sum()  # the framework's max keeps its indices on the node, outside save_for_backward
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()
    assert x.grad.tolist() == [[0.0, 1.0], [1.0, 0.0]]


def test_the_probe_sees_the_learners_saved_tensors():
    from tinygrad_course.build.checks import in_framework

    seams.uninstall()
    node = _solution()["Node.apply"]
    for name in NODE_METHODS:
        assert in_framework(name, node) is None

    class Unchecked(node):
        @property
        def saved_tensors(self):
            return self._saved

    assert in_framework("Node.saved_tensors", Unchecked) is not None

    class OutputUnchecked(node):
        @property
        def saved_output(self):
            return self._out_alias

    assert in_framework("Node.saved_output", OutputUnchecked) is not None


def test_a_custom_functions_saved_output_modified_in_place_is_named_as_pytorch_names_it(learner_node):
    x = tc.tensor([1.0, 2.0], requires_grad=True)
    z = Cube.apply(x).sum()
    z.backward()  # the learner's saved_tensors reads the saved output
    assert x.grad.tolist() == [3.0, 12.0]
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        z.backward()
    y = Cube.apply(x)
    with tc.no_grad():
        y.add_(1.0)
    with pytest.raises(RuntimeError, match=r"\[tc.FloatTensor \[2\]\], which is output 0 of Cube, is at version 1"):
        y.sum().backward()
