"""The backward of layer and batch norm (`ops/fused.py`'s `Normalize`) on backend arrays, used when no graph is
being built (create_graph=False): the formulas of the recorded backward in the same order, without an op per
step, writing in place where that saves an input-sized temporary."""
from __future__ import annotations


_MANY = 4096


def trailing_rows(a, dims):
    """(a as rows of the normalised numbers, their count, the statistics' keepdims shape) when `dims` are
    a's trailing dims (layer norm), else None. NumPy reduces each short row of a C-ordered array in a
    loop of its own; one matrix-vector product with a vector of ones sums all rows at once, several
    times faster at a transformer's widths (64-1024), in float32 as NumPy's sum."""
    k = len(dims)
    if k == 0 or tuple(dims) != tuple(range(a.ndim - k, a.ndim)) or a.size < _MANY or \
            a.dtype.name not in ("float32", "float64"):
        return None  # a few numbers (generation's one row) cost less the plain way
    n = 1
    for d in a.shape[a.ndim - k:]:
        n *= d
    return a.reshape(-1, n), n, a.shape[:a.ndim - k] + (1,) * k


def normalize_grads_array(ctx, xp, g, a, weight, dims, param_dims):
    """`Normalize.backward` on arrays (its `fused_backward`): the same formulas in the same order, in place
    where that saves an input-sized temporary; arrays (or None) for x, weight and bias. For layer norm the
    row and column sums are products with vectors of ones (see `trailing_rows`)."""
    rows = None if ctx.frozen else trailing_rows(a, dims)
    if rows is not None and tuple(ctx.param_shape) == a.shape[a.ndim - len(dims):]:  # layer norm's weight
        return _layer_norm_grads(ctx, xp, g, a, weight, rows)
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


def _layer_norm_grads(ctx, xp, g, a, weight, rows):
    """The layer-norm case of `normalize_grads_array` on (R, n) rows: the same formulas, each sum over a
    row or over the rows one matrix-vector product."""
    a2, n, _ = rows
    r = a2.shape[0]
    need = ctx.needs_input_grad
    g2 = g.reshape(r, n)
    rstd = ctx.rstd.reshape(r, 1)
    xhat = a2 - ctx.batch_mean.reshape(r, 1)
    xhat *= rstd
    gx = gw = gb = None
    if need[1] or need[2]:
        ones_r = xp.ones((1, r), dtype=a.dtype)
        if need[1]:
            gw = xp.matmul(ones_r, g2 * xhat).reshape(weight._data.shape)
        if need[2]:
            gb = xp.matmul(ones_r, g2).reshape(ctx.bias_shape)
    if need[0]:
        ones_n = xp.ones((n, 1), dtype=a.dtype)
        gxhat = g2 * weight._data.reshape(n) if weight is not None else g2.copy()
        t = gxhat * xhat
        m2 = xp.matmul(t, ones_n)
        m2 /= n
        m1 = xp.matmul(gxhat, ones_n)
        m1 /= n
        gx = gxhat
        gx -= m1
        gx -= xp.multiply(xhat, m2, out=t)  # t (gxhat * xhat) is no longer needed
        gx *= rstd
        gx = gx.reshape(a.shape)
    return gx, gw, gb
