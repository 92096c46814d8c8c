# The two set-up commands of the README: `make serve` and `make test`.
# Both create .venv from the pinned, hashed lock files (nothing is downloaded at run time).
VENV ?= .venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?=

.PHONY: install install-dev locks serve test lint system-deps postgres

# `make serve` installs only what the service runs (requirements.lock); `make test` adds the
# test, lint and benchmark tools (requirements-dev.lock, a superset pinned to the same
# versions). Both locks carry hashes, so pip installs exactly the files they name; the
# project itself is installed editable with the pinned setuptools (no build isolation, so
# nothing unpinned is fetched to build it).
PIP := $(PY) -m pip install --quiet --disable-pip-version-check

$(VENV)/.installed-runtime: requirements.lock pyproject.toml
	python3 -m venv $(VENV)
	$(PIP) --require-hashes -r requirements.lock
	$(PIP) --no-deps --no-build-isolation -e .
	touch $@

$(VENV)/.installed-dev: requirements-dev.lock pyproject.toml
	python3 -m venv $(VENV)
	$(PIP) --require-hashes -r requirements-dev.lock
	$(PIP) --no-deps --no-build-isolation -e .
	touch $@ $(VENV)/.installed-runtime

install: $(VENV)/.installed-runtime

install-dev: $(VENV)/.installed-dev

# Rewrite both locks after a change to pyproject.toml's dependencies (pins are kept
# unless `LOCK_ARGS=--upgrade`).
LOCK_OPTS := --quiet --generate-hashes --allow-unsafe --strip-extras --build-deps-for=editable \
  --no-emit-index-url --no-emit-find-links $(LOCK_ARGS)
locks: install-dev
	$(VENV)/bin/pip-compile $(LOCK_OPTS) -o requirements.lock pyproject.toml
	$(VENV)/bin/pip-compile $(LOCK_OPTS) --extra test --extra bench --extra locks \
	  -c requirements.lock -o requirements-dev.lock pyproject.toml

# Renderers the tests check PDF and EPS output with; Node and PHP (with its curl
# extension) run the JavaScript and PHP examples of docs/api.md.
system-deps:
	@command -v gs >/dev/null && command -v pdftoppm >/dev/null && command -v curl >/dev/null && command -v openssl >/dev/null && PATH="$$PATH:/usr/sbin" command -v nginx >/dev/null || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ghostscript poppler-utils curl openssl nginx >/dev/null; }
	@command -v node >/dev/null && command -v php >/dev/null && php -r 'exit(extension_loaded("curl") ? 0 : 1);' || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs php-cli php-curl >/dev/null; }
	@command -v chromium >/dev/null && command -v tesseract >/dev/null && test -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium tesseract-ocr tesseract-ocr-eng fonts-dejavu-core >/dev/null; }

# A throwaway PostgreSQL on loopback for the tests; prints its URL.
postgres:
	@.ci/postgres-up

serve: install
	$(VENV)/bin/printjob serve

lint: install-dev
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/ruff format --check src tests bench
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

# The suites run twice: everything on the embedded SQLite (the PostgreSQL storage tests
# included), then the contract and reliability suites with every server on PostgreSQL.
# .ci/postgres-up installs PostgreSQL from the Debian packages when it is missing and
# starts a throwaway cluster on loopback (reused while it runs).
test: install-dev system-deps lint
	@url=$$(.ci/postgres-up) && \
	  echo "== tests on SQLite (PostgreSQL storage tests on $$url)" && \
	  PRINTJOB_TEST_DATABASE_URL=$$url $(PY) -m pytest $(PYTEST_ARGS) && \
	  echo "== contract and reliability suites on PostgreSQL" && \
	  PRINTJOB_TEST_DATABASE_URL=$$url PRINTJOB_TEST_STORAGE=postgresql \
	    $(PY) -m pytest $(PYTEST_ARGS) tests/contract tests/reliability
