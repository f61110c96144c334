"""Building the red-team class from the released assignment 05 (exercises/) and its solution (solutions/).

A Case is one student: which solution cells hold the correct code (from solutions/), which are replaced by
an attack or a variation, extra cells, how the file lands on disk, and the fair grade.
"""
from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from tinygrad_course.grading.markers import keep_solutions
from tinygrad_course.grading.notebook_files import dumps, is_solution_cell, nbgrader_meta, read, reads

ROOT = Path(__file__).resolve().parents[3]
EXERCISE = ROOT / "exercises" / "05_training.ipynb"
SOLUTION = ROOT / "solutions" / "05_training.ipynb"
POINTS = {"05.1": 2, "05.2": 2, "05.3": 2, "05.4": 1, "05.5": 1, "05.6": 6}
CELL_OF = {e: f"ex05_{e[-1]}" for e in POINTS}
CORRECT = {nbgrader_meta(c)["grade_id"]: keep_solutions(c.source) for c in read(SOLUTION).cells if is_solution_cell(c)}


@dataclass
class Case:
    """One submission of the class and its fair grade."""

    name: str
    cells: dict = field(default_factory=dict)       # grade_id -> source replacing the correct solution
    extra: list = field(default_factory=list)       # (grade_id to follow or None for the top, source)
    duplicate: dict = field(default_factory=dict)   # grade_id -> an earlier copy of that cell (same metadata)
    drop: tuple = ()                                # grade_ids of solution cells deleted from the notebook
    stub: bool = False                              # start from the released stubs instead of the solution
    zero: tuple = ()                                # exercises that must get 0 (others full, unless stub)
    expected: dict | None = None                    # explicit points per exercise
    problem: str = ""                               # phrase the problem column must contain
    feedback_has: tuple = ()
    feedback_lacks: tuple = ()
    layout: str = "folder"                          # how the file is placed (see place())
    raw: bytes | None = None                        # file content instead of a notebook
    hostile: bool = True
    kernel_only: bool = False                       # only Landlock stops it (the audit hook alone may not)
    output_mb: int = 0                              # one output of this many MiB (outputs are never graded)

    def fair(self) -> dict:
        """Points per exercise this submission deserves."""
        if self.expected is not None:
            return dict(self.expected)
        return {e: 0 if self.stub or e in self.zero else p for e, p in POINTS.items()}


def notebook(case: Case, constants: str) -> str:
    """The submitted notebook's JSON text."""
    nb = reads(dumps(read(EXERCISE)))
    for cell in nb.cells:
        grade_id = nbgrader_meta(cell).get("grade_id")
        if grade_id in CORRECT:
            source = case.cells.get(grade_id, cell.source if case.stub else CORRECT[grade_id])
            cell.source = (constants + source) if grade_id in case.cells else source
    cells = list(nb.cells)
    for after, source in case.extra:
        new = {"cell_type": "code", "execution_count": None, "id": f"x{len(cells)}", "metadata": {},
               "outputs": [], "source": constants + source}
        if after is None:
            cells.insert(0, new)
        else:
            index = next(i for i, c in enumerate(cells) if nbgrader_meta(c).get("grade_id") == after)
            cells.insert(index + 1, new)
    for grade_id, source in case.duplicate.items():
        index = next(i for i, c in enumerate(cells) if nbgrader_meta(c).get("grade_id") == grade_id)
        copy = json.loads(json.dumps(cells[index]))
        copy["id"], copy["source"] = f"d{index}", source
        cells.insert(index, copy)
    cells = [c for c in cells if nbgrader_meta(c).get("grade_id") not in case.drop]
    data = json.loads(dumps(nb))
    data["cells"] = [json.loads(json.dumps(c)) for c in cells]
    if case.output_mb:
        first = next(c for c in data["cells"] if c["cell_type"] == "code")
        first["outputs"] = [{"name": "stdout", "output_type": "stream", "text": "x" * (case.output_mb << 20)}]
    return json.dumps(data, indent=1)


def place(case: Case, submissions: Path, paths: dict, constants: str) -> None:
    """Write the case's submission into SUBMISSIONS/ according to its layout."""
    folder = submissions / case.name
    target = folder / "05_training.ipynb"
    layout = case.layout
    if layout in ("folder", "copy1", "with_copy1", "nested", "hardlink", "fifo", "sparse", "symlink_file",
                  "symlink_other", "symlink_devzero", "device"):
        folder.mkdir(parents=True)
    if layout == "nested":
        target = folder / "work" / "hw5" / "05_training.ipynb"
        target.parent.mkdir(parents=True)
    if layout == "flat":
        target = submissions / f"{case.name}.ipynb"
    if layout == "copy1":
        target = folder / "05_training-Copy1.ipynb"
    text = case.raw if case.raw is not None else notebook(case, constants).encode()
    if layout in ("folder", "nested", "flat", "copy1", "with_copy1"):
        target.write_bytes(text)
    if layout == "with_copy1":
        (folder / "05_training-Copy1.ipynb").write_text(notebook(Case("stub", stub=True), constants))
    elif layout == "symlink_file":
        target.symlink_to(paths["SOLUTION"])
    elif layout == "symlink_other":
        target.symlink_to(paths["OTHER"])
    elif layout == "symlink_devzero":
        target.symlink_to("/dev/zero")
    elif layout == "symlink_folder":
        folder.symlink_to(Path(paths["SOLUTION"]).parent, target_is_directory=True)
    elif layout == "hardlink":
        os.link(paths["SOLUTION"], target)
    elif layout == "fifo":
        os.mkfifo(target)
    elif layout == "device":  # the character device /dev/zero under a notebook's name (needs root; else a link to it)
        try:
            os.mknod(target, 0o666 | stat.S_IFCHR, os.makedev(1, 5))
        except OSError:
            target.symlink_to("/dev/zero")
    elif layout == "sparse":
        with open(target, "wb") as fh:
            fh.truncate(5 * 2**30)
