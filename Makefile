# The two quick-start commands: `make site` and `make test`. Each sets up .venv itself.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export NO_MKDOCS_2_WARNING := 1
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: site site-zensical render test browser actionlint serve lint verify update portability bench sitebench check format clean

$(PY):
	$(PYTHON) -m venv $(VENV)

# Some machines carry a machine-wide pip constraint (a global pip.conf with `constraint = ...` capping torch
# below the pinned release). requirements.txt is the project's only source of versions, so the project's own pip
# commands drop that cap: PIP_CONSTRAINT=/dev/null overrides the config file's constraint with an empty one (an
# empty PIP_CONSTRAINT= does not: pip then falls back to the config file). Elsewhere it changes nothing.
# --no-cache-dir: the torch wheels are several GB; keeping a second copy in pip's cache only costs disk.
PIP := PIP_CONSTRAINT=/dev/null $(PY) -m pip
export PIP_NO_CACHE_DIR := 1

$(STAMP): $(PY) requirements.txt pyproject.toml
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -r requirements.txt
	$(PIP) install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

lint: $(STAMP)
	$(PY) -m handbook lint

verify: $(STAMP)
	$(PY) -m handbook verify

update: $(STAMP)
	$(PY) -m handbook verify --update

# The CPU pass again under each lower instruction-set level and another thread count (see docs/contributing.md).
portability: $(STAMP)
	$(PY) -m handbook verify --portability

# The render step writes build/ (the pages' final Markdown, the generated pages, build/mkdocs.yml and
# build/zensical.yml, build/search-data.json); the site generator only converts that folder.
render: $(STAMP)
	$(PY) -m handbook render

site: lint verify render
	$(VENV)/bin/mkdocs build --strict -f build/mkdocs.yml
	$(VENV)/bin/mkdocs build --strict -f build/mkdocs-zh.yml
	$(PY) -m handbook offline
	$(PY) -m handbook linkcheck

# The same rendered folder through Zensical (a second target; MkDocs stays the default), into build/site-zensical/.
site-zensical: lint verify render
	$(VENV)/bin/zensical build -f build/zensical.yml
	$(VENV)/bin/zensical build -f build/zensical-zh.yml
	$(PY) -m handbook.site.zensical_adapter build/site-zensical
	$(PY) -m handbook.site.zensical_adapter build/site-zensical/zh
	$(PY) -m handbook offline --generator zensical
	$(PY) -m handbook linkcheck build/site-zensical

# Live preview of the rendered folder: run `make render` again to see a change to docs/.
serve: render
	$(VENV)/bin/mkdocs serve -f build/mkdocs.yml

browser:
	bash scripts/setup/browser.sh

actionlint:
	bash scripts/setup/actionlint.sh

test: $(STAMP) browser actionlint
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) -m handbook bench

format: $(STAMP)
	$(VENV)/bin/ruff format scripts tests
	$(VENV)/bin/ruff check --fix scripts tests

# "Done" means: formatted, lint-clean code, tests green, the site builds strictly.
check: $(STAMP)
	$(VENV)/bin/ruff format --check scripts tests
	$(VENV)/bin/ruff check scripts tests
	$(MAKE) test site

clean:
	rm -rf site build .handbook-cache

sitebench: $(STAMP)
	$(PY) -m handbook sitebench
