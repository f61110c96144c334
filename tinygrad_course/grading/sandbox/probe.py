"""Turning a graded test cell into a probe: the code that only *produces* the learner's results.

A test cell calls ``check(id, objects...)`` and, in its hidden part, ``expect_close(got, expected, ...)``,
``expect_equal(got, expected, ...)`` and ``assert condition, message``. The probe keeps the calls that
produce ``got``; every comparison becomes ``__observe__(site, got)``, and statements that only computed
expected values are removed. The expected values, tolerances and messages stay in the grader (the
returned sites), which compares the observations of the learner's run with those of the solution's run.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ..parsing import parse

OBSERVE = "__grader_observe__"
CHECK = "__grader_check__"
EXPECT = {"expect_close": "close", "expect_equal": "equal"}


@dataclass
class Probe:
    """A test cell as the worker runs it, and what the grader keeps for itself."""

    source: str
    sites: dict[str, dict] = field(default_factory=dict)  # site id -> {"kind", "what", "rtol", "atol"}
    exercises: list[tuple[str, list[str]]] = field(default_factory=list)  # check(id, names...) calls


def _literal(node, default):
    try:
        return ast.literal_eval(node)
    except Exception:
        return default


def _loads(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _stores(node) -> set[str]:
    """Names a simple statement binds (comprehension variables are not bindings of the statement)."""
    targets = list(getattr(node, "targets", None) or [getattr(node, "target", None)])
    found = {n.id for t in targets if t is not None for n in ast.walk(t) if isinstance(n, ast.Name)}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        found |= {(a.asname or a.name).split(".")[0] for a in node.names}
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        found.add(node.name)
    return found


def _side_effect_target(node) -> bool:
    """An assignment into an object (p.grad = ..., x[0] = ...) changes state other code sees."""
    targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
    return any(isinstance(n, (ast.Attribute, ast.Subscript)) for t in targets if t is not None for n in ast.walk(t))


class _Rewriter(ast.NodeTransformer):
    def __init__(self, probe: Probe):
        self.probe = probe

    def _site(self, kind, what, rtol=1e-5, atol=1e-6) -> str:
        site = f"h{len(self.probe.sites)}"
        self.probe.sites[site] = {"kind": kind, "what": what, "rtol": rtol, "atol": atol}
        return site

    def _observe(self, site, value):
        call = ast.Call(ast.Name(OBSERVE, ast.Load()), [ast.Constant(site), value], [])
        return ast.Expr(call)

    def visit_Expr(self, node):
        call = node.value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name):
            name = call.func.id
            if name == "check" and call.args:
                self.probe.exercises.append((_literal(call.args[0], ""), [a.id for a in call.args[1:] if isinstance(a, ast.Name)]))
                return ast.Expr(ast.Call(ast.Name(CHECK, ast.Load()), call.args, call.keywords))
            if name in EXPECT and call.args:
                kw = {k.arg: _literal(k.value, None) for k in call.keywords if k.arg}
                what = _literal(call.args[2], "result") if len(call.args) > 2 else kw.get("what", "result")
                site = self._site(EXPECT[name], str(what), kw.get("rtol") or 1e-5, kw.get("atol") or 1e-6)
                return self._observe(site, call.args[0])
        return node

    def visit_Assert(self, node):
        test = node.test
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
            # assert got == expected: only `got` goes to the worker
            site = self._site("equal", str(_literal(node.msg, "")) if node.msg else ast.unparse(test.left)[:200])
            return self._observe(site, test.left)
        site = self._site("true", str(_literal(node.msg, "")) if node.msg else ast.unparse(node.test)[:200])
        return self._observe(site, node.test)


def _prune(body: list, live: set[str], keep_names: set[str]) -> list:
    """Drop statements that only compute values nobody observes (walking backwards, tracking live names)."""
    kept = []
    for stmt in reversed(body):
        if isinstance(stmt, ast.Expr):
            kept.append(stmt)
            live |= _loads(stmt)
            continue
        if isinstance(stmt, (ast.For, ast.While, ast.If, ast.With, ast.Try, ast.AsyncFor, ast.AsyncWith)):
            inner = set(live) | _loads(stmt)
            new = {}
            for name in ("body", "orelse", "finalbody"):
                if getattr(stmt, name, None):
                    new[name] = _prune(list(getattr(stmt, name)), set(inner), keep_names)
            if any(new.values()) or getattr(stmt, "handlers", None):
                for name, value in new.items():
                    setattr(stmt, name, value or [ast.Pass()])
                kept.append(stmt)
                live |= _loads(stmt) - _stores(stmt) | inner
            continue
        stores = _stores(stmt)
        needed = (bool(stores & live) or _side_effect_target(stmt) or isinstance(stmt, ast.AugAssign)  # x += 1 may mutate x in place
                  or bool(_loads(stmt) & keep_names))
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            needed = bool(stores & live)
        if needed or not stores and not isinstance(stmt, (ast.Pass,)):
            kept.append(stmt)
            if not isinstance(stmt, ast.AugAssign):  # x += 1 reads x as well
                live -= stores - _loads(stmt)
            live |= _loads(stmt)
    return list(reversed(kept))


def make_probe(source: str) -> Probe:
    """The probe of a test cell's source (solution markers already removed)."""
    probe = Probe("")
    tree = _Rewriter(probe).visit(parse(source))
    learner_names = {n for _, names in probe.exercises for n in names}
    tree.body = _prune(tree.body, set(), learner_names)
    probe.source = ast.unparse(ast.fix_missing_locations(tree))
    return probe


