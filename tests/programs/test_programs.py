"""Each program in src/ is run twice, with PyTorch and with `import torch` mapped to tinygrad_course
(shim/torch.py first on PYTHONPATH), and their printed output is compared: text exactly, numbers within
a tolerance. The programs are written as ordinary PyTorch code; deterministic inits come from NumPy, or,
in the seeded programs, from the random stream (which follows PyTorch's), whose output must be identical."""
import os
import pathlib
import re
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
SRC = HERE / "src"
ROOT = HERE.parent.parent
PROGRAMS = sorted(p.name for p in SRC.glob("p[0-9]*.py"))
FAST = {"p01_tutorial_classifier.py", "p08_legacy_variable.py", "p12_autograd_tutorial.py",
        "p14_tensors_tutorial.py", "p20_factories_and_out.py", "p33_bigram_names.py", "p34_seeded_mlp.py"}
# seeded through the random stream alone (no weights from NumPy): PyTorch's printed numbers, exactly
SEEDED = {"p33_bigram_names.py", "p34_seeded_mlp.py"}
NUMBER = re.compile(r"-?\d+\.\d*(?:e[-+]?\d+)?|-?\d+(?:e[-+]?\d+)?|nan|inf")


def _run(program, framework):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", PYTHONHASHSEED="0")
    paths = [str(ROOT)]
    if framework == "tinygrad_course":
        paths.insert(0, str(HERE / "shim"))
    env["PYTHONPATH"] = os.pathsep.join(paths)
    proc = subprocess.run([sys.executable, str(SRC / program)], cwd=SRC, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, f"{program} failed with {framework}:\n{proc.stderr[-3000:]}"
    return proc.stdout


def _compare(ours: str, theirs: str, rtol=2e-3, atol=2e-4):
    a, b = ours.splitlines(), theirs.splitlines()
    assert len(a) == len(b), f"different number of lines:\n{ours}\n---\n{theirs}"
    for la, lb in zip(a, b):
        assert NUMBER.sub("#", la) == NUMBER.sub("#", lb), f"\n  ours:   {la}\n  torch:  {lb}"
        for x, y in zip(NUMBER.findall(la), NUMBER.findall(lb)):
            fx, fy = float(x), float(y)
            assert abs(fx - fy) <= atol + rtol * abs(fy) or (fx != fx and fy != fy), f"\n  ours:  {la}\n  torch: {lb}"


@pytest.mark.parametrize("program", [pytest.param(p, marks=() if p in FAST else pytest.mark.slow) for p in PROGRAMS])
def test_program_prints_the_same_with_both_frameworks(program):
    theirs = _run(program, "torch")
    ours = _run(program, "tinygrad_course")
    assert theirs.strip(), "the program printed nothing"
    if program in SEEDED:
        assert ours == theirs
    _compare(ours, theirs)


def test_there_are_at_least_thirty_programs():
    assert len(PROGRAMS) >= 30
