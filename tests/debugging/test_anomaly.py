"""Anomaly detection (tc.autograd.detect_anomaly / set_detect_anomaly) compared with PyTorch.

PyTorch's backward raises at the first node whose gradient holds NaN, naming it ("Function
'SqrtBackward0' returned nan values in its 0th output.") and points at the forward call that created
the node. Ours does the same, with the forward traceback inside the error message; like PyTorch it
lets an Inf gradient through and stops only at NaN (see `test_inf_passes_and_nan_stops_like_torch`).
"""
import warnings

import numpy as np
import pytest
import torch

import tinygrad_course as tc
from tinygrad_course.autograd import detect_anomaly, is_anomaly_enabled, set_detect_anomaly


def _torch_error(build, values):
    """Run `build` under torch's anomaly mode; return the error message (or None)."""
    x = torch.tensor(values, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.detect_anomaly():
            try:
                build(x).sum().backward()
            except RuntimeError as e:
                return str(e)
    return None


def _tc_error(build, values):
    x = tc.tensor(values, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with detect_anomaly():
            try:
                build(x).sum().backward()
            except RuntimeError as e:
                return str(e)
    return None


NAN_CASES = {
    "sqrt_negative": (lambda x: x.sqrt(), [-1.0, 4.0]),
    "log_negative": (lambda x: (x * 2).log() * 3, [-1.0, 1.0]),
    # the forward NaN comes from log, but backward meets it first in ExpBackward0 (as in PyTorch)
    "nan_flows_forward": (lambda x: x.log().exp(), [-1.0, 2.0]),
    "times_nan_constant": (lambda x: (x * float("nan")).sum() * 2, [1.0, 2.0]),
    "pow_half_negative": (lambda x: (x - 2) ** 0.5, [1.0, 3.0]),
    "finite": (lambda x: (x * x).tanh(), [1.0, -2.0]),
}


@pytest.mark.parametrize("case", NAN_CASES)
def test_first_nan_node_matches_torch(case):
    build, values = NAN_CASES[case]
    expected = _torch_error(build, values)
    got = _tc_error(build, values)
    if expected is None:
        assert got is None
    else:
        assert got is not None
        assert got.splitlines()[0] == expected.splitlines()[0]


def _forward_line():
    x = tc.tensor([-1.0, 4.0], requires_grad=True)
    y = x.sqrt()  # the forward op responsible
    return y


def test_error_carries_the_forward_traceback():
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with detect_anomaly():
            y = _forward_line()
            with pytest.raises(RuntimeError) as info:
                y.sum().backward()
    msg = str(info.value)
    assert msg.startswith("Function 'SqrtBackward0' returned nan values in its 0th output.")
    assert "Traceback of the forward call that caused the error" in msg
    assert "in _forward_line" in msg and "y = x.sqrt()  # the forward op responsible" in msg
    # the framework's own frames are left out: the learner sees their code
    assert "tinygrad_course/" not in msg


def test_inf_passes_and_nan_stops_like_torch():
    build = lambda x: (x * 0).log()  # noqa: E731  log(0) = -inf: its gradient 1/0 is inf, then inf * 0 is nan
    expected = _torch_error(build, [0.0])
    assert expected.startswith("Function 'MulBackward0' returned nan values")
    assert _tc_error(build, [0.0]).splitlines()[0] == expected.splitlines()[0]


def test_without_anomaly_mode_backward_just_produces_nan():
    x = tc.tensor([-1.0, 4.0], requires_grad=True)
    x.sqrt().sum().backward()
    assert np.isnan(x.grad.numpy()[0]) and x.grad.numpy()[1] == pytest.approx(0.25)


def test_check_nan_false_records_but_does_not_raise():
    x = tc.tensor([-1.0], requires_grad=True)
    with pytest.warns(UserWarning):
        with detect_anomaly(check_nan=False):
            assert is_anomaly_enabled()
            x.sqrt().sum().backward()
    assert np.isnan(x.grad.numpy()[0])


def test_node_recorded_before_enabling_says_so():
    x = tc.tensor([-1.0], requires_grad=True)
    y = x.sqrt()
    with set_detect_anomaly(True):
        with pytest.raises(RuntimeError, match="recorded before anomaly detection was enabled"):
            y.sum().backward()


def test_set_detect_anomaly_as_call_and_context_restores_state():
    assert not is_anomaly_enabled() and not torch.is_anomaly_enabled()
    set_detect_anomaly(True)
    try:
        assert is_anomaly_enabled()
        with set_detect_anomaly(False):
            assert not is_anomaly_enabled()
        assert is_anomaly_enabled()
    finally:
        set_detect_anomaly(False)
    assert not is_anomaly_enabled()


def test_decorator_form():
    with pytest.warns(UserWarning):
        @detect_anomaly()
        def step():
            assert is_anomaly_enabled()
            x = tc.tensor([-1.0], requires_grad=True)
            x.sqrt().sum().backward()

    with pytest.raises(RuntimeError, match="SqrtBackward0"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            step()
    assert not is_anomaly_enabled()


def test_anomaly_mode_does_not_change_finite_gradients():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 4))
    x1, x2 = tc.tensor(a, requires_grad=True), tc.tensor(a, requires_grad=True)
    ((x1 @ x1.T).softmax(-1) * tc.arange(3.0)).sum().backward()
    with pytest.warns(UserWarning):
        with detect_anomaly():
            ((x2 @ x2.T).softmax(-1) * tc.arange(3.0)).sum().backward()
    np.testing.assert_array_equal(x1.grad.numpy(), x2.grad.numpy())
