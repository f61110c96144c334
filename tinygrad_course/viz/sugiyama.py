"""A small layered (Sugiyama-style) layout for DAGs, computed in Python, deterministic.

Steps: longest-path ranks (sources on top) -> dummy nodes on long edges -> barycenter ordering
sweeps that keep the ordering with the fewest crossings -> x by isotonic regression towards the
neighbours' mean (nodes never overlap, long edges straighten) -> edge paths that run vertically
inside a layer's band (directly above/below their own node or dummy) and bend only in the empty gap
between bands, so an edge never crosses a node box. Parallel edges (same source and target, as in
``a * a``) leave and enter their boxes side by side and bow apart in the gap, so each stays visible.
Edge labels of known sizes are then placed beside their own edges, clear of boxes and of each other
(``label_placement.py``), and the drawing is widened to hold them.
"""
from bisect import bisect_right, insort
from dataclasses import dataclass

from .label_placement import place_labels

NODE_GAP = 24.0      # horizontal space between neighbours in a layer
DUMMY_WIDTH = 14.0   # width reserved for an edge passing through a layer
LAYER_GAP = 46.0     # vertical space between layers (edge bends and gradient labels live here)
MARGIN = 16.0
SWEEPS = 8
PARALLEL_GAP = 16.0     # distance between the ports of parallel edges (same source and target)
PARALLEL_BULGE = 14.0   # how far parallel edges bow apart in the gap between layers


@dataclass
class Layout:
    """Node centres, edge paths (SVG 'd' strings + sampled points) and the drawing size."""
    x: dict
    y: dict
    width: float
    height: float
    paths: dict        # edge id -> SVG path 'd'
    points: dict       # edge id -> list of (x, y) along the path (beziers sampled)
    label_at: dict     # edge id -> (x, y): centre of the edge's label (edges given a label size only)
    ranks: dict
    label_box: dict    # edge id -> (x0, y0, x1, y1): the rectangle reserved for its label


def _ranks(ids, edges):
    indeg = {i: 0 for i in ids}
    out = {i: [] for i in ids}
    for _, s, d in edges:
        indeg[d] += 1
        out[s].append(d)
    rank = {i: 0 for i in ids}
    queue = [i for i in ids if indeg[i] == 0]
    head = 0
    while head < len(queue):
        u = queue[head]
        head += 1
        for v in out[u]:
            rank[v] = max(rank[v], rank[u] + 1)
            indeg[v] -= 1
            if indeg[v] == 0:
                queue.append(v)
    if len(queue) != len(ids):
        raise ValueError("layout needs a DAG; the graph has a cycle")
    return rank


def _crossings(upper_pos, lower_pos, links):
    """Number of crossing segments between two adjacent layers (inversion count)."""
    pairs = sorted((upper_pos[a], lower_pos[b]) for a, b in links)
    seen, count = [], 0
    for _, b in pairs:
        count += len(seen) - bisect_right(seen, b)
        insort(seen, b)
    return count


def _bezier(curve, t):
    """Point at ``t`` on the cubic Bezier with control points ``curve``."""
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = curve
    a, b, c, d = (1 - t) ** 3, 3 * (1 - t) ** 2 * t, 3 * (1 - t) * t ** 2, t ** 3
    return a * x0 + b * x1 + c * x2 + d * x3, a * y0 + b * y1 + c * y2 + d * y3


def _parallel_offsets(edges):
    """Edge id -> its offset from the centre of its bundle of parallel edges (0 when alone).

    ``y = a * a`` has two edges Mul -> a; they get -0.5 and +0.5 so they are drawn side by side.
    """
    bundles = {}
    for eid, s, d in edges:
        bundles.setdefault((s, d), []).append(eid)
    return {eid: k - (len(bundle) - 1) / 2 for bundle in bundles.values() for k, eid in enumerate(bundle)}


def _isotonic(targets, mins):
    """Positions closest (least squares) to ``targets`` with x[i+1] - x[i] >= mins[i] (PAVA)."""
    offs = [0.0]
    for m in mins:
        offs.append(offs[-1] + m)
    vals = [t - o for t, o in zip(targets, offs)]
    blocks = []  # [sum, count]
    for v in vals:
        blocks.append([v, 1])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            s, c = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += c
    out = []
    for s, c in blocks:
        out += [s / c] * c
    return [y + o for y, o in zip(out, offs)]


