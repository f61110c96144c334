"""Helpers of the catalogue of wrong answers: the solutions and stubs of a chapter, and the staged-feedback
assertion every wrong answer goes through."""
from __future__ import annotations

import functools
import re
import json
from pathlib import Path

import pytest

from tinygrad_course.grading import CheckFailed, check, hint, reset_attempts

ROOT = Path(__file__).resolve().parents[2]


@functools.lru_cache(maxsize=None)
def notebook_namespace(folder: str, chapter: str) -> dict:
    """The names the setup cell and the graded solution (or stub) cells of a notebook define."""
    path = next((ROOT / folder).glob(f"{chapter}_*.ipynb"))
    cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    namespace: dict = {}
    for i, cell in enumerate(cells):
        nbgrader = cell.get("metadata", {}).get("nbgrader", {})
        if i == 0 or nbgrader.get("solution") and not nbgrader.get("grade"):
            exec(compile("".join(cell["source"]), f"<{path.name} cell {i}>", "exec"), namespace)
    return namespace


def edited_cell(notebook: str, grade_id: str, changes=(), namespace=None, folder: str = "solutions") -> dict:
    """The names the graded cell `grade_id` of `folder`/`notebook` defines, run in `namespace` (the imports it
    needs) after each (old, new) of `changes` was made in its source (each `old` must be there): a wrong answer
    written as the solution with one mistake."""
    nb = json.loads((ROOT / folder / notebook).read_text())
    source = next("".join(c["source"]) for c in nb["cells"]
                  if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id)
    for old, new in changes:
        assert old in source, old
        source = source.replace(old, new)
    namespace = dict(namespace or {})
    exec(compile(source, f"<{grade_id}>", "exec"), namespace)
    return namespace


def solution(chapter: str, *names: str) -> tuple:
    """The solution notebook's objects `names`."""
    namespace = notebook_namespace("solutions", chapter)
    return tuple(namespace[n] for n in names)


def stub(chapter: str, *names: str) -> tuple:
    """The released exercise notebook's (unsolved) objects `names`."""
    namespace = notebook_namespace("exercises", chapter)
    return tuple(namespace[n] for n in names)


def assert_named(message: str) -> None:
    """A failure that compares values also names the mistake: numbers alone ("values differ", "expected X,
    got Y" with nothing after it) leave a learner guessing until the hint."""
    head = message.splitlines()[1] if len(message.splitlines()) > 1 else message
    bare_values = "values differ" in head or "shape mismatch" in head or "dtype mismatch" in head
    assert not bare_values or "what went wrong:" in message or re.search(r"got [^:]+: \w", head), \
        f"the failure shows numbers but names no mistake:\n{message}"


def assert_stub_fails(exercise: str, *objects) -> None:
    """The unsolved stub scores nothing and is told it is not implemented yet."""
    reset_attempts()
    with pytest.raises(CheckFailed, match="not implemented yet"):
        check(exercise, *objects)


def assert_names_mistake(exercise: str, objects, *phrases: str) -> str:
    """`objects` fail `exercise` with a first message holding every phrase (the mistake named, the input
    shown) and no hint; the fix, if the check has one, is held back until two checks have failed and hint()
    is asked a second time."""
    reset_attempts()
    with pytest.raises(CheckFailed) as first:
        check(exercise, *objects)
    message = str(first.value)
    assert "0/" in message.splitlines()[0]
    assert_named(message)
    for phrase in phrases:
        assert phrase in message, f"{phrase!r} is not in the first failure:\n{message}"
    fix = first.value.hint
    if fix:
        assert fix not in message, f"the hint was shown on the first failure:\n{message}"
        assert f'hint("{exercise}")' in message
        assert fix not in str(hint(exercise)), "hint() gave the fix after a single failure"
        with pytest.raises(CheckFailed) as second:
            check(exercise, *objects)
        assert fix not in str(second.value), "the second failure gave the fix without being asked"
        assert fix not in str(hint(exercise)), "hint() gave the fix when first asked"
        assert fix in str(hint(exercise))
    return message


def named_mistake_test(catalogue):
    """The test of a catalogue of (exercise, classes, phrases) rows: each wrong answer fails its first check
    naming its mistake with every phrase, the fix held back (`assert_names_mistake`)."""

    @pytest.mark.parametrize("exercise, wrong, phrases", catalogue,
                             ids=[f"{e}-{'-'.join(w.__name__ for w in ws)}-{k}" for k, (e, ws, _) in enumerate(catalogue)])
    def test_a_wrong_answer_fails_naming_its_mistake(exercise, wrong, phrases):
        assert_names_mistake(exercise, wrong, *phrases)

    return test_a_wrong_answer_fails_naming_its_mistake


def first_failure(exercise: str, *objects) -> str:
    """The message of `objects`' first failure of `exercise` (attempts counted from zero)."""
    reset_attempts()
    with pytest.raises(CheckFailed) as first:
        check(exercise, *objects)
    return str(first.value)


def both_failures(exercise: str, *objects) -> str:
    """The second failure's diagnosis followed by '  hint: <fix>' as hint() gives it when asked twice after
    it (when the check has a fix); neither failure may have shown that fix by itself."""
    reset_attempts()
    with pytest.raises(CheckFailed) as first:
        check(exercise, *objects)
    if first.value.hint:
        assert first.value.hint not in str(first.value), f"the hint was shown on the first failure:\n{first.value}"
    assert_named(str(first.value))
    with pytest.raises(CheckFailed) as second:
        check(exercise, *objects)
    message = str(second.value)
    assert not first.value.hint or first.value.hint not in message, "the second failure gave the fix unasked"
    hint(exercise)
    fix = hint(exercise).text
    diagnosis = message.rpartition("\n  (")[0] or message  # without the line that points to hint()
    return diagnosis + (f"\n  hint: {fix}" if first.value.hint else "")


def unwritten_stub(*args, **kwargs):
    """What a released exercise stub does."""
    raise NotImplementedError("replace this line with your code")


def catalogue_tests(names: dict, catalogue, chapter: str | None = None):
    """The two tests every catalogue file has: each exercise's stub fails, and each exercise has at least two
    wrong answers in `catalogue` ((exercise, objects, phrase) rows). `names` maps an exercise to the names its
    stub defines (a name or a tuple), led by the chapter when `chapter` is not given."""

    def defined(exercise):
        entry = names[exercise]
        entry = entry if isinstance(entry, tuple) else (entry,)
        return (chapter, *entry) if chapter is not None else entry

    @pytest.mark.parametrize("exercise", sorted(names))
    def test_the_stub_fails(exercise):
        assert_stub_fails(exercise, *stub(*defined(exercise)))

    def test_every_exercise_has_two_wrong_answers():
        counts = {e: sum(1 for x, _, _ in catalogue if x == e) for e in names}
        assert min(counts.values()) >= 2, counts

    return test_the_stub_fails, test_every_exercise_has_two_wrong_answers


def op(base, forward=None, backward=None):
    """A wrong variant of the solution's op class `base`, keeping its name (the framework's op it computes)."""
    body = {}
    if forward is not None:
        body["forward"] = staticmethod(forward)
    if backward is not None:
        body["backward"] = staticmethod(backward)
    return type(base.__name__, (base,), body)
