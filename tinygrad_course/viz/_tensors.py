"""Duck-typed access to tensors (tinygrad_course or PyTorch) and compact value formatting."""
import numpy as np


def is_tensor(obj):
    """True for objects that look like a framework tensor (have shape, grad_fn and requires_grad)."""
    return (not isinstance(obj, type) and hasattr(obj, "grad_fn") and hasattr(obj, "requires_grad")
            and hasattr(obj, "shape"))


def to_numpy(t):
    """A NumPy copy of a tensor's values (tc or torch, any device); None stays None."""
    if t is None:
        return None
    if isinstance(t, np.ndarray):
        return t
    x = t
    for step in ("detach", "cpu"):
        fn = getattr(x, step, None)
        if callable(fn):
            x = fn()
    if hasattr(x, "numpy"):
        try:
            return np.asarray(x.numpy())
        except Exception:  # e.g. dtypes NumPy lacks
            pass
    if hasattr(x, "float") and hasattr(x, "tolist"):
        return np.asarray(x.float().tolist())
    return np.asarray(x)


def shape_of(t):
    """The shape as a plain tuple of ints."""
    return tuple(int(s) for s in t.shape)


def dtype_name(t):
    """'float32' for both tc.float32 and torch.float32."""
    return str(getattr(t, "dtype", "?")).rsplit(".", 1)[-1]


def device_name(t):
    """'cpu', 'cuda:0', ..."""
    return str(getattr(t, "device", "cpu"))


def fmt_shape(shape):
    """(3, 4) -> '(3, 4)'; () -> '()'; (5,) -> '(5,)'."""
    return str(tuple(shape))


def _fmt_number(v):
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    v = float(v)
    if v == 0:
        return "0"
    if np.isnan(v) or np.isinf(v):
        return str(v)
    return f"{v:.4g}"


def preview(t, max_items=4):
    """A one-line preview of a tensor's values, e.g. '-0.0898' or '[0.1, 0.2, 0.3, ...]'."""
    if t is None:
        return "None"
    a = to_numpy(t)
    if a.ndim == 0:
        return _fmt_number(a.item())
    flat = a.reshape(-1)
    items = ", ".join(_fmt_number(v) for v in flat[:max_items])
    more = ", ..." if flat.size > max_items else ""
    return f"[{items}{more}]"


def full_text(t, threshold=64):
    """A multi-line text of a tensor's values (summarized beyond ``threshold`` elements)."""
    if t is None:
        return "None"
    a = to_numpy(t)
    with np.printoptions(precision=4, threshold=threshold, edgeitems=3, suppress=True, linewidth=60):
        return np.array2string(a, separator=", ")
