"""Gradient labels on edges: never on top of each other, never on a node box, beside their own edge.

Checked in layout coordinates on the example graphs (fan-out heavy ones included), on random DAGs
with parallel edges and long labels, and on the static SVG. The browser test measures the drawn text.
"""
import random
import xml.etree.ElementTree as ET

import pytest

from test_viz_layout import random_dag
from tinygrad_course import viz
from tinygrad_course.viz.collapse import make_view
from tinygrad_course.viz.graph_view import LABEL_H, label_size
from tinygrad_course.viz.label_placement import place_labels
from tinygrad_course.viz.sugiyama import layout
from viz_examples import FAN_OUT_CELL, fan_out_examples, frameworks, fw, run_example

SVG = "{http://www.w3.org/2000/svg}"


def overlap(a, b):
    """True when rectangles (x0, y0, x1, y1) share interior (touching borders is fine)."""
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def label_rects(data):
    """Edge id -> the rectangle reserved for its gradient label, from the widget data."""
    out = {}
    for e in data["edges"]:
        if e["grad"]:
            w, h = label_size(e["grad"]["value"])
            out[e["id"]] = (e["lx"] - w / 2, e["ly"] - h / 2, e["lx"] + w / 2, e["ly"] + h / 2)
    return out


def node_rects(data):
    return {n["id"]: (n["x"] - n["w"] / 2, n["y"] - n["h"] / 2, n["x"] + n["w"] / 2, n["y"] + n["h"] / 2)
            for n in data["nodes"]}


def assert_clear(labels, boxes, width, height):
    items = sorted(labels.items())
    for i, (a, ra) in enumerate(items):
        for b, rb in items[i + 1:]:
            assert not overlap(ra, rb), f"labels of {a} and {b} overlap: {ra} {rb}"
        for v, box in boxes.items():
            assert not overlap(ra, box), f"label of {a} overlaps node {v}: {ra} {box}"
        assert 0 <= ra[0] and ra[2] <= width and 0 <= ra[1] and ra[3] <= height, f"label of {a} outside the drawing"


def distance(rect, pts):
    """Distance from a rectangle to the nearest of the points (0 inside)."""
    return min(((max(rect[0] - x, 0, x - rect[2])) ** 2 + (max(rect[1] - y, 0, y - rect[3])) ** 2) ** 0.5
               for x, y in pts)


def example_graphs():
    """(id, Graph) for the shared browser-test cell and the fan-out examples, on every framework."""
    graphs = [("cell", run_example()), ("fan-out cell", run_example(FAN_OUT_CELL))]
    for name in frameworks():
        for title, (output, kwargs) in fan_out_examples(fw(name)).items():
            graphs.append((f"{name}: {title}", viz.graph(output, **kwargs)))
    return graphs


GRAPHS = example_graphs()


@pytest.mark.parametrize("title,g", GRAPHS, ids=[t for t, _ in GRAPHS])
def test_labels_touch_no_other_label_and_no_box(title, g):
    data = g.data()
    labels = label_rects(data)
    assert len(labels) == sum(1 for e in data["edges"] if e["grad"]) > 0
    assert_clear(labels, node_rects(data), data["width"], data["height"])


@pytest.mark.parametrize("title,g", GRAPHS, ids=[t for t, _ in GRAPHS])
def test_labels_sit_beside_their_own_edge(title, g):
    data = g.data()
    view = make_view(g.model, g.expanded)
    sizes = {n["id"]: (n["w"], n["h"]) for n in data["nodes"]}
    labels = label_rects(data)
    lay = layout([n["id"] for n in view.nodes], sizes, [(e["id"], e["src"], e["dst"]) for e in view.edges],
                 {e["id"]: label_size(e["grad"]["value"]) for e in data["edges"] if e["grad"]})
    assert lay.label_at == {e["id"]: (e["lx"], e["ly"]) for e in data["edges"] if e["grad"]}
    # 3 px from the edge (from the points sampled along its curves: a little more); where everything
    # beside a crowded edge is taken, a few labels move sideways, but not further than their own width
    away = [eid for eid, rect in labels.items() if distance(rect, lay.points[eid]) > 8]
    assert len(away) <= len(labels) // 10, away
    for eid in away:
        rect = labels[eid]
        assert distance(rect, lay.points[eid]) <= rect[2] - rect[0], f"label of {eid} is far from its edge"


