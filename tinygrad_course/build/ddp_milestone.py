"""The `ddp` milestone (chapter 09): the learner's DistributedDataParallel path over 2 MPI processes gives the
weights one process gets on the full batch.

Two processes, launched with the venv's `mpiexec` and killed as one process group if they overrun, each load
the learner's package, install the learner's `all_reduce`, `broadcast` and `shard` (and nothing else), wrap
a small float64 network in `tc.nn.parallel.DistributedDataParallel` (each rank seeds its own, different,
initial weights: DDP's broadcast must replace them with rank 0's) and train a few SGD steps, each rank on its
`DistributedSampler` shard, logging the loss averaged over the ranks with `all_reduce(op=AVG)`. Each rank
writes plain data only: an .npz of its weights after the broadcast, its gradients after the first backward,
the logged losses and its final weights, and a JSON of its calls and errors. This process, which never ran
the learner's code, trains the same network on the whole batch with the reference and compares.
"""
from __future__ import annotations

import datetime
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from .. import distributed as dist
from .. import nn, optim, seams
from ..dtypes import float64
from ..factories import tensor
from ..generator import manual_seed
from ..nn.functional import mse_loss
from ..nn.parallel import DistributedDataParallel
from ..utils.data import DataLoader, DistributedSampler, TensorDataset
from .components import BY_NAME
from .notebooks import extract
from .package import file_name, load
from .session import install

NEEDED = ("all_reduce", "broadcast", "shard")
WORLD, STEPS, SAMPLES, LR = 2, 4, 16, 0.2
TIMEOUT = 120              # seconds for the whole MPI job, measured here
COLLECTIVE_TIMEOUT = 30    # seconds a rank waits for the other in one collective
RTOL, ATOL = 1e-9, 1e-12   # float64 throughout: only the order of additions differs from one process


def _data():
    rng = np.random.default_rng(9)
    return TensorDataset(tensor(rng.standard_normal((SAMPLES, 4))), tensor(rng.standard_normal((SAMPLES, 2))))


def _model(seed):
    manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 8, dtype=float64), nn.Tanh(), nn.Linear(8, 2, dtype=float64))


def _flat(tensors):
    return np.concatenate([t.detach().numpy().ravel() for t in tensors])


def ddp_run() -> dict:
    """One rank's training (inside a process group of 2): DDP over its own initial weights, SGD with momentum
    on its DistributedSampler shard (one batch per step), the loss averaged over the ranks each step."""
    data = _data()
    model = _model(1000 + dist.get_rank())  # different on each rank: DDP must start every rank from rank 0's
    ddp = DistributedDataParallel(model)
    out = {"initial": _flat(model.parameters())}
    opt = optim.SGD(model.parameters(), lr=LR, momentum=0.9)
    sampler = DistributedSampler(data, shuffle=True, seed=3)
    loader = DataLoader(data, batch_size=len(sampler), sampler=sampler)
    losses = []
    for step in range(STEPS):
        sampler.set_epoch(step)
        for x, y in loader:
            opt.zero_grad()
            loss = mse_loss(ddp(x), y)
            loss.backward()
            if step == 0:
                out["grad0"] = _flat(p.grad for p in model.parameters())
            opt.step()
            logged = loss.detach().clone()
            dist.all_reduce(logged, op=dist.ReduceOp.AVG)
            losses.append(logged.item())
    out["loss"], out["final"] = np.array(losses), _flat(model.parameters())
    return out


def full_batch_run() -> dict:
    """What `ddp_run` must give on every rank: one process, rank 0's initial weights, the whole batch."""
    x, y = _data().tensors
    model = _model(1000)
    out = {"initial": _flat(model.parameters())}
    opt = optim.SGD(model.parameters(), lr=LR, momentum=0.9)
    losses = []
    for step in range(STEPS):
        opt.zero_grad()
        loss = mse_loss(model(x), y)
        loss.backward()
        if step == 0:
            out["grad0"] = _flat(p.grad for p in model.parameters())
        opt.step()
        losses.append(loss.item())
    out["loss"], out["final"] = np.array(losses), _flat(model.parameters())
    return out


def _describe(error) -> str:
    notes = "".join(f" ({note})" for note in getattr(error, "__notes__", []))
    return f"{type(error).__name__}: {error}{notes}"


def rank_child(package: str, out_dir: str) -> None:
    """Entry point of each MPI process: install the learner's components of this milestone, train, write
    rank{R}.npz and then rank{R}.json into `out_dir`. An error is written down and raised again, which stops
    both ranks at once (the MPI backend aborts the job on an uncaught error)."""
    loaded = [item for item in load(package) if item.component.name in NEEDED]
    install(loaded, package)  # an error raised in the learner's code names the notebook cell it came from
    seams.reset_calls()
    dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=COLLECTIVE_TIMEOUT))
    rank = dist.get_rank()
    report = {"rank": rank, "world": dist.get_world_size(), "raised": "",
              "errors": {item.component.name: item.error for item in loaded if item.error},
              "learner": [item.component.name for item in loaded if item.obj is not None]}
    out = Path(out_dir)
    try:
        result = ddp_run()
    except Exception as error:  # the learner's code raised inside the framework
        report.update(raised=_describe(error), calls=seams.calls())
        (out / f"rank{rank}.json").write_text(json.dumps(report))
        raise
    report["calls"] = seams.calls()
    np.savez(out / f"rank{rank}.npz", **result)
    (out / f"rank{rank}.json").write_text(json.dumps(report))
    dist.destroy_process_group()


