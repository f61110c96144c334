# Two commands: `make lab` opens the course, `make test` runs every test this machine can run.
# Both create .venv on first use and reinstall only when pyproject.toml changes.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --quiet --disable-pip-version-check
STAMP := $(VENV)/.installed

.PHONY: lab test test-fast venv bench release clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip setuptools wheel
	$(PIP) -e ".[course,test,dist]"
	touch $(STAMP)

venv: $(STAMP)

lab: $(STAMP)
	$(VENV)/bin/jupyter lab notebooks/00_welcome.ipynb

test: $(STAMP)
	sh scripts/ensure_chromium.sh
	$(PY) -m pytest

test-fast: $(STAMP)
	$(PY) -m pytest -m "not slow and not browser and not notebook and not gpu" -q

bench: $(STAMP)
	$(PY) bench/op_overhead.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis test-artifacts
