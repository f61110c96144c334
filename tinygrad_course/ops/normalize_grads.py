"""The backward of layer and batch norm (`ops/fused.py`'s `Normalize`) on backend arrays, used when no graph is
being built (create_graph=False): the formulas of the recorded backward in the same order, without an op per
step, writing in place where that saves an input-sized temporary."""
from __future__ import annotations



def normalize_grads_array(ctx, xp, g, a, weight, dims, param_dims):
    """`Normalize.backward` on arrays (its `fused_backward`): the same formulas in the same order (equal
    results), in place where that saves an input-sized temporary; arrays (or None) for x, weight and bias."""
    need = ctx.needs_input_grad
    rstd = ctx.rstd
    xhat = a - ctx.batch_mean
    xhat *= rstd
    gx = gw = gb = None
    if need[1]:
        gw = (g * xhat).sum(axis=param_dims).reshape(weight._data.shape)
    if need[2]:
        gb = g.sum(axis=param_dims).reshape(ctx.bias_shape)
    if need[0]:
        own = weight is not None  # gxhat is a fresh array that may be overwritten (not g itself)
        gxhat = g * weight._data.reshape(ctx.param_shape) if own else g
        if ctx.frozen:
            return gxhat * rstd, gw, gb
        t = gxhat * xhat
        m2 = t.mean(axis=dims, keepdims=True)
        m1 = gxhat.mean(axis=dims, keepdims=True)
        if own:
            gxhat -= m1
            gx = gxhat
        else:
            gx = gxhat - m1
        gx -= xp.multiply(xhat, m2, out=t)  # t (gxhat * xhat) is no longer needed
        gx *= rstd
    return gx, gw, gb
