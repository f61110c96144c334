"""Using the learner's framework: `use_learner()` installs every component the learner has written (the
reference stays wherever they have not), `status()` prints the table, and `record(chapter)` saves each
solution cell into the learner's package as it runs.
"""
from __future__ import annotations

import ast
import os
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from .. import seams
from .components import COMPONENTS, for_chapter
from .package import (DEFAULT_FOLDER, Loaded, learner_folder, load, read_manifest, record_check, save,
                      saved_chapter)
from .probes import PROBES, compare


@dataclass
class Row:
    component: str
    chapter: str
    source: str      # "learner" or "reference"
    check: str       # "pass", "fail" or "missing"
    calls: int
    note: str = ""

    def as_dict(self) -> dict:
        return {"component": self.component, "chapter": self.chapter, "source": self.source, "check": self.check,
                "calls": self.calls}


class Status(list):
    """The component table (a list of rows) that prints as a table in a notebook or a terminal."""

    def __str__(self):
        lines = [f"{'component':<24} {'chapter':<8} {'source':<10} {'check':<8} {'calls':>6}  note"]
        for r in self:
            lines.append(f"{r.component:<24} {r.chapter:<8} {r.source:<10} {r.check:<8} {r.calls:>6}  {r.note}")
        learner = sum(r.source == "learner" for r in self)
        lines.append(f"{learner} of {len(self)} components are yours; the others run the reference implementation.")
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_pretty_(self, p, cycle):
        p.text(str(self))


_state = {"folder": None, "loaded": []}
NONE_YET = ("None of your components is saved yet, so the framework runs on its reference implementation here.\n"
            "Run the solution cells of the exercises to build them; tc.build.status() shows the table.")


_seconds: dict = {}  # component name -> time spent in the learner's code since the last install
_nested: list = []  # time spent in components called from inside the running ones (not their own time)


def seconds() -> dict:
    """{component: seconds spent in the learner's implementation itself, without the other components it
    called} since the components were installed (so that a slow component can be named)."""
    return dict(_seconds)


def _guarded(implementation, name: str, where: str):
    """`implementation`, with any error it raises saying which of the learner's components raised it and
    where that component was written (the error itself, and its traceback, are kept), and the time it
    takes added to `seconds()`."""

    def run(*args, **kwargs):
        start = time.perf_counter()
        _nested.append(0.0)
        try:
            return implementation(*args, **kwargs)
        except Exception as error:
            if not getattr(error, "_tc_component_named", False):
                error.add_note(f"raised by your {name} ({where}); fix that cell and run it again, or call "
                               "tc.build.use_reference() to go on with the reference")
                error._tc_component_named = True
            raise
        finally:
            elapsed = time.perf_counter() - start
            _seconds[name] = _seconds.get(name, 0.0) + elapsed - _nested.pop()
            if _nested:
                _nested[-1] += elapsed

    run.__wrapped__ = implementation
    return run


def install(loaded: list[Loaded], folder=None) -> None:
    """Put every loaded learner component into its seam (and take out the ones that are gone)."""
    manifest = read_manifest(folder).get("components", {}) if folder is not None else {}
    _seconds.clear()
    for item in loaded:
        seams.uninstall(item.component.seam)
        if item.obj is not None:
            where = manifest.get(item.component.name, {}).get("from") or item.file or "your package"
            seams.install(item.component.seam, _guarded(item.component.adapt(item.obj), item.component.name, where))


def use_learner(folder=DEFAULT_FOLDER, quiet=False):
    """Make the framework run on your components from `folder` wherever you have written them (the
    reference elsewhere); returns the status table. Use it as a context manager to switch back after:
    `with use_learner(): ...`."""
    folder = learner_folder(folder)
    loaded = load(folder)
    for item in loaded:
        if item.error:
            warnings.warn(f"{item.component.name}: {item.error}; the reference is used instead", stacklevel=2)
    install(loaded, folder)
    seams.reset_calls()
    _state.update(folder=folder, loaded=loaded)
    table = status()
    if not quiet:
        print(table if any(r.source == "learner" for r in table) else NONE_YET)
    return _Session(table)


class _Session(Status):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        use_reference()


