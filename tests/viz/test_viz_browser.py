"""The graph widget in a real browser: JupyterLab 4 and Notebook 7, driven by headless Chromium.

Asserts on what a learner sees: one element per node, a click showing a node's shape in the side
panel, and backward steps that highlight the engine's next node and show the gradient it receives.
Screenshots go to test-artifacts/.
"""
import nbformat
import pytest

from viz_examples import GRAPH_CELL, run_example

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

NOTEBOOK = "graph_test.ipynb"


@pytest.fixture(scope="module")
def notebook(jupyter):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(GRAPH_CELL)]
    nbformat.write(nb, str(jupyter.root / NOTEBOOK))
    return NOTEBOOK


@pytest.fixture(scope="module")
def expected():
    """The same graph built in this process: the ids, shapes and gradients the page must show."""
    g = run_example()
    return g.data()


URLS = {"lab": "/lab/tree/{nb}", "notebook7": "/notebooks/{nb}"}


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
    finally:
        page.close()
