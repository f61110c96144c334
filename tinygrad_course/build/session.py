"""Using the learner's framework: `use_learner()` installs every component the learner has written (the
reference stays wherever they have not), `status()` prints the table, and `record(chapter)` saves each
solution cell into the learner's package as it runs.
"""
from __future__ import annotations

import ast
import os
import time
import types
import warnings
from dataclasses import dataclass
from pathlib import Path

from .. import seams
from .checks import digest, in_framework, verdict
from .components import BY_NAME, COMPONENTS, check_names, for_chapter
from .extract import is_stub
from .package import (DEFAULT_FOLDER, Loaded, learner_folder, load, read_manifest, record_check, save,
                      saved_chapter)


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
        lines = [f"{'component':<26} {'chapter':<8} {'source':<10} {'check':<8} {'calls':>6}  note"]
        for r in self:
            lines.append(f"{r.component:<26} {r.chapter:<8} {r.source:<10} {r.check:<8} {r.calls:>6}  {r.note}")
        learner = sum(r.source == "learner" for r in self)
        lines.append(f"{learner} of {len(self)} components are yours; the others run the reference implementation.")
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_pretty_(self, p, cycle):
        p.text(str(self))


_state = {"folder": None, "loaded": [], "refused": {}}
NONE_YET = ("None of your components is saved yet, so the framework runs on its reference implementation here.\n"
            "Run the solution cells of the exercises to build them; tc.build.status() shows the table.")


_seconds: dict = {}  # component name -> time spent in the learner's code since the last install
_nested: list = []  # time spent in components called from inside the running ones (not their own time)


def seconds() -> dict:
    """{component: seconds spent in the learner's implementation itself, without the other components it
    called} since the components were installed (so that a slow component can be named)."""
    return dict(_seconds)


def _guarded(implementation, name: str, where: str, fallback=None, count: str | None = None):
    """`implementation`, with any error it raises saying which of the learner's components raised it and
    where that component was written (the error itself, and its traceback, are kept), and the time it
    takes added to `seconds()`. With a `fallback` (the reference of a component without side effects), an
    error of the learner's code is a warning instead: the component is taken out and the reference runs
    that call and every later one; when the reference raises too, the call itself was wrong and its error
    is the one raised. `count` names the seam whose calls this counts (a method slot, which no dispatch
    counts); the guard stays a plain function, so it binds as a method when it is a class's attribute."""

    def run(*args, **kwargs):
        if count is not None:
            seams.count_call(count)
        start = time.perf_counter()
        _nested.append(0.0)
        try:
            result = implementation(*args, **kwargs)
            if isinstance(result, types.GeneratorType):  # a generator's code runs later: guard each step of it
                return _guarded_steps(result, name, where)
            return result
        except StopIteration:  # the end of an iteration, not an error
            raise
        except Exception as error:
            if not getattr(error, "_tc_component_named", False):
                error.add_note(f"raised by your {name} ({where}); fix that cell and run it again, or call "
                               "tc.build.use_reference() to go on with the reference")
                error._tc_component_named = True
            if fallback is not None:
                result = fallback(*args, **kwargs)  # raises the framework's own error for a wrong call
                _leave_out(name, where, f"raised {type(error).__name__}: {error}")
                return result
            raise
        finally:
            elapsed = time.perf_counter() - start
            _seconds[name] = _seconds.get(name, 0.0) + elapsed - _nested.pop()
            if _nested:
                _nested[-1] += elapsed

    run.__wrapped__ = implementation
    return run


def _guarded_steps(generator, name: str, where: str):
    """The learner's generator (a sampler's or DataLoader's `__iter__`), each step timed as their component's
    and an error raised inside it naming the component and its cell."""
    step = _guarded(generator.__next__, name, where)
    while True:
        try:
            value = step()
        except StopIteration:
            return
        yield value


def _leave_out(name: str, where: str, problem: str) -> None:
    """Take the learner's component `name` out for the rest of the session (the reference runs), saying so."""
    component = BY_NAME[name]
    seams.uninstall(component.seam)
    _state["loaded"] = [item for item in _state["loaded"] if item.component.name != name]
    _state["refused"] = {**_state["refused"], name: problem}
    warnings.warn(f"your {name} ({where}) {problem}; it is left out and the reference runs instead (fix the cell, "
                  "run it again, then tc.use_learner())", stacklevel=3)


def left_out() -> dict:
    """{component: why} of the learner's components taken out during this session because they raised (the
    reference ran every later call), and of those `use_learner()` refused."""
    return dict(_state["refused"])


