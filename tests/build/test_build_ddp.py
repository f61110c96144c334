"""Build mode, chapter 09: the learner's all_reduce, broadcast and shard as tc.distributed's collectives and
DistributedSampler's rule, checked in a simulated process group, and the `ddp` milestone over 2 real MPI
processes compared with one process's full-batch training."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tinygrad_course as tc
import tinygrad_course.distributed as dist
from tinygrad_course import seams
from tinygrad_course.build.components import BY_NAME, for_chapter
from tinygrad_course.build.ddp_milestone import mpiexec
from tinygrad_course.build.simulated_group import simulated_world
from tinygrad_course.utils.data import DistributedSampler

ROOT = Path(__file__).resolve().parents[2]
CHAPTER_09 = ("shard", "all_reduce", "broadcast")

needs_mpi = pytest.mark.skipif(mpiexec() is None,
                               reason="needs mpi4py and an mpiexec (pip install the `dist` extra: mpi4py mpich)")


def cli(*args):
    return subprocess.run([sys.executable, "-m", "tinygrad_course.build", *args], capture_output=True, text=True,
                          timeout=600)


def _planted(tmp_path, grade_id, old, new):
    nb = json.loads((ROOT / "solutions" / "09_distributed.ipynb").read_text())
    [cell] = [c for c in nb["cells"] if (c.get("metadata", {}).get("nbgrader") or {}).get("grade_id") == grade_id]
    source = "".join(cell["source"])
    assert old in source
    cell["source"] = source.replace(old, new)
    (tmp_path / "09_distributed.ipynb").write_text(json.dumps(nb))
    return tmp_path


def _all_reduce(ranks, op="sum"):  # the exercise's solution, as a learner writes it
    stacked = tc.stack([t.detach() for t in ranks])
    result = {"sum": stacked.sum(0), "avg": stacked.mean(0), "max": stacked.max(0).values}[op]
    with tc.no_grad():
        for t in ranks:
            t.copy_(result)


def test_chapter_09_components_are_the_collectives_and_the_sampler_rule():
    assert [c.name for c in for_chapter("09")] == list(CHAPTER_09)
    assert dist.all_reduce.component_name == "all_reduce" and dist.broadcast.component_name == "broadcast"
    assert "shard" in seams.offered() and BY_NAME["all_reduce"].exercise == BY_NAME["broadcast"].exercise == "ex09_5"


def test_solutions_make_chapter_09_the_learners_and_stubs_leave_it_to_the_reference():
    run = cli("status", str(ROOT / "solutions"), "--json")
    rows = {r["component"]: r for r in json.loads(run.stdout)}
    for name in CHAPTER_09:
        assert (rows[name]["source"], rows[name]["check"]) == ("learner", "pass") and rows[name]["calls"] > 0, rows[name]
    run = cli("status", str(ROOT / "exercises"), "--json")
    rows = {r["component"]: r for r in json.loads(run.stdout)}
    assert all((rows[n]["source"], rows[n]["check"]) == ("reference", "missing") for n in CHAPTER_09)


def test_the_adapted_all_reduce_runs_the_learners_code_over_every_ranks_tensor():
    calls = []

    def learner(ranks, op="sum"):
        calls.append((len(ranks), op))
        _all_reduce(ranks, op)

    seams.install("all_reduce", BY_NAME["all_reduce"].adapt(learner))
    with simulated_world(rank=1, world_size=3):  # the other ranks hold 2x + 1 and 4x + 3
        t = tc.tensor([1.0, -2.0])
        dist.all_reduce(t)
        np.testing.assert_allclose(t.numpy(), [1 + 3 + 7, -2 - 3 - 5])
        t = tc.tensor([1.0, -2.0])
        dist.all_reduce(t, op=dist.ReduceOp.AVG, async_op=True).wait()
        np.testing.assert_allclose(t.numpy(), [11 / 3, -10 / 3], rtol=1e-6)
        t = tc.tensor([1.0, -2.0])
        dist.all_reduce(t, op=dist.ReduceOp.MIN)  # not in the exercise: the reference's
        np.testing.assert_allclose(t.numpy(), [1.0, -5.0])
    assert calls == [(3, "sum"), (3, "avg")]


def test_the_adapted_broadcast_copies_the_source_ranks_tensor_into_this_one():
    def learner(ranks, src):
        with tc.no_grad():
            for t in ranks:
                t.copy_(ranks[src])

    seams.install("broadcast", BY_NAME["broadcast"].adapt(learner))
    with simulated_world(rank=1, world_size=3):
        t = tc.tensor([1.0, 2.0])
        dist.broadcast(t, src=2)
        np.testing.assert_allclose(t.numpy(), [7.0, 11.0])
        with pytest.raises(ValueError, match="Invalid src rank"):  # the reference's error
            dist.broadcast(t, src=3)
    assert seams.calls()["broadcast"] == 2


def test_distributed_sampler_runs_the_learners_shard_rule_and_keeps_drop_last():
    seams.install("shard", lambda indices, rank, world: list(indices)[::-1][rank::world])
    assert list(DistributedSampler(list(range(6)), num_replicas=2, rank=0, shuffle=False)) == [5, 3, 1]
    assert list(DistributedSampler(list(range(7)), num_replicas=2, rank=1, shuffle=False, drop_last=True)) == [1, 3, 5]
    assert seams.calls()["shard"] == 1
    seams.install("shard", lambda indices, rank, world: [0])
    with pytest.raises(RuntimeError, match="rank 0 got 1 indices, expected 3"):
        list(DistributedSampler(list(range(6)), num_replicas=2, rank=0, shuffle=False))


def test_ddp_milestone_names_what_the_stubs_miss_without_starting_mpi():
    run = cli("milestone", "ddp", str(ROOT / "exercises"))
    assert run.returncode == 1 and "Traceback" not in run.stdout + run.stderr
    assert "missing: all_reduce (09_distributed.ipynb, cell ex09_5), broadcast" in run.stdout
    assert "shard (09_distributed.ipynb, cell ex09_2)" in run.stdout


@needs_mpi
@pytest.mark.slow
def test_ddp_milestone_passes_on_the_solutions():
    run = cli("milestone", "ddp", str(ROOT / "solutions"))
    assert run.returncode == 0 and "passed" in run.stdout, run.stdout + run.stderr
    assert "your all_reduce, broadcast, shard" in run.stdout


@needs_mpi
@pytest.mark.slow
@pytest.mark.parametrize("grade_id, old, new, component, phrase", [
    ("ex09_5", "result = stacked.sum(0)", "result = stacked.mean(0)", "all_reduce",
     "your all_reduce (09_distributed.ipynb, cell ex09_5) fails its check"),
    ("ex09_5", "result = stacked.mean(0)", "result = stacked.sum(0)", "all_reduce", "the loss averaged over the ranks"),
    ("ex09_5", "source = ranks[src]", "source = ranks[-1]", "broadcast", "after DDP's initial broadcast are not rank 0's"),
    ("ex09_2", "return padded[rank:total:world_size]", "return padded[:total // world_size]", "shard",
     "gradients after the first backward"),
    ("ex09_5", "result = stacked.sum(0)", "result = stacked.sum(0) + offset", "all_reduce", "NameError"),
], ids=["sum-averages", "avg-sums", "broadcast-from-last-rank", "overlapping-shards", "raises"])
def test_ddp_milestone_fails_on_a_planted_bug_and_names_the_component(tmp_path, grade_id, old, new, component,
                                                                      phrase):
    run = cli("milestone", "ddp", str(_planted(tmp_path, grade_id, old, new)))
    assert run.returncode == 1 and phrase in run.stdout and f"your {component}" in run.stdout, run.stdout + run.stderr
    assert "Traceback" not in run.stdout + run.stderr
