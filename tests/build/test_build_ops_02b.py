"""Chapter 02b's ops as build-mode components: each installs through its op's seam with the reference's shape
(no adapter but `runner`), computes the calls its exercise covers, leaves the others to the reference, a wrong
one is named with its cell and not installed, and the GPT milestone installs them (build/gpt_milestone.py)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import tinygrad_course as tc
from tinygrad_course import build, seams
from tinygrad_course.build import gpt_milestone, session
from tinygrad_course.build.checks import in_framework, verdict
from tinygrad_course.build.components import BY_NAME, OPS_02B, for_chapter
from tinygrad_course.build.package import save
from tinygrad_course.build.probes import PROBES
from tinygrad_course.grading.learner_op import runner

from build_helpers import solution_cell
from test_build_engine import _solution

CELLS = {grade_id: solution_cell("02b_ops.ipynb", grade_id) for grade_id in ("ex02b_1", "ex02b_2", "ex02b_3",
                                                                            "ex02b_4", "ex02b_5", "ex02b_6",
                                                                            "ex02b_7")}
SETUP = ("import math\nimport numpy as np\nimport tinygrad_course as tc\n"
         "from tinygrad_course.autograd.engine import Op\n"
         "from tinygrad_course.ops.erf import erf as _erf\n\n\n"
         "def erf(a):\n    return _erf(np, a).astype(a.dtype, copy=False)\n\n\n")


def _namespace(grade_id, old="", new=""):
    namespace = {}
    source = CELLS[grade_id]
    assert old in source
    exec(compile(SETUP + source.replace(old, new), f"<{grade_id}>", "exec"), namespace)
    return namespace


def test_the_fourteen_ops_are_components_of_chapter_02b_with_a_probe_each():
    ops = [c.name for c in for_chapter("02b")]
    assert ops == list(OPS_02B) == ["Softmax", "LogSoftmax", "Gelu", "Dropout", "Embedding", "MaskedFill", "Cat",
                                    "Transpose", "Expand", "Gather", "GetItem", "View", "Clone", "Narrow"]
    for name in OPS_02B:
        assert BY_NAME[name].seam == name and name in PROBES and BY_NAME[name].notebook == "02b_ops.ipynb"
        assert name in seams.offered()  # Op._apply looks it up by the reference op's name


@pytest.mark.parametrize("grade_id", sorted(CELLS))
def test_each_solution_passes_its_check_and_agrees_with_the_reference_inside_the_framework(grade_id):
    namespace = _namespace(grade_id)
    for name in BY_NAME:
        if BY_NAME[name].exercise == grade_id:
            assert verdict(name, namespace) is None
            assert in_framework(name, namespace[name]) is None


def test_a_learner_op_computes_the_calls_it_covers_and_the_reference_the_others():
    ns = {**_namespace("ex02b_1"), **_namespace("ex02b_3"), **_namespace("ex02b_4")}
    for name in ("Softmax", "Embedding", "MaskedFill", "Cat"):
        seams.install(name, runner(ns[name], name))
    seams.reset_calls()
    x = tc.randn(3, 4, requires_grad=True)
    x.softmax(-1).sum().backward()
    weight = tc.randn(5, 2, requires_grad=True)
    tc.nn.functional.embedding(tc.tensor([[4, 0]]), weight)
    x.masked_fill(tc.tensor([True, False, True, False]), -1.0)
    tc.cat([x, x], dim=-1)
    assert seams.calls() == {"Softmax": 1, "Embedding": 1, "MaskedFill": 1, "Cat": 1}
    # not covered: an integer softmax input, a padding_idx, negative ids, a tensor fill value, an int mask
    tc.nn.functional.embedding(tc.tensor([1, 4]), weight, padding_idx=0)
    tc.nn.functional.embedding(tc.tensor([-1]), weight)
    x.masked_fill(tc.tensor([True, False, True, False]), tc.tensor(2.0))
    with pytest.raises(IndexError, match="index out of range in self"):  # PyTorch's error, from the reference
        tc.nn.functional.embedding(tc.tensor([5]), weight)
    with pytest.raises(RuntimeError, match="only supports boolean masks"):
        x.masked_fill(tc.tensor([1, 0, 1, 0]), 0.0)
    tc.cat([x, x.double()], dim=0)  # mixed dtypes: the reference promotes
    tc.cat([tc.zeros(0), tc.ones(2, 2)])  # a legacy empty 1-D tensor beside 2-D ones (PyTorch skips it)
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0"):
        tc.cat([x, tc.ones(2, 3)])
    assert seams.calls() == {"Softmax": 1, "Embedding": 1, "MaskedFill": 1, "Cat": 1}


def test_a_wrong_embedding_backward_fails_its_check_and_neither_op_of_its_cell_is_installed(tmp_path):
    assigned = "return tc.zeros(ctx.num_embeddings, dim, dtype=grad.dtype).index_add(0, index, rows), None"
    wrong_source = CELLS["ex02b_3"].replace(assigned, "out = tc.zeros(ctx.num_embeddings, dim, dtype=grad.dtype)\n"
                                            "        out[index] = rows\n        return out, None")
    problem = verdict("Embedding", _namespace("ex02b_3", assigned, "out = tc.zeros(ctx.num_embeddings, dim, "
                                              "dtype=grad.dtype)\n        out[index] = rows\n        return out, None"))
    assert problem is not None and "an assignment keeps the last write" in problem
    for name in ("Embedding", "MaskedFill"):  # one cell, one check: it decides for both of its ops
        save(tmp_path, BY_NAME[name], SETUP + wrong_source, [], "02b_ops.ipynb, the cell defining " + name)
    with pytest.warns(UserWarning, match=r"(?s)your Embedding \(02b_ops.ipynb, cell ex02b_3\) is not installed: its "
                                         r"check failed: .*an assignment keeps the last write"):
        build.use_learner(tmp_path, quiet=True)
    assert "Embedding" not in seams.installed() and "MaskedFill" not in seams.installed()


def test_the_gpt_milestone_installs_every_op_of_chapters_02_and_02b():
    earlier = set(gpt_milestone.EARLIER)
    assert set(OPS_02B) <= earlier
    assert {"Add", "Mul", "Matmul", "Sum", "Mean", "backward_pass", "LayerNorm.forward", "Adam.step",
            "Module.__setattr__"} <= earlier
    assert all(name in BY_NAME for name in earlier)


def test_a_learner_matmul_of_a_transposed_stack_gets_row_contiguous_operands():
    seen = []

    class Matmul(tc.autograd.engine.Op):
        @staticmethod
        def forward(ctx, a, b):
            seen.append((a.flags.c_contiguous, b.flags.c_contiguous))
            return a @ b

        @staticmethod
        def backward(ctx, grad):
            raise NotImplementedError

    seams.install("Matmul", runner(Matmul, "Matmul"))
    a, w = tc.randn(2, 3, 4), tc.randn(5, 4)
    out = a @ w.T
    assert seen == [(True, True)]
    assert np.allclose(out.numpy(), a.numpy() @ w.numpy().T, atol=1e-6)


def test_the_learners_views_are_views_of_their_input_sharing_its_version_counter():
    ns = _namespace("ex02b_5")
    for name in ("Transpose", "Expand"):
        seams.install(name, runner(ns[name], name))
    seams.reset_calls()
    w = tc.randn(3, 2, requires_grad=True)
    wt, mt, wide = w.T, w.mT, w[:1].expand(4, 2)
    assert seams.calls() == {"Transpose": 2, "Expand": 1}
    assert wt.grad_fn.name() == "TBackward0" and wt.grad_fn._learner_backward is not None
    assert wt._base is w and mt._base is w and wide._base is w  # x[:1] is a view of w: the base is w's
    assert wt._version is w._version and wide._version is w._version
    loss = (wt * wt).sum()  # saves wt at w's current version
    with tc.no_grad():
        w.mul_(2.0)  # the views see it, and their version counter moved with w's
    d = w.detach().numpy()
    assert np.array_equal(wt.detach().numpy(), d.T) and np.array_equal(wide.detach().numpy(), np.broadcast_to(d[:1], (4, 2)))
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()
    (wt * mt).sum().backward()  # the learner's backward: d/dw of sum(w * w) = 2 w
    assert np.allclose(w.grad.numpy(), 2 * d)
    # not covered: a 0-d transpose, out-of-range dims, an expand with -1 or to an incompatible shape
    seams.reset_calls()
    s = tc.tensor(2.0)
    assert s.t().item() == 2.0
    with pytest.raises(IndexError):
        w.transpose(0, 2)
    assert tuple(w[:1].expand(-1, 2).shape) == (1, 2)
    with pytest.raises(RuntimeError, match="The expanded size of the tensor"):
        w.expand(4, 2)
    assert seams.calls() == {}


def test_a_learner_view_that_copies_is_an_error_naming_it():
    ns = _namespace("ex02b_5", "return x.swapaxes(dim0, dim1)", "return x.swapaxes(dim0, dim1).copy()")
    seams.install("Transpose", runner(ns["Transpose"], "Transpose"))
    with pytest.raises(RuntimeError, match="your Transpose.forward returned a copy of x"):
        tc.randn(2, 3).T


def test_a_learner_gather_computes_full_size_indices_and_the_reference_the_others():
    seams.install("Gather", runner(_namespace("ex02b_6")["Gather"], "Gather"))
    x = tc.randn(3, 4, requires_grad=True)
    labels = tc.tensor([3, 0, 0])
    picked = x.gather(1, labels[:, None])
    assert picked.grad_fn._learner_backward is not None and seams.calls() == {"Gather": 1}
    picked.sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 0.0, 1.0], [1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]]
    seams.reset_calls()
    x.gather(1, tc.tensor([[0], [1]]))  # an index smaller than x apart from dim (PyTorch allows it)
    tc.arange(4).reshape(2, 2).gather(0, tc.tensor([[1, 0]]).expand(2, 2))  # an integer x
    with pytest.raises(RuntimeError, match="out of bounds for dimension 1 with size 4"):  # PyTorch's error
        x.gather(1, tc.tensor([[4], [0], [0]]))
    assert seams.calls() == {}


_KEYS = (lambda x: x[1], lambda x: x[1, 2], lambda x: x[:, ::2], lambda x: x[None, 0], lambda x: x[..., 0],
         lambda x: x[1:, None, 1:3], lambda x: x[tc.tensor([2, 0, 2])], lambda x: x[:, tc.tensor([[3, 1], [3, 3]])],
         lambda x: x[[0, 0]])


def _torch_key(call):
    """The same key on a torch tensor (index tensors made by torch)."""
    return lambda x: call(_TorchIndexed(x))


class _TorchIndexed:
    def __init__(self, x):
        self.x = x

    def __getitem__(self, key):
        convert = (lambda k: torch.tensor(k.numpy()) if isinstance(k, tc.Tensor) else k)
        return self.x[tuple(map(convert, key)) if isinstance(key, tuple) else convert(key)]


@pytest.mark.parametrize("engine", ["reference", "learner"])
def test_a_learner_getitem_gives_views_for_basic_keys_and_scatter_adds_for_index_tensors(engine):
    """x[key] through the solution's GetItem, recorded by the reference's engine or the learner's Function.apply:
    a basic key gives a view of x (its `_base` and version counter), an index tensor a copy; the values, node
    names and gradients (a repeated index adds) are PyTorch's, and a second derivative runs through the
    learner's backward."""
    seams.install("GetItem", runner(_namespace("ex02b_6")["GetItem"], "GetItem"))
    if engine == "learner":
        for name, obj in _solution().items():
            seams.install(name, session._guarded(BY_NAME[name].adapt(obj), name, "a test", seams.reference(name)))
    data = np.random.default_rng(0).standard_normal((3, 4))
    for k, call in enumerate(_KEYS):
        x, xt = tc.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
        seams.reset_calls()
        y, yt = call(x), _torch_key(call)(xt)
        assert seams.calls().get("GetItem") == 1, k
        assert np.array_equal(y.detach().numpy(), yt.detach().numpy()), k
        basic = k < 6
        assert (y._base is x and y._version is x._version) if basic else y._base is None, k
        assert y.grad_fn.name() == type(yt.grad_fn).__name__, k  # the name of PyTorch's last step
        weight = np.random.default_rng(k).standard_normal(tuple(yt.shape))
        (y * tc.tensor(weight)).sum().backward()
        (yt * torch.tensor(weight)).sum().backward()
        assert np.allclose(x.grad.numpy(), xt.grad.numpy()), k
        x = tc.tensor(data, requires_grad=True)
        gx, = tc.autograd.grad((call(x) ** 3).sum(), x, create_graph=True)
        second, = tc.autograd.grad(gx.sum(), x)
        assert np.allclose(second.numpy(), np.zeros_like(data) + torch.autograd.grad(
            torch.autograd.grad((_torch_key(call)(xt) ** 3).sum(), xt, create_graph=True)[0].sum(), xt)[0].numpy())
        assert tc.autograd.gradcheck(call, (tc.tensor(data, requires_grad=True),)), k  # finite differences


