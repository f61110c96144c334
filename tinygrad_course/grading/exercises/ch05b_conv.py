"""Lab 05b, convolution: checks for the learner's Conv2dFunction and MaxPool2dFunction (each a
`tc.autograd.Function` with forward and backward), compared with the framework's `F.conv2d` and
`F.max_pool2d` and their gradients on fixed float64 inputs, with the usual mistakes named."""
import numpy as np

import tinygrad_course as tc

from .. import mistakes
from ..registry import exercise

_F = tc.nn.functional


def _is_function(t, cls, name):
    t.true(isinstance(cls, type) and issubclass(cls, tc.autograd.Function),
           f"{name} to be a subclass of tc.autograd.Function (got {cls!r})",
           hint=f"class {name}(tc.autograd.Function): with @staticmethod forward(ctx, ...) and backward(ctx, grad)")


def _run(apply, reference, arrays, args, seed):
    """(the learner's output and input gradients, the reference's), for a weighted sum of the output."""
    mine = [tc.tensor(a, requires_grad=True) if a is not None else None for a in arrays]
    ref = [tc.tensor(a, requires_grad=True) if a is not None else None for a in arrays]
    out = apply(*mine, *args)
    expected = reference(*ref, *args)
    weight = tc.tensor(np.random.default_rng(seed).standard_normal(tuple(expected.shape)))
    (expected * weight).sum().backward()
    if isinstance(out, tc.Tensor) and tuple(out.shape) == tuple(expected.shape):
        (out * weight).sum().backward()
    return out, mine, expected, ref, weight


@exercise("05b.7", title="Conv2d forward and backward (im2col)", points=3,
          forbidden=["tinygrad_course.nn.functional.conv2d", "tinygrad_course.nn.functional.unfold"])
def conv2d_check(t, Conv2dFunction):
    _is_function(t, Conv2dFunction, "Conv2dFunction")
    rng = np.random.default_rng(7)
    cases = [((2, 3, 7, 6), (4, 3, 3, 3), 1, 1), ((1, 2, 8, 8), (3, 2, 3, 3), 2, 0), ((2, 1, 5, 5), (2, 1, 2, 2), 1, 2)]
    for x_shape, w_shape, stride, padding in cases:
        x, w, b = rng.standard_normal(x_shape), rng.standard_normal(w_shape), rng.standard_normal(w_shape[0])
        given = f"x of shape {x_shape}, weight {w_shape}, bias ({w_shape[0]},), stride={stride}, padding={padding}"
        out, (gx, gw, gb), expected, (rx, rw, rb), _ = _run(Conv2dFunction.apply, _F.conv2d, [x, w, b],
                                                           (stride, padding), 1)
        flipped = _F.conv2d(tc.tensor(x), tc.tensor(w).flip((2, 3)), tc.tensor(b), stride, padding).numpy()
        no_bias = _F.conv2d(tc.tensor(x), tc.tensor(w), None, stride, padding).numpy()
        t.true(isinstance(out, tc.Tensor), f"Conv2dFunction.apply(...) to return a tc.Tensor (got {type(out).__name__})")
        t.equal(tuple(out.shape), tuple(expected.shape), f"the output shape for {given}",
                hint="each side is floor((n + 2 * padding - k) / stride) + 1: pad first, then one window every "
                     "`stride` pixels")
        t.close(out, expected.detach().numpy(), f"Conv2dFunction.apply(x, weight, bias, {stride}, {padding})",
                given=given, mistakes=[
                    mistakes.custom(lambda g, e, f=flipped: np.allclose(g, f),
                                    "your output is a true convolution (the kernel flipped); nn.Conv2d computes the "
                                    "cross-correlation: out[i, j] = sum(window at (i, j) * weight), no flip",
                                    "multiply each window by the weight as it is stored"),
                    mistakes.custom(lambda g, e, nb=no_bias: np.allclose(g, nb), "the bias is not added",
                                    "add bias (one number per output channel) to every position of its channel")])
        t.close(gw.grad, rw.grad.numpy(), "weight.grad after a backward pass through your Conv2dFunction", given=given,
                mistakes=[mistakes.custom(lambda g, e: g.shape == e.shape and np.allclose(g, e * 0), "it is zero",
                                          "grad_weight: for each output position, the window times its gradient, summed")])
        t.close(gb.grad, rb.grad.numpy(), "bias.grad (summed over the batch and every position)", given=given)
        t.close(gx.grad, rx.grad.numpy(), "x.grad: each window's gradient added back where the window read x",
                given=given, mistakes=[mistakes.custom(
                    lambda g, e: g.shape == e.shape and not np.allclose(g, e) and stride < 3,
                    "x.grad differs where windows overlap or at the padded border",
                    "overlapping windows read the same pixel: add (+=) every window's share into a zero-padded "
                    "gradient, then cut the padding off")])
    out = Conv2dFunction.apply(tc.zeros(1, 1, 4, 4), tc.zeros(1, 1, 3, 3), None, 1, 0)
    t.equal(tuple(out.shape), (1, 1, 2, 2), "the output shape for bias=None, a 4x4 image and a 3x3 kernel",
            hint="bias may be None (nn.Conv2d(..., bias=False)): add it only when it is given")


@exercise("05b.8", title="MaxPool2d forward and backward", points=2,
          forbidden=["tinygrad_course.nn.functional.max_pool2d"])
def max_pool2d_check(t, MaxPool2dFunction):
    _is_function(t, MaxPool2dFunction, "MaxPool2dFunction")
    rng = np.random.default_rng(8)
    for kernel, stride in ((2, 2), (3, 2), (3, 1)):
        x = rng.standard_normal((2, 3, 7, 8))
        x[0, 0, :3, :3] = 1.0  # a tie: PyTorch sends the gradient to the first maximum only
        given = f"x of shape (2, 3, 7, 8) (x[0, 0, :3, :3] all 1.0: a tie), kernel_size={kernel}, stride={stride}"
        out, (gx,), expected, (rx,), weight = _run(MaxPool2dFunction.apply, _F.max_pool2d, [x], (kernel, stride), 2)
        t.equal(tuple(getattr(out, "shape", ())), tuple(expected.shape), f"the output shape for {given}",
                hint="each side is floor((n - k) / stride) + 1")
        t.close(out, expected.detach().numpy(), f"MaxPool2dFunction.apply(x, {kernel}, {stride})", given=given,
                mistakes=[mistakes.custom(lambda g, e: np.allclose(g, _F.avg_pool2d(tc.tensor(x), kernel, stride).numpy()),
                                          "your output is each window's mean, not its maximum", "take the max")])
        t.close(gx.grad, rx.grad.numpy(), f"x.grad after a backward pass through MaxPool2dFunction({kernel}, {stride})",
                given=given, mistakes=[mistakes.custom(
                    lambda g, e: g.shape == e.shape and np.allclose(g[:, :, 3:], e[:, :, 3:]) and not np.allclose(g, e),
                    "x.grad differs only inside the tie: every tied maximum got the gradient",
                    "send each window's gradient to one element, its first maximum (argmax), as PyTorch does"),
                    mistakes.custom(lambda g, e: g.shape == e.shape and np.count_nonzero(g) > 2 * np.count_nonzero(e),
                                    "the gradient is spread over whole windows",
                                    "only the maximum of a window moved the output: it alone gets the gradient")])
