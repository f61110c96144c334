"""What the build-mode tests share: the released solutions' component cells, as a learner's package saves them."""
from __future__ import annotations

import json
from pathlib import Path

from tinygrad_course.grading.markers import keep_solutions

ROOT = Path(__file__).resolve().parents[2]

OPS_IMPORTS = "import numpy as np\nfrom tinygrad_course.autograd.engine import Op\n\n\n"  # what chapter 02's op cells use


def solution_cell(notebook, grade_id):
    """The solution cell `grade_id` of solutions/`notebook` without its solution markers."""
    nb = json.loads((ROOT / "solutions" / notebook).read_text())
    cell = next(c for c in nb["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id)
    return keep_solutions("".join(cell["source"]))