def test_a_learner_getitem_reads_integer_tensors_and_leaves_other_keys_to_the_reference():
    seams.install("GetItem", runner(_namespace("ex02b_6")["GetItem"], "GetItem"))
    idx = tc.arange(12).reshape(2, 6)
    window = idx[:, -4:]  # the GPT's idx[:, -block_size:], an int64 tensor
    assert window.tolist() == [[2, 3, 4, 5], [8, 9, 10, 11]] and window._version is idx._version
    assert idx[tc.tensor([1, 1])].tolist() == [idx[1].tolist()] * 2
    assert seams.calls() == {"GetItem": 3}
    seams.reset_calls()
    x = tc.randn(3, 4)
    x[x > 0], x[tc.tensor([-1, 0])], x[tc.tensor([0, 1]), tc.tensor([1, 2])], x[1, tc.tensor([0, 2])]
    x[1:, tc.tensor([0])], x[tc.tensor([0], dtype=tc.int32)]
    for bad, message in ((lambda: x[3], "index 3 is out of bounds for dimension 0 with size 3"),
                         (lambda: x[:, tc.tensor([4])], "out of bounds"), (lambda: x[0, 0, 0], "too many indices")):
        with pytest.raises(IndexError, match=message):  # PyTorch's errors
            bad()
    assert seams.calls() == {}


