"""scripts/learner_share.py: the lines a milestone's computation runs in the learner's package and in the
framework, and the learner's share of them."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tinygrad_course.build.runs import MILESTONES

ROOT = Path(__file__).resolve().parents[2]


def share(folder, milestone):
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "learner_share.py"), str(folder), milestone],
                         capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    lines = dict(line.split(":", 1) for line in run.stdout.splitlines()[1:])
    return {key.strip(): value.strip() for key, value in lines.items()}, run.stdout


@pytest.mark.slow
def test_the_share_counts_the_learners_lines_only_when_their_components_run():
    mine, text = share(ROOT / "solutions", "autograd")
    needed = len(MILESTONES["autograd"][2])
    assert f"{needed} of {needed} components are the learner's" in text
    learner, framework = int(mine["lines run in the learner's package"]), int(mine["lines run in the framework"])
    assert learner > 0 and framework > 0
    assert mine["learner's share"] == f"{learner / (learner + framework):.0%}"
    assert int(mine["the learner's components"].split()[0]) > 200
    stubs, text = share(ROOT / "exercises", "autograd")
    assert f"0 of {needed} components" in text and stubs["lines run in the learner's package"] == "0"
    assert stubs["learner's share"] == "0%" and int(stubs["the learner's components"].split()[0]) == 0


@pytest.mark.slow
def test_the_gpt_share_counts_the_chapter_10_cells_and_every_earlier_component_and_says_how_many_steps():
    from tinygrad_course.build.gpt_milestone import EARLIER

    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "learner_share.py"), str(ROOT / "solutions"), "gpt",
                          "--steps", "2"], capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    assert f"{len(EARLIER)} of {len(EARLIER)} components are the learner's" in run.stdout
    assert "(measured over 2 of the milestone's 2000 training steps)" in run.stdout
    lines = dict(line.split(":", 1) for line in run.stdout.splitlines()[1:])
    assert int(lines["lines run in the learner's package"]) > 250  # 430 with the released solutions
    stubs = subprocess.run([sys.executable, str(ROOT / "scripts" / "learner_share.py"), str(ROOT / "exercises"), "gpt",
                            "--steps", "1"], capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert stubs.returncode == 0, stubs.stderr
    assert f"0 of {len(EARLIER)} components" in stubs.stdout and "learner's share:                    0%" in stubs.stdout
