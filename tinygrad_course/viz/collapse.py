"""Module collapsing: replace every node inside a collapsed ``nn.Module`` by one box for it."""
from dataclasses import dataclass, field


@dataclass
class View:
    """The graph as drawn: visible nodes/edges and the map from full-graph ids to visible ids."""
    nodes: list                              # dicts: id, kind, title, lines, details, members
    edges: list                              # dicts: id, src, dst, members (full edge ids)
    node_of: dict                            # full node id -> visible node id
    edge_of: dict                            # full edge id -> visible edge id (absent if hidden)
    modules: list = field(default_factory=list)  # dicts: path, label, expanded, depth


def _group_key(paths, expanded):
    for k in range(len(paths)):
        if paths[k] not in expanded:
            return paths[: k + 1]
    return None


def default_expanded(model):
    """Modules that contain every module-owned node (e.g. the whole model) start expanded."""
    chains = [n.modules for n in model.nodes if n.modules]
    if not chains:
        return set()
    common = []
    for parts in zip(*chains):
        if all(p == parts[0] for p in parts):
            common.append(parts[0])
        else:
            break
    return set(common)


def make_view(model, expanded=None):
    """Build the visible graph; ``expanded=None`` shows every node (no module boxes)."""
    nodes, node_of, groups = [], {}, {}
    modules = {}
    for n in model.nodes:
        for depth, (path, label) in enumerate(zip(n.modules, n.module_labels)):
            modules.setdefault(path, {"path": path, "label": label, "depth": depth})
    for n in model.nodes:
        key = _group_key(n.modules, expanded) if expanded is not None else None
        if key is None:
            node_of[n.id] = n.id
            nodes.append({"id": n.id, "kind": n.kind, "title": n.title, "lines": list(n.lines),
                          "details": n.details, "members": [n.id], "module": n.modules[-1] if n.modules else ""})
            continue
        gid = "m:" + "/".join(key)
        node_of[n.id] = gid
        if gid not in groups:
            label = n.module_labels[len(key) - 1]
            groups[gid] = {"id": gid, "kind": "module", "title": label, "lines": [], "details": {},
                           "members": [], "module": key[-1]}
            nodes.append(groups[gid])
        groups[gid]["members"].append(n.id)
    for g in groups.values():
        ops = sum(1 for m in g["members"] if model.node(m).kind == "op")
        params = sum(1 for m in g["members"] if model.node(m).kind == "leaf")
        g["lines"] = [f"{ops} ops, {params} params (click to expand)"]
        g["details"] = {"module": g["title"], "ops": ops, "parameters": params,
                        "contains": ", ".join(model.node(m).title for m in g["members"][:12])
                        + (", ..." if len(g["members"]) > 12 else "")}
    edges, edge_of, by_pair = [], {}, {}
    for e in model.edges:
        s, d = node_of[e.src], node_of[e.dst]
        if s == d:
            continue
        # edges into or out of a module box merge into one; between two drawn nodes each edge stays
        # (``a * a`` has two edges Mul -> a, drawn side by side, each with its own gradient)
        key = (s, d) if (s, d) != (e.src, e.dst) else e.id
        if key not in by_pair:
            by_pair[key] = {"id": e.id, "src": s, "dst": d, "members": []}
            edges.append(by_pair[key])
        by_pair[key]["members"].append(e.id)
        edge_of[e.id] = by_pair[key]["id"]
    mods = [dict(m, expanded=expanded is None or m["path"] in expanded) for m in modules.values()]
    return View(nodes, edges, node_of, edge_of, mods)
