"""The learner's own package (`mytorch/` next to the notebooks): one plain .py file per component, written
when the learner runs the solution cell, read back when a later chapter uses the learner's framework.

Files are written atomically (a temporary file renamed into place), so an interrupted save never leaves a
half-written component; `manifest.json` records where each file came from and its last check.
"""
from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
import traceback
from dataclasses import dataclass
from pathlib import Path

from .components import COMPONENTS, Component
from .extract import module_source

DEFAULT_FOLDER = None  # see learner_folder()


def learner_folder(folder=None) -> Path:
    """Where the learner's package lives: `folder` if given, else `$TC_MYTORCH`, else `mytorch/` in the
    course folder (the nearest folder above the current one that holds `exercises/` or `notebooks/`), so
    the exercise notebooks and the lecture notebooks share one package; else `./mytorch`."""
    if folder is not None:
        return Path(folder)
    if os.environ.get("TC_MYTORCH"):
        return Path(os.environ["TC_MYTORCH"])
    here = Path.cwd()
    for place in (here, *here.parents):
        if (place / "exercises").is_dir() or (place / "notebooks").is_dir():
            return place / "mytorch"
    return here / "mytorch"
_INIT = '"""Your framework: the components you wrote in the exercises, saved by tinygrad_course.build."""\n'


def file_name(component: Component) -> str:
    return f"ch{component.chapter}_{component.defines.lower()}.py"


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_manifest(folder) -> dict:
    path = Path(folder) / "manifest.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def write_manifest(folder, manifest: dict) -> None:
    _write_atomic(Path(folder) / "manifest.json", json.dumps(manifest, indent=1, sort_keys=True) + "\n")


def save(folder, component: Component, cell: str, earlier: list[str], where: str, chapter: str | None = None) -> Path:
    """Write `cell` (with what it needs from the `earlier` cells) as the learner's `component`; `where` says
    which notebook and cell it came from, `chapter` which chapter (the component's own by default). A cell
    that does not parse is saved as it is (loading it will fall back to the reference and say why)."""
    header = f'"""{component.name} ({component.contract}).\n\nSaved from {where}; re-running that cell replaces this file."""'
    try:
        text = module_source(cell, earlier, header)
    except SyntaxError:
        text = header + "\n\n" + cell.strip() + "\n"
    folder = Path(folder)
    if not (folder / "__init__.py").exists():
        _write_atomic(folder / "__init__.py", _INIT)
    path = folder / file_name(component)
    _write_atomic(path, text)
    manifest = read_manifest(folder)
    manifest.setdefault("components", {})[component.name] = {"file": path.name, "from": where, "check": "not run",
                                                              "chapter": chapter or component.chapter}
    write_manifest(folder, manifest)
    return path


def saved_chapter(folder, name: str) -> str | None:
    """The chapter whose cell the saved component `name` came from (None when nothing is saved)."""
    entry = read_manifest(folder).get("components", {}).get(name)
    return None if entry is None else entry.get("chapter")


def record_check(folder, name: str, verdict: str, detail: str = "", digest: str = "") -> None:
    """Remember the last check of component `name` ("pass" or "fail") in the manifest, with the SHA-256 of
    the file it checked (a file whose hash differs is checked again before it is installed)."""
    manifest = read_manifest(folder)
    entry = manifest.setdefault("components", {}).setdefault(name, {})
    entry["check"], entry["detail"], entry["sha256"] = verdict, detail, digest
    write_manifest(folder, manifest)


@dataclass
class Loaded:
    component: Component
    obj: object = None        # the learner's function or class, when it loaded
    error: str = ""           # why it could not be used (the file is then ignored)
    file: str = ""
    namespace: dict = None    # the loaded file's names (the check calls the cell's objects from it)


def _import_file(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
    return module


def load(folder) -> list[Loaded]:
    """Every component's learner object from `folder` (missing or broken ones with the reason)."""
    folder = Path(folder)
    out = []
    for component in COMPONENTS:
        path = folder / file_name(component)
        if not path.is_file():
            out.append(Loaded(component))
            continue
        try:
            module = _import_file(path, f"_learner_{path.stem}")
            obj = getattr(module, component.defines)
        except AttributeError:
            out.append(Loaded(component, error=f"{path.name} defines no {component.defines}", file=path.name))
            continue
        except BaseException as error:  # a learner's file may raise anything while it loads
            if isinstance(error, KeyboardInterrupt):
                raise
            last = traceback.format_exception_only(type(error), error)[-1].strip()
            out.append(Loaded(component, error=f"{path.name} does not load: {last}", file=path.name))
            continue
        out.append(Loaded(component, obj=obj, file=path.name, namespace=vars(module)))
    return out
