"""Broadcasting picture: shapes aligned from the right, size-1 dimensions stretched (stride 0, no copy)."""
from html import escape

import numpy as np

CELL = 26


def broadcast_shape(*shapes):
    """The broadcast result shape, or raise ValueError naming the mismatching dimension."""
    ndim = max(len(s) for s in shapes)
    padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
    out = []
    for d in range(ndim):
        sizes = {p[d] for p in padded} - {1}
        if len(sizes) > 1:
            raise ValueError(f"shapes {' and '.join(str(tuple(s)) for s in shapes)} cannot be broadcast: "
                             f"dimension {d - ndim} has sizes {sorted(sizes)}")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


class BroadcastPicture:
    """HTML: one row per operand (aligned right), stretched dims marked, small 2-D grids when they fit."""

    def __init__(self, shapes, names):
        self.shapes, self.names = [tuple(s) for s in shapes], names
        self.result = broadcast_shape(*self.shapes)

    def _table(self):
        nd = len(self.result)
        rows = []
        for name, s in zip(self.names, self.shapes):
            padded = (None,) * (nd - len(s)) + s
            cells = []
            for size, out in zip(padded, self.result):
                if size is None:
                    cells.append(f'<td style="color:#6a3d9a">(1) &rarr; {out}</td>')
                elif size == 1 and out != 1:
                    cells.append(f'<td style="color:#6a3d9a">1 &rarr; {out}<br><small>stride 0</small></td>')
                else:
                    cells.append(f"<td>{size}</td>")
            rows.append(f"<tr><th>{escape(name)} {s}</th>{''.join(cells)}</tr>")
        rows.append(f"<tr><th>result {self.result}</th>" + "".join(f"<td><b>{n}</b></td>" for n in self.result) + "</tr>")
        return ('<table style="font-family:monospace;border-collapse:collapse" border="1" cellpadding="4">'
                + "".join(rows) + "</table>")

    def _grids(self):
        if len(self.result) > 2 or any(n > 8 for n in self.result):
            return ""
        rr, rc = (1,) * (2 - len(self.result)) + self.result
        svgs = []
        for name, s in zip(self.names + ["result"], self.shapes + [self.result]):
            r, c = (1,) * (2 - len(s)) + s
            cells = []
            for i in range(rr):
                for j in range(rc):
                    real = (i < r or r == rr) and (j < c or c == rc) and (r != 1 or i == 0) and (c != 1 or j == 0)
                    fill = "#dbe9fb" if real else "#f3f3f3"
                    dash = "" if real else ' stroke-dasharray="3 2"'
                    src = f"{i if r > 1 else 0},{j if c > 1 else 0}"
                    cells.append(f'<rect x="{j * CELL}" y="{18 + i * CELL}" width="{CELL}" height="{CELL}" '
                                 f'fill="{fill}" stroke="#888"{dash}/><text x="{j * CELL + CELL / 2}" '
                                 f'y="{18 + i * CELL + 17}" text-anchor="middle" font-size="9">{src}</text>')
            svgs.append(f'<svg xmlns="http://www.w3.org/2000/svg" width="{rc * CELL + 2}" height="{rr * CELL + 20}" '
                        f'font-family="monospace" font-size="11" style="margin-right:18px">'
                        f'<text x="0" y="12">{escape(name)} {s}</text>{"".join(cells)}</svg>')
        return ('<div style="margin-top:8px">' + "".join(svgs) + '<div style="font-size:11px;color:#555">'
                "dashed cells are not copies: they read the same element again (stride 0)</div></div>")

    def _repr_html_(self):
        return f'<div class="tcv-broadcast">{self._table()}{self._grids()}</div>'

    def __repr__(self):
        return " + ".join(str(s) for s in self.shapes) + f" -> {self.result}"


def broadcast(*operands, names=None):
    """Picture how ``operands`` (tensors, arrays or shapes) broadcast together, e.g. (3, 1) + (1, 4)."""
    shapes = [tuple(o) if isinstance(o, (tuple, list)) else tuple(np.shape(o) if isinstance(o, np.ndarray)
              else o.shape) for o in operands]
    names = list(names) if names else [chr(ord("a") + i) for i in range(len(shapes))]
    return BroadcastPicture(shapes, names)
