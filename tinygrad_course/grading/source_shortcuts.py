"""Finding, in the learner's *source*, calls of the framework's own implementation of an exercise.

Runs in the grader, never in the learner's process. Every reference in the code an exercise's objects can
reach (their bodies, class bases, and the module-level helpers they use, transitively) is resolved to the
real object it names, through renamed imports, module-level and local aliases, attribute chains,
``getattr``/``vars``/``__dict__``/``sys.modules`` with literal names, ``__import__`` and
``importlib.import_module``; a forbidden object reached in any of these ways is a shortcut. Local names
that merely share a name with the reference (a variable called ``linear``) resolve to nothing and accuse
no one. Lookups with computed names on the framework, eval/exec/compile, and writes into library modules
cannot be followed statically and are reported as such.
"""
from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import textwrap
import types

from .registry import get_exercise

DYNAMIC = object()
WATCHED = ("tinygrad_course", "numpy", "torch")
_IMPORTERS = {"__import__", "import_module"}


def _import(name: str):
    try:
        return importlib.import_module(name)
    except Exception:
        return None


def _watched(obj) -> bool:
    name = obj.__name__ if isinstance(obj, types.ModuleType) else getattr(obj, "__module__", "") or ""
    return isinstance(name, str) and name.startswith(WATCHED)


def _getattr(base, name):
    if base is None or base is DYNAMIC or not isinstance(base, (types.ModuleType, type)):
        return None
    try:
        return getattr(base, name)
    except Exception:
        return None


class _Resolver:
    def __init__(self, module_symbols: dict):
        self.module = module_symbols

    def resolve(self, node, local: dict):
        """The object `node` evaluates to when that is knowable statically, DYNAMIC, or None."""
        if isinstance(node, ast.Name):
            if node.id in local:
                return local[node.id]
            if node.id in self.module:
                return self.module[node.id]
            return builtins if node.id == "__builtins__" else None
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value, local)
            return DYNAMIC if base is DYNAMIC else _getattr(base, node.attr)
        if isinstance(node, ast.Subscript):
            key = node.slice.value if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str) else None
            inner = node.value
            if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == "vars" and inner.args:
                base = self.resolve(inner.args[0], local)
            elif isinstance(inner, ast.Attribute) and inner.attr == "__dict__":
                base = self.resolve(inner.value, local)
            elif isinstance(inner, ast.Attribute) and inner.attr == "modules" and self.resolve(inner.value, local) is _import("sys"):
                return _import(key) if key else DYNAMIC
            else:
                return None
            if key is None:
                return DYNAMIC if base is not None and _watched(base) else None
            return _getattr(base, key)
        if isinstance(node, ast.Call):
            return self._call(node, local)
        return None

    def _call(self, node, local):
        func = node.func
        name = func.id if isinstance(func, ast.Name) and func.id not in local and func.id not in self.module else None
        if name in ("eval", "exec", "compile"):
            return DYNAMIC
        target = self.resolve(func, local)
        literal = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else None
        if name == "getattr" and len(node.args) >= 2:
            base = self.resolve(node.args[0], local)
            attr = node.args[1]
            if isinstance(attr, ast.Constant) and isinstance(attr.value, str):
                return _getattr(base, attr.value)
            return DYNAMIC if base is not None and base is not DYNAMIC and _watched(base) else None
        if name == "__import__" or getattr(target, "__name__", None) in _IMPORTERS and target is not None:
            return _import(literal) if isinstance(literal, str) else DYNAMIC
        return None


def _bind_imports(node, table: dict) -> None:
    if isinstance(node, ast.Import):
        for alias in node.names:
            table[alias.asname or alias.name.split(".")[0]] = _import(alias.name if alias.asname else alias.name.split(".")[0])
    elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
        module = _import(node.module)
        for alias in node.names:
            if alias.name != "*":
                table[alias.asname or alias.name] = _getattr(module, alias.name) or _import(f"{node.module}.{alias.name}")


def _module_symbols(trees: list[ast.Module]) -> tuple[dict, dict]:
    """(name -> object or DYNAMIC, name -> def/class node) over all top-level statements, in order."""
    symbols, defs = {}, {}
    resolver = _Resolver(symbols)
    for tree in trees:
        for node in tree.body:
            _bind_imports(node, symbols)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defs[node.name] = node
                symbols.pop(node.name, None)
            elif isinstance(node, ast.Assign):
                value = resolver.resolve(node.value, {})
                for target in node.targets:
                    if isinstance(target, ast.Name) and (value is not None or target.id not in symbols):
                        symbols[target.id] = value
    return {k: v for k, v in symbols.items() if v is not None}, defs


