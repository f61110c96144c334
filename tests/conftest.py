"""Fixtures shared by every test folder."""
import os

# Notebook kernels and worker processes started by the tests inherit this: committed notebook outputs
# were computed with one BLAS thread, and a different thread count changes float rounding.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

# Build mode: the learner's package for every test, notebook kernel and child process is an empty folder of
# this run's own, so a developer's own mytorch/ never changes what the lecture notebooks print.
if "TC_MYTORCH" not in os.environ:
    import atexit
    import shutil
    import tempfile

    _learner_folder = tempfile.mkdtemp(prefix="tc-mytorch-")
    atexit.register(shutil.rmtree, _learner_folder, True)  # removed when the test run ends
    os.environ["TC_MYTORCH"] = os.path.join(_learner_folder, "mytorch")

import pytest  # noqa: E402

if os.environ.get("TC_STRICT_CUPY") == "1":  # the cuda cases against the strict CuPy stand-in (no GPU needed)
    import strict_cupy

    strict_cupy.install()
    if os.environ.get("TC_DEFAULT_DEVICE"):  # e.g. "cuda": factories and layers create tensors there
        import tinygrad_course as _tc

        _tc.set_default_device(os.environ["TC_DEFAULT_DEVICE"])

from devices import DEVICES  # noqa: E402

from tinygrad_course import seams  # noqa: E402  (after the stand-in is installed)


@pytest.fixture(params=DEVICES)
def device(request):
    """Each device in turn: "cpu", then "cuda" (skipped with a clear reason where no GPU is usable)."""
    return request.param


# With TC_DEFAULT_DEVICE=cuda (and the stand-in), the core, nn and optim suites run with every tensor they
# create on the GPU. These tests check host-only behaviour and are skipped there: reprs (which then show
# device='cuda:0'), bfloat16 (CuPy has none), `.numpy()` (needs the CPU), checks that a tensor is on the CPU,
# PyTorch's CPU random streams (the GPU draws with CuPy's generator), sparse COO products (NumPy's add.at) and
# build mode's learner ops (a learner's op computes on NumPy arrays: GPU tensors stay the reference's).
HOST_ONLY = (
    "tests/core/test_learner_op.py",
    "tests/nn/test_no_grad_fast_paths.py",  # the no-graph shortcuts are for NumPy arrays: on a GPU the ops run
    "tests/core/test_random_streams.py",
    "tests/core/test_dense_sparse_products.py",
    "tests/core/test_printing.py",
    "tests/core/test_creation_dtypes.py::test_conversion_methods",
    "tests/core/test_creation_dtypes.py::test_to_dtype_and_same_dtype_returns_self",
    "tests/core/test_attributes_views.py::test_item_tolist_numpy",
    "tests/core/test_attributes_views.py::test_size_prints_and_behaves_like_a_tuple",
    "tests/core/test_inplace.py::test_modifying_a_saved_tensor_fails_backward_with_torch_wording",
    "tests/nn/test_module.py::test_parameter_repr_and_identity",
    "tests/nn/test_module.py::test_registration_errors_and_attribute_rules",
)


def pytest_collection_modifyitems(config, items):
    if not os.environ.get("TC_DEFAULT_DEVICE"):
        return
    skip = pytest.mark.skip(reason="host-only behaviour (repr, bfloat16, .numpy(), CPU placement)")
    for item in items:
        if any(item.nodeid == k or item.nodeid.startswith((k + "::", k + "[")) for k in HOST_ONLY):
            item.add_marker(skip)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """With TC_DEFAULT_DEVICE=cuda, a case that needs a bfloat16 tensor on the GPU is skipped, not failed:
    the framework refuses it with a clear error because CuPy has no bfloat16 arrays."""
    outcome = yield
    report = outcome.get_result()
    if (os.environ.get("TC_DEFAULT_DEVICE") and call.excinfo is not None
            and "CuPy has no bfloat16 arrays" in str(call.excinfo.value)):
        report.outcome = "skipped"
        report.longrepr = (str(item.path), 0, "Skipped: bfloat16 cannot live on the GPU (CuPy has no bfloat16)")



@pytest.fixture
def clean_seams():
    """No build-mode component installed and no calls counted, before and after the test."""
    seams.uninstall()
    seams.reset_calls()
    yield
    seams.uninstall()
    seams.reset_calls()