def test_a_learner_getitem_that_copies_a_basic_key_is_an_error_naming_it():
    ns = _namespace("ex02b_6", "return x[key]  #", "return x[key].copy()  #")
    seams.install("GetItem", runner(ns["GetItem"], "GetItem"))
    with pytest.raises(RuntimeError, match="your GetItem.forward returned a copy of x"):
        tc.randn(2, 3)[1]
    assert tc.randn(2, 3)[tc.tensor([1, 1])].shape == (2, 3)  # an index tensor's result is a copy anyway


def test_a_matrix_product_of_a_transposed_stack_recorded_by_the_learners_engine_saves_its_tensors():
    """With the learner's Function.apply, forward receives the tensors' own arrays (not the row-contiguous copies
    the runner reads a batched product into): what it saves is still found as the operands' tensors."""
    class Matmul(tc.autograd.engine.Op):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a @ b

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            return grad @ b.mT, a.mT @ grad

    seams.install("Matmul", runner(Matmul, "Matmul"))
    for name, obj in _solution().items():
        seams.install(name, session._guarded(BY_NAME[name].adapt(obj), name, "a test", seams.reference(name)))
    a = tc.randn(2, 3, 4, requires_grad=True)
    w = tc.randn(5, 4, requires_grad=True)
    (a @ w.mT).sum().backward()  # w.mT: not row-contiguous, so the runner copies it
    assert np.allclose(a.grad.numpy(), np.broadcast_to(w.detach().numpy().sum(0), (2, 3, 4)), atol=1e-5)
    assert np.allclose(w.grad.numpy(), np.broadcast_to(a.detach().numpy().sum((0, 1)), (5, 4)), atol=1e-5)


