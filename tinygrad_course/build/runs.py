"""What runs the learner's components for the command line: probes and milestone computations, in a child
process that loads the learner's package and writes plain data only (an .npz of arrays read back with
`allow_pickle=False`, and a JSON of counts and load errors). The parent computes the same things with the
reference and decides; it never imports the learner's code."""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from .. import seams
from .ddp_milestone import NEEDED as DDP_NEEDED, ddp_run, full_batch_run
from .milestone_runs import autograd_graph, cnn_run, lab_run, resume_run, uninterrupted_run
from .checks import verdict
from .components import BASE_METHODS_01B, TENSOR_INPLACE_METHODS, TENSOR_METHODS, TENSOR_REDUCTION_METHODS
from .package import load, read_manifest
from .probes import PROBES
from .session import install, left_out, seconds

TIMEOUT = 300


# chapter 02c.1's Tensor methods the lab's model, loss and training do not call (the others are in MILESTONES["lab"])
LAB_UNUSED = ("__radd__", "__rmul__", "__rtruediv__", "__pow__", "relu", "sigmoid", "view", "t", "contiguous")
# chapter 01b's TensorBase methods the lab does not call (the others are in MILESTONES["lab"])
LAB_UNUSED_01B = ("numel", "size", "__bool__", "requires_grad", "requires_grad_", "is_leaf", "detach", "__repr__")

# (chapter 01b's `promote_types` is not among the lab's either: the learner's `result_type`, which is, calls the
# promote_types of its own cell, so that seam never runs there)
# (chapter 03b's `Tensor._make_subclass` runs in the lab but is not among its components: the learner's
# `Parameter.__new__` calls it straight from their cell, not through the seam that counts calls;
# chapter 01's `index_view` is not among them either: the learner's GetItem of 02b.6 computes every x[key] the lab
# takes, so the reference's view path that calls it never runs there)

# chapter 02c.2's and 02c.3's methods the lab does not call (the others are in MILESTONES["lab"] too)
LAB_UNUSED_INPLACE = ("all", "__and__", "eq", "ne", "lt", "le", "gt", "ge", "__le__", "__gt__", "sub_", "div_",
                      "addcdiv_", "lerp_", "fill_", "copy_", "__isub__", "__imul__", "__itruediv__", "float", "cpu")

# milestone -> (what the learner's process runs, what this process compares it with, components it needs)
MILESTONES = {
    "autograd": (autograd_graph, autograd_graph, ("Mul", "Tanh", "Matmul", "Sum", "root_gradient", "backward_pass", "Tensor.backward",
                                                 "Function.apply", "Node.apply", "AccumulateGrad.apply")),
    "resume": (resume_run, uninterrupted_run, ("save_checkpoint", "load_checkpoint")),
    "lab": (lab_run, None, ("ClassificationDataset", "make_loaders", "SequentialSampler.__iter__",
                            "RandomSampler.__iter__", "BatchSampler.__iter__", "BatchSampler.__len__",
                            "SequentialSampler.__init__", "RandomSampler.__init__", "RandomSampler.num_samples",
                            "RandomSampler.__len__",
                            "BatchSampler.__init__",
                            "default_collate", "DataLoader.__init__", "DataLoader.__setattr__", "DataLoader.__iter__", "DataLoader.__len__",
                            "init_weights", "init.uniform_", "Parameter.__new__",
                            "Module.__init__", "Module.__setattr__", "Module.__getattr__",
                            "Module.register_parameter", "Module.register_module", "Module.parameters",
                            "Module.named_parameters", "Module.named_modules", "Module.children",
                            "Module.named_children", "Module.apply", "Module.train", "Module.eval",
                            "Linear.__init__", "Linear.reset_parameters", "Tanh.forward",
                            "Sequential.__init__", "Sequential.forward",
                            "Linear.forward", "Add", "Sub", "Mul", "Div", "Neg", "Exp", "Log", "Tanh", "Matmul", "Sum", "Mean",
                            "Max", "root_gradient", "backward_pass", "Tensor.backward", "Function.apply", "Node.apply", "AccumulateGrad.apply",
                            "AccumulateGrad.__init__",
                            "Node.save_for_backward", "Node.saved_tensors", "Node.saved_output", "Node.release_variables", "pick", "log_softmax",
                            "nll_loss", "cross_entropy",
                            "train_step", "Optimizer", "Adam.step", "LRScheduler", "CosineAnnealingLR.get_lr", "evaluate",
                            "Transpose", "Expand", "Gather", "View", "GetItem",
                            "tensor", "zeros", "empty", "zeros_like", "ones_like", "result_type",
                            "Generator.uniform", "Generator.normal", "Generator.permutation",
                            *(f"Tensor.{attr}" for attr, _ in TENSOR_METHODS if attr not in LAB_UNUSED),
                            *(f"Tensor.{attr}" for attr in BASE_METHODS_01B if attr not in LAB_UNUSED_01B),
                            *(f"Tensor.{attr}" for attr, _ in TENSOR_REDUCTION_METHODS + TENSOR_INPLACE_METHODS
                              if attr not in LAB_UNUSED_INPLACE))),
}
MILESTONES["cnn"] = (cnn_run, None, ("Conv2d.forward", "MaxPool2d.forward"))
# chapter 09: runs in 2 MPI processes (ddp_milestone.py: rank_child, run_ranks, verdict), not in `child`
MILESTONES["ddp"] = (ddp_run, full_batch_run, DDP_NEEDED)


