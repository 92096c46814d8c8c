# The two set-up commands of the README: `make serve` and `make test`.
# Both create .venv from the pinned lock file (nothing is downloaded at run time).
VENV ?= .venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?=

.PHONY: install serve test lint system-deps

$(VENV)/.installed: requirements.lock pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $@

install: $(VENV)/.installed

# Renderers the tests check PDF and EPS output with.
system-deps:
	@command -v gs >/dev/null && command -v pdftoppm >/dev/null && command -v curl >/dev/null || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ghostscript poppler-utils curl >/dev/null; }

serve: install
	$(VENV)/bin/printjob serve

lint: install
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/ruff format --check src tests bench
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

test: install system-deps lint
	$(PY) -m pytest $(PYTEST_ARGS)
