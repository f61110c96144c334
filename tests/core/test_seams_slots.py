"""Method slots (seams.offer_methods): installing a learner's method sets the class attribute itself, so the
reference path calls nothing extra; uninstall (one, or all), `replaced` and nesting put the class's own value
back; subclasses inherit the learner's method, properties stay properties, inherited methods are deleted again."""
import pytest

import tinygrad_course as tc
from tinygrad_course import seams
from tinygrad_course.autograd.engine import AccumulateGrad, Node
from tinygrad_course.methods.products import ProductMethods
from tinygrad_course.tensor import LEARNER_METHODS, Tensor

pytestmark = pytest.mark.usefixtures("clean_seams")

OWN = {attr: Tensor.__dict__.get(attr) for attr in LEARNER_METHODS}


def _plus_ten(self, other):
    return tc.Tensor.add(self, other).add(10)


def test_every_offered_method_is_a_slot_whose_reference_is_the_class_method():
    for attr in LEARNER_METHODS:
        name = f"Tensor.{attr}"
        assert seams.is_slot(name) and name in seams.offered()
    assert seams.reference("Tensor.__add__") is OWN["__add__"]
    assert seams.reference("Tensor.T") is OWN["T"].fget  # a property's getter
    assert seams.reference("Tensor.__matmul__") is ProductMethods.__matmul__  # inherited from a method family
    assert not seams.is_slot("sum_to_shape")


def test_install_sets_the_class_attribute_and_uninstall_puts_the_class_own_back():
    x = tc.tensor([1.0, 2.0])
    seams.install("Tensor.__add__", _plus_ten)
    assert Tensor.__add__ is _plus_ten and (x + 1).tolist() == [12.0, 13.0]
    assert (1 + x).tolist() == [2.0, 3.0]  # __radd__ is still the reference
    seams.uninstall("Tensor.__add__")
    assert Tensor.__dict__["__add__"] is OWN["__add__"] and (x + 1).tolist() == [2.0, 3.0]
    assert seams.installed() == {}


def test_uninstall_of_everything_restores_every_slot():
    seams.install("Tensor.__mul__", lambda self, other: "mine")
    seams.install("Tensor.exp", lambda self: "mine")
    seams.install("sum_to_shape", lambda g, shape: g)
    seams.uninstall()
    assert {attr: Tensor.__dict__.get(attr) for attr in LEARNER_METHODS} == OWN
    assert (tc.ones(2) * 3).tolist() == [3.0, 3.0]


def test_replaced_and_nesting_restore_what_was_installed_before():
    outer = lambda self, other: "outer"  # noqa: E731
    inner = lambda self, other: "inner"  # noqa: E731
    x = tc.ones(2)
    seams.install("Tensor.__sub__", outer)
    with seams.replaced({"Tensor.__sub__": inner}):
        assert x - 1 == "inner"
        with seams.replaced({"Tensor.__sub__": None}):  # the reference inside
            assert (x - 1).tolist() == [0.0, 0.0] and Tensor.__dict__["__sub__"] is OWN["__sub__"]
        assert x - 1 == "inner"
    assert x - 1 == "outer"
    with seams.replaced({"Tensor.__sub__": None}):
        assert (x - 1).tolist() == [0.0, 0.0]
    assert x - 1 == "outer"
    seams.uninstall("Tensor.__sub__")
    with seams.replaced({"Tensor.__sub__": inner}):
        assert x - 1 == "inner"
    assert Tensor.__dict__["__sub__"] is OWN["__sub__"] and seams.installed() == {}


def test_an_inherited_method_is_set_on_the_class_and_deleted_again():
    assert "__matmul__" not in Tensor.__dict__
    seams.install("Tensor.__matmul__", lambda self, other: "mine")
    assert tc.ones(2, 2) @ tc.ones(2, 2) == "mine"
    seams.uninstall("Tensor.__matmul__")
    assert "__matmul__" not in Tensor.__dict__ and (tc.ones(2, 2) @ tc.ones(2, 2)).tolist() == [[2.0, 2.0]] * 2


def test_a_property_slot_stays_a_property():
    seams.install("Tensor.T", lambda self: ("T of", tuple(self.shape)))
    assert isinstance(Tensor.__dict__["T"], property)
    assert tc.ones(2, 3).T == ("T of", (2, 3))
    seams.uninstall("Tensor.T")
    assert Tensor.__dict__["T"] is OWN["T"] and tc.ones(2, 3).T.shape == (3, 2)


def test_subclasses_inherit_the_installed_method_unless_they_define_their_own():
    class Mine(tc.Tensor):
        def exp(self):
            return "my subclass's own"

    seams.install("Tensor.exp", lambda self: "installed")
    p = tc.nn.Parameter(tc.ones(2))
    assert p.exp() == "installed" and tc.ones(1).exp() == "installed"
    assert Mine([1.0]).exp() == "my subclass's own"
    seams.uninstall()
    assert p.exp().tolist() == pytest.approx([2.718281828] * 2)


def test_install_refuses_what_is_not_callable():
    with pytest.raises(TypeError, match="must be callable"):
        seams.install("Tensor.view", 3)
    assert Tensor.__dict__["view"] is OWN["view"]


def test_the_engines_node_methods_are_slots_and_a_call_of_a_node_runs_its_apply():
    """Chapter 02d's Node.apply, AccumulateGrad.apply and the saved-tensor methods are method slots: installing one
    replaces the class attribute (`node(g)` runs `node.apply`), uninstalling restores the engine's own."""
    own = {name: vars(Node)[name] for name in ("apply", "save_for_backward", "saved_tensors", "release_variables")}
    assert all(seams.is_slot(f"Node.{name}") for name in own) and seams.is_slot("AccumulateGrad.apply")
    w = tc.tensor([1.0, 2.0], requires_grad=True)
    y = w * 3.0
    seen = []
    seams.install("Node.apply", lambda node, *grads: seen.append(node.name()) or own["apply"](node, *grads))
    try:
        grads = y.grad_fn(tc.ones(2))
    finally:
        seams.uninstall("Node.apply")
    assert seen == ["MulBackward0"] and grads[0].tolist() == [3.0, 3.0]
    assert all(vars(Node)[name] is value for name, value in own.items()) and "apply" in vars(AccumulateGrad)
