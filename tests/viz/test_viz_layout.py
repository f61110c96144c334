"""The layered layout on its own: deterministic, no overlaps, edges never cross a node box."""
import random

import pytest

from tinygrad_course.viz.sugiyama import _isotonic, layout


def random_dag(seed, n=40, p=0.08):
    rng = random.Random(seed)
    ids = [f"v{i}" for i in range(n)]
    sizes = {i: (rng.choice([44, 90, 160, 230]), rng.choice([28, 56, 71])) for i in ids}
    edges = []
    for a in range(n):
        for b in range(a + 1, n):
            if rng.random() < p:
                edges.append((f"e{len(edges)}", ids[a], ids[b]))
    return ids, sizes, edges


def boxes(lay, sizes):
    return {v: (lay.x[v] - sizes[v][0] / 2, lay.y[v] - sizes[v][1] / 2,
                lay.x[v] + sizes[v][0] / 2, lay.y[v] + sizes[v][1] / 2) for v in lay.x}


def segment_hits_box(p, q, box, eps=0.5):
    """Liang-Barsky clip of segment p-q against the box shrunk by eps (touching the border is fine)."""
    x0, y0, x1, y1 = box[0] + eps, box[1] + eps, box[2] - eps, box[3] - eps
    dx, dy = q[0] - p[0], q[1] - p[1]
    t0, t1 = 0.0, 1.0
    for pk, qk in ((-dx, p[0] - x0), (dx, x1 - p[0]), (-dy, p[1] - y0), (dy, y1 - p[1])):
        if pk == 0:
            if qk < 0:
                return False
        else:
            t = qk / pk
            if pk < 0:
                t0 = max(t0, t)
            else:
                t1 = min(t1, t)
    return t0 < t1


@pytest.mark.parametrize("seed", range(8))
def test_edges_never_cross_a_node_box(seed):
    ids, sizes, edges = random_dag(seed)
    lay = layout(ids, sizes, edges)
    bx = boxes(lay, sizes)
    for eid, src, dst in edges:
        pts = lay.points[eid]
        for p, q in zip(pts, pts[1:]):
            for v, box in bx.items():
                if v in (src, dst):
                    continue
                assert not segment_hits_box(p, q, box), f"edge {eid} {src}->{dst} crosses node {v}"


@pytest.mark.parametrize("seed", range(4))
def test_nodes_do_not_overlap_and_edges_point_down(seed):
    ids, sizes, edges = random_dag(seed, n=60)
    lay = layout(ids, sizes, edges)
    bx = boxes(lay, sizes)
    items = list(bx.items())
    for i, (a, ba) in enumerate(items):
        for b, bb in items[i + 1:]:
            overlap = ba[0] < bb[2] and bb[0] < ba[2] and ba[1] < bb[3] and bb[1] < ba[3]
            assert not overlap, f"{a} overlaps {b}"
    for _, src, dst in edges:
        assert lay.ranks[src] < lay.ranks[dst]
        assert lay.y[src] < lay.y[dst]
    assert all(0 <= b[0] and b[2] <= lay.width and 0 <= b[1] and b[3] <= lay.height for b in bx.values())


def test_layout_is_deterministic():
    ids, sizes, edges = random_dag(3, n=80)
    a, b = layout(ids, sizes, edges), layout(list(ids), dict(sizes), list(edges))
    assert a == b


def test_chain_is_a_straight_column():
    ids = ["a", "b", "c"]
    lay = layout(ids, {i: (60, 30) for i in ids}, [("e0", "a", "b"), ("e1", "b", "c")])
    assert lay.x["a"] == lay.x["b"] == lay.x["c"]
    assert lay.y["a"] < lay.y["b"] < lay.y["c"]


def test_cycle_is_rejected():
    with pytest.raises(ValueError, match="cycle"):
        layout(["a", "b"], {"a": (10, 10), "b": (10, 10)}, [("e0", "a", "b"), ("e1", "b", "a")])


def test_isotonic_keeps_order_and_spacing():
    xs = _isotonic([10.0, 0.0, 5.0], [4.0, 4.0])
    assert xs[1] - xs[0] >= 4 - 1e-9 and xs[2] - xs[1] >= 4 - 1e-9
    assert abs(sum(xs) - 15.0) < 1e-9  # least squares keeps the mean


def test_crossing_check_detects_a_crossing():
    box = (10, 10, 20, 20)
    assert segment_hits_box((0, 15), (30, 15), box)
    assert not segment_hits_box((0, 5), (30, 5), box)
    assert not segment_hits_box((15, 0), (15, 10), box)  # ending on the border is touching, not crossing


def test_parallel_edges_get_distinct_paths_side_by_side():
    # y = a * a: two edges Mul -> a between the same pair of boxes
    ids = ["mul", "a"]
    sizes = {"mul": (110, 28), "a": (280, 56)}
    lay = layout(ids, sizes, [("e0", "mul", "a"), ("e1", "mul", "a")])
    assert lay.paths["e0"] != lay.paths["e1"]
    left, right = lay.points["e0"], lay.points["e1"]
    # side by side along the whole way, not just at one point, and bowed apart in the gap
    assert all(p[0] < q[0] for p, q in zip(left, right))
    assert max(q[0] - p[0] for p, q in zip(left, right)) >= 20
    # both still start on the source's bottom edge and end on the target's top edge
    for pts in (left, right):
        assert abs(pts[0][1] - (lay.y["mul"] + 14)) < 1e-6 and abs(pts[-1][1] - (lay.y["a"] - 28)) < 1e-6
        assert abs(pts[0][0] - lay.x["mul"]) < 55 and abs(pts[-1][0] - lay.x["a"]) < 140
    # no label sizes given: nothing is labelled (test_viz_label_placement.py covers labels)
    assert lay.label_at == lay.label_box == {}


@pytest.mark.parametrize("seed", range(4))
def test_parallel_edges_in_random_dags_never_cross_boxes(seed):
    ids, sizes, edges = random_dag(seed)
    rng = random.Random(seed)
    doubled = edges + [(f"p{k}", s, d) for k, (_, s, d) in enumerate(rng.sample(edges, len(edges) // 3))]
    doubled += [(f"q{k}", s, d) for k, (_, s, d) in enumerate(edges[:3])]  # some bundles of three
    lay = layout(ids, sizes, doubled)
    assert lay == layout(list(ids), dict(sizes), list(doubled))
    bx = boxes(lay, sizes)
    for eid, src, dst in doubled:
        pts = lay.points[eid]
        for p, q in zip(pts, pts[1:]):
            for v, box in bx.items():
                if v not in (src, dst):
                    assert not segment_hits_box(p, q, box), f"edge {eid} {src}->{dst} crosses node {v}"
    bundles = {}
    for eid, src, dst in doubled:
        bundles.setdefault((src, dst), []).append(lay.paths[eid])
    assert all(len(set(paths)) == len(paths) for paths in bundles.values())
