"""Each exercise notebook stays doable in one sitting (issue 26: about 60-90 minutes for a learner).

The measure is what the learner writes: the non-blank lines between `### BEGIN SOLUTION` and `### END SOLUTION`
in a notebook of solutions/. At about two written lines a minute, with the text and the checks' feedback to read
around them, 180 lines is the most that fits in 90 minutes; a chapter that grows past it is split (as 02 became
02 and 02d, 02b became 02b and 02c, 03 became 03 and 03b, 05 became 04b and 05)."""
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MOST_LINES = 180
SOLUTION = re.compile(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", re.S)


def solution_lines(path: Path) -> int:
    """The non-blank lines of every solution region of the notebook at `path`."""
    cells = json.loads(path.read_text())["cells"]
    regions = (region for cell in cells if cell["cell_type"] == "code"
               for region in SOLUTION.findall("".join(cell["source"])))
    return sum(1 for region in regions for line in region.splitlines() if line.strip())


@pytest.mark.parametrize("path", sorted((ROOT / "solutions").glob("*.ipynb")), ids=lambda p: p.stem)
def test_a_learner_writes_at_most_180_lines_per_notebook(path):
    written = solution_lines(path)
    assert 0 < written <= MOST_LINES, f"{path.name}: {written} solution lines (at most {MOST_LINES})"