def use_reference() -> None:
    """Run every component on the reference implementation again."""
    for c in COMPONENTS:
        seams.uninstall(c.seam)
    _state["loaded"] = []


def status() -> Status:
    """The table: each component, where it comes from (learner or reference), its last check and how often
    it ran since `use_learner()`."""
    folder = _state["folder"] or learner_folder()
    manifest = read_manifest(folder).get("components", {})
    loaded = {item.component.name: item for item in _state["loaded"]}
    calls = seams.calls()
    rows = Status()
    for c in COMPONENTS:
        item = loaded.get(c.name)
        mine = item is not None and item.obj is not None
        check = manifest.get(c.name, {}).get("check", "missing") if mine else "missing"
        note = item.error if item is not None and item.error else ("" if mine else "reference (fallback)")
        chapter = manifest.get(c.name, {}).get("chapter", c.chapter)
        if mine and chapter != c.chapter:
            note = f"from chapter {chapter} (defined in {c.chapter} too; the later chapter wins)"
        rows.append(Row(c.name, c.chapter, "learner" if mine else "reference", check if check != "not run" else "missing",
                        calls.get(c.seam, 0), note))
    return rows


def check_component(name: str, learner_obj) -> str | None:
    """Run component `name`'s probe with the reference and with `learner_obj` installed (in this process):
    None when they agree, else what differs."""
    component = next(c for c in COMPONENTS if c.name == name)
    probe = PROBES[name]
    previous = seams.installed().get(component.seam)
    seams.uninstall(component.seam)
    expected = probe()
    seams.install(component.seam, component.adapt(learner_obj))
    try:
        got = probe()
    except Exception as error:  # the learner's code raised inside the framework: name the component
        return f"raised {type(error).__name__}: {error}"
    finally:
        seams.uninstall(component.seam)
        if previous is not None:
            seams.install(component.seam, previous)
    return compare(name, got, expected)


def _defined_names(source: str) -> set[str]:
    try:
        tree = ast.parse("\n".join(l for l in source.splitlines() if not l.lstrip().startswith(("%", "!"))))
    except SyntaxError:
        return set()
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


def record(chapter: str, folder=DEFAULT_FOLDER, notebook: str | None = None):
    """Save each of this chapter's solution cells into your package as soon as it runs (in Jupyter).

    Call it once in the notebook's setup cell; every later cell that defines a component of the chapter is
    written to `folder` (replacing the previous version) and checked inside the framework. Does nothing while
    nbgrader autogrades (NBGRADER_EXECUTION set): a submission must not write a package into the grading folder."""
    if os.environ.get("NBGRADER_EXECUTION"):
        return None
    try:
        from IPython import get_ipython  # lazy: IPython is only there inside a notebook
    except ImportError:
        return None
    shell = get_ipython()
    if shell is None:
        return None
    wanted = {c.defines: c for c in for_chapter(chapter)}
    folder = learner_folder(folder)
    where_nb = notebook or f"chapter {chapter}"

    def after_cell(result):
        source = getattr(result.info, "raw_cell", "") or ""
        if not result.success or not wanted:
            return
        for name in sorted(_defined_names(source) & set(wanted)):
            component = wanted[name]
            later = saved_chapter(folder, component.name)
            if later is not None and later > chapter:  # two chapters define it: the later chapter's stays
                print(f"[build] {name}: your version from chapter {later} stays your {component.name} "
                      f"(a later chapter wins); this cell is not saved")
                continue
            earlier = [c for c in shell.user_ns.get("In", [])[:-1] if c]
            try:
                path = save(folder, component, source, earlier, f"{where_nb}, the cell defining {name}", chapter=chapter)
            except OSError as error:  # a read-only or full disk: say so, never break the learner's cell
                print(f"[build] could not save {name} into {folder}: {error}")
                continue
            obj = shell.user_ns.get(name)
            problem = check_component(component.name, obj) if obj is not None else "not defined"
            record_check(folder, component.name, "fail" if problem else "pass", problem or "")
            verdict = "check passed" if problem is None else f"check failed: {problem}"
            print(f"[build] saved {name} as your {component.name} in {folder.name}/{Path(path).name} ({verdict})")

    shell.events.register("post_run_cell", after_cell)
    return after_cell
