"""Finding, in the learner's *source*, calls of the framework's own implementation of an exercise.

Runs in the grader, never in the learner's process. Every reference in the code an exercise's objects can
reach (their bodies, class bases, and the module-level helpers they use, transitively) is resolved to the
real object it names, through renamed imports, module-level and local aliases, attribute chains,
``getattr``/``vars``/``__dict__``/``sys.modules`` with literal names, ``__import__`` and
``importlib.import_module``; module-level bindings are followed wherever they are (inside if/try/for/with
blocks, tuple unpacking, walrus, star imports), and a name bound to an expression (a lambda, a
``functools.partial``, a list holding the reference, a patched ``__code__`` or method) reaches whatever that
expression reaches. A forbidden object reached in any of these ways is a shortcut, and so is the exercise
itself being bound to it (``SGD = tc.optim.SGD``). Local names that merely share a name with the
reference (a variable called ``linear``) resolve to nothing and accuse no one. Lookups with computed
names on the framework, eval/exec/compile inside the exercise, and names that only a dynamic binding
(``exec``, ``globals()``, ``setattr`` on a module ...) could have defined cannot be followed statically
and are reported as such.
"""
from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import textwrap
import types
from dataclasses import dataclass, field

from .parsing import parse
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
            if alias.name == "*":  # every public name of the module, as Python binds them
                public = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
                table.update({n: _getattr(module, n) for n in public if isinstance(n, str)} if module else {})
            else:
                table[alias.asname or alias.name] = _getattr(module, alias.name) or _import(f"{node.module}.{alias.name}")


def _statements(body: list):
    """Module-level statements in order, including those inside if/try/for/while/with blocks (not defs)."""
    for node in body:
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for name in ("body", "orelse", "finalbody"):
                yield from _statements(getattr(node, name, None) or [])
            for handler in getattr(node, "handlers", None) or []:
                yield from _statements(handler.body)
            for case in getattr(node, "cases", None) or []:
                yield from _statements(case.body)


def _bound(target) -> list[str]:
    """The names a store binds: `builtins.f = ...` or `d[k] = ...` binds neither `builtins` nor `d` (nor `k`)."""
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]


def _bindings(node) -> list[tuple[list[str], ast.AST]]:
    """(names, the expression they may hold) for one module-level statement; Python's own stores only."""
    found = []
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if isinstance(target, (ast.Tuple, ast.List)) and isinstance(node.value, (ast.Tuple, ast.List)) \
                    and len(target.elts) == len(node.value.elts):
                found += [(_bound(t), v) for t, v in zip(target.elts, node.value.elts)]
            else:
                found.append((_bound(target), node.value))
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and node.value is not None:
        found.append((_bound(node.target), node.value))
    elif isinstance(node, (ast.For, ast.AsyncFor)):
        found.append((_bound(node.target), node.iter))
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        found += [(_bound(item.optional_vars), item.context_expr) for item in node.items if item.optional_vars is not None]
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
        for sub in _own_nodes(node):
            if isinstance(sub, ast.NamedExpr):
                found.append(([sub.target.id], sub.value))
    return found


def _own_nodes(node):
    """The nodes of one statement, without the bodies of nested statements, functions and classes."""
    todo = [child for name, child in ast.iter_fields(node) if name not in ("body", "orelse", "finalbody", "handlers", "cases")]
    while todo:
        item = todo.pop()
        for sub in item if isinstance(item, list) else [item]:
            if isinstance(sub, ast.AST) and not isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                yield sub
                todo.extend(child for _, child in ast.iter_fields(sub))


@dataclass
class _Module:
    """What the notebook's cells bind at module level."""

    symbols: dict = field(default_factory=dict)   # name -> the object it denotes (statically known)
    defs: dict = field(default_factory=dict)      # name -> [def/class nodes]
    exprs: dict = field(default_factory=dict)     # name -> [expressions it was bound to or patched with]
    names: set = field(default_factory=set)       # every name bound at module level, known or not
    dynamic: str = ""                             # a way of binding names the grader cannot follow


NOTEBOOK_NAMES = {"display", "get_ipython", "In", "Out", "_", "__", "___", "exit", "quit"}  # given by Jupyter
DYNAMIC_BINDERS = {"exec", "eval", "compile", "globals", "locals", "vars", "setattr", "__import__", "__builtins__"}


