// tc.viz.graph front end (anywidget ES module). Layout comes from Python; this file draws it,
// handles clicks, step-through, module expand/collapse, zoom/pan and export. No external code.
const NS = "http://www.w3.org/2000/svg";
const COLORS = {
  output: ["#d9f2d9", "#2e7d32"], leaf: ["#dbe9fb", "#1f5fa8"], tensor: ["#fff4cc", "#a07800"],
  op: ["#eeeeee", "#555555"], module: ["#efe3f7", "#6a3d9a"],
};
const FONT = "ui-monospace, SFMono-Regular, Menlo, Consolas, 'DejaVu Sans Mono', monospace";
// styles inside the <svg> itself, so exported SVG/PNG files look the same as the widget
const SVG_STYLE = `
text { font-family: ${FONT}; font-size: 12px; }
.tcv-edge { fill: none; stroke: #888; stroke-width: 1.2; }
.tcv-edge.tcv-active { stroke: #d2691e; stroke-width: 2.6; }
.tcv-edge-label { font-size: 10px; fill: #b23c17; display: none; }
.tcv-edge-label.tcv-shown { display: inline; }
.tcv-edge-label.tcv-active { font-weight: bold; font-size: 11px; }
.tcv-node { cursor: pointer; }
.tcv-node.tcv-done rect { stroke-width: 2; }
.tcv-node.tcv-current rect { stroke: #d2691e; stroke-width: 3.5; fill: #ffe0c2; }
.tcv-node.tcv-next rect { stroke: #d2691e; stroke-dasharray: 5 3; stroke-width: 2; }
.tcv-node.tcv-selected rect { stroke: #000; stroke-width: 2.5; }
.tcv-node.tcv-dim { opacity: 0.45; }
`;

function h(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
function s(tag, attrs) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}
function button(text, title, cls) {
  const b = h("button", cls, text);
  b.title = title;
  return b;
}
function download(name, blob) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.appendChild(a);
  a.click();
  setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
}

