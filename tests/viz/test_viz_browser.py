"""The graph widget in a real browser: JupyterLab 4 and Notebook 7, driven by headless Chromium.

Asserts on what a learner sees: one element per node and edge (the two edges of ``a * a`` included),
a click showing a node's shape in the side panel, backward steps that highlight the engine's next node
and show the gradient it receives, zoom (buttons and wheel) and pan (drag), and the SVG/PNG downloads.
A fan-out graph is stepped through to the end while the drawn gradient labels are measured: none
overlaps another label or a node box, and each stays inside the spot the Python layout reserved for it.
Screenshots and the downloaded SVG go to test-artifacts/.
"""
import re
import struct
import xml.etree.ElementTree as ET

import nbformat
import pytest

from tinygrad_course.viz.graph_view import label_size
from viz_examples import FAN_OUT_CELL, GRAPH_CELL, run_example

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

NOTEBOOK = "graph_test.ipynb"
FAN_OUT_NOTEBOOK = "fan_out_test.ipynb"


def _write_notebook(jupyter, name, cell):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(cell)]
    nbformat.write(nb, str(jupyter.root / name))
    return name


@pytest.fixture(scope="module")
def notebook(jupyter):
    return _write_notebook(jupyter, NOTEBOOK, GRAPH_CELL)


@pytest.fixture(scope="module")
def expected():
    """The same graph built in this process: the ids, shapes and gradients the page must show."""
    g = run_example()
    return g.data()


URLS = {"lab": "/lab/tree/{nb}", "notebook7": "/notebooks/{nb}"}


def _view(page):
    """(x, y, scale) of the graph's transform, as the widget draws it."""
    transform = page.locator(".tcv-root .tcv-world").get_attribute("transform")
    match = re.fullmatch(r"translate\(([-\d.e]+),([-\d.e]+)\) scale\(([-\d.e]+)\)", transform)
    assert match, transform
    return tuple(float(v) for v in match.groups())


def _zoom_and_pan(page):
    """The zoom buttons and the wheel change the scale; dragging the background moves the graph."""
    x, y, k = _view(page)
    page.locator(".tcv-root .tcv-btn-zoom-in").click()
    assert _view(page)[2] == pytest.approx(k * 1.25)
    page.locator(".tcv-root .tcv-btn-zoom-out").click()
    assert _view(page)[2] == pytest.approx(k)

    canvas = page.locator(".tcv-root .tcv-canvas").bounding_box()
    corner = (canvas["x"] + 12, canvas["y"] + 12)  # background: the graph is centred, nodes are not here
    page.mouse.move(*corner)
    page.mouse.wheel(0, -120)
    page.wait_for_function("k => !document.querySelector('.tcv-world').getAttribute('transform')"
                           ".endsWith(`scale(${k})`)", arg=k)
    x2, y2, k2 = _view(page)
    assert k2 == pytest.approx(k * 1.15)
    # zooming keeps the point under the mouse in place
    px, py = corner[0] - canvas["x"], corner[1] - canvas["y"]
    assert (px - x2) / k2 == pytest.approx((px - x) / k, abs=0.5)
    assert (py - y2) / k2 == pytest.approx((py - y) / k, abs=0.5)

    page.mouse.down()
    page.mouse.move(corner[0] + 80, corner[1] + 50, steps=5)
    page.mouse.up()
    x3, y3, k3 = _view(page)
    assert (x3 - x2, y3 - y2, k3) == (pytest.approx(80, abs=1), pytest.approx(50, abs=1), pytest.approx(k2))
    page.locator(".tcv-root .tcv-btn-fit").click()
    assert _view(page) == pytest.approx((x, y, k))


