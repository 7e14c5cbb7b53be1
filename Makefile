# Two entry points for a fresh machine with only python3, pip and make:
#   make demo   runs the main demo        make test   runs the whole test suite
# make typecheck runs mypy on each distribution from its own folder (see [tool.mypy] in pyproject.toml).
# uv is bootstrapped into .tools/ with pip; the workspace is installed into .venv/
# from uv.lock. PYTHON picks the interpreter (default: python3).

PYTHON ?= python3
TOOLS  := .tools
UV     := $(TOOLS)/bin/uv
VENV   := .venv
UV_VERSION := 0.13.9

.PHONY: install demo test lint typecheck bench wheels release clean inbox-screenshots docs

# every distribution in the workspace, so a new one is type-checked without touching this file
DISTRIBUTIONS := $(patsubst %/pyproject.toml,%,$(wildcard grapharc-*/pyproject.toml))

$(UV):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

# --compile-bytecode: the dependencies' bytecode is written once here, so no process (a test's
# server, a demo's resumed run) compiles LangGraph again where PYTHONDONTWRITEBYTECODE is set
# (importing langgraph took 2.6 s instead of 1.4 s here); a later sync compiles only what changed.
# The workspace's own sources are installed editable, which --compile-bytecode leaves alone: compile
# them too (compileall skips what is up to date), so a fresh process does not compile GraphARC on
# every start where PYTHONDONTWRITEBYTECODE is set (grapharc demo stage0: 1.59 s -> 1.34 s here).
install: $(UV)
	$(UV) sync --quiet --all-packages --group dev --locked --python $(PYTHON) --compile-bytecode
	$(VENV)/bin/python -m compileall -q -j 0 $(wildcard grapharc-*/src) >/dev/null

demo: install
	$(VENV)/bin/grapharc demo stage0

# one pytest process per core (pytest-xdist); each test file stays in one process
test: install
	$(VENV)/bin/pytest -n auto --dist loadfile

# import-linter checks the contracts in pyproject.toml; grapharc is imported first so its path holds
# every installed distribution's folder (plugins extend core's package), which the linter reads.
lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/python -c "import grapharc.memory, sys; from importlinter.cli import lint_imports_command; \
	    sys.argv = ['lint-imports', '--no-cache', '--no-logo']; lint_imports_command()"

typecheck: install
	for dist in $(DISTRIBUTIONS); do \
	    echo "== mypy $$dist"; \
	    (cd $$dist && ../$(VENV)/bin/mypy --config-file ../pyproject.toml src) || exit 1; \
	done

wheels: install
	for dist in $(DISTRIBUTIONS); do \
	    $(UV) build --quiet --wheel --package $$dist --out-dir dist || exit 1; \
	done

# every distribution's sdist and wheel (the wheel built from the sdist, as an installer would) into a
# fresh dist/, then twine's check of their metadata and READMEs; nothing is uploaded
release: install
	rm -rf dist
	for dist in $(DISTRIBUTIONS); do \
	    $(UV) build --quiet --package $$dist --out-dir dist || exit 1; \
	done
	$(VENV)/bin/twine check --strict dist/*.whl dist/*.tar.gz

# the pictures of the inbox on docs/concepts/inbox.md: the browser test's screenshots (desktop and phone widths, each
# page checked with axe-core), written to docs/images/inbox/ (needs /usr/bin/chromium and npm)
inbox-screenshots: install
	GRAPHARC_SCREENSHOTS=docs/images/inbox GRAPHARC_REQUIRE_BROWSER=1 GRAPHARC_REQUIRE_AXE=1 \
	    $(VENV)/bin/pytest tests/grapharc-server/test_inbox_browser.py -q -k every_page

# the docs site (mkdocs.yml) into site/; --strict: a broken link or a missing reference fails it
docs: install
	$(VENV)/bin/mkdocs build --strict --site-dir site

bench: install
	$(VENV)/bin/python benchmarks/cli_startup.py

clean:
	rm -rf $(TOOLS) $(VENV) .venv-* dist