def test_labels_in_widget_data_and_svg_agree():
    g = next(g for t, g in GRAPHS if t.endswith("tensor used four times"))
    data = g.data()
    root = ET.fromstring(g.to_svg())
    assert float(root.get("width")) == pytest.approx(data["width"], abs=1)
    texts = [t for t in root.iter(SVG + "text") if t.get("fill") == "#b23c17"]
    drawn = sorted((float(t.get("x")), float(t.get("y")), t.text) for t in texts)
    wanted = sorted((e["lx"], e["ly"] + 4, e["grad"]["value"]) for e in data["edges"] if e["grad"])
    assert [t for _, _, t in drawn] == [t for _, _, t in wanted]
    for (x, y, _), (wx, wy, _) in zip(drawn, wanted):
        assert (x, y) == pytest.approx((wx, wy), abs=0.06)
    assert all(t.get("text-anchor") == "middle" for t in texts)


def test_fan_in_labels_are_all_placed_and_deterministic():
    # one tensor used four times: its box receives five gradient edges, all labelled, all apart
    name = frameworks()[0]
    a = fan_out_examples(fw(name))["tensor used four times"]
    b = fan_out_examples(fw(name))["tensor used four times"]
    ga, gb = viz.graph(a[0]), viz.graph(b[0])
    da, db = ga.data(), gb.data()
    assert [(e["lx"], e["ly"], e["d"]) for e in da["edges"]] == [(e["lx"], e["ly"], e["d"]) for e in db["edges"]]
    svg_a, svg_b = ga.to_svg(), gb.to_svg()
    assert svg_a == svg_b
    leaf = next(n["id"] for n in da["nodes"] if n["kind"] == "leaf")
    into_leaf = [e for e in da["edges"] if e["dst"] == leaf]
    assert len(into_leaf) == 5 and all(e["lx"] is not None for e in into_leaf)


def test_graph_without_steps_has_no_labels_and_keeps_its_width():
    name = frameworks()[0]
    output, _ = fan_out_examples(fw(name))["x*x + exp(x)"]
    plain = viz.graph(output, steps=False).data()
    assert all(e["grad"] is None and e["lx"] is None for e in plain["edges"])
    right = max(n["x"] + n["w"] / 2 for n in plain["nodes"])
    assert plain["width"] == pytest.approx(right + 16)


@pytest.mark.parametrize("seed", range(6))
def test_random_dags_with_parallel_edges_and_long_labels(seed):
    ids, sizes, edges = random_dag(seed, n=50, p=0.1)
    rng = random.Random(seed)
    edges += [(f"p{k}", s, d) for k, (_, s, d) in enumerate(rng.sample(edges, len(edges) // 3))]
    edges += [(f"q{k}", s, d) for k, (_, s, d) in enumerate(edges[:4])]  # bundles of three
    label_sizes = {eid: (rng.choice([12, 60, 150, 280]), LABEL_H) for eid, _, _ in edges}
    lay = layout(ids, sizes, edges, label_sizes)
    assert lay == layout(list(ids), dict(sizes), list(edges), dict(label_sizes))
    assert set(lay.label_box) == set(label_sizes)
    for eid, r in lay.label_box.items():
        assert (r[2] - r[0], r[3] - r[1]) == pytest.approx(label_sizes[eid], abs=0.11)
    boxes = {v: (lay.x[v] - sizes[v][0] / 2, lay.y[v] - sizes[v][1] / 2,
                 lay.x[v] + sizes[v][0] / 2, lay.y[v] + sizes[v][1] / 2) for v in ids}
    assert_clear(lay.label_box, boxes, lay.width, lay.height)


def test_parallel_edge_labels_go_to_their_own_sides():
    ids = ["mul", "a"]
    sizes = {"mul": (110, 28), "a": (280, 56)}
    lay = layout(ids, sizes, [("e0", "mul", "a"), ("e1", "mul", "a")], {"e0": (70, 14), "e1": (70, 14)})
    left, right = lay.label_box["e0"], lay.label_box["e1"]
    assert left[2] <= min(p[0] for p in lay.points["e0"])  # wholly left of the left edge
    assert right[0] >= max(p[0] for p in lay.points["e1"])  # wholly right of the right edge
    assert not overlap(left, right)


def test_crowded_edge_falls_back_to_the_side_and_still_never_overlaps():
    # a short vertical edge boxed in by nodes on both sides: no spot beside it is free
    points = {f"e{k}": [(100.0, 0.0), (100.0, 40.0)] for k in range(6)}
    boxes = [(-60.0, -20.0, 90.0, 60.0), (110.0, -20.0, 260.0, 60.0)]
    sizes = {e: (80.0, 14.0) for e in points}
    placed = place_labels(sizes, points, boxes, {e: (20.0, 1) for e in points})
    rects = list(placed.values())
    for i, a in enumerate(rects):
        assert not any(overlap(a, b) for b in rects[i + 1:]) and not any(overlap(a, b) for b in boxes)
    assert placed == place_labels(sizes, points, boxes, {e: (20.0, 1) for e in points})
