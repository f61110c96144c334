"""Chapter 05, the loss's first half: checks for the learner's LogSoftmax (a `tc.autograd.Function` with
forward and backward), compared with the framework's `F.log_softmax` and its gradient on fixed float64
inputs, large logits included, with the usual mistakes named."""
import numpy as np

import tinygrad_course as tc

from .. import mistakes
from ..registry import exercise

_F = tc.nn.functional


@exercise("05.8", title="log_softmax forward and backward", points=3,
          forbidden=["tinygrad_course.nn.functional.log_softmax", "tinygrad_course.nn.functional.softmax",
                     "tinygrad_course.nn.functional.cross_entropy"])
def log_softmax_check(t, LogSoftmax):
    t.true(isinstance(LogSoftmax, type) and issubclass(LogSoftmax, tc.autograd.Function),
           f"LogSoftmax to be a subclass of tc.autograd.Function (got {LogSoftmax!r})",
           hint="class LogSoftmax(tc.autograd.Function): with @staticmethod forward(ctx, x, dim) and backward(ctx, grad)")
    rng = np.random.default_rng(5)
    cases = [((4, 6), 1, 0.0), ((3, 5), 0, 0.0), ((2, 3, 4), -1, 0.0), ((3, 4), 1, 1000.0)]
    for shape, dim, offset in cases:
        x = rng.standard_normal(shape) + offset
        given = f"x of shape {shape}{f' (every logit near {offset:g})' if offset else ''}, dim={dim}"
        mine, ref = tc.tensor(x, requires_grad=True), tc.tensor(x, requires_grad=True)
        out = LogSoftmax.apply(mine, dim)
        expected = _F.log_softmax(ref, dim)
        t.true(isinstance(out, tc.Tensor), f"LogSoftmax.apply(x, {dim}) to return a tc.Tensor (got {type(out).__name__})")
        naive = x - np.log(np.exp(x).sum(axis=dim, keepdims=True)) if not offset else None
        t.close(out, expected.detach().numpy(), f"LogSoftmax.apply(x, {dim})", given=given, mistakes=[
            mistakes.custom(lambda g, e: not np.isfinite(g).all(),
                            "exp overflowed: with large logits exp(x) is inf",
                            "subtract each row's maximum first: log_softmax(x) = (x - m) - log(sum(exp(x - m)))"),
            mistakes.custom(lambda g, e, n=naive: n is not None and g.shape == e.shape and np.allclose(g, np.exp(e)),
                            "your output is the softmax, not its logarithm", "log_softmax = x - logsumexp(x)")])
        weight = tc.tensor(rng.standard_normal(shape))
        (expected * weight).sum().backward()
        (out * weight).sum().backward()
        g, p = weight.numpy(), np.exp(expected.detach().numpy())
        t.close(mine.grad, ref.grad.numpy(), f"x.grad after a backward pass through your LogSoftmax (dim={dim})",
                given=given, mistakes=[
                    mistakes.custom(lambda got, e, g=g, p=p: np.allclose(got, g - p),
                                    "your gradient is grad - softmax: the softmax must be scaled by the sum of the "
                                    "incoming gradient along dim",
                                    "d/dx of log_softmax: grad - softmax(x) * grad.sum(dim, keepdim=True)"),
                    mistakes.custom(lambda got, e, g=g, p=p: np.allclose(got, g * (1 - p)),
                                    "your gradient is element-wise, grad * (1 - softmax): every output depends on "
                                    "every input of its row (the sum in logsumexp)",
                                    "d/dx of log_softmax: grad - softmax(x) * grad.sum(dim, keepdim=True)")])
