"""Parametrized gradcheck tests over a table `{name: (function, inputs factory)}` (float64 inputs).

A test module keeps its table (tests/gpu/test_op_tables_on_devices.py reads the module-level `CASES`) and
builds its tests from it, e.g.
`test_gradcheck, test_gradgradcheck = gradcheck_tests(CASES, SECOND_ORDER)`.
"""
import pytest

from tinygrad_course.autograd import gradcheck, gradgradcheck


def gradcheck_test(cases, *, eps=1e-6, atol=1e-5, rtol=1e-3):
    """One test per table entry: gradcheck of the function at the factory's inputs."""

    @pytest.mark.parametrize("name", sorted(cases))
    def test_gradcheck(name):
        fn, make = cases[name]
        assert gradcheck(fn, make(), eps=eps, atol=atol, rtol=rtol)

    return test_gradcheck


def gradgradcheck_test(cases, names, *, eps=1e-6, atol=1e-4, rtol=1e-3):
    """One test per name in `names`: gradgradcheck of that table entry at the factory's inputs."""

    @pytest.mark.parametrize("name", list(names))
    def test_gradgradcheck(name):
        fn, make = cases[name]
        assert gradgradcheck(fn, make(), eps=eps, atol=atol, rtol=rtol)

    return test_gradgradcheck


def gradcheck_tests(cases, second_order, *, eps=1e-6, atol=1e-5, second_atol=1e-4, rtol=1e-3):
    """(test_gradcheck over every entry, test_gradgradcheck over the `second_order` names)."""
    return (gradcheck_test(cases, eps=eps, atol=atol, rtol=rtol),
            gradgradcheck_test(cases, second_order, eps=eps, atol=second_atol, rtol=rtol))


def gradcheck_both_orders_test(cases):
    """One test per table entry: gradcheck, then gradgradcheck on the same inputs (default tolerances)."""

    @pytest.mark.parametrize("name", sorted(cases))
    def test_gradcheck(name):
        fn, make = cases[name]
        inputs = make()
        assert gradcheck(fn, inputs)
        assert gradgradcheck(fn, inputs)

    return test_gradcheck
