"""Static SVG drawing of the graph data from :meth:`Graph.data` (no JavaScript, deterministic)."""
from html import escape

# fill, stroke per node kind; the widget's CSS uses the same palette
COLORS = {"output": ("#d9f2d9", "#2e7d32"), "leaf": ("#dbe9fb", "#1f5fa8"), "tensor": ("#fff4cc", "#a07800"),
          "op": ("#eeeeee", "#555555"), "module": ("#efe3f7", "#6a3d9a")}
LABEL_BASELINE = 4.0  # a label's baseline sits this far below its centre (matches static/graph.js)
FONT = "ui-monospace, SFMono-Regular, Menlo, Consolas, 'DejaVu Sans Mono', monospace"


def _node_svg(n):
    fill, stroke = COLORS.get(n["kind"], COLORS["op"])
    x0, y0 = n["x"] - n["w"] / 2, n["y"] - n["h"] / 2
    radius = 14 if n["kind"] == "op" else 6
    out = [f'<g class="tcv-node tcv-{n["kind"]}" data-id="{escape(n["id"])}">',
           f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{n["w"]:.1f}" height="{n["h"]:.1f}" rx="{radius}" '
           f'fill="{fill}" stroke="{stroke}" stroke-width="1.3"/>']
    ty = y0 + (18 if n["lines"] else n["h"] / 2 + 4.5)
    out.append(f'<text x="{n["x"]:.1f}" y="{ty:.1f}" text-anchor="middle" font-weight="bold">'
               f'{escape(n["title"])}</text>')
    for k, line in enumerate(n["lines"]):
        out.append(f'<text x="{n["x"]:.1f}" y="{ty + 15 * (k + 1):.1f}" text-anchor="middle" fill="#333">'
                   f'{escape(line)}</text>')
    out.append("</g>")
    return "".join(out)


def render_svg(data, grads=True):
    """SVG text for ``data``; with ``grads`` each edge is labelled with the gradient it carries.

    Labels are centred on the edge's ``(lx, ly)``, which the layout chose clear of boxes and other labels.
    """
    labels = [(e["lx"], e["ly"] + LABEL_BASELINE, e["grad"]["value"])
              for e in (data["edges"] if grads else []) if e.get("grad") and e.get("lx") is not None]
    w, h = data["width"], data["height"]
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0f}" height="{h:.0f}" '
             f'viewBox="0 0 {w:.1f} {h:.1f}" font-family="{FONT}" font-size="12">',
             '<defs><marker id="tcv-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
             'markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" fill="#777"/></marker></defs>',
             f'<rect width="{w:.1f}" height="{h:.1f}" fill="white"/>']
    for e in data["edges"]:
        parts.append(f'<path class="tcv-edge" d="{e["d"]}" fill="none" stroke="#888" stroke-width="1.2" '
                     'marker-end="url(#tcv-arrow)"/>')
    for x, y, text in labels:
        parts.append(f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="middle" font-size="10" '
                     f'fill="#b23c17">{escape(text)}</text>')
    parts += [_node_svg(n) for n in data["nodes"]]
    parts.append("</svg>")
    return "\n".join(parts)
