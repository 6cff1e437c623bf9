# ascendc_py developer commands. `make demo` and `make test` create .venv themselves.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
# Exact pin: the CPU wheel pip finds on these machines; any other spec pulls gigabytes of CUDA.
TORCH := torch==2.13.0

.PHONY: all venv demo test bench fuzz fidelity clean

all: test

venv: $(VENV)/.stamp

# Re-created from scratch whenever pyproject.toml changes. torch is installed first so that the
# editable install below never resolves a different torch build.
$(VENV)/.stamp: pyproject.toml
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(PIP) install $(TORCH)
	$(PIP) install -e ".[test,plot]"
	touch $@

demo: venv
	$(PY) samples/run_all.py

test: venv
	$(PY) -m pytest -q -n 2

# numba (the `bench` extra) is the native-loop reference; installed here, not by `venv`
bench: venv
	$(PY) -c "import numba" 2>/dev/null || $(PIP) install -q -e ".[bench]"
	$(PY) benchmarks/run.py

# The timing model's figures beside the measured references they are calibrated to.
fidelity: venv
	$(PY) -m ascendc_py.fidelity

# Long runs share the machine with other work: a case counts as hung after 60 s of wall time.
fuzz: venv
	ASCENDC_PY_FUZZ_TIMEOUT=$${ASCENDC_PY_FUZZ_TIMEOUT:-60} $(PY) -m pytest -q tests -m fuzz \
		--hypothesis-profile=long --hypothesis-show-statistics

clean:
	rm -rf $(VENV) out build dist .pytest_cache .hypothesis *.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