def _export(page, ui, expected, artifacts):
    """The SVG button downloads a valid SVG with the node labels; the PNG button a PNG image."""
    with page.expect_download() as info:
        page.locator(".tcv-root .tcv-btn-svg").click()
    download = info.value
    assert download.suggested_filename == "graph.svg"
    path = artifacts / f"graph_{ui}_export.svg"
    download.save_as(path)
    root = ET.parse(path).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    texts = {t.text for t in root.iter("{http://www.w3.org/2000/svg}text")}
    assert {n["title"] for n in expected["nodes"]} <= texts
    edges = [p for p in root.iter("{http://www.w3.org/2000/svg}path") if "tcv-edge" in p.get("class", "").split()]
    assert len(edges) == len(expected["edges"])
    width, height = float(root.get("width")), float(root.get("height"))
    assert width >= expected["width"] and height >= expected["height"]

    with page.expect_download() as info:
        page.locator(".tcv-root .tcv-btn-png").click()
    info.value.save_as(artifacts / f"graph_{ui}_export.png")
    png = (artifacts / f"graph_{ui}_export.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    png_w, png_h = struct.unpack(">II", png[16:24])
    assert (png_w, png_h) == (round(width) * 2, round(height) * 2)  # drawn at twice the size


def _run_all(page):
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()


@pytest.mark.parametrize("ui", ["lab", "notebook7"])
def test_graph_widget_in_browser(ui, jupyter, chromium, notebook, expected, artifacts):
    page = chromium.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(jupyter.url + URLS[ui].format(nb=notebook))
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
        page.wait_for_timeout(1500)  # let the kernel session attach
        _run_all(page)
        nodes = page.locator(".tcv-root .tcv-node")
        nodes.first.wait_for(timeout=60_000)
        assert nodes.count() == len(expected["nodes"])
        assert page.locator(".tcv-root .tcv-edge").count() == len(expected["edges"])
        page.screenshot(path=str(artifacts / f"graph_{ui}_initial.png"))

        # click the weight matrix: its shape appears in the side panel
        weight = next(n for n in expected["nodes"] if n["title"] == "W")
        page.locator(f'.tcv-node[data-id="{weight["id"]}"]').click()
        panel = page.locator(".tcv-root .tcv-panel")
        assert "W" in panel.locator("h4").inner_text()
        assert weight["details"]["shape"] in panel.inner_text()
        assert page.locator(f'.tcv-node.tcv-selected[data-id="{weight["id"]}"]').count() == 1
        page.screenshot(path=str(artifacts / f"graph_{ui}_clicked.png"))

        # step backward twice: the engine's first and second nodes are highlighted in turn
        steps = expected["steps"]
        nxt = page.locator(".tcv-root .tcv-btn-next")
        nxt.click()
        current = page.locator(".tcv-root .tcv-node.tcv-current")
        assert current.get_attribute("data-id") == steps[0]["node"]
        assert page.locator(".tcv-root .tcv-node.tcv-next").get_attribute("data-id") == steps[1]["node"]
        nxt.click()
        page.wait_for_function(
            "id => document.querySelector('.tcv-node.tcv-current')?.dataset.id === id", arg=steps[1]["node"])
        text = panel.inner_text()
        assert steps[1]["title"] in text
        assert steps[1]["grad_in"]["value"] in text
        shown = page.locator(".tcv-root .tcv-edge-label.tcv-shown")
        assert steps[1]["grad_in"]["value"] in shown.all_text_contents()
        page.screenshot(path=str(artifacts / f"graph_{ui}_step2.png"))

        # the step with the broadcast bias shows the reduction back to the bias shape
        k = next(i for i, s in enumerate(steps) if any(o["reduced"] for o in s["outgoing"]))
        page.locator(".tcv-root .tcv-slider").fill(str(k))
        page.wait_for_function(
            "id => document.querySelector('.tcv-node.tcv-current')?.dataset.id === id", arg=steps[k]["node"])
        reduced = next(o["reduced"] for o in steps[k]["outgoing"] if o["reduced"])
        assert reduced in panel.inner_text()
        page.screenshot(path=str(artifacts / f"graph_{ui}_broadcast.png"))

        _zoom_and_pan(page)
        page.screenshot(path=str(artifacts / f"graph_{ui}_zoomed.png"))
        _export(page, ui, expected, artifacts)
    finally:
        page.close()


# the drawn boxes of every node rectangle and every shown gradient label, in graph coordinates
MEASURE = """() => {
  const root = document.querySelector('.tcv-root');
  const box = (b) => [b.x, b.y, b.x + b.width, b.y + b.height];
  return {
    nodes: [...root.querySelectorAll('.tcv-node')].map((g) => [g.dataset.id, box(g.querySelector('rect').getBBox())]),
    labels: [...root.querySelectorAll('.tcv-edge-label.tcv-shown')].map((t) => [t.dataset.id, box(t.getBBox()),
                                                                               t.classList.contains('tcv-active')]),
  };
}"""


def _overlap(a, b, tol=0.25):
    return a[0] + tol < b[2] and b[0] + tol < a[2] and a[1] + tol < b[3] and b[1] + tol < a[3]


def _check_drawn_labels(drawn, expected):
    """No drawn label overlaps another or a node; each lies inside its reserved rectangle."""
    edges = {e["id"]: e for e in expected["edges"]}
    labels = drawn["labels"]
    for i, (a, ra, _) in enumerate(labels):
        assert ra[2] - ra[0] > 0, f"label {a} has no size"
        for b, rb, _ in labels[i + 1:]:
            assert not _overlap(ra, rb), f"drawn labels {a} and {b} overlap: {ra} {rb}"
        for v, box in drawn["nodes"]:
            assert not _overlap(ra, box), f"drawn label {a} overlaps node {v}: {ra} {box}"
        e = edges[a]
        w, h = label_size(e["grad"]["value"])
        reserved = (e["lx"] - w / 2, e["ly"] - h / 2, e["lx"] + w / 2, e["ly"] + h / 2)
        inside = (ra[0] >= reserved[0] - 0.5 and ra[1] >= reserved[1] - 0.5 and ra[2] <= reserved[2] + 0.5
                  and ra[3] <= reserved[3] + 0.5)
        assert inside, f"drawn label {a} {ra} does not fit the spot reserved for it {reserved}"


def test_fan_out_labels_never_overlap_while_stepping(jupyter, chromium, artifacts):
    """Step a graph whose tensor feeds seven consumers to the end; measure the labels at every step."""
    expected = run_example(FAN_OUT_CELL).data()
    name = _write_notebook(jupyter, FAN_OUT_NOTEBOOK, FAN_OUT_CELL)
    page = chromium.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(jupyter.url + URLS["lab"].format(nb=name))
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
        page.wait_for_timeout(1500)
        _run_all(page)
        page.locator(".tcv-root .tcv-node").first.wait_for(timeout=60_000)
        assert page.locator(".tcv-root .tcv-node").count() == len(expected["nodes"])
        steps = expected["steps"]
        nxt = page.locator(".tcv-root .tcv-btn-next")
        seen_active = set()
        for k, step in enumerate(steps):
            nxt.click()
            page.wait_for_function(
                "id => document.querySelector('.tcv-node.tcv-current')?.dataset.id === id", arg=step["node"])
            drawn = page.evaluate(MEASURE)
            _check_drawn_labels(drawn, expected)
            seen_active |= {a for a, _, active in drawn["labels"] if active}
        # after the last step every edge shows its gradient, and each was drawn bold (active) once
        labelled = {e["id"] for e in expected["edges"] if e["grad"]}
        assert {a for a, _, _ in drawn["labels"]} == labelled
        assert seen_active == labelled
        page.screenshot(path=str(artifacts / "graph_fan_out_last_step.png"))
    finally:
        page.close()
