"""`parse`: `ast.parse` for the grader, which grades notebooks in several threads at once.

CPython 3.11 keeps one recursion-depth counter per interpreter while it turns a parsed tree into Python
`ast` objects; when two threads do that at the same time, one of them can fail with "SystemError: AST
constructor recursion depth mismatch" (CPython gh-106905, fixed in later versions), which once graded an
honest notebook 0. Every parse in the grader goes through this one lock.
"""
from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()


def parse(source: str) -> ast.Module:
    """`ast.parse(source)`, one thread at a time."""
    with _LOCK:
        return ast.parse(source)
