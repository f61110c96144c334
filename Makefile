# Two commands: `make lab` opens the course, `make test` runs every test this machine can run.
# Both create .venv on first use and reinstall only when pyproject.toml changes.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --quiet --disable-pip-version-check
# One BLAS thread per process: on a small shared machine extra threads make small matmuls
# many times slower, and tests, notebooks and worker processes already run side by side.
export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1
export MKL_NUM_THREADS ?= 1
STAMP := $(VENV)/.installed
LAB_STAMP := $(VENV)/.lab-installed

.PHONY: lab test test-fast test-gpu-stand-in venv bench release clean

# The course itself needs no PyTorch; the tests use it as the reference, so only `make test` installs it.
$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip setuptools wheel

$(LAB_STAMP): pyproject.toml | $(VENV)/bin/python
	$(PIP) -e ".[course,dist]"
	touch $(LAB_STAMP)

$(STAMP): pyproject.toml | $(VENV)/bin/python
	$(PIP) -e ".[course,test,dist]"
	touch $(STAMP) $(LAB_STAMP)

venv: $(STAMP)

# Jupyter refuses to run as root unless told to (containers, Binder-like machines).
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

lab: $(LAB_STAMP)
	$(VENV)/bin/jupyter lab $(ROOT_FLAG) notebooks/00_welcome.ipynb

# The second run repeats the GPU suite against the strict CuPy stand-in (tests/strict_cupy.py), and the
# third runs the core, nn and optim suites with every tensor created on the stand-in GPU, so the cuda
# code path is exercised on machines without a GPU too; on a GPU machine the first run covers the GPU.
test: $(STAMP)
	sh scripts/ensure_debian_package.sh /usr/bin/chromium chromium "the browser tests"
	sh scripts/ensure_debian_package.sh bwrap bubblewrap "the bwrap isolation tests"
	$(VENV)/bin/lint-imports
	$(PY) -m pytest
	TC_STRICT_CUPY=1 $(PY) -m pytest -m gpu -q -p no:cacheprovider
	TC_STRICT_CUPY=1 TC_DEFAULT_DEVICE=cuda $(PY) -m pytest tests/core tests/nn tests/optim -q -p no:cacheprovider

test-gpu-stand-in: $(STAMP)
	TC_STRICT_CUPY=1 $(PY) -m pytest -m gpu -q
	TC_STRICT_CUPY=1 TC_DEFAULT_DEVICE=cuda $(PY) -m pytest tests/core tests/nn tests/optim -q

test-fast: $(STAMP)
	$(PY) -m pytest -m "not slow and not browser and not notebook and not gpu" -q

bench: $(STAMP)
	$(PY) bench/suite.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis test-artifacts