KEPT_OPTIONS = {"rtol", "atol", "check_dtype"}


def _constant_text(node) -> ast.Constant:
    """A description the worker may see: literal text as is, f-strings reduced to their literal parts."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node
    if isinstance(node, ast.JoinedStr):
        return ast.Constant("…".join(v.value for v in node.values if isinstance(v, ast.Constant)).strip())
    return ast.Constant("result")


FEEDBACK_ARGUMENTS = ("hint", "mistakes")  # what the grader says about a wrong value: never in the worker's source


class _CheckRewriter(ast.NodeTransformer):
    """t.close(got, expected, what, ...) -> t.close(got, None, "what", rtol=.., atol=..): no expected value.
    Hints and catalogued mistakes go too, also where a check's helper function takes them as arguments and
    hands them on (`_same(t, got, expected, call, hint="...")`)."""

    def visit_FunctionDef(self, node):
        self.generic_visit(node)
        args = node.args
        dropped = [(a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if a.arg in FEEDBACK_ARGUMENTS]
        if dropped:  # the parameter goes; the body reads its default (None without one): nothing a caller gave
            kept = [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if a.arg not in FEEDBACK_ARGUMENTS]
            args.kwonlyargs, args.kw_defaults = [a for a, _ in kept], [d for _, d in kept]
            node.body = [ast.Assign([ast.Name(name, ast.Store())], default or ast.Constant(None))
                         for name, default in dropped] + node.body
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "t"):
            node.keywords = [k for k in node.keywords if k.arg not in FEEDBACK_ARGUMENTS]
            return node
        if func.attr in ("close", "equal") and len(node.args) >= 2:
            what = node.args[2] if len(node.args) > 2 else next((k.value for k in node.keywords if k.arg == "what"), ast.Constant("result"))
            options = [k for k in node.keywords if k.arg in KEPT_OPTIONS and isinstance(k.value, ast.Constant)]
            node.args = [node.args[0], ast.Constant(None), _constant_text(what)]
            node.keywords = options
        elif func.attr == "true" and node.args:
            what = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "what"), ast.Constant(""))
            node.args, node.keywords = [node.args[0], _constant_text(what)], []
        elif func.attr == "raises":
            node.keywords = [k for k in node.keywords if k.arg not in ("hint", "what")]
        elif func.attr == "fail":  # the deferred fix stays in the grader, like the hints of the other expectations
            node.keywords = [k for k in node.keywords if k.arg != "hint"]
        return node


def make_check_probe(module_source: str) -> str:
    """A chapter's check module as the worker runs it: every expectation loses its expected value, and code
    that only computed expected values is removed from each function that states expectations."""
    tree = _CheckRewriter().visit(parse(module_source))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(a.arg == "t" for a in node.args.args):
            params = {a.arg for a in node.args.args + node.args.kwonlyargs} | {a.arg for a in (node.args.vararg, node.args.kwarg) if a}
            node.body = _prune(list(node.body), set(), params) or [ast.Pass()]
    return ast.unparse(ast.fix_missing_locations(tree))
