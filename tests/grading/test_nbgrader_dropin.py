"""The course as a drop-in nbgrader course: what the notebooks carry and what the package does under
nbgrader's autograde (the slow test runs real nbgrader on one assignment)."""

import pytest

from tinygrad_course.grading.notebook_files import is_test_cell, read

from .conftest import ROOT, notebook_id, solution_notebooks


@pytest.mark.parametrize("path", solution_notebooks(), ids=notebook_id)
def test_solutions_and_their_releases_carry_no_run_timestamps_and_tag_their_checks(path):
    for notebook in (path, path.parent.parent / "exercises" / path.name):
        cells = read(notebook).cells
        assert not [i for i, c in enumerate(cells) if "execution" in c.metadata], notebook
        untagged = [i for i, c in enumerate(cells) if is_test_cell(c) and "raises-exception" not in c.metadata.get("tags", [])]
        assert not untagged, f"{notebook}: check cells {untagged} would stop Run All"


def test_record_writes_nothing_while_nbgrader_autogrades(tmp_path, monkeypatch, capsys):
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    shell = InteractiveShell.instance()
    try:
        shell.run_cell("from tinygrad_course import build")
        shell.run_cell(f"build.record('02', folder={str(tmp_path)!r}, notebook='02_autograd.ipynb')")
        shell.run_cell("def tanh_backward(grad, out):\n    return grad * (1 - out ** 2)\n")
    finally:
        shell.events.callbacks["post_run_cell"].clear()
        InteractiveShell.clear_instance()
    assert list(tmp_path.iterdir()) == [] and "check passed" not in capsys.readouterr().out


def test_digits_are_package_data_declared_in_pyproject():
    text = (ROOT / "pyproject.toml").read_text()
    assert '"tinygrad_course.datasets" = ["data/*.csv.gz"]' in text
    assert "scikit-learn" not in text.split("[project.optional-dependencies]")[0]
    assert "sklearn" not in (ROOT / "notebooks" / "05_training.ipynb").read_text()
