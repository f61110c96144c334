"""Chapter 06 executed as on a GPU machine: its cells take their cuda branches (device placement, the
mixed-device error, timing with synchronize, memory reports, float16 autocast with a GradScaler) against the
strict CuPy stand-in installed in the notebook's kernel. The committed outputs come from a machine without a
GPU, so this run checks that every cell runs and takes the GPU branch, not the printed values."""
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
SETUP = f"""
import sys
sys.path.insert(0, {str(ROOT / "tests")!r})
import strict_cupy
strict_cupy.install()
sys.modules["cupy"] = strict_cupy.cupy
"""


def _run_with_stand_in(relative):
    import nbclient

    nb = nbformat.read(ROOT / relative, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(SETUP))
    nbclient.NotebookClient(nb, timeout=300, allow_errors=True, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    errors = [(o.ename, o.evalue) for o in outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    return errors, text


@pytest.mark.notebook
def test_chapter_06_runs_its_gpu_branches():
    errors, text = _run_with_stand_in("notebooks/06_gpu.ipynb")
    assert not errors, errors
    assert "CUDA available: True" in text and "using device: cuda" in text
    assert "Expected all tensors to be on the same device" in text  # the mixed-device cell's cuda branch


@pytest.mark.notebook
def test_chapter_06_solutions_run_their_gpu_branches_up_to_the_kernels():
    errors, _ = _run_with_stand_in("solutions/06_gpu.ipynb")
    # only launching a CUDA kernel needs the real GPU (the stand-in records kernels, and their sources are
    # compiled by test_kernels_compile.py)
    assert errors and all("CUDA kernels need a real GPU" in value for _, value in errors), errors