def child(mode: str, package: str, out: str, only: str = "") -> None:
    """Entry point of the child process: load the learner's package, install it, run `mode` ("probes" or
    a milestone name), write the results. In "probes" mode each component (of `only`, comma-separated,
    when given) also runs its exercise's graded check, the one that decides whether it is installed."""
    loaded = load(package)
    if only:
        loaded = [item for item in loaded if item.component.name in only.split(",")]
    errors = {item.component.name: item.error for item in loaded if item.error}
    mine = [item.component for item in loaded if item.obj is not None]
    arrays, calls, raised, spent, verdicts = {}, {}, {}, {}, {}
    if mode == "probes":  # each component is checked alone, with the reference everywhere else
        manifest = read_manifest(package).get("components", {})
        checked = {}  # (file, chapter) -> verdict: a class's methods share one file and one check
        for item in loaded:
            if item.obj is not None:
                seams.uninstall()
                chapter = manifest.get(item.component.name, {}).get("chapter")
                if (item.file, chapter) not in checked:
                    checked[item.file, chapter] = verdict(item.component.name, item.namespace, chapter)
                verdicts[item.component.name] = checked[item.file, chapter]
        runs = [(item.component.name, PROBES[item.component.name], [item]) for item in loaded if item.obj is not None]
    else:
        needed = MILESTONES[mode][2]  # a milestone runs the learner's components it is about, the reference elsewhere
        runs = [(mode, MILESTONES[mode][0], [item for item in loaded if item.component.name in needed])]
    for name, fn, items in runs:
        seams.uninstall()
        install(items)
        seams.reset_calls()
        try:
            result = fn()
        except Exception as error:  # the learner's code raised inside the framework
            raised[name] = f"{type(error).__name__}: {error}"
            continue
        finally:
            calls[name], spent[name] = seams.calls(), seconds()
        for key, value in result.items():
            arrays[f"{name}/{key}"] = np.asarray(value, dtype=np.float64)
    np.savez(out, **arrays)
    Path(out + ".json").write_text(json.dumps({"errors": errors, "calls": calls, "raised": raised, "seconds": spent,
                                               "learner": [c.name for c in mine], "verdicts": verdicts,
                                               "left_out": left_out()}))


def _cpu_seconds_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_child(mode: str, package: Path, only=()) -> tuple[dict, dict]:
    """Run `child` in a fresh process (the same tinygrad_course as this one's); (arrays by run name, the JSON
    report, with the child's CPU time, measured here, as "cpu_seconds")."""
    here = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([here, *filter(None, [os.environ.get("PYTHONPATH")])])}
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "result.npz")
        code = ("import sys; from tinygrad_course.build.runs import child; "
                "child(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4])")
        before = _cpu_seconds_of_children()
        proc = subprocess.run([sys.executable, "-c", code, mode, str(package), out, ",".join(only)], cwd=tmp,
                              capture_output=True, text=True, timeout=TIMEOUT, env=env)
        cpu = _cpu_seconds_of_children() - before  # the child's own CPU time: a loaded machine does not add to it
        if proc.returncode != 0 or not Path(out + ".json").is_file():
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
            raise RuntimeError(f"the run of your components stopped: {tail[0]}")
        report = json.loads(Path(out + ".json").read_text())
        report["cpu_seconds"] = cpu
        with np.load(out, allow_pickle=False) as data:
            arrays = {}
            for key in data.files:
                run, _, field = key.partition("/")
                arrays.setdefault(run, {})[field] = data[key]
    return arrays, report
