# Two commands on a fresh machine:  `make demo`  and  `make test`  (see README).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install demo test lint

$(BIN)/activate:
	$(PYTHON) -m venv $(VENV)

# torch first, pinned to the CPU build on local disk, so that the rl extra's range `torch>=2.2`
# is already satisfied and pip does not fetch a multi-GB CUDA build.
$(VENV)/.installed: pyproject.toml | $(BIN)/activate
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[rl,dist,dev]'
	touch $@

install: $(VENV)/.installed

demo: install
	$(BIN)/schedenv leaderboard --suite quick --out runs/quick

# lint-imports checks the layers of README "Architecture" (contracts in pyproject.toml) on the code of this
# folder: it puts the current directory first on sys.path, ahead of the editable install.
test: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	HYPOTHESIS_PROFILE=ci $(BIN)/pytest -n 2 -q

lint: install
	$(BIN)/ruff check . && $(BIN)/ruff format --check . && $(BIN)/mypy && $(BIN)/lint-imports