def install(loaded: list[Loaded], folder=None) -> None:
    """Put every loaded learner component into its seam (and take out the ones that are gone)."""
    manifest = read_manifest(folder).get("components", {}) if folder is not None else {}
    _seconds.clear()
    for item in loaded:
        seams.uninstall(item.component.seam)
        if item.obj is not None:
            where = manifest.get(item.component.name, {}).get("from") or item.file or "your package"
            fallback = seams.reference(item.component.seam) if item.component.pure else None
            seam = item.component.seam
            adapted = item.component.adapt(item.obj)
            # a slot's calls are counted here, unless its adapter routes calls and counts the learner's runs itself
            counted = seams.is_slot(seam) and not getattr(adapted, "counts_itself", False)
            seams.install(seam, _guarded(adapted, item.component.name, where, fallback, seam if counted else None))


def where(component, manifest: dict) -> str:
    """'02_autograd.ipynb, cell ex02_2': the exercise cell a component comes from."""
    entry = manifest.get(component.name, {})
    chapter = entry.get("chapter", component.chapter)
    grade_id = dict([(component.chapter, component.exercise), *component.also]).get(chapter, component.exercise)
    notebook = (entry.get("from") or component.notebook).split(",")[0]
    return f"{notebook}, cell {grade_id}"


def _checked(item: Loaded, folder) -> str | None:
    """The last check of a loaded component, run again when its file changed since (or never ran): None
    when it passes, else what failed."""
    manifest = read_manifest(folder).get("components", {})
    entry = manifest.get(item.component.name, {})
    now = digest(Path(folder) / item.file, item.component.name)
    if entry.get("sha256") == now and entry.get("check") in ("pass", "fail"):
        return None if entry["check"] == "pass" else (entry.get("detail") or "failed")
    for other in manifest.values():  # another method of the same class, saved in this file, checked this code
        if (other.get("file") == item.file and other.get("sha256") == now and other.get("check") in ("pass", "fail")
                and other.get("chapter") == entry.get("chapter")):
            record_check(folder, item.component.name, other["check"], other.get("detail", ""), now)
            return None if other["check"] == "pass" else (other.get("detail") or "failed")
    problem = verdict(item.component.name, item.namespace or {}, entry.get("chapter"))
    record_check(folder, item.component.name, "fail" if problem else "pass", problem or "", now)
    return problem


def use_learner(folder=DEFAULT_FOLDER, quiet=False):
    """Make the framework run on your components from `folder` wherever you have written them and they
    pass their check (the reference elsewhere); returns the status table. A component whose check failed,
    or that is still the exercise's stub, is not installed: a warning names it, its cell and the check.
    Use it as a context manager to switch back after: `with use_learner(): ...`."""
    folder = learner_folder(folder)
    loaded = load(folder)
    manifest = read_manifest(folder).get("components", {})
    refused, said = {}, set()
    for item in loaded:
        if item.error:
            warnings.warn(f"{item.component.name}: {item.error}; the reference is used instead", stacklevel=2)
        elif item.obj is not None:
            problem = _checked(item, folder)
            if problem:
                refused[item.component.name] = problem
                name = item.component.name
                if seams.is_slot(item.component.seam):  # a class's methods (TensorOperators): one warning for all
                    name = item.component.defines
                    if name in said:
                        continue
                    said.add(name)
                warnings.warn(f"your {name} ({where(item.component, manifest)}) is not installed: "
                              f"its check failed: {problem}; the reference runs instead", stacklevel=2)
    good = [item for item in loaded if item.obj is not None and item.component.name not in refused]
    use_reference()
    install(good, folder)
    seams.reset_calls()
    _state.update(folder=folder, loaded=good, refused=refused, errors={i.component.name: i.error for i in loaded})
    table = status()
    if not quiet:
        print(table if any(r.source == "learner" for r in table) else NONE_YET)
    return _Session(table)


class _Session(Status):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        use_reference()


class _Reference:
    """`with use_reference(): ...` runs its block on the reference and puts your components back after."""

    def __init__(self, saved: dict, loaded: list):
        self.saved, self.loaded = saved, loaded

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for seam, implementation in self.saved.items():
            seams.install(seam, implementation)
        _state["loaded"] = self.loaded

    def __repr__(self):
        return "the reference implementation runs every component"


def use_reference() -> _Reference:
    """Run every component on the reference implementation again. As a context manager, only for the
    block: `with tc.build.use_reference(): ...` (your components are back after it), for outputs that
    depend on how an op is implemented, such as profiler counts or grad_fn names."""
    active = seams.installed()
    saved = {c.seam: active[c.seam] for c in COMPONENTS if c.seam in active}
    loaded = _state["loaded"]
    for c in COMPONENTS:
        seams.uninstall(c.seam)
    _state["loaded"] = []
    return _Reference(saved, loaded)


