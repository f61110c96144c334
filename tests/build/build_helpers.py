"""What the build-mode tests share: the released solutions' component cells, as a learner's package saves them."""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from tinygrad_course import build
from tinygrad_course.grading.markers import keep_solutions

ROOT = Path(__file__).resolve().parents[2]

OPS_IMPORTS = "import numpy as np\nfrom tinygrad_course.autograd.engine import Op\n\n\n"  # what chapter 02's op cells use


def solution_cell(notebook, grade_id):
    """The solution cell `grade_id` of solutions/`notebook` without its solution markers."""
    nb = json.loads((ROOT / "solutions" / notebook).read_text())
    cell = next(c for c in nb["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id)
    return keep_solutions("".join(cell["source"]))


def run_cell(source, filename):
    """The names a solution cell defines, run as the learner's notebook runs it (`filename` names it in tracebacks)."""
    namespace = {}
    exec(compile(source, filename, "exec"), namespace)
    return namespace


def learner_fixture(save):
    """A fixture `learner`: the cell saved into a learner's package by `save(folder)` and installed (the
    conftest puts the reference back after each test)."""
    @pytest.fixture
    def learner(tmp_path):
        save(tmp_path)
        build.use_learner(tmp_path, quiet=True)
    return learner


def refusals(folder):
    """The "is not installed" warnings `use_learner(folder)` gives: one per learner class whose check failed (the
    reference keeps running for its components)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        build.use_learner(folder, quiet=True)
    return [str(w.message) for w in caught if "is not installed" in str(w.message)]
