"""The core a learner can read: Tensor shows its methods in class bodies, an op is its math, and the route of
`c = a * b; c.sum().backward()` through the package stays short (scripts/backward_route.py prints it)."""
import ast
import inspect
import sys
import textwrap
from pathlib import Path

import torch

import tinygrad_course as tc
from tinygrad_course.ops import arithmetic
from tinygrad_course.tensor import Tensor

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import backward_route  # noqa: E402


def _body_names(cls):
    """Names a class body defines: functions, classes, assignment targets and `__slots__`, read from its source."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    names = set()
    for node in tree.body[0].body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__slots__" for t in targets):  # the data fields
                names.update(c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant))
            for target in targets:
                for t in ast.walk(target):
                    if isinstance(t, ast.Name):
                        names.add(t.id)
    return names


def test_every_public_attribute_of_tensor_is_defined_in_a_class_body_of_its_mro():
    bodies = {cls: _body_names(cls) for cls in Tensor.__mro__ if cls is not object}
    missing = []
    for name in dir(Tensor):
        if name.startswith("_"):
            continue
        owner = next(cls for cls in Tensor.__mro__ if name in vars(cls))
        if owner is object or name not in bodies[owner]:
            missing.append(f"{name} (on {owner.__name__})")
    assert missing == []


def test_core_methods_read_where_tensor_is_defined():
    for name in ("__mul__", "sum", "backward", "expand"):
        source = inspect.getsource(getattr(Tensor, name))
        assert source.lstrip().startswith(f"def {name}(")
        assert getattr(Tensor, name).__qualname__ == f"Tensor.{name}"
    assert inspect.getsourcefile(Tensor.__mul__) == inspect.getsourcefile(Tensor)


def test_mul_is_its_math():
    source = inspect.getsource(arithmetic.Mul)
    assert len([line for line in source.splitlines() if line.strip()]) <= 12
    for bookkeeping in ("_grad_like", "ctx.ma", "ctx.mb", "sum_to_shape", "_state"):
        assert bookkeeping not in inspect.getsource(arithmetic)


def test_the_engine_reduces_gradients_to_each_inputs_shape_and_dtype():
    a = tc.tensor([[1.0], [2.0]], dtype=tc.float16, requires_grad=True)
    b = tc.tensor([1.0, 2.0, 3.0], dtype=tc.float64, requires_grad=True)
    (a * b).sum().backward()
    ta = torch.tensor([[1.0], [2.0]], dtype=torch.float16, requires_grad=True)
    tb = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    (ta * tb).sum().backward()
    assert a.grad.dtype == tc.float16 and a.grad.shape == (2, 1) and a.grad.tolist() == ta.grad.tolist()
    assert b.grad.dtype == tc.float64 and b.grad.shape == (3,) and b.grad.tolist() == tb.grad.tolist()


def test_a_backward_that_returns_an_unreducible_shape_names_the_node():
    class Bad(tc.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad[:1]

    x = tc.ones(3, requires_grad=True)
    try:
        Bad.apply(x).sum().backward()
    except RuntimeError as error:
        assert "returned an invalid gradient at index 0 - got [1] but expected shape compatible with [3]" in str(error)
    else:
        raise AssertionError("no error")


def test_route_of_a_multiply_and_its_backward_is_short():
    route = backward_route.trace_route()
    # tensor.py -> engine -> the op -> tensor_base -> the sum -> the root gradient (autograd/root_gradient.py, the
    # piece a learner writes in 02d.1) -> accumulation: seven files, each one concept
    assert len(route.files) <= 7, route.summary()
    assert route.switches <= 30, route.summary()


def test_the_reference_topological_sort_is_the_order_the_engine_runs():
    from tinygrad_course.autograd.engine import record_backward
    from tinygrad_course.autograd.topological_sort import topological_sort

    x = tc.randn(3, requires_grad=True)
    w = tc.randn(3, requires_grad=True)
    h = (x * w + x).tanh()
    loss = (h * x + h.exp() * w).sum() / 3
    order = topological_sort(loss.grad_fn)
    with record_backward() as events:
        loss.backward()
    assert [node for node, _, _ in events] == order
    position = {node: i for i, node in enumerate(order)}
    assert all(position[child] > position[node] for node in order for child, _ in node.next_functions if child)