def _local_table(fn, resolver: _Resolver) -> dict:
    """Names bound inside a function: aliases of known objects keep them, everything else is opaque (None)."""
    table = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.arg):
            table[node.arg] = None
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            table.setdefault(node.id, None)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            _bind_imports(node, table)
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            value = resolver.resolve(node.value, table)
            for target in node.targets:
                if isinstance(target, ast.Name) and value is not None:
                    table[target.id] = value
    return table


def _uses(roots: list[str], defs: dict, symbols: dict, forbidden: dict, dynamic: bool = True) -> str | None:
    resolver, seen, todo = _Resolver(symbols), set(), [r for r in roots if r in defs]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        node = defs[name]
        local = _local_table(node, resolver) if not isinstance(node, ast.ClassDef) else {}
        for sub in ast.walk(node):
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and sub is not node:
                local = {**local, **_local_table(sub, resolver)}
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id in defs and sub.id not in local:
                todo.append(sub.id)
            if not isinstance(sub, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)):
                continue
            value = resolver.resolve(sub, local)
            if value is DYNAMIC and dynamic:
                return "a lookup the grader cannot follow (computed getattr, eval or exec)"
            for label, target in forbidden.items():
                if value is not None and value is target:
                    return label
    return None


def _library(obj) -> bool:
    """A module, or a class of a watched library (patching either changes what everyone's code calls)."""
    return isinstance(obj, types.ModuleType) or isinstance(obj, type) and _watched(obj)


def _planted(trees: list[ast.Module], symbols: dict, forbidden: dict) -> str | None:
    """A forbidden implementation stored into a library module or class (to be found there under another name)."""
    resolver = _Resolver(symbols)
    for tree in trees:
        for node in ast.walk(tree):
            stores = [(t, node.value) for t in node.targets] if isinstance(node, ast.Assign) else []
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" and len(node.args) == 3:
                stores.append((ast.Attribute(node.args[0], "_", ast.Store()), node.args[2]))
            for target, value in stores:
                if isinstance(target, ast.Attribute) and _library(resolver.resolve(target.value, {})):
                    planted = resolver.resolve(value, {})
                    for label, obj in forbidden.items():
                        if planted is obj:
                            return f"{label} (stored into a library under another name)"
    return None


def shortcut_findings(plan, solution_nb=None) -> dict[str, str]:
    """exercise -> what it used, for every exercise whose objects reach a forbidden implementation."""
    parsed = []
    for step in plan.steps:
        if step.kind == "code":
            try:
                parsed.append((ast.parse(step.source), step.learner))
            except (SyntaxError, ValueError, RecursionError):
                continue
    trees = [tree for tree, _ in parsed]
    symbols, defs = _module_symbols(trees)
    learner_trees = [tree for tree, learner in parsed if learner]
    _, learner_defs = _module_symbols(learner_trees)
    findings = {}
    for probe in plan.probes.values():
        for exercise_id, names in probe.exercises:
            try:
                forbidden_names = get_exercise(exercise_id).forbidden
            except KeyError:
                continue
            if not forbidden_names:
                continue
            forbidden = _forbidden_objects(forbidden_names)
            used = _uses(names, {k: v for k, v in defs.items() if k in learner_defs}, symbols, forbidden)
            used = used or _planted(learner_trees, symbols, forbidden)
            if used:
                findings[exercise_id] = used
    return findings


def _forbidden_objects(names) -> dict:
    found = {}
    for dotted in names:
        module, _, attr = dotted.rpartition(".")
        target = _getattr(_import(module), attr)
        if target is not None:
            found[dotted] = target
    return found


def function_violations(functions, forbidden_names) -> list[str]:
    """Forbidden names that live functions reach, resolved through their real globals (for check())."""
    forbidden = _forbidden_objects(forbidden_names)
    found = []
    for fn in functions:
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
        except (OSError, TypeError, SyntaxError):
            continue
        closure = dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__ or () if _filled(c))))
        symbols = {**fn.__globals__, **closure}
        defs = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        used = _uses(list(defs), defs, symbols, forbidden, dynamic=False)  # computed names: the tripwire's job
        if used and used not in found:
            found.append(used)
    return found


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True
