"""How long tc.viz.graph takes for a ~500-node graph: extraction + backward replay + layout + SVG.

The layout step includes placing every edge's gradient label clear of boxes and other labels.

Run: .venv/bin/python bench/viz_graph.py [--nodes 500] [--browser]
The target is under 2 s from call to picture. With --browser the widget is also rendered in headless
Chromium (a standalone page that loads the widget's ES module) and the time to draw is measured.
"""
import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np


def make_output(fw, n_nodes):
    """A deep MLP-like chain whose backward graph has roughly ``n_nodes`` nodes."""
    x = fw.tensor(np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4))
    h, params = x, {}
    layers = max(1, n_nodes // 7)
    for i in range(layers):  # per layer: Mm, Add, Tanh ops + W, b leaves + named-free intermediates
        W = fw.tensor(np.full((4, 4), 0.1, dtype=np.float32), requires_grad=True)
        b = fw.tensor(np.zeros(4, dtype=np.float32), requires_grad=True)
        params[f"layer{i}.weight"], params[f"layer{i}.bias"] = W, b
        h = (h @ W + b).tanh() * 0.9 + h * 0.1
    return h.sum(), params


def framework():
    try:
        import tinygrad_course as tc
        tc.tensor  # noqa: B018
        return tc
    except (ImportError, AttributeError):
        import torch
        return torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--browser", action="store_true", help="also time drawing in headless Chromium")
    args = ap.parse_args()
    from tinygrad_course import viz
    fw = framework()
    loss, params = make_output(fw, args.nodes)
    t0 = time.perf_counter()
    g = viz.graph(loss, params=params, collapse=False)
    t1 = time.perf_counter()
    data = g.data()
    t2 = time.perf_counter()
    svg = g.to_svg()
    t3 = time.perf_counter()
    print(f"framework: {fw.__name__}  python {platform.python_version()}  {platform.machine()}")
    labels = sum(1 for e in data["edges"] if e["lx"] is not None)
    print(f"nodes: {len(data['nodes'])}  edges: {len(data['edges'])}  backward steps: {len(g.steps)}  "
          f"gradient labels placed: {labels}")
    print(f"build graph + replay backward: {t1 - t0:.3f} s")
    print(f"layout + widget data:          {t2 - t1:.3f} s  ({len(json.dumps(data)) / 1e6:.2f} MB JSON)")
    print(f"static SVG:                    {t3 - t2:.3f} s  ({len(svg) / 1e6:.2f} MB)")
    total = t3 - t0
    if args.browser:
        total += browser_draw_time(data)
    print(f"total: {total:.3f} s  ({'OK' if total < 2 else 'SLOWER THAN'} 2 s target)")
    return 0


def browser_draw_time(data):
    """Render the widget's ES module in headless Chromium with a tiny stand-in for the widget model."""
    from playwright.sync_api import sync_playwright
    static = Path(__file__).resolve().parents[1] / "tinygrad_course" / "viz" / "static"
    js, css = (static / "graph.js").read_text(), (static / "graph.css").read_text()
    page_html = f"<html><head><style>{css}</style></head><body><div id=root style='width:1200px'></div></body></html>"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        page = browser.new_page()
        page.set_content(page_html)
        ms = page.evaluate("""async ([src, data]) => {
            const mod = await import(URL.createObjectURL(new Blob([src], {type: 'text/javascript'})));
            const state = {data, step: -1, mode: 'backward', selected: '', expanded: [], collapsible: false, height: 0};
            const model = {get: k => state[k], set: (k, v) => { state[k] = v; }, save_changes() {}, on() {}};
            const t0 = performance.now();
            mod.default.render({model, el: document.getElementById('root')});
            await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
            return performance.now() - t0;
        }""", [js, data])
        n = page.locator(".tcv-node").count()
        browser.close()
    print(f"browser draw:                  {ms / 1000:.3f} s  ({n} node elements)")
    return ms / 1000


if __name__ == "__main__":
    sys.exit(main())