def test_a_learner_view_computes_view_reshape_squeeze_and_unsqueeze_of_row_major_tensors():
    seams.install("View", runner(_namespace("ex02b_7")["View"], "View"))
    x = tc.randn(2, 3, 4, requires_grad=True)
    outs = [x.view(6, -1), x.reshape(4, 6), x.sum(1, keepdim=True).squeeze(1),
            x.unsqueeze(-1)]
    assert [o.grad_fn.name() for o in outs] == ["ViewBackward0", "ViewBackward0", "SqueezeBackward1",
                                                "UnsqueezeBackward0"]
    assert all(o.grad_fn._learner_backward is not None for o in outs) and seams.calls() == {"View": 4}
    assert outs[0]._base is x and outs[3]._version is x._version
    sum(o.sum() * (k + 1) for k, o in enumerate(outs)).backward()
    assert np.allclose(x.grad.numpy(), 1 + 2 + 3 + 4)
    # a strided x whose strides allow the view (attention's q.view of a split's slice); reshape's view of a copy
    seams.reset_calls()
    wide = tc.randn(2, 3, 8, requires_grad=True)
    heads = wide[:, :, 4:].view(2, 3, 2, 2)
    flat = wide.mT.reshape(-1)  # no view reads wide.mT in this order: the reference's copy, then the learner's view
    assert heads.grad_fn.name() == "ViewBackward0" and heads._base is wide and heads.grad_fn._learner_backward
    assert flat.grad_fn.name() == "UnsafeViewBackward0" and flat.grad_fn._learner_backward is not None
    assert flat.grad_fn.next_functions[0][0].name() == "CloneBackward0" and seams.calls() == {"View": 2}
    (heads.sum() + (flat * tc.arange(48.0)).sum()).backward()
    want = np.arange(48.0).reshape(2, 8, 3).transpose(0, 2, 1).copy()
    want[:, :, 4:] += 1
    assert np.allclose(wide.grad.numpy(), want)
    # not covered: a view the strides do not allow, a squeeze of every size-1 dim or of a list, a shape that does
    # not fit (the reference raises PyTorch's errors)
    seams.reset_calls()
    with pytest.raises(RuntimeError, match="view size is not compatible with input tensor's size and stride"):
        x.detach().T.view(-1)
    x.detach().unsqueeze(0).squeeze()
    x.detach().unsqueeze(0).squeeze((0,))
    with pytest.raises(RuntimeError, match="is invalid for input of size 24"):
        x.view(5, 5)
    assert seams.calls() == {"View": 2}  # the two unsqueeze(0) only