function render({ model, el }) {
  el.classList.add("tcv-root");
  el.innerHTML = "";
  const bar = h("div", "tcv-toolbar");
  const modeSel = h("select", "tcv-mode");
  for (const [v, t] of [["backward", "Backward pass"], ["forward", "Forward pass"]]) {
    const o = h("option", "", t); o.value = v; modeSel.appendChild(o);
  }
  const bFirst = button("|\u25c0", "Back to the start", "tcv-btn-first");
  const bPrev = button("\u25c0", "Previous step", "tcv-btn-prev");
  const bNext = button("\u25b6", "Next step", "tcv-btn-next");
  const bLast = button("\u25b6|", "Last step", "tcv-btn-last");
  const slider = h("input", "tcv-slider"); slider.type = "range"; slider.min = -1; slider.step = 1;
  const label = h("span", "tcv-step-label");
  const bOut = button("\u2212", "Zoom out", "tcv-btn-zoom-out");
  const bIn = button("+", "Zoom in", "tcv-btn-zoom-in");
  const bFit = button("Fit", "Fit the graph into view", "tcv-btn-fit");
  const bSvg = button("SVG", "Download the graph as SVG", "tcv-btn-svg");
  const bPng = button("PNG", "Download the graph as PNG", "tcv-btn-png");
  bar.append(modeSel, bFirst, bPrev, bNext, bLast, slider, label, h("span", "tcv-sep"),
             bOut, bIn, bFit, h("span", "tcv-sep"), bSvg, bPng);
  const mods = h("div", "tcv-modules");
  const note = h("div", "tcv-note");
  const main = h("div", "tcv-main");
  const canvas = h("div", "tcv-canvas");
  const panel = h("div", "tcv-panel");
  main.append(canvas, panel);
  el.append(bar, mods, note, main);

  const svg = s("svg", { xmlns: NS });
  const style = s("style"); style.textContent = SVG_STYLE;
  const defs = s("defs");
  const marker = s("marker", { id: "tcv-arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7,
                               markerHeight: 7, orient: "auto-start-reverse" });
  marker.appendChild(s("path", { d: "M0,0L10,5L0,10z", fill: "#777" }));
  defs.appendChild(marker);
  const world = s("g", { class: "tcv-world" });
  svg.append(style, defs, world);
  canvas.appendChild(svg);

  let nodeEls = {}, edgeEls = {}, labelEls = {}, data = null;
  let view = { x: 0, y: 0, k: 1 };

  function applyView() { world.setAttribute("transform", `translate(${view.x},${view.y}) scale(${view.k})`); }
  function fit() {
    const W = canvas.clientWidth || 600, H = canvas.clientHeight || model.get("height");
    // shrink to fit, but never so far that labels become unreadable: pan/zoom for the rest
    const k = Math.max(Math.min(1, W / data.width, H / data.height), 0.6);
    view = { k, x: Math.max(8, (W - data.width * k) / 2), y: Math.max(0, (H - data.height * k) / 2) };
    applyView();
  }
  function zoom(f, cx, cy) {
    const W = canvas.clientWidth, H = canvas.clientHeight;
    cx = cx ?? W / 2; cy = cy ?? H / 2;
    const k = Math.max(0.05, Math.min(6, view.k * f));
    view = { k, x: cx - (cx - view.x) * (k / view.k), y: cy - (cy - view.y) * (k / view.k) };
    applyView();
  }

  function draw() {
    data = model.get("data");
    const want = model.get("height") || Math.max(260, Math.min(720, data.height + 8));
    canvas.style.height = want + "px";
    world.innerHTML = "";
    nodeEls = {}; edgeEls = {}; labelEls = {};
    const gEdges = s("g"), gLabels = s("g"), gNodes = s("g");
    world.append(gEdges, gNodes, gLabels);
    for (const e of data.edges) {
      const p = s("path", { d: e.d, class: "tcv-edge", "data-id": e.id, "marker-end": "url(#tcv-arrow)" });
      gEdges.appendChild(p); edgeEls[e.id] = p;
      if (e.grad && e.lx !== null && e.lx !== undefined) {
        // (lx, ly) is the centre of the spot the layout reserved for this label, clear of boxes and
        // other labels (sized for the bold 11 px active style); the baseline sits 4 px below the centre
        const t = s("text", { x: e.lx, y: e.ly + 4, "text-anchor": "middle",
                              class: "tcv-edge-label", "data-id": e.id });
        t.textContent = e.grad.value;
        gLabels.appendChild(t); labelEls[e.id] = t;
      }
    }
    for (const n of data.nodes) {
      const [fill, stroke] = COLORS[n.kind] || COLORS.op;
      const g = s("g", { class: `tcv-node tcv-${n.kind}`, "data-id": n.id });
      const tip = s("title"); tip.textContent = [n.title, ...n.lines].join("\n"); g.appendChild(tip);
      g.appendChild(s("rect", { x: n.x - n.w / 2, y: n.y - n.h / 2, width: n.w, height: n.h,
                                 rx: n.kind === "op" ? 14 : 6, fill, stroke, "stroke-width": 1.3 }));
      const ty = n.y - n.h / 2 + (n.lines.length ? 18 : n.h / 2 + 4.5);
      const t = s("text", { x: n.x, y: ty, "text-anchor": "middle", "font-weight": "bold" });
      t.textContent = n.title; g.appendChild(t);
      n.lines.forEach((line, i) => {
        const l = s("text", { x: n.x, y: ty + 15 * (i + 1), "text-anchor": "middle", fill: "#333" });
        l.textContent = line; g.appendChild(l);
      });
      g.addEventListener("click", (ev) => { ev.stopPropagation(); onNodeClick(n); });
      gNodes.appendChild(g); nodeEls[n.id] = g;
    }
    drawModules();
    note.textContent = data.note || "";
    fit();
    update();
  }

  function drawModules() {
    mods.innerHTML = "";
    if (!model.get("collapsible")) return;
    const open = new Set(model.get("expanded"));
    for (const m of data.modules) {
      const chip = h("button", "tcv-chip" + (open.has(m.path) ? " tcv-open" : ""),
                     (open.has(m.path) ? "\u25be " : "\u25b8 ") + m.label);
      chip.title = open.has(m.path) ? "Collapse into one box" : "Expand";
      chip.addEventListener("click", () => toggleModule(m.path));
      mods.appendChild(chip);
    }
  }
  function toggleModule(path) {
    const open = new Set(model.get("expanded"));
    if (open.has(path)) open.delete(path); else open.add(path);
    model.set("expanded", [...open].sort());
    model.save_changes();
  }
  function onNodeClick(n) {
    if (n.kind === "module" && model.get("collapsible")) { toggleModule(n.module); return; }
    model.set("selected", model.get("selected") === n.id ? "" : n.id);
    model.save_changes();
  }

  function steps() { return model.get("mode") === "forward" ? data.forward : data.steps; }
  function setStep(k) {
    const n = steps().length;
    k = Math.max(-1, Math.min(n - 1, k));
    model.set("step", k);
    model.set("selected", "");
    model.save_changes();
  }

  function row(table, key, value, cls) {
    const tr = h("tr"); const td = h("td", "", key); const tv = h("td", cls || "");
    const pre = h("pre", "", String(value)); tv.appendChild(pre);
    tr.append(td, tv); table.appendChild(tr);
  }
  function showDetails(n) {
    panel.innerHTML = "";
    panel.appendChild(h("h4", "", n.title));
    const table = h("table", "tcv-details");
    for (const [k, v] of Object.entries(n.details)) {
      if (v && typeof v === "object") {
        const entries = Object.entries(v);
        if (!entries.length) { row(table, k, "()"); continue; }
        for (const [k2, v2] of entries) row(table, `${k} ${k2}`, v2);
      } else if (v !== "") row(table, k, v, k === "grad" ? "tcv-grad" : "");
    }
    panel.appendChild(table);
  }
  function showStep(k) {
    panel.innerHTML = "";
    const list = steps();
    if (k < 0) {
      panel.appendChild(h("h4", "", "tc.viz.graph"));
      panel.appendChild(h("div", "", `${data.nodes.length} nodes. Click a node for its details. ` +
        `Press \u25b6 to step through the ${model.get("mode")} pass (${list.length} steps).`));
      return;
    }
    const st = list[k];
    if (model.get("mode") === "forward") {
      panel.appendChild(h("h4", "", `Forward ${k + 1}/${list.length}: ${st.title}`));
      const n = data.nodes.find((x) => x.id === st.node);
      if (n) { const t = h("table"); for (const [a, b] of Object.entries(n.details))
        if (typeof b !== "object" && a !== "value" && b !== "") row(t, a, b); panel.appendChild(t); }
      return;
    }
    panel.appendChild(h("h4", "", `Step ${k + 1}/${list.length}: ${st.title}`));
    const t = h("table", "tcv-step");
    if (st.contributions.length > 1) {
      for (const c of st.contributions) row(t, `from ${c.from}`, `${c.value} ${c.shape}`, "tcv-grad");
      row(t, "summed grad", `${st.grad_in.value} ${st.grad_in.shape}`, "tcv-grad");
    } else {
      row(t, "incoming grad", `${st.grad_in.value} ${st.grad_in.shape}`, "tcv-grad");
    }
    for (const o of st.outgoing) {
      row(t, `\u2192 ${o.to}`, `${o.value} ${o.shape}`, "tcv-grad");
      if (o.reduced) row(t, "broadcast", o.reduced, "tcv-reduce");
    }
    if (!st.outgoing.length) row(t, "result", "added to .grad", "tcv-grad");
    panel.appendChild(t);
  }

  function update() {
    if (!data) return;
    const list = steps(), k = Math.min(model.get("step"), list.length - 1);
    const backward = model.get("mode") === "backward";
    modeSel.value = model.get("mode");
    slider.max = list.length - 1; slider.value = k;
    label.textContent = k < 0 ? `start (${list.length} steps)` : `step ${k + 1} / ${list.length}`;
    bFirst.disabled = bPrev.disabled = k < 0;
    bNext.disabled = bLast.disabled = k >= list.length - 1;
    const done = new Set(list.slice(0, Math.max(k, 0)).map((x) => x.node));
    const cur = k >= 0 ? list[k].node : null, next = k + 1 < list.length ? list[k + 1].node : null;
    for (const [id, g] of Object.entries(nodeEls)) {
      g.classList.toggle("tcv-done", done.has(id));
      g.classList.toggle("tcv-current", id === cur);
      g.classList.toggle("tcv-next", id === next && id !== cur);
      g.classList.toggle("tcv-selected", id === model.get("selected"));
    }
    for (const e of data.edges) {
      const shown = backward && e.grad && e.grad.step <= k;
      const active = backward && e.grad && e.grad.step === k;
      edgeEls[e.id].classList.toggle("tcv-active", !!active);
      if (labelEls[e.id]) {
        labelEls[e.id].classList.toggle("tcv-shown", !!shown);
        labelEls[e.id].classList.toggle("tcv-active", !!active);
      }
    }
    const sel = data.nodes.find((n) => n.id === model.get("selected"));
    if (sel) showDetails(sel); else showStep(k);
  }

  // toolbar wiring
  bFirst.onclick = () => setStep(-1);
  bPrev.onclick = () => setStep(model.get("step") - 1);
  bNext.onclick = () => setStep(model.get("step") + 1);
  bLast.onclick = () => setStep(steps().length - 1);
  slider.oninput = () => setStep(parseInt(slider.value, 10));
  modeSel.onchange = () => { model.set("mode", modeSel.value); model.set("step", -1); model.save_changes(); };
  bIn.onclick = () => zoom(1.25); bOut.onclick = () => zoom(0.8); bFit.onclick = fit;

  // zoom with the wheel, pan by dragging the background
  canvas.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const r = canvas.getBoundingClientRect();
    zoom(ev.deltaY < 0 ? 1.15 : 1 / 1.15, ev.clientX - r.left, ev.clientY - r.top);
  }, { passive: false });
  let drag = null;
  canvas.addEventListener("pointerdown", (ev) => {
    if (ev.target.closest && ev.target.closest(".tcv-node")) return;
    drag = { x: ev.clientX, y: ev.clientY, vx: view.x, vy: view.y };
    canvas.classList.add("tcv-dragging");
  });
  const onMove = (ev) => {
    if (!drag) return;
    view.x = drag.vx + ev.clientX - drag.x; view.y = drag.vy + ev.clientY - drag.y; applyView();
  };
  const onUp = () => { drag = null; canvas.classList.remove("tcv-dragging"); };
  window.addEventListener("pointermove", onMove);
  window.addEventListener("pointerup", onUp);

  // export the whole graph (current highlight state included)
  function exportSvgText() {
    const clone = svg.cloneNode(true);
    // the picture covers the graph and any gradient label written past its edge
    const bb = world.getBBox();
    const x0 = Math.floor(Math.min(0, bb.x)), y0 = Math.floor(Math.min(0, bb.y));
    const w = Math.ceil(Math.max(data.width, bb.x + bb.width) - x0);
    const hgt = Math.ceil(Math.max(data.height, bb.y + bb.height) - y0);
    clone.setAttribute("width", w); clone.setAttribute("height", hgt);
    clone.setAttribute("viewBox", `${x0} ${y0} ${w} ${hgt}`);
    clone.querySelector(".tcv-world").removeAttribute("transform");
    const bg = s("rect", { x: x0, y: y0, width: w, height: hgt, fill: "white" });
    clone.insertBefore(bg, clone.querySelector(".tcv-world"));
    return new XMLSerializer().serializeToString(clone);
  }
  bSvg.onclick = () => download("graph.svg", new Blob([exportSvgText()], { type: "image/svg+xml" }));
  bPng.onclick = () => {
    const img = new Image(), scale = 2;
    img.onload = () => {
      const c = document.createElement("canvas");
      c.width = img.width * scale; c.height = img.height * scale;
      const ctx = c.getContext("2d"); ctx.scale(scale, scale); ctx.drawImage(img, 0, 0);
      c.toBlob((b) => download("graph.png", b), "image/png");
    };
    img.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(exportSvgText());
  };

  model.on("change:data", draw);
  model.on("change:step", update);
  model.on("change:mode", update);
  model.on("change:selected", update);
  model.on("change:expanded", drawModules);
  draw();
  // the canvas may have no size until the output area is attached: fit again once it does
  const ro = new ResizeObserver(() => { if (canvas.clientWidth) fit(); ro.disconnect(); });
  ro.observe(canvas);
  return () => {
    window.removeEventListener("pointermove", onMove);
    window.removeEventListener("pointerup", onUp);
    ro.disconnect();
  };
}

export default { render };
