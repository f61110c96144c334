"""Where each edge's gradient label goes: beside its own edge, clear of node boxes and other labels.

Labels are rectangles of a known size (the renderers estimate the text width from its character
count, see ``graph_view.label_size``). Edges with the least room (shortest) are placed first. Each
label is tried at heights along its own edge, nearest its preferred height first, written right or
left of the edge (preferred side first). A spot must touch no node box and no label placed before;
among those, the first that also covers no other edge's line wins, else the first free one. If the
whole edge is crowded, the label moves sideways past whatever blocks it, at the height where that move
is shortest; past the last obstacle of a row there is always room. Deterministic: the order of edges
and candidates depends only on the input.
"""
from bisect import bisect_left

CELL = 96.0        # grid cell size for the collision index
EDGE_GAP = 3.0     # space between a label and its own edge
PAD = 2.0          # space kept free around each label
STEP = 4.0         # vertical step between candidate spots along an edge
ARROW_ROOM = 9.0   # keep labels off the arrowhead at the receiving end


class _Index:
    """Rectangles in a uniform grid, for fast 'does this rectangle touch any stored one' questions.

    Each rectangle may carry an owner; ``hits(r, owner)`` ignores rectangles of that owner.
    """

    def __init__(self):
        self.cells = {}

    def add(self, r, owner=None):
        item = (r[0], r[1], r[2], r[3], owner)
        cells = self.cells
        for i in range(int(r[0] // CELL), int(r[2] // CELL) + 1):
            for j in range(int(r[1] // CELL), int(r[3] // CELL) + 1):
                cells.setdefault((i, j), []).append(item)

    def hits(self, r, owner=None):
        x0, y0, x1, y1 = r
        cells = self.cells
        for i in range(int(x0 // CELL), int(x1 // CELL) + 1):
            for j in range(int(y0 // CELL), int(y1 // CELL) + 1):
                for o in cells.get((i, j), ()):
                    if x0 < o[2] and o[0] < x1 and y0 < o[3] and o[1] < y1 and (owner is None or o[4] != owner):
                        return True
        return False

    def row(self, y0, y1):
        """Every stored rectangle whose vertical extent meets (y0, y1)."""
        seen, out = set(), []
        for (i, j), items in self.cells.items():
            if j * CELL <= y1 and (j + 1) * CELL >= y0:
                for o in items:
                    if o not in seen and o[1] < y1 and y0 < o[3]:
                        seen.add(o)
                        out.append(o)
        return out


def _x_span(pts, ys, y0, y1):
    """Smallest and largest x of the y-monotone polyline ``pts`` between heights y0 and y1."""
    lo, hi = bisect_left(ys, y0), bisect_left(ys, y1)
    xs = [_x_at(pts, ys, y0), _x_at(pts, ys, y1)] + [p[0] for p in pts[lo:hi]]
    return min(xs), max(xs)


def _x_at(pts, ys, y):
    k = bisect_left(ys, y)
    if k <= 0:
        return pts[0][0]
    if k >= len(pts):
        return pts[-1][0]
    (xa, ya), (xb, yb) = pts[k - 1], pts[k]
    return xa if yb == ya else xa + (xb - xa) * (y - ya) / (yb - ya)


def _beside(pts, ys, cy, w, h, side):
    """The label rectangle centred at height cy, written right (+1) or left (-1) of the edge."""
    y0, y1 = cy - h / 2, cy + h / 2
    lo, hi = _x_span(pts, ys, y0, y1)
    x0 = hi + EDGE_GAP if side > 0 else lo - EDGE_GAP - w
    return (x0, y0, x0 + w, y1)


def _padded(r, pad=PAD):
    return (r[0] - pad, r[1] - pad, r[2] + pad, r[3] + pad)


def place_labels(sizes, points, boxes, preferred):
    """Label rectangles ``{edge id: (x0, y0, x1, y1)}`` that touch no box in ``boxes`` nor each other.

    sizes: ``{edge id: (w, h)}`` of the labels to place; points: ``{edge id: [(x, y), ...]}`` the edge's
    path from top to bottom; boxes: node rectangles ``(x0, y0, x1, y1)``; preferred: ``{edge id: (y, side)}``
    the height the label's centre should be nearest and the side (+1 right, -1 left) to try first.
    """
    index, lines = _Index(), _Index()  # boxes and placed labels must not be touched; edges preferably not
    for b in boxes:
        index.add(_padded(b))
    for eid, pts in points.items():
        coarse = pts[::3] if (len(pts) - 1) % 3 == 0 else pts[::3] + [pts[-1]]
        for p, q in zip(coarse, coarse[1:]):
            lines.add((min(p[0], q[0]), p[1], max(p[0], q[0]), q[1]), eid)
    order = sorted(sizes, key=lambda e: (points[e][-1][1] - points[e][0][1], preferred[e][0], points[e][-1][0], e))
    placed = {}
    for eid in order:
        w, h = sizes[eid]
        pts = points[eid]
        ys = [p[1] for p in pts]
        want, side = preferred[eid]
        top, bottom = pts[0][1] + h / 2 + PAD, pts[-1][1] - h / 2 - ARROW_ROOM
        if top > bottom:
            top = bottom = (pts[0][1] + pts[-1][1]) / 2
        want = min(max(want, top), bottom)
        # candidate heights: the preferred one, then alternately further up and down the edge
        n_up, n_down = int((want - top) // STEP), int((bottom - want) // STEP)
        heights = [want]
        for k in range(1, max(n_up, n_down) + 1):
            if k <= n_up:
                heights.append(want - k * STEP)
            if k <= n_down:
                heights.append(want + k * STEP)
        rect = fallback = None
        for cy in heights:
            for s in (side, -side):
                r = _beside(pts, ys, cy, w, h, s)
                if index.hits(_padded(r, PAD / 2)):
                    continue
                if not lines.hits(r, eid):  # first choice: a spot that covers no other edge's line either
                    rect = r
                    break
                fallback = fallback or r
            if rect is not None:
                break
        rect = rect or fallback
        if rect is None:  # crowded all along: move sideways, at the height where that is the shortest move
            tries = [_sideways(index, pts, ys, cy, w, h, side) for cy in heights[::max(1, len(heights) // 6)]]
            rect = min(tries, key=lambda t: t[0])[1]
        index.add(rect)
        placed[eid] = rect
    return placed


def _sideways(index, pts, ys, cy, w, h, side):
    """(distance moved, rectangle): at height cy, the nearest free spot right or left of the edge."""
    base = {s: _beside(pts, ys, cy, w, h, s) for s in (1, -1)}
    row = index.row(cy - h / 2 - PAD, cy + h / 2 + PAD)
    best = None
    for s in (side, -side):
        r0 = base[s]
        if s > 0:
            starts = sorted({r0[0]} | {o[2] + PAD / 2 for o in row if o[2] + PAD / 2 > r0[0]})
        else:
            starts = sorted({r0[0]} | {o[0] - PAD / 2 - w for o in row if o[0] - PAD / 2 - w < r0[0]}, reverse=True)
        for x0 in starts:  # the last start is past every rectangle of the row, so one always fits
            r = (x0, r0[1], x0 + w, r0[3])
            if not index.hits(_padded(r, PAD / 2)):
                dist = abs(x0 - r0[0])
                if best is None or dist < best[0]:
                    best = (dist, r)
                break
    return best
