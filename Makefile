# The two commands a newcomer needs are `make serve` and `make test`; each installs what it needs.
# Other targets: `make site` (build into site/), `make bench`, `make golden` (rewrite expected
# outputs after changing a lesson), `make lint`, `make clean`.

SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
PYTHON ?= python3
export NO_MKDOCS_2_WARNING := 1
# markdown-katex must find npm's fast `katex` CLI, not its slow bundled binary
export PATH := $(CURDIR)/node_modules/.bin:$(PATH)

# PyTorch (tests only) is pinned to 2.13.0. Where PyTorch's CPU index answers, take the CPU wheel
# from it; a bare pin on PyPI would pull a multi-GB CUDA build. Here the wheel comes from local disk.
TORCH := torch==2.13.0
TORCH_CPU_INDEX := https://download.pytorch.org/whl/cpu

.PHONY: serve test site bench golden lint clean deps browser

# ---- installation (each step runs again only when its inputs change) -------------------------

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.deps-docs: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[docs]'
	touch $@

$(VENV)/.deps-test: pyproject.toml $(VENV)/.deps-docs
	if $(PY) -c "import urllib.request as u; u.urlopen('$(TORCH_CPU_INDEX)/torch/', timeout=5)" \
	    2>/dev/null; then \
	  $(PY) -m pip install --quiet '$(TORCH)' --extra-index-url $(TORCH_CPU_INDEX); \
	else \
	  $(PY) -m pip install --quiet '$(TORCH)'; \
	fi
	$(PY) -m pip install --quiet -e '.[test,docs]'
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

test: deps
	$(PY) -m ruff check .
	$(PY) -m pytest

# ---- the rest --------------------------------------------------------------------------------

site: $(VENV)/.deps-docs node_modules/.package-lock.json
	$(PY) -m mkdocs build --strict --site-dir site

bench: deps
	$(PY) -m bench

golden: $(VENV)/.deps-test
	$(PY) -m tests.golden --write

lint: $(VENV)/.deps-test
	$(PY) -m ruff check .

clean:
	rm -rf site .cache dist build *.egg-info .pytest_cache .ruff_cache
