"""Re-execute notebooks in place, as the tests re-run them, and save them with their outputs.

    .venv/bin/python scripts/execute_notebooks.py notebooks/03_modules.ipynb solutions/03_modules.ipynb

Each notebook runs in a fresh kernel started in its own folder (as nbval starts it), with one BLAS thread
and an empty learner package of its own (TC_MYTORCH), like tests/grading/test_notebooks.py, importing this checkout's package. No run
timestamps are recorded and any `execution` cell metadata is dropped (nbgrader would copy it into every
released cell). Then run `tinygrad-course release` for changed solutions.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import nbclient
import nbformat

ROOT = Path(__file__).resolve().parent.parent


def execute(path: Path) -> None:
    """Run `path` top to bottom in a fresh kernel and write it back with the new outputs."""
    nb = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory(prefix="tc-mytorch-") as learner:
        os.environ["TC_MYTORCH"] = os.path.join(learner, "mytorch")
        client = nbclient.NotebookClient(nb, timeout=900, kernel_name="python3", record_timing=False,
                                         resources={"metadata": {"path": str(path.parent)}})
        client.execute()
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nbformat.write(nb, path)


def main(paths: list[str]) -> int:
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    # the kernel imports this checkout's package, whichever checkout the environment was installed from
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    for name in paths:
        execute(Path(name).resolve())
        print(f"executed {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
