"""backward()'s first step, the root gradient, against PyTorch: ones of the output's shape for a one-element
output, a given gradient checked against the output's shape, and PyTorch's error for each output it cannot
start from (an output that needs no gradient is the engine's "element i" error, whatever its size)."""
import numpy as np
import pytest
import torch

import tinygrad_course as tc

CASES = {
    "a 0-d loss": lambda m, w: (w * w).sum().backward(),
    "a (1, 1) output": lambda m, w: (w * 2.0).sum(0, keepdim=True).reshape(1, 1).backward(),
    "a given gradient": lambda m, w: (w * 3.0).backward(m.tensor([1.0, 10.0, 100.0])),
    "three elements, no gradient": lambda m, w: (w * 2.0).backward(),
    "a gradient of the wrong shape": lambda m, w: (w * 2.0).backward(m.ones(2)),
    "a 0-d output that needs no gradient": lambda m, w: m.tensor(2.0).backward(),
    "a vector output that needs no gradient": lambda m, w: m.ones(3).backward(),
    "several outputs, the second needing none": lambda m, w: m.autograd.backward([(w * 2.0).sum(), m.ones(2)]),
}


def _run(module, case):
    w = module.tensor([1.0, -2.0, 0.5], requires_grad=True)
    try:
        CASES[case](module, w)
    except RuntimeError as error:
        return "RuntimeError: " + str(error).replace("torch.Size", "Size").replace("tc.Size", "Size")
    return w.grad.tolist()


@pytest.mark.parametrize("case", list(CASES))
def test_the_root_gradient_is_pytorchs(case):
    got, want = _run(tc, case), _run(torch, case)
    if isinstance(want, str):
        assert got == want
    else:
        assert np.allclose(got, want)
