"""Fingerprints of the grading machinery, so that a submission that patches it is caught."""
from __future__ import annotations

import sys
import types

PROTECTED_PREFIXES = ("builtins", "numpy", "tinygrad_course", "math", "operator", "functools", "hmac", "json")


def _fingerprint(value) -> tuple:
    if isinstance(value, types.FunctionType):
        return (id(value), id(value.__code__), id(value.__defaults__), id(value.__kwdefaults__))
    return (id(value),)


def take() -> dict:
    """Identity of every callable, class and module reachable as an attribute of a protected module.

    Plain data (counters, default dtypes, random generators) is left out: changing it is legitimate.
    """
    fingerprint = {}
    for name, module in list(sys.modules.items()):
        if not isinstance(module, types.ModuleType) or not name.startswith(PROTECTED_PREFIXES):
            continue
        fingerprint[("sys.modules", name)] = (id(module),)
        for attr, value in list(vars(module).items()):
            if callable(value) or isinstance(value, types.ModuleType):
                fingerprint[(name, attr)] = _fingerprint(value)
            if isinstance(value, type) and getattr(value, "__module__", "").startswith("tinygrad_course"):
                for method, member in list(vars(value).items()):
                    if callable(member):
                        fingerprint[(f"{name}.{attr}", method)] = _fingerprint(member)
    return fingerprint


def changed(before: dict) -> list[str]:
    """Names whose identity differs from the snapshot (new attributes are allowed)."""
    now = take()
    return sorted(f"{owner}.{attr}" if owner != "sys.modules" else f"sys.modules[{attr!r}]"
                  for (owner, attr), print_ in before.items() if now.get((owner, attr)) != print_)
