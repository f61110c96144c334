"""Turning a learner's solution cell into a self-contained Python module (build mode's persistence).

A solution cell uses names that earlier cells made: `tc` and `np` from the setup cell's imports, helper
functions such as chapter 02's `unbroadcast`. `module_source` finds the names the cell uses but does not
define, and writes before the cell's own code the earlier imports and definitions that provide them
(transitively), so the saved file runs on its own and reads like ordinary Python.
"""
from __future__ import annotations

import ast
import builtins

_BUILTINS = set(dir(builtins))


def _defined(tree) -> set[str]:
    """Names a cell binds at its top level (defs, classes, assignments, imports)."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                names.add((a.asname or a.name).split(".")[0])
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):  # `Module.x = f` binds no name
                        names.add(n.id)
    return names


def _attached_to(node) -> str | None:
    """The class a statement `Name.attr = value` adds a method to (chapter 03b's `Module.train = train`), else None."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            return target.value.id
    return None


def _used(tree) -> set[str]:
    """Names the code reads from outside itself: a function's own arguments and assignments are its locals,
    so a local `m` in a method does not pull an earlier cell's `m = ...` into the module."""
    found = set()

    def visit(node, local):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            for outside in [*getattr(node, "decorator_list", []), *args.defaults, *filter(None, args.kw_defaults)]:
                visit(outside, local)  # evaluated where the function is defined
            body = node.body if isinstance(node.body, list) else [node.body]
            declared = {name for stmt in body for n in ast.walk(stmt) if isinstance(n, (ast.Global, ast.Nonlocal))
                        for name in n.names}
            bound = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a}
            bound |= {n.id for stmt in body for n in ast.walk(stmt)
                      if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            for stmt in body:
                visit(stmt, local | (bound - declared))
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in local:
            found.add(node.id)
        for child in ast.iter_child_nodes(node):
            visit(child, local)

    visit(tree, frozenset())
    return found


def _parse(source: str):
    """The cell's syntax tree, with IPython magics and shell escapes (`%`, `!`) left out."""
    lines = [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]
    return ast.parse("\n".join(lines))


def _providers(cells: list[str]) -> dict[str, list[tuple[str, set[str]]]]:
    """For each top-level name an earlier cell binds: the statements that make it, each as (its source, the names
    it uses): the last one that binds the name, then every later `Name.attr = value` that adds a method to it."""
    provide = {}
    for source in cells:
        try:
            tree = _parse(source)
        except SyntaxError:
            continue
        for node in tree.body:
            text = ast.get_source_segment("\n".join(l for l in source.splitlines()
                                                    if not l.lstrip().startswith(("%", "!"))), node)
            if text is None:
                continue
            uses = _used(node) if not isinstance(node, (ast.Import, ast.ImportFrom)) else set()
            for name in _defined(ast.Module(body=[node], type_ignores=[])):
                provide[name] = [(text, uses)]
            owner = _attached_to(node)
            if owner in provide:
                provide[owner].append((text, uses - {owner}))
    return provide


def module_source(cell: str, earlier: list[str], header: str = "") -> str:
    """Python source of a module holding `cell` and what it needs from the `earlier` cells.

    Raises SyntaxError (with the line in the cell) when the cell itself does not parse."""
    tree = _parse(cell)
    needed = _used(tree) - _defined(tree) - _BUILTINS
    provide = _providers(earlier)
    chosen, queue = [], list(sorted(needed))
    seen = set()
    while queue:
        name = queue.pop(0)
        if name in seen or name not in provide:
            continue
        seen.add(name)
        for text, uses in provide[name]:
            if text not in chosen:
                chosen.append(text)
            queue.extend(sorted(uses - seen - _BUILTINS))
    notebook_order = _statement_order(earlier)
    imports = [t for t in notebook_order if t in chosen and t.startswith(("import ", "from "))]
    order = [t for t in notebook_order if t in chosen and t not in imports]  # the notebook's order
    parts = [header.rstrip()] if header else []
    parts += ["\n".join(imports)] if imports else []
    parts += order
    parts.append(cell.strip())
    return "\n\n\n".join(p for p in parts if p) + "\n"


def _statement_order(cells: list[str]) -> list[str]:
    out = []
    for source in cells:
        try:
            tree = _parse(source)
        except SyntaxError:
            continue
        clean = "\n".join(l for l in source.splitlines() if not l.lstrip().startswith(("%", "!")))
        out += [ast.get_source_segment(clean, node) for node in tree.body]
    return out


def is_stub(cell: str) -> bool:
    """True for an exercise stub: a cell whose code still raises NotImplementedError where the learner's
    solution goes (what the release writes)."""
    return "raise NotImplementedError" in cell
