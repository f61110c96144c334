"""Launch a worker script under the venv's `mpiexec` with a hard time limit."""
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

WORKERS = Path(__file__).parent / "workers"
MPIEXEC = shutil.which("mpiexec", path=str(Path(sys.executable).parent)) or shutil.which("mpiexec")

needs_mpi = pytest.mark.skipif(
    MPIEXEC is None or not __import__("importlib.util").util.find_spec("mpi4py"),
    reason="needs mpi4py and an mpiexec (pip install the `dist` extra: mpi4py mpich)",
)


class Result:
    def __init__(self, returncode, output, seconds):
        self.returncode, self.output, self.seconds = returncode, output, seconds


def run_mpi(script, *args, n=2, timeout=90, launcher_args=()) -> Result:
    """Run `workers/<script>` on `n` processes; kill the whole job if it exceeds `timeout` seconds."""
    cmd = [MPIEXEC, *launcher_args, "-n", str(n), sys.executable, str(WORKERS / script), *map(str, args)]
    if n == 0:  # no launcher: a plain process, a world of one
        cmd = [sys.executable, str(WORKERS / script), *map(str, args)]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"MPI job {script} {args} hung for more than {timeout} s; output:\n{out}")
    return Result(proc.returncode, out, time.monotonic() - start)


def set_flat_parameters(model, flat):
    """Copy the flat NumPy vector `flat` (as a worker saved it) into `model`'s parameters, in order."""
    import tinygrad_course as tc

    offset = 0
    with tc.no_grad():
        for p in model.parameters():
            n = p.numel()
            p.copy_(tc.tensor(flat[offset:offset + n].reshape(tuple(p.shape))))
            offset += n