def status() -> Status:
    """The table: each component, where it comes from (learner or reference), its last check and how often
    it ran since `use_learner()`."""
    folder = _state["folder"] or learner_folder()
    manifest = read_manifest(folder).get("components", {})
    loaded = {item.component.name: item for item in _state["loaded"]}
    refused, errors = _state["refused"], _state.get("errors", {})
    calls = seams.calls()
    rows = Status()
    for c in COMPONENTS:
        mine = c.name in loaded
        if mine:
            check, note = "pass", ""
            chapter = manifest.get(c.name, {}).get("chapter", c.chapter)
            if chapter != c.chapter:
                note = f"from chapter {chapter} (defined in {c.chapter} too; the later chapter wins)"
        elif c.name in refused:
            check, note = "fail", f"not installed ({where(c, manifest)}): {refused[c.name]}"
        else:
            check, note = "missing", errors.get(c.name) or "reference (fallback)"
        rows.append(Row(c.name, c.chapter, "learner" if mine else "reference", check, calls.get(c.seam, 0), note))
    return rows


def check_component(name: str, learner_obj) -> str | None:
    """Run component `name`'s probe inside the framework with `learner_obj` installed, compared with the
    reference: None when they agree, else what differs (the last part of the component's check)."""
    return in_framework(name, learner_obj)


def _defined_names(source: str) -> dict[str, set[str]]:
    """The functions and classes a cell defines at its top level, each with the methods the cell gives it: a
    class's own methods, and `Module.train = train` for a class an earlier cell defined (chapter 03b)."""
    try:
        tree = ast.parse("\n".join(l for l in source.splitlines() if not l.lstrip().startswith(("%", "!"))))
    except SyntaxError:
        return {}
    found = {}
    for n in tree.body:
        if isinstance(n, ast.ClassDef):
            found.setdefault(n.name, set()).update(
                b.name for b in n.body if isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef)))
        elif isinstance(n, ast.FunctionDef):
            found.setdefault(n.name, set())
        elif (isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Attribute)
              and isinstance(n.targets[0].value, ast.Name)):
            found.setdefault(n.targets[0].value.id, set()).add(n.targets[0].attr)
    return found


def _cell_groups(defined: dict[str, set[str]], wanted: dict[str, list]) -> list[tuple[str, list]]:
    """The components a cell writes, one group per (name, exercise): a name that several exercises write
    (chapter 03b's Module, a method group each) goes to the exercises whose methods the cell gives it."""
    groups = []
    for name in sorted(set(defined) & set(wanted)):
        by_exercise = {}
        for c in wanted[name]:
            by_exercise.setdefault(c.exercise, []).append(c)
        for group in by_exercise.values():
            if len(by_exercise) == 1 or any(c.name.partition(".")[2] in defined[name] for c in group):
                groups.append((name, group))
    return groups


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
    wanted = {}  # the name a cell defines -> its components (a class may give several methods: Module)
    for c in for_chapter(chapter):
        wanted.setdefault(c.defines, []).append(c)
    folder = learner_folder(folder)
    where_nb = notebook or f"chapter {chapter}"

    def after_cell(result):
        source = getattr(result.info, "raw_cell", "") or ""
        if not result.success or not wanted:
            return
        verdicts = {}  # one run of a cell's check decides all the components it defines
        for name, group in _cell_groups(_defined_names(source), wanted):
            component = group[-1]
            if is_stub(source):  # the exercise's stub: never installed, the reference runs
                print(f"[build] {name} is still the exercise's stub (it raises NotImplementedError): not saved; "
                      f"the framework runs the reference {component.name} until you write it")
                continue
            later = saved_chapter(folder, component.name)
            if later is not None and later > chapter:  # two chapters define it: the later chapter's stays
                print(f"[build] {name}: your version from chapter {later} stays your {component.name} "
                      f"(a later chapter wins); this cell is not saved")
                continue
            earlier = [c for c in shell.user_ns.get("In", [])[:-1] if c]
            try:
                for member in group:  # one file: each component's manifest entry points at it
                    path = save(folder, member, source, earlier, f"{where_nb}, the cell defining {name}",
                                chapter=chapter)
            except OSError as error:  # a read-only or full disk: say so, never break the learner's cell
                print(f"[build] could not save {name} into {folder}: {error}")
                continue
            key = (component.exercise, check_names(component))  # one run of a check decides all it covers
            if key not in verdicts:
                verdicts[key] = verdict(component.name, shell.user_ns, chapter)
            problem = verdicts[key]
            for member in group:
                record_check(folder, member.name, "fail" if problem else "pass", problem or "",
                             digest(path, member.name))
            outcome = ("check passed" if problem is None else
                       f"check failed: {problem.splitlines()[0]}; not installed: the reference runs until it passes")
            yours = (component.name if len(group) == 1 else
                     f"{', '.join(m.name.rpartition('.')[2] for m in group)} of {group[0].name.rpartition('.')[0]}")
            print(f"[build] saved {name} as your {yours} in {folder.name}/{Path(path).name} ({outcome})")

    shell.events.register("post_run_cell", after_cell)
    return after_cell
