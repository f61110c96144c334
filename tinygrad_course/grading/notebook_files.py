"""Reading and writing notebooks deterministically, and classifying their nbgrader cells."""
from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import nbformat

AS_VERSION = 4


def read(path: str | os.PathLike) -> nbformat.NotebookNode:
    """Read a notebook as nbformat v4."""
    return nbformat.read(str(path), as_version=AS_VERSION)


def reads(text: str) -> nbformat.NotebookNode:
    """Parse notebook JSON text as nbformat v4."""
    return nbformat.reads(text, as_version=AS_VERSION)


def dumps(nb: nbformat.NotebookNode) -> str:
    """Serialize a notebook the way Jupyter does (sorted keys, one-space indent), ending in a newline."""
    text = nbformat.writes(nb, version=AS_VERSION)
    return text if text.endswith("\n") else text + "\n"


def write_atomic(path: str | os.PathLike, text: str) -> None:
    """Write `text` to `path` so that readers see either the old or the new file, never half of it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def nbgrader_meta(cell) -> dict:
    """The cell's nbgrader metadata ({} when it has none)."""
    return dict(cell.get("metadata", {}).get("nbgrader", {}))


def is_solution_cell(cell) -> bool:
    """A cell the learner edits."""
    return bool(nbgrader_meta(cell).get("solution"))


def is_test_cell(cell) -> bool:
    """A graded, autograded test cell (grade and not solution)."""
    meta = nbgrader_meta(cell)
    return cell.get("cell_type") == "code" and bool(meta.get("grade")) and not meta.get("solution")


def is_locked(cell) -> bool:
    """A cell the learner must not change (the grader uses the instructor's version)."""
    return bool(nbgrader_meta(cell).get("locked"))


def chapter_of(path: str | os.PathLike) -> str | None:
    """The chapter prefix of a notebook file name ("01_tensors.ipynb" -> "01", "05b_lab.ipynb" -> "05b")."""
    match = re.match(r"^(\d\d[a-z]?)_", Path(path).name)
    return match.group(1) if match else None
