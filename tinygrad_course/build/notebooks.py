"""Reading a learner's components out of their notebooks (for the command line: an instructor or CI has
the notebooks, not the learner's kernel). The solution cell of each component is found by its nbgrader
grade_id; an exercise stub (still raising NotImplementedError) counts as not written."""
from __future__ import annotations

import json
from pathlib import Path

from .components import COMPONENTS, NOTEBOOKS, sources
from .extract import is_stub
from .package import save

MAX_BYTES = 20 * 1024 * 1024


def find_notebook(folder: Path, chapter: str) -> Path | None:
    """The chapter's notebook in `folder`: its released name, else the only `NN_*.ipynb` there."""
    exact = folder / NOTEBOOKS[chapter]
    if exact.is_file() and not exact.is_symlink():
        return exact
    found = sorted(p for p in folder.glob(f"{chapter}_*.ipynb") if p.is_file() and not p.is_symlink())
    return found[0] if len(found) == 1 else None


def _cells(path: Path) -> list[dict]:
    if path.stat().st_size > MAX_BYTES:
        raise ValueError(f"{path.name} is larger than {MAX_BYTES // 2**20} MiB")
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [c for c in nb.get("cells", []) if isinstance(c, dict) and c.get("cell_type") == "code"]


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def extract(folder, package) -> dict[str, str]:
    """Write every written (non-stub) component found in the notebooks of `folder` into `package`; when two
    chapters define the same component, the later chapter's cell wins. Returns {component: note} for
    components whose notebook could not be read or that a later chapter replaced."""
    folder, notes = Path(folder), {}
    for component in COMPONENTS:
        written = []
        for chapter, grade_id in sources(component):
            path = find_notebook(folder, chapter)
            if path is None:
                continue
            try:
                cells = _cells(path)
            except (OSError, ValueError) as error:
                notes[component.name] = f"{path.name}: {error}"
                continue
            for i, cell in enumerate(cells):
                if (cell.get("metadata", {}).get("nbgrader") or {}).get("grade_id") == grade_id:
                    if not is_stub(_source(cell)):
                        written.append((chapter, path, i, cells))
                    break
        if written:
            chapter, path, i, cells = written[-1]
            save(package, component, _source(cells[i]), [_source(c) for c in cells[:i]],
                 f"{path.name}, code cell {i + 1}", chapter=chapter)
            if len(written) > 1:
                notes[component.name] = f"from {path.name} (a later chapter than {written[0][1].name}, so it wins)"
    return notes
