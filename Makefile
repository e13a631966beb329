# The two commands of the README, plus helpers. Everything runs inside .venv (created on demand).
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml constraints.txt setup.py umoec/_native.h umoec/engine/_kernels.c umoec/codec/_cm.c umoec/codec/_probs.c | cksum | cut -d' ' -f1)
RUNS ?= runs
HOST ?= 127.0.0.1
PORT ?= 8050

.PHONY: demo test test-fast bench docs presets venv clean-venv default-model

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
# Two phases: every other test on TEST_WORKERS processes (pytest-xdist; a module's tests stay on
# one worker, so a module's fixtures are built once), then the browser tests one at a time, alone
# on the machine (they wait on a live page; a CPU-bound test beside them makes those waits
# flaky). Both phases run; the exit status is the first failure's.
TEST_WORKERS ?= 2
PARALLEL := -n $(TEST_WORKERS) --dist loadscope
test: $(STAMP)
	@rc=0; $(BIN)/python -m pytest $(PARALLEL) -m "not browser" || rc=$$?; \
	$(BIN)/python -m pytest -m browser || { s=$$?; [ $$rc -ne 0 ] || rc=$$s; }; exit $$rc

test-fast: $(STAMP)
	$(BIN)/python -m pytest $(PARALLEL) -m "not browser and not slow"

bench: $(STAMP)
	$(BIN)/python -m bench

docs: $(STAMP)
	$(BIN)/python -m bin.config docs

presets: $(STAMP)
	$(BIN)/python -m bin.config format configs/*.yaml

# Rebuild the shipped default model (docs/models.md): the general corpus of this machine's own files,
# configs/default_model.yaml (about 25-60 minutes on 2 CPU cores), then export it into the package.
default-model: $(STAMP)
	$(BIN)/python -m bin.prepare_data --corpus general --max-bytes 24000000 --val-fraction 0.02 --out data/general
	$(BIN)/python -m bin.train --config configs/default_model.yaml --out $(RUNS)/default-model
	$(BIN)/umc model export $(RUNS)/default-model -o umoec/models/default.umm -f --name general-v1 \
		--description "u-moec-tiny's default model: tier1_micro trained on the general corpus"

clean-venv:
	rm -rf $(VENV)