def mpiexec() -> str | None:
    """The venv's mpiexec (or one on PATH), when mpi4py is importable too."""
    if importlib.util.find_spec("mpi4py") is None:
        return None
    return shutil.which("mpiexec", path=str(Path(sys.executable).parent)) or shutil.which("mpiexec")


def _regular(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


def run_ranks(package: Path) -> list:
    """Run `rank_child` in 2 MPI processes; per rank (report, arrays), or None where it wrote nothing."""
    launcher = mpiexec()
    if launcher is None:
        raise RuntimeError("milestone ddp needs MPI: mpi4py and mpiexec (pip install the `dist` extra)")
    with tempfile.TemporaryDirectory() as tmp:
        code = "import sys; from tinygrad_course.build.ddp_milestone import rank_child; rank_child(*sys.argv[1:3])"
        proc = subprocess.Popen([launcher, "-n", str(WORLD), sys.executable, "-c", code, str(package), tmp], cwd=tmp,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
        try:
            output, _ = proc.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise RuntimeError(f"milestone ddp: the {WORLD} MPI processes did not finish within {TIMEOUT} s") from None
        ranks = []
        for r in range(WORLD):
            report, arrays = Path(tmp) / f"rank{r}.json", Path(tmp) / f"rank{r}.npz"
            if not _regular(report):
                ranks.append(None)
                continue
            data = {}
            if _regular(arrays):
                with np.load(arrays, allow_pickle=False) as npz:
                    data = {key: np.asarray(npz[key], dtype=np.float64) for key in npz.files}
            ranks.append((json.loads(report.read_text()), data))
    if all(r is None for r in ranks):
        tail = [line for line in output.strip().splitlines() if line.strip()][-1:] or ["no output"]
        raise RuntimeError(f"milestone ddp: the run of your components stopped: {tail[0]}")
    return ranks


def _differs(got, want) -> str | None:
    if got is None:
        return "missing"
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape}"
    if np.allclose(got, want, rtol=RTOL, atol=ATOL):
        return None
    worst = int(np.argmax(np.abs(got - want)))
    return f"element {worst} is {got[worst]:.10g}, expected {want[worst]:.10g}"


# what a difference in each result points to (in the order DDP computes them)
_CAUSES = (
    ("initial", "the weights after DDP's initial broadcast are not rank 0's", "broadcast"),
    ("grad0", "the gradients after the first backward are not the full batch's (DDP averaged the shards' "
              "gradients with your all_reduce, each rank's over the batch your shard gave it)", "all_reduce and shard"),
    ("loss", "the loss averaged over the ranks with all_reduce(op=AVG) is not the full batch's", "all_reduce"),
    ("final", "the weights after training are not one process's", "all_reduce"),
)


def verdict(ranks: list, expected: dict) -> tuple[bool, str]:
    """(passed, message) from each rank's (report, arrays) and the reference's full-batch run."""
    present = [r for r in ranks if r is not None]
    learner = present[0][0]["learner"]
    missing = [n for n in NEEDED if n not in learner]
    if missing:
        errors = present[0][0]["errors"]
        where = ", ".join(f"{n} ({BY_NAME[n].notebook}, cell {BY_NAME[n].exercise}"
                          + (f": {errors[n]}" if n in errors else "") + ")" for n in missing)
        return False, f"milestone ddp: not all its components are yours yet; missing: {where}"
    for report, _ in present:
        if report["raised"]:
            return False, f"milestone ddp: the run with your components raised on rank {report['rank']}: {report['raised']}"
    if len(present) < WORLD:
        gone = [str(r) for r, item in enumerate(ranks) if item is None]
        return False, f"milestone ddp: rank {', '.join(gone)} stopped without a result"
    for report, _ in present:
        unused = [n for n in NEEDED if report["calls"].get(BY_NAME[n].seam, 0) == 0]
        if unused:
            return False, (f"milestone ddp: these components of yours were never called on rank {report['rank']}: "
                           f"{', '.join(unused)}")
    for key, what, cause in _CAUSES:
        for report, arrays in present:
            problem = _differs(arrays.get(key), expected[key])
            if problem:
                return False, f"milestone ddp: on rank {report['rank']}, {what}: {problem}; look at your {cause}"
    calls = ", ".join(f"{n} {min(report['calls'][BY_NAME[n].seam] for report, _ in present)}" for n in NEEDED)
    return True, (f"milestone ddp: passed; {WORLD} MPI processes trained with your {', '.join(NEEDED)} end with the "
                  f"weights of one process on the full batch (calls per rank: {calls})")


def ddp_milestone(folder) -> tuple[bool, str]:
    """(passed, message) for `milestone ddp` on the notebooks in `folder`."""
    with tempfile.TemporaryDirectory() as tmp:
        extract(folder, tmp)
        written = [n for n in NEEDED if _regular(Path(tmp) / file_name(BY_NAME[n]))]
        if len(written) < len(NEEDED):  # no need to start MPI: a cell still holds its stub
            return verdict([({"learner": written, "errors": {}}, {})], {})
        ranks = run_ranks(Path(tmp))
    return verdict(ranks, full_batch_run())