def layout(ids, sizes, edges, label_sizes=None):
    """Lay out nodes ``ids`` with ``sizes[id] = (w, h)`` and ``edges = [(edge_id, src, dst), ...]``.

    Edges point downwards (src above dst). ``label_sizes[edge_id] = (w, h)`` gives the edges that carry
    a label; their label rectangles touch no node box and no other label. Returns a :class:`Layout`.
    """
    label_sizes = label_sizes or {}
    ids = list(ids)
    rank = _ranks(ids, edges)
    n_layers = max(rank.values(), default=-1) + 1
    width = {i: float(sizes[i][0]) for i in ids}
    height = {i: float(sizes[i][1]) for i in ids}
    chains = {}
    parallel = _parallel_offsets(edges)
    parallel_count = {}
    for _, s, d in edges:
        parallel_count[(s, d)] = parallel_count.get((s, d), 0) + 1
    up, down = {i: [] for i in ids}, {i: [] for i in ids}
    for eid, s, d in edges:
        chain = [s]
        for r in range(rank[s] + 1, rank[d]):
            dummy = f"_d{eid}_{r}"
            rank[dummy], width[dummy], height[dummy] = r, DUMMY_WIDTH, 0.0
            up[dummy], down[dummy] = [], []
            chain.append(dummy)
        chain.append(d)
        for a, b in zip(chain, chain[1:]):
            down[a].append(b)
            up[b].append(a)
        chains[eid] = chain

    # initial order: layer 0 as given, then children in the order of their first parent
    layers = [[] for _ in range(n_layers)]
    placed = set()
    for i in ids:
        if rank[i] == 0:
            layers[0].append(i)
            placed.add(i)
    for r in range(n_layers - 1):
        for a in layers[r]:
            for b in down[a]:
                if b not in placed:
                    placed.add(b)
                    layers[r + 1].append(b)

    def positions(layer):
        return {v: k for k, v in enumerate(layer)}

    def total_crossings(ls):
        total = 0
        for r in range(len(ls) - 1):
            links = [(a, b) for a in ls[r] for b in down[a]]
            total += _crossings(positions(ls[r]), positions(ls[r + 1]), links)
        return total

    best, best_c = [list(l) for l in layers], total_crossings(layers)
    for sweep in range(SWEEPS):
        order = range(1, n_layers) if sweep % 2 == 0 else range(n_layers - 2, -1, -1)
        for r in order:
            ref = positions(layers[r - 1] if sweep % 2 == 0 else layers[r + 1])
            nbrs = up if sweep % 2 == 0 else down
            keyed = []
            for k, v in enumerate(layers[r]):
                ps = [ref[u] for u in nbrs[v]]
                keyed.append((sum(ps) / len(ps) if ps else float(k), k, v))
            layers[r] = [v for _, _, v in sorted(keyed)]
        c = total_crossings(layers)
        if c < best_c:
            best, best_c = [list(l) for l in layers], c
    layers = best

    # x coordinates: pack, then pull towards neighbours (isotonic keeps order and spacing)
    x = {}
    for layer in layers:
        cur = 0.0
        for v in layer:
            x[v] = cur + width[v] / 2
            cur += width[v] + NODE_GAP
    for it in range(12):
        down_pass = it % 2 == 0
        rs = range(n_layers) if down_pass else range(n_layers - 1, -1, -1)
        for r in rs:
            layer = layers[r]
            targets = []
            for v in layer:
                nb = (up[v] if down_pass else down[v]) or (up[v] + down[v])
                targets.append(sum(x[u] for u in nb) / len(nb) if nb else x[v])
            mins = [(width[a] + width[b]) / 2 + NODE_GAP for a, b in zip(layer, layer[1:])]
            for v, nx in zip(layer, _isotonic(targets, mins)):
                x[v] = nx
    left = min((x[v] - width[v] / 2 for v in x), default=0.0)
    for v in x:
        x[v] = round(x[v] - left + MARGIN, 2)
    right = max((x[v] + width[v] / 2 for v in x), default=0.0) + MARGIN

    # y: one band per layer, as tall as its tallest node
    band_top, y, cur = [], {}, MARGIN
    for layer in layers:
        h = max((height[v] for v in layer), default=0.0)
        band_top.append((cur, cur + h))
        for v in layer:
            y[v] = round(cur + h / 2, 2)
        cur += h + LAYER_GAP
    total_h = cur - LAYER_GAP + MARGIN

    segments, points, preferred = {}, {}, {}
    for eid, chain in chains.items():
        s, t = chain[0], chain[-1]
        off = parallel[eid]
        gap = min(PARALLEL_GAP, (min(width[s], width[t]) - 12) / max(parallel_count[(s, t)] - 1, 1))
        dx, bulge = off * gap, off * PARALLEL_BULGE
        # parallel edges leave and enter their boxes side by side (ports dx apart) and bow apart in the
        # empty gap between bands; passing through a dummy they run at its centre
        xs = [x[v] + (dx if k in (0, len(chain) - 1) else 0.0) for k, v in enumerate(chain)]
        px, py = xs[0], y[s] + height[s] / 2
        seg = [("M", px, py)]
        pts = [(px, py)]
        for k, (a, b) in enumerate(zip(chain, chain[1:])):
            top, bot = band_top[rank[a]][1], band_top[rank[b]][0]
            xa, xb = xs[k], xs[k + 1]
            mid = (top + bot) / 2
            curve = ((xa, top), (xa + bulge, mid), (xb + bulge, mid), (xb, bot))
            seg += [("L", xa, top), ("C", xa + bulge, mid, xb + bulge, mid, xb, bot)]
            pts.append((xa, top))
            pts += [_bezier(curve, j / 8) for j in range(1, 9)]
            if b != t:  # pass straight through the dummy's band
                b_bottom = band_top[rank[b]][1]
                seg.append(("L", xb, b_bottom))
                pts.append((xb, b_bottom))
        end = (xs[-1], y[t] - height[t] / 2)
        seg.append(("L", end[0], end[1]))
        pts.append(end)
        segments[eid] = seg
        points[eid] = pts
        # a label is wanted near the receiving end; parallel edges write theirs to their own side
        preferred[eid] = (_bezier(curve, 0.7 - 0.22 * int(abs(off)))[1], -1 if off < 0 else 1)

    boxes = [(x[v] - width[v] / 2, y[v] - height[v] / 2, x[v] + width[v] / 2, y[v] + height[v] / 2) for v in ids]
    label_box = place_labels({e: label_sizes[e] for e in chains if e in label_sizes}, points, boxes, preferred)
    # widen the drawing so every label fits: shift right if one sticks out on the left
    shift = max(0.0, MARGIN - min((r[0] for r in label_box.values()), default=MARGIN))
    right = max([right - MARGIN] + [r[2] for r in label_box.values()]) + shift + MARGIN
    if shift:
        x = {v: round(x[v] + shift, 2) for v in x}
    paths = {eid: "".join(_fmt_segment(sg, shift) for sg in seg) for eid, seg in segments.items()}
    points = {eid: [(round(a + shift, 2), round(b, 2)) for a, b in pts] for eid, pts in points.items()}
    label_box = {e: (round(r[0] + shift, 1), round(r[1], 1), round(r[2] + shift, 1), round(r[3], 1))
                 for e, r in label_box.items()}
    label_at = {e: (round((r[0] + r[2]) / 2, 1), round((r[1] + r[3]) / 2, 1)) for e, r in label_box.items()}
    real = set(ids)
    return Layout({v: x[v] for v in ids}, {v: y[v] for v in ids}, round(right, 1), round(total_h, 1),
                  paths, points, label_at, {v: rank[v] for v in real}, label_box)


def _fmt_segment(seg, shift):
    """One SVG path command, its x coordinates moved right by ``shift``."""
    if seg[0] == "C":
        _, x1, y1, x2, y2, x3, y3 = seg
        return f"C{x1 + shift:.1f},{y1:.1f} {x2 + shift:.1f},{y2:.1f} {x3 + shift:.1f},{y3:.1f}"
    return f"{seg[0]}{seg[1] + shift:.1f},{seg[2]:.1f}"
