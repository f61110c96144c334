"""Storage/stride explorer: which cells of the flat storage each element of a view addresses.

``tc.viz.storage(x, x.T, x[:, 1])`` draws the shared storage once and each view as a grid; every
element shows the storage index it reads (offset + sum(index * stride)). Hovering an element
highlights its storage cell (pure CSS, so it also works in a static HTML export).
"""
from html import escape

import numpy as np

from ..shapes import contiguous_strides
from ._tensors import to_numpy
from .names import caller_frame

CELL = 38
PALETTE = ["#fde0dd", "#e0ecf4", "#e5f5e0", "#fff7bc", "#efedf5", "#fee6ce", "#deebf7", "#f7fcb9"]


def view_info(t):
    """(shape, strides in elements, storage offset, values of the whole storage or None)."""
    if isinstance(t, np.ndarray):
        item = t.itemsize
        base = t
        while isinstance(base.base, np.ndarray):
            base = base.base
        offset = (t.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // item
        return t.shape, tuple(s // item for s in t.strides), offset, base.reshape(-1)
    stride = t.stride() if callable(getattr(t, "stride", None)) else t.strides
    offset = t.storage_offset() if callable(getattr(t, "storage_offset", None)) else 0
    storage = None
    try:  # a NumPy-backed tensor (tc) exposes its whole storage through the view's base array
        arr = t.detach().numpy() if hasattr(t, "detach") else None
        base = arr
        while isinstance(getattr(base, "base", None), np.ndarray):
            base = base.base
        if base is not arr and base.flags["C_CONTIGUOUS"]:
            storage = base.reshape(-1)
    except Exception:
        storage = None
    return tuple(t.shape), tuple(stride), int(offset), storage


def addresses(shape, strides, offset):
    """Storage index of every element of a view, as an array of ``shape``."""
    idx = np.full(shape, offset, dtype=np.int64)
    for d, (n, s) in enumerate(zip(shape, strides)):
        idx = idx + (np.arange(n) * s).reshape((n,) + (1,) * (len(shape) - d - 1))
    return idx


class StorageView:
    """HTML picture of one storage and several views of it (shape, strides, offset per view)."""

    def __init__(self, views, names):
        self.views = []
        storage, size = None, 0
        for t, name in zip(views, names):
            shape, strides, offset, st = view_info(t)
            addr = addresses(shape, strides, offset)
            vals = to_numpy(t)
            self.views.append((name, shape, strides, offset, addr, vals))
            if st is not None and (storage is None or st.size > storage.size):
                storage = st
            size = max(size, int(addr.max()) + 1 if addr.size else 0)
        if storage is not None and storage.size >= size and storage.dtype != np.uint8:
            self.storage = storage
        else:  # rebuild storage values from the views themselves
            self.storage = np.full(size, np.nan)
            for *_, addr, vals in self.views:
                self.storage[addr.reshape(-1)] = np.asarray(vals, dtype=float).reshape(-1)

    def _cell(self, x, y, text, sub, k, tip):
        fill = PALETTE[k % len(PALETTE)] if k is not None else "#fff"
        cls = f' class="c{k}"' if k is not None else ""
        return (f'<g{cls}><title>{escape(tip)}</title><rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" '
                f'fill="{fill}" stroke="#888"/><text x="{x + CELL / 2}" y="{y + 16}" text-anchor="middle">'
                f'{escape(text)}</text><text x="{x + CELL / 2}" y="{y + 31}" text-anchor="middle" '
                f'font-size="9" fill="#666">{escape(sub)}</text></g>')

    def _repr_html_(self):
        n = self.storage.size
        parts, y = [], 22
        parts.append(f'<text x="0" y="14" font-weight="bold">storage ({n} elements)</text>')
        for k in range(n):
            parts.append(self._cell(k * CELL, y, _num(self.storage[k]), f"[{k}]", k, f"storage[{k}]"))
        y += CELL + 30
        for name, shape, strides, offset, addr, vals in self.views:
            contiguous = strides == contiguous_strides.__wrapped__(shape)
            parts.append(f'<text x="0" y="{y}" font-weight="bold">{escape(name)}</text>'
                         f'<text x="{len(name) * 8 + 12}" y="{y}">shape {tuple(shape)}  strides {tuple(strides)}  '
                         f'offset {offset}  {"contiguous" if contiguous else "not contiguous"}</text>')
            y += 8
            grid_a = addr.reshape(1, -1) if addr.ndim < 2 else addr.reshape(-1, addr.shape[-1])
            grid_v = np.asarray(vals).reshape(grid_a.shape)
            for r in range(grid_a.shape[0]):
                for c in range(grid_a.shape[1]):
                    k = int(grid_a[r, c])
                    index = np.unravel_index(r * grid_a.shape[1] + c, shape) if shape else ()
                    terms = " + ".join(f"{i}*{s}" for i, s in zip(index, strides))
                    tip = f"{name}{list(map(int, index))} = storage[{offset} + {terms}] = storage[{k}]"
                    parts.append(self._cell(c * CELL, y + r * CELL, _num(grid_v[r, c]), f"->{k}", k, tip))
            y += grid_a.shape[0] * CELL + 30
        width = max(n, max((v[4].shape[-1] if v[4].ndim else 1) for v in self.views)) * CELL + 2
        hover = "".join(f".tcv-storage:has(.c{k}:hover) .c{k} rect{{stroke:#d2691e;stroke-width:3}}"
                        for k in range(n))
        return (f'<div class="tcv-storage"><style>{hover}</style><svg xmlns="http://www.w3.org/2000/svg" '
                f'width="{max(width, 420)}" height="{y - 20}" font-family="monospace" font-size="12">'
                + "".join(parts) + "</svg></div>")

    def __repr__(self):
        lines = [f"storage: {self.storage.size} elements"]
        for name, shape, strides, offset, *_ in self.views:
            lines.append(f"{name}: shape {tuple(shape)} strides {tuple(strides)} offset {offset}")
        return "\n".join(lines)


def _num(v):
    v = float(v)
    if np.isnan(v):
        return "?"
    return str(int(v)) if v == int(v) and abs(v) < 1e6 else f"{v:.3g}"


def storage(*views, names=None):
    """Draw the storage shared by ``views`` and which cell each element of each view addresses.

    names: labels for the views (default: the caller's variable names, else 'view 0', ...).
    """
    if names is None:
        frame = caller_frame()
        local = {id(v): k for k, v in (frame.f_locals.items() if frame else []) if not k.startswith("_")}
        names = [local.get(id(v), f"view {i}") for i, v in enumerate(views)]
    return StorageView(views, list(names))
