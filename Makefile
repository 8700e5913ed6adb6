# Two commands on a fresh machine:  `make demo`  and  `make test`  (see README).  `make docs` builds the site.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Strict: a broken link, a missing result file or a docstring that cannot be rendered fails the build.
# NO_MKDOCS_2_WARNING silences Material's notice about MkDocs 2, which is not about this site.
DOCS_BUILD := NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

.PHONY: install demo test lint docs check-reproductions

$(BIN)/activate:
	$(PYTHON) -m venv $(VENV)

# torch first, pinned to the CPU build on local disk, so that the rl extra's range `torch>=2.2`
# is already satisfied and pip does not fetch a multi-GB CUDA build.
$(VENV)/.installed: pyproject.toml | $(BIN)/activate
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[rl,dist,dev,docs]'
	touch $@

install: $(VENV)/.installed

demo: install
	$(BIN)/schedenv leaderboard --suite quick --out runs/quick

# lint-imports checks the layers of docs/architecture.md (contracts in pyproject.toml) on the code of this
# folder: it puts the current directory first on sys.path, ahead of the editable install.
test: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(DOCS_BUILD)
	HYPOTHESIS_PROFILE=ci $(BIN)/pytest -n 2 -q

# The documentation site (mkdocs.yml, docs/) into site/; preview with `$(BIN)/mkdocs serve`.
docs: install
	$(DOCS_BUILD)

lint: install
	$(BIN)/ruff check . && $(BIN)/ruff format --check . && $(BIN)/mypy && $(BIN)/lint-imports

# Every paper reproduction rerun in full and compared with its committed result in benchmarks/results/
# (`schedenv reproduce NAME --check`: any changed number is printed and fails the target); about 25
# CPU-minutes. Outputs go to fresh runs/reproduce-NAME-<time>/ folders.
check-reproductions: install
	@status=0; for figure in $$($(BIN)/schedenv reproduce --list | cut -d' ' -f1); do \
		echo "== $$figure"; $(BIN)/schedenv reproduce $$figure --check --quiet || status=1; \
	done; exit $$status