def test_a_learner_clone_and_narrow_compute_contiguous_clone_narrow_split_and_chunk():
    ns = _namespace("ex02b_7")
    for name in ("View", "Clone", "Narrow"):
        seams.install(name, runner(ns[name], name))
    seams.reset_calls()
    x = tc.randn(3, 6, dtype=tc.float64, requires_grad=True)
    a, b = x.split([2, 4], dim=1)
    c = x.chunk(3, 0)[2]
    copy, cont, same = b.clone(), b.t().contiguous(), a.contiguous().contiguous()
    named = [t.grad_fn.name() for t in (a, b, c, copy, cont, x.narrow(-1, 1, 2))]
    assert named == ["SliceBackward0"] * 3 + ["CloneBackward0"] * 2 + ["SliceBackward0"]
    assert a._base is x and cont.is_contiguous() and not np.may_share_memory(cont.detach().numpy(), x.detach().numpy())
    assert seams.calls() == {"Narrow": 6, "Clone": 3}
    loss = (a * 2).sum() + (copy * cont.t()).sum() + (c ** 2).sum() + same.sum()
    gx, = tc.autograd.grad(loss, x, create_graph=True)
    t = torch.tensor(x.detach().numpy(), requires_grad=True)
    ta, tb = t.split([2, 4], dim=1)
    want = (ta * 2).sum() + (tb.clone() * tb.t().contiguous().t()).sum() + (t.chunk(3, 0)[2] ** 2).sum() + ta.sum()
    tgx, = torch.autograd.grad(want, t, create_graph=True)
    assert np.allclose(gx.detach().numpy(), tgx.detach().numpy())
    second, = tc.autograd.grad(gx.sum(), x)
    assert np.allclose(second.numpy(), torch.autograd.grad(tgx.sum(), t)[0].numpy())
    # not covered: a negative start (the reference's); a wrong Clone is named
    seams.reset_calls()
    x.detach().narrow(1, -2, 2)
    assert seams.calls() == {}
    ns = _namespace("ex02b_7", "return x.copy()", "return x")
    seams.install("Clone", runner(ns["Clone"], "Clone"))
    with pytest.raises(RuntimeError, match="your Clone.forward returned a view of x"):
        x.clone()


def test_a_learner_view_that_copies_or_keeps_the_new_shape_is_named():
    ns = _namespace("ex02b_7", "return x.reshape(shape)", "return x.copy().reshape(shape)")
    seams.install("View", runner(ns["View"], "View"))
    with pytest.raises(RuntimeError, match="your View.forward returned a copy of x"):
        tc.randn(2, 3).view(6)
    ns = _namespace("ex02b_7", "ctx.shape = x.shape", "ctx.shape = shape")
    seams.install("View", runner(ns["View"], "View"))
    x = tc.randn(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"your View.backward returned a gradient of shape \(6,\) for input 0"):
        x.view(6).sum().backward()
