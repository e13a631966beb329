# The two commands of the README, plus helpers. Everything runs inside .venv (created on demand).
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml constraints.txt | cksum | cut -d' ' -f1)
RUNS ?= runs
HOST ?= 127.0.0.1
PORT ?= 8050

.PHONY: demo test test-fast bench docs presets venv clean-venv

$(STAMP):
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check -q -c constraints.txt -e '.[dev]'
	@rm -f $(VENV)/.installed-*
	@touch $(STAMP)

venv: $(STAMP)

# Set up, build a default run (simulated, embedded SQLite) and serve the cockpit on loopback.
demo: $(STAMP)
	@test -f $(RUNS)/demo/status.json || $(BIN)/python -m bin.simulate_training --steps 5000 --out $(RUNS)/demo --quiet
	$(BIN)/python gui/app.py --runs-dir $(RUNS) --host $(HOST) --port $(PORT)

# Set up and run the whole test suite (browser tests need Debian's chromium; CI installs it).
test: $(STAMP)
	$(BIN)/python -m pytest

test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not browser and not slow"

bench: $(STAMP)
	$(BIN)/python -m bench

docs: $(STAMP)
	$(BIN)/python -m bin.config docs

presets: $(STAMP)
	$(BIN)/python -m bin.config format configs/*.yaml

clean-venv:
	rm -rf $(VENV)
