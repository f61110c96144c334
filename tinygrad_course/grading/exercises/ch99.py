"""Chapter 99: a NumPy-only example chapter.

It backs the grading machinery's own tests (``tests/grading/fixtures``) and is the template for chapter
authors: one ``@exercise`` per exercise, expectations through ``t``, mistakes named for targeted hints.
"""
import numpy as np

from .. import mistakes
from ..registry import exercise


@exercise("99.1", title="broadcast shape", points=2, forbidden=["numpy.broadcast_shapes", "numpy.broadcast"])
def broadcast_shape_check(t, broadcast_shape):
    t.equal(broadcast_shape((3, 1), (1, 4)), (3, 4), what="broadcast_shape((3, 1), (1, 4))",
            hint="size-1 dimensions stretch to match the other shape")
    t.equal(broadcast_shape((5, 3), (3,)), (5, 3), what="broadcast_shape((5, 3), (3,))",
            hint="align the shapes from the right; a missing dimension counts as size 1")
    t.raises(ValueError, broadcast_shape, (2, 3), (4,), what="broadcast_shape((2, 3), (4,))",
             hint="two sizes that differ and are both != 1 cannot broadcast")


@exercise("99.2", title="gradient of a broadcast add", points=3)
def add_backward_check(t, add_backward):
    rng = np.random.default_rng(0)
    grad_out = rng.standard_normal((4, 3))
    grad_a, grad_b = add_backward(grad_out, (4, 3), (3,))
    t.close(grad_a, grad_out, what="gradient for a (shape (4, 3))")
    t.close(grad_b, grad_out.sum(axis=0), what="gradient for b (shape (3,))",
            mistakes=[mistakes.missing_broadcast_sum()])


@exercise("99.3", title="accumulate into .grad", points=1)
def accumulate_check(t, accumulate):
    class Param:
        grad = None

    p = Param()
    first, second = np.ones(3), np.arange(3.0)
    accumulate(p, first)
    t.close(p.grad, first, what="p.grad after one call (grad was None)")
    accumulate(p, second)
    t.close(p.grad, first + second, what="p.grad after a second call",
            mistakes=[mistakes.overwrote_instead_of_accumulating(previous=first)])
    # plug the learner's piece into something real: gradient descent on f(w) = |w - 3|^2 with accumulation
    w = Param()
    value = np.zeros(2)
    for _ in range(50):
        w.grad = None
        accumulate(w, 2 * (value - 3) * 0.5)
        accumulate(w, 2 * (value - 3) * 0.5)
        value = value - 0.1 * w.grad
    t.close(value, np.full(2, 3.0), what="w after 50 steps of gradient descent using your accumulate", atol=1e-3)