def _module_symbols(trees: list[ast.Module]) -> _Module:
    """Every module-level binding of `trees`, in order, through blocks, unpacking, walrus, star imports."""
    found = _Module()
    resolver = _Resolver(found.symbols)
    for tree in trees:
        found.names |= {name for node in ast.walk(tree) if isinstance(node, ast.Global) for name in node.names}
        for node in _statements(tree.body):
            _bind_imports(node, found.symbols)
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found.names |= {(a.asname or a.name).split(".")[0] for a in node.names} | set(found.symbols)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.defs.setdefault(node.name, []).append(node)
                found.symbols.pop(node.name, None)
                found.names.add(node.name)
            for names, value in _bindings(node):
                known = resolver.resolve(value, {})
                for name in names:
                    found.names.add(name)
                    found.exprs.setdefault(name, []).append(value)
                    if known is not None or name not in found.symbols:
                        found.symbols[name] = known
            _patches(node, found)
            if not found.dynamic:
                found.dynamic = _dynamic_binder(node)
    found.symbols = {k: v for k, v in found.symbols.items() if v is not None}
    return found


def _patches(node, found: _Module) -> None:
    """`f.__code__ = ...`, `Cls.step = ...`, `setattr(Cls, ...)`: the value becomes part of what the name reaches."""
    stores = [(t, node.value) for t in node.targets] if isinstance(node, ast.Assign) else []
    for sub in _own_nodes(node):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == "setattr" and len(sub.args) == 3:
            stores.append((ast.Attribute(sub.args[0], "_", ast.Store()), sub.args[2]))
    for target, value in stores:
        if not isinstance(target, (ast.Attribute, ast.Subscript)):
            continue
        while isinstance(target, (ast.Attribute, ast.Subscript)):
            target = target.value
        if isinstance(target, ast.Name):
            found.exprs.setdefault(target.id, []).append(value)


def _dynamic_binder(node) -> str:
    for sub in _own_nodes(node):
        if isinstance(sub, ast.Name) and sub.id in DYNAMIC_BINDERS:
            return sub.id
        if isinstance(sub, ast.Attribute) and sub.attr in ("__dict__", "modules", "__builtins__", "__code__"):
            return sub.attr
    return ""


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


def _inner_names(node) -> set[str]:
    """Every name a def/class binds anywhere inside it (arguments, stores, imports, handlers, nested defs)."""
    names = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.arg):
            names.add(sub.arg)
        elif isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
            names.add(sub.id)
        elif isinstance(sub, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in sub.names}
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(sub.name)
        elif isinstance(sub, ast.ExceptHandler) and sub.name:
            names.add(sub.name)
        elif isinstance(sub, (ast.MatchAs, ast.MatchStar)) and sub.name:
            names.add(sub.name)
    return names


def _uses(roots: list[str], module: _Module, forbidden: dict, dynamic: bool = True) -> str | None:
    """The forbidden implementation (or the untraceable lookup) that the objects named `roots` reach."""
    resolver, seen, todo = _Resolver(module.symbols), set(), list(roots)
    for root in roots:
        for label, target in forbidden.items():
            if module.symbols.get(root) is target:
                return label
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        nodes = [(node, True) for node in module.defs.get(name, [])] + [(node, False) for node in module.exprs.get(name, [])]
        for node, is_def in nodes:
            local = _local_table(node, resolver) if is_def and not isinstance(node, ast.ClassDef) else {}
            inner = _inner_names(node)
            for sub in ast.walk(node):
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and sub is not node:
                    local = {**local, **_local_table(sub, resolver)}
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id not in local:
                    if sub.id in module.defs or sub.id in module.exprs:
                        todo.append(sub.id)
                    elif dynamic and module.dynamic and sub.id not in inner | module.names | NOTEBOOK_NAMES \
                            and not hasattr(builtins, sub.id):
                        return f"the name {sub.id!r}, bound in a way the grader cannot follow ({module.dynamic})"
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
                parsed.append((parse(step.source), step.learner))
            except (SyntaxError, ValueError, RecursionError):
                continue
    trees = [tree for tree, _ in parsed]
    everything = _module_symbols(trees)
    learner_trees = [tree for tree, learner in parsed if learner]
    learner = _module_symbols(learner_trees)
    module = _Module(everything.symbols, learner.defs, learner.exprs, everything.names, learner.dynamic)
    symbols = everything.symbols
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
            used = _uses(names, module, forbidden)
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
            tree = parse(textwrap.dedent(inspect.getsource(fn)))
        except (OSError, TypeError, SyntaxError):
            continue
        closure = dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__ or () if _filled(c))))
        symbols = {**fn.__globals__, **closure}
        defs = {node.name: [node] for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        used = _uses(list(defs), _Module(symbols, defs, {}, set(symbols)), forbidden, dynamic=False)  # computed names: the tripwire's job
        if used and used not in found:
            found.append(used)
    return found


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True
