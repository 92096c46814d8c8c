# The two set-up commands of the README: `make serve` and `make test`.
# Both create .venv from the pinned lock file (nothing is downloaded at run time).
VENV ?= .venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?=

.PHONY: install serve test lint system-deps postgres

$(VENV)/.installed: requirements.lock pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $@

install: $(VENV)/.installed

# Renderers the tests check PDF and EPS output with.
system-deps:
	@command -v gs >/dev/null && command -v pdftoppm >/dev/null && command -v curl >/dev/null && PATH="$$PATH:/usr/sbin" command -v nginx >/dev/null || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ghostscript poppler-utils curl nginx >/dev/null; }

# A throwaway PostgreSQL on loopback for the tests; prints its URL.
postgres:
	@.ci/postgres-up

serve: install
	$(VENV)/bin/printjob serve

lint: install
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/ruff format --check src tests bench
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

# The suites run twice: everything on the embedded SQLite (the PostgreSQL storage tests
# included), then the contract and reliability suites with every server on PostgreSQL.
# .ci/postgres-up installs PostgreSQL from the Debian packages when it is missing and
# starts a throwaway cluster on loopback (reused while it runs).
test: install system-deps lint
	@url=$$(.ci/postgres-up) && \
	  echo "== tests on SQLite (PostgreSQL storage tests on $$url)" && \
	  PRINTJOB_TEST_DATABASE_URL=$$url $(PY) -m pytest $(PYTEST_ARGS) && \
	  echo "== contract and reliability suites on PostgreSQL" && \
	  PRINTJOB_TEST_DATABASE_URL=$$url PRINTJOB_TEST_STORAGE=postgresql \
	    $(PY) -m pytest $(PYTEST_ARGS) tests/contract tests/reliability
