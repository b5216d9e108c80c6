# The two commands a newcomer needs are `make serve` and `make test`; each installs what it needs.
# Other targets: `make test-fast` (ruff, Biome and every test that needs no browser: the inner
# loop, about 5 minutes), `make site` (build into site/), `make bench` (then `make bench-suite`:
# both tiers timed in a fresh clone), `make durations` (tests/durations.json), `make golden` (rewrite
# expected outputs after changing a lesson), `make peers` (rewrite the parity vectors
# tests/peers/*.json from the wheels pinned in peers/pins.toml), `make lint`, `make lock`
# (re-resolve requirements.lock), `make clean`.

SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
PYTHON ?= python3
export NO_MKDOCS_2_WARNING := 1
# pytest's workers, one per core: four on two cores measured no faster (980 s against 942 s for
# the whole suite), as each worker's Chromium and Pyodide compete for the same cores and memory
WORKERS ?= 2

# Every Python package comes from requirements.lock: pinned, with hashes (`make lock` rewrites
# it from the groups in pyproject.toml). PyTorch is its CPU build (tests only): where PyTorch's
# CPU index answers, pip takes the wheel from it; here pip's configured find-links hold it. A bare
# `torch` from PyPI would be a multi-GB CUDA build, which the lock's hash refuses.
PIP_VERSION := 26.3
UV_VERSION := 0.13.9
TORCH_CPU_INDEX := https://download.pytorch.org/whl/cpu
INSTALL := $(PY) -m pip install --quiet --require-hashes -c requirements.lock

.PHONY: serve test test-fast site bench bench-suite durations golden peers lint lock clean deps browser

# ---- installation (each step runs again only when its inputs change) -------------------------

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet 'pip==$(PIP_VERSION)'

$(VENV)/.deps-docs: requirements.lock pyproject.toml | $(PY)
	$(INSTALL) --group docs
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

$(VENV)/.deps-test: requirements.lock pyproject.toml $(VENV)/.deps-docs
	if $(PY) -c "import urllib.request as u; u.urlopen('$(TORCH_CPU_INDEX)/torch/', timeout=5)" \
	    2>/dev/null; then \
	  $(INSTALL) --group test --extra-index-url $(TORCH_CPU_INDEX); \
	else \
	  $(INSTALL) --group test; \
	fi
	touch $@

node_modules/.package-lock.json: package-lock.json
	npm ci --no-audit --no-fund
	touch $@

# Debian's chromium for the browser tests (Playwright cannot download its own browser here).
browser:
	@if ! command -v chromium >/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else \
	    echo "chromium is missing: install it (Debian: apt-get install chromium) to run the browser tests" >&2; \
	  fi; \
	fi

deps: $(VENV)/.deps-test node_modules/.package-lock.json browser

# ---- the two commands ------------------------------------------------------------------------

serve: $(VENV)/.deps-docs node_modules/.package-lock.json
	$(PY) -m mkdocs serve --dev-addr 127.0.0.1:8000

# Two workers, a test file each at a time (a module's tests share its page and Python), the
# slowest files first (tests/conftest.py).
test: deps
	$(PY) -m ruff check .
	npx --no-install biome ci .
	$(PY) -m pytest -n $(WORKERS) --dist loadfile --no-loadscope-reorder

# ---- the rest --------------------------------------------------------------------------------

# The inner loop: `make test` without the tests that drive Chromium (marked `browser` by
# tests/conftest.py); Python, Node and Pyodide in Node all run.
test-fast: $(VENV)/.deps-test node_modules/.package-lock.json
	$(PY) -m ruff check .
	npx --no-install biome ci .
	$(PY) -m pytest -n $(WORKERS) --dist loadfile --no-loadscope-reorder -m "not browser"

site: $(VENV)/.deps-docs node_modules/.package-lock.json
	$(PY) -m mkdocs build --strict --site-dir site

# The site's timings (bench/), then both test tiers' wall time in a fresh clone of HEAD.
bench: deps
	$(PY) -m bench; status=$$?; $(MAKE) --no-print-directory bench-suite && exit $$status

bench-suite:
	bench/suite.sh

# tests/durations.json (each test file's seconds, the order of a fresh clone's `make test`) from
# the pytest cache of the last `make test` here
durations: $(VENV)/.deps-test
	$(PY) -m tests.conftest

golden: $(VENV)/.deps-test
	$(PY) -m tests.golden --write

# Download the pinned verl, TRL and OpenRLHF wheels (pip, --require-hashes) into .cache/peers/,
# run the library functions our references claim to match, write tests/peers/<library>.json.
peers: $(VENV)/.deps-test
	$(PY) -m peers

# Python with ruff, JavaScript with Biome (lint and format: `npx biome check --write .` fixes
# what it can).
lint: $(VENV)/.deps-test node_modules/.package-lock.json
	$(PY) -m ruff check .
	npx --no-install biome ci .

# Re-resolve every Python package (newest versions the ranges in pyproject.toml allow) into
# requirements.lock, for CPython 3.11 on x86-64 Linux, with the hashes of every file of each pin.
LOCK_TORCH = $(if $(PIP_FIND_LINKS),--find-links $(PIP_FIND_LINKS),--extra-index-url \
	$(TORCH_CPU_INDEX) --index-strategy unsafe-best-match)
lock: | $(PY)
	$(PY) -m pip install --quiet 'uv==$(UV_VERSION)'
	$(VENV)/bin/uv pip compile --group test --generate-hashes --python-version 3.11 \
	  --python-platform x86_64-manylinux_2_28 --index-url https://pypi.org/simple $(LOCK_TORCH) \
	  --custom-compile-command "make lock" --quiet -o requirements.lock

clean:
	rm -rf site .cache dist build *.egg-info .pytest_cache .ruff_cache
