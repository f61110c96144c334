"""Fixtures shared by every test folder."""
import os

# Notebook kernels and worker processes started by the tests inherit this: committed notebook outputs
# were computed with one BLAS thread, and a different thread count changes float rounding.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import pytest  # noqa: E402

if os.environ.get("TC_STRICT_CUPY") == "1":  # the cuda cases against the strict CuPy stand-in (no GPU needed)
    import strict_cupy

    strict_cupy.install()

from devices import DEVICES  # noqa: E402


@pytest.fixture(params=DEVICES)
def device(request):
    """Each device in turn: "cpu", then "cuda" (skipped with a clear reason where no GPU is usable)."""
    return request.param
