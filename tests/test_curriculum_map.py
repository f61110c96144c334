"""docs/curriculum_map.md (topic -> where taught -> where practised -> which check) is generated from the
notebooks' metadata by scripts/curriculum_map.py; it must describe the notebooks as they are."""
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("curriculum_map", ROOT / "scripts" / "curriculum_map.py")
curriculum_map = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(curriculum_map)


def _notebook(path, cells, metadata=None):
    path.write_text(json.dumps({"cells": cells, "metadata": metadata or {}, "nbformat": 4, "nbformat_minor": 5}))


def test_curriculum_map_page_is_up_to_date():
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "curriculum_map.py"), "--check"],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr + "\nRun: python scripts/curriculum_map.py"


def test_every_topic_is_taught_in_a_lecture():
    places, unknown = curriculum_map.taught()
    assert not unknown, unknown
    missing = [topic for topic in curriculum_map.TITLES if not places.get(topic)]
    assert not missing, f"topics no lecture cell is tagged with: {missing}"


def test_topics_are_taught_in_their_own_chapter():
    """Each topic is taught in its chapter's lecture (other chapters may look ahead to it or come back to it)."""
    places, _ = curriculum_map.taught()
    wrong = {topic: [nb for nb, _ in where] for topic, where in places.items()
             if not any(nb.startswith(curriculum_map.CHAPTER_OF[topic]) for nb, _ in where)}
    assert not wrong, wrong


def test_every_linked_exercise_exists_and_calls_its_check():
    links, table, problems = curriculum_map.practised()
    assert not problems, problems
    for topic, ex_ids in links.items():
        for ex_id in ex_ids:
            assert table[ex_id]["calls_check"], f"{ex_id}: its check cell does not call check({ex_id!r}, ...)"


def test_unknown_topics_and_missing_exercises_are_reported(tmp_path):
    lectures, solutions = tmp_path / "notebooks", tmp_path / "solutions"
    lectures.mkdir()
    solutions.mkdir()
    _notebook(lectures / "01_tensors.ipynb",
              [{"cell_type": "markdown", "metadata": {"curriculum": ["broadcasting", "broadcastnig"]},
                "source": "## 5. Broadcasting\nAlign from the right."}],
              {"curriculum": {"exercises": {"01.5": ["broadcasting"], "01.9": ["broadcasting"]}}})
    _notebook(solutions / "01_tensors.ipynb", [
        {"cell_type": "markdown", "metadata": {}, "source": "## Exercise 01.5: the broadcast shape rule (2 points)"},
        {"cell_type": "code", "metadata": {"nbgrader": {"grade_id": "ex01_5_check", "points": 2}},
         "source": 'check("01.5", broadcast_shape)', "outputs": []}])
    places, unknown = curriculum_map.taught(lectures)
    assert places["broadcasting"] == [("01_tensors.ipynb", "5. Broadcasting")]
    assert unknown == ["01_tensors.ipynb: unknown topic 'broadcastnig'"]
    links, table, problems = curriculum_map.practised(lectures, solutions)
    assert links == {"broadcasting": ["01.5"]}
    assert table["01.5"]["title"] == "the broadcast shape rule" and table["01.5"]["points"] == 2
    assert problems == ["01_tensors.ipynb: exercise 01.9 is not in solutions/"]
