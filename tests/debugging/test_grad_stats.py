"""tc.debugging.grad_stats / find_nonfinite against hand-computed values and PyTorch."""
import math

import numpy as np
import pytest
import torch

import tinygrad_course as tc
from tinygrad_course.debugging import assert_finite, find_nonfinite, grad_stats


def _params():
    w = tc.tensor([[1.0, -2.0], [3.0, 0.5]], requires_grad=True)
    b = tc.tensor([0.5, -0.5], requires_grad=True)
    unused = tc.tensor([1.0, 2.0, 2.0], requires_grad=True)
    return {"w": w, "b": b, "unused": unused}


def test_values_hand_computed():
    p = _params()
    x = tc.tensor([[1.0, 2.0]])
    ((x @ p["w"] + p["b"]) ** 2).sum().backward()
    # out = x @ w + b = [7.5, -1.5]; d/d out = 2*out = [15, -3]
    # grad w = x^T [15, -3] = [[15, -3], [30, -6]]; grad b = [15, -3]
    gw = np.array([15.0, -3.0, 30.0, -6.0])
    stats = grad_stats(p)
    assert [s.name for s in stats] == ["w", "b", "unused"]
    sw, sb, su = stats
    assert sw.shape == (2, 2)
    assert sw.norm == pytest.approx(math.sqrt(225 + 9 + 900 + 36))
    assert sw.mean == pytest.approx(gw.mean())
    assert sw.std == pytest.approx(math.sqrt(((gw - gw.mean()) ** 2).sum() / 3))  # Bessel's correction
    assert sw.max_abs == 30.0
    assert sw.param_norm == pytest.approx(math.sqrt(1 + 4 + 9 + 0.25))
    assert (sb.norm, sb.mean, sb.max_abs) == (pytest.approx(math.sqrt(234)), 6.0, 15.0)
    assert not su.has_grad and su.norm is None and su.param_norm == 3.0
    assert stats.total_norm == pytest.approx(math.sqrt(1170 + 234))


def test_matches_torch_norm_std_and_clip_total_norm():
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((5, 4)), rng.standard_normal(4)]
    ours = [tc.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    x = rng.standard_normal((3, 5))
    (tc.tensor(x) @ ours[0] + ours[1]).tanh().sum().backward()
    (torch.tensor(x) @ theirs[0] + theirs[1]).tanh().sum().backward()
    stats = grad_stats(ours)
    for s, t in zip(stats, theirs):
        assert s.norm == pytest.approx(t.grad.norm().item())
        assert s.std == pytest.approx(t.grad.std().item())
        assert s.mean == pytest.approx(t.grad.mean().item())
        assert s.max_abs == pytest.approx(t.grad.abs().max().item())
    total = torch.nn.utils.clip_grad_norm_(theirs, max_norm=1e9).item()
    assert stats.total_norm == pytest.approx(total)


def test_single_element_std_is_nan_like_torch():
    p = tc.tensor([2.0], requires_grad=True)
    (p * 3).sum().backward()
    (s,) = grad_stats([p])
    with pytest.warns(UserWarning, match="degrees of freedom"):
        torch_std = torch.tensor([3.0]).std().item()
    assert math.isnan(s.std) and math.isnan(torch_std)
    assert s.name == "0"


def test_table_repr_and_html():
    p = _params()
    (p["w"].sum() + p["b"].sum()).backward()
    text = repr(grad_stats(p))
    lines = text.splitlines()
    assert lines[0].split() == ["name", "shape", "grad", "norm", "grad", "mean", "grad", "std", "grad",
                                "max|.|", "param", "norm"]
    assert lines[2].split()[:3] == ["w", "2x2", "2.000e+00"]
    assert lines[4].split()[:3] == ["unused", "3", "-"]
    assert lines[-1] == f"total grad norm: {math.sqrt(6):.3e}"
    html = grad_stats(p)._repr_html_()
    assert "<table>" in html and "<td>unused</td>" in html


def test_find_nonfinite_and_assert_finite():
    p = _params()
    (p["w"].sum() + p["b"].sum()).backward()
    assert find_nonfinite(p) == []
    assert_finite(p)
    p["w"].grad._data[0, 0] = np.nan
    p["w"].grad._data[1, 1] = np.inf
    p["b"].detach()._data[0] = -np.inf
    found = find_nonfinite(p)
    assert [(f.name, f.where, f.nan, f.inf) for f in found] == [("w", "grad", 1, 1), ("b", "param", 0, 1)]
    assert str(found[0]) == "w.grad: 1 nan, 1 inf"
    with pytest.raises(RuntimeError, match=r"w\.grad: 1 nan, 1 inf; b: 0 nan, 1 inf.*detect_anomaly"):
        assert_finite(p)


def test_accepts_objects_with_named_parameters():
    class Model:
        def __init__(self):
            self.p = tc.ones(3, requires_grad=True)

        def named_parameters(self):
            yield "layer.weight", self.p

    m = Model()
    (m.p * 2).sum().backward()
    (s,) = grad_stats(m)
    assert s.name == "layer.weight" and s.mean == 2.0 and s.std == 0.0
