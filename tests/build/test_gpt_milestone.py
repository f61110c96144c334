"""Chapter 10's milestone: the GPT trained on the learner's pieces in a child process, judged here from the
held-out logits it writes (tinygrad_course/build/gpt_milestone.py)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tinygrad_course.build import gpt_milestone as gm

ROOT = Path(__file__).resolve().parents[2]


def cli(*args):
    return subprocess.run([sys.executable, "-m", "tinygrad_course.build", *args], capture_output=True, text=True,
                          timeout=gm.TIMEOUT)


def test_the_milestone_names_every_unwritten_cell_of_the_released_notebook():
    run = cli("milestone", "gpt", str(ROOT / "exercises"))
    assert run.returncode == 1
    for name, grade_id, _ in gm.PIECES:
        assert f"{name} (10_gpt.ipynb, cell {grade_id})" in run.stdout


def test_the_validation_loss_is_computed_here_from_the_logits():
    inputs, targets = gm.val_windows()
    assert inputs.shape == targets.shape == (gm.VAL_WINDOWS, gm.CONFIG["block_size"])
    assert np.array_equal(inputs[:, 1:], targets[:, :-1])  # targets are the next characters
    _, vocab = gm.token_ids()
    assert vocab == 65
    assert gm.val_loss(np.zeros(targets.shape + (vocab,), np.float32)) == pytest.approx(np.log(65))


@pytest.mark.slow
def test_a_short_run_on_the_solutions_matches_the_reference_and_a_post_norm_block_does_not(tmp_path):
    passed, message = gm.gpt_milestone(ROOT / "solutions", steps=40)
    assert passed, message
    assert "earlier components of yours: " in message and "sample:\n    ROMEO:" in message
    assert "fails its check" not in message
    nb = json.loads((ROOT / "solutions" / "10_gpt.ipynb").read_text())
    for cell in nb["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "ex10_3":
            source = "".join(cell["source"])
            post_norm = source.replace("x = x + self.attn(self.ln1(x), cache)\n        return x + self.mlp(self.ln2(x))",
                                       "x = self.ln1(x + self.attn(x, cache))\n        return self.ln2(x + self.mlp(x))")
            assert post_norm != source
            cell["source"] = post_norm
    (tmp_path / "10_gpt.ipynb").write_text(json.dumps(nb))
    passed, message = gm.gpt_milestone(tmp_path, steps=40)
    assert not passed and "differs from the reference's by more than 2%" in message, message
    assert "your Block (10_gpt.ipynb, cell ex10_3) fails its check: block(x)" in message, message
    assert "post-norm" in message and "your GPT" not in message  # the culprit, and only it


@pytest.mark.slow
def test_the_full_milestone_passes_on_the_solutions():
    run = cli("milestone", "gpt", str(ROOT / "solutions"))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "milestone gpt: passed" in run.stdout and "sample:" in run.stdout


def test_each_learner_piece_calls_the_learners_other_pieces_and_the_sample_is_their_generate(tmp_path):
    assert not gm._write_pieces(ROOT / "solutions", tmp_path)
    pieces = {name: getattr(gm._import_file(tmp_path / f"{name}.py", f"_wired_ch10_{name}"), defines)
              for name, _, defines in gm.PIECES}
    out = gm.train(pieces, steps=1)
    for holder, names in gm.USES.items():  # e.g. the GPT's Block is the Block cell's, not the copy in its module
        namespace = gm._namespace(pieces[holder])
        assert namespace is not vars(gm) and all(namespace[name] is pieces[name] for name in names), holder
    assert all(gm._namespace(gm.REFERENCE[holder]) is vars(gm) for holder in gm.USES)  # the reference untouched
    assert gm._namespace(gm.REFERENCE["GPT"])["_RefBlock"] is gm._RefBlock
    assert out["sample"].shape == (gm.CONFIG["block_size"] + 1,)  # the prompt and what generate drew after it


@pytest.mark.slow
def test_a_piece_that_fails_its_check_fails_the_milestone_by_name_even_when_the_loss_agrees(tmp_path):
    nb = json.loads((ROOT / "solutions" / "10_gpt.ipynb").read_text())
    for cell in nb["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "ex10_8":
            untied = "".join(cell["source"]).replace("        self.lm_head.weight = self.wte.weight\n", "")
            assert untied != "".join(cell["source"])
            cell["source"] = untied
    (tmp_path / "10_gpt.ipynb").write_text(json.dumps(nb))
    passed, message = gm.gpt_milestone(tmp_path, steps=20)
    assert not passed and "differs from the reference" not in message, message  # 20 steps: the loss agrees
    assert "your GPT (10_gpt.ipynb, cell ex10_8) fails its check" in message and "not tied" in message, message
