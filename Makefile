# fabric-stack: the two commands a newcomer needs are `make demo` and `make test`.
# Every target is idempotent; `setup` rebuilds nothing that is already in place.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

# One offline environment for every project command and test (see docs/pulumi-stack.md, "The Pulumi engine").
export PULUMI_SKIP_UPDATE_CHECK := true
export PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION := true
export PULUMI_BACKEND_URL ?= file://$(CURDIR)/.state/pulumi
export PULUMI_CONFIG_PASSPHRASE ?= fabric-stack-local
export PATH := $(CURDIR)/$(BIN):$(PATH)

.PHONY: help setup venv engine postgres netbox test test-netbox test-fast fuzz lint demo demo-stack bench bench-preview goldens docs docs-examples docs-examples-pulumi docs-site clean twin-deps twin-demo bench-twin validate validate-deps

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $@

venv: $(STAMP) ## create .venv with the project and its dev tools

engine: $(STAMP) ## find or build the pinned Pulumi CLI and link it into .venv/bin
	@bash scripts/pulumi-engine.sh
	@mkdir -p .state/pulumi

setup: venv engine .state/env.sh ## venv + Pulumi engine + .state/env.sh for plain `pulumi` (idempotent)

# The environment above, for plain `pulumi` in your shell (`. .state/env.sh`). Written once:
# a team member's own (`fabric-stack env --out .state/env.sh` with their backend) is kept.
.state/env.sh: | $(STAMP)
	@$(BIN)/fabric-stack env --out $@

postgres: ## install (Debian) PostgreSQL server binaries if missing
	@bash scripts/postgres.sh install

netbox: postgres ## install a throw-away NetBox (pinned, own venv), Redis, and its migrated database
	@bash scripts/netbox.sh install

validate-deps: ## install (Debian) the real validators: FRR tools, netplan.io, libyang, OpenSM, ibsim
	@bash scripts/validate-deps.sh
	@bash scripts/kube-schemas.sh >/dev/null  # core-kind schemas for kubeconform (PyPI, offline after)

# Every rendered file judged by the software it targets, over a matrix of scenarios
# (validate/matrix.py): one line per rejection (scenario, file, tool, the tool's message).
validate: venv validate-deps ## render the scenario matrix and run the real parsers/schemas over it
	$(BIN)/python -m validate

twin-deps: ## install (Debian) ibsim, OpenSM, infiniband-diags, lldpd, FRR, iperf3 for the twin if missing
	@bash scripts/twin-deps.sh

# The seed cluster's digital twin (root): up, check, collect, drift (0 findings), a swap,
# drift again (exactly that swap), down. The twin lives in .state/twin; `down` always runs.
TWIN_DIR := $(CURDIR)/.state/twin
TWIN_OUT := $(CURDIR)/.state/twin-seen
twin-demo: venv twin-deps ## build the seed cluster's twin, check it, drift it, swap two cables, tear down
	@rm -rf $(TWIN_OUT)
	@trap '$(BIN)/fabric-stack twin down --dir $(TWIN_DIR)' EXIT; set -e; \
	$(BIN)/fabric-stack twin up --dir $(TWIN_DIR); \
	$(BIN)/fabric-stack twin check --dir $(TWIN_DIR); \
	$(BIN)/fabric-stack twin collect --dir $(TWIN_DIR) --out-dir $(TWIN_OUT); \
	$(BIN)/fabric-stack drift --config $(TWIN_OUT)/spec.yaml --ibnetdiscover $(TWIN_OUT)/ibnetdiscover.txt \
	  --node-name-map $(TWIN_OUT)/node-name-map --ignore $(TWIN_OUT)/drift-ignore.yaml; \
	$(BIN)/fabric-stack twin fault --dir $(TWIN_DIR) swap su1-node01:mlx5_0 su1-node02:mlx5_0; \
	$(BIN)/fabric-stack twin collect --dir $(TWIN_DIR) --out-dir $(TWIN_OUT) > /dev/null; \
	rc=0; $(BIN)/fabric-stack drift --config $(TWIN_OUT)/spec.yaml --ibnetdiscover $(TWIN_OUT)/ibnetdiscover.txt \
	  --node-name-map $(TWIN_OUT)/node-name-map --ignore $(TWIN_OUT)/drift-ignore.yaml || rc=$$?; \
	test $$rc = 1 || { echo "twin-demo: drift after the swap should exit 1 (drift), got $$rc"; exit 1; }

# The whole suite, the real-NetBox tests (issue 21) included: `make netbox` installs NetBox
# once (venv + migrated database cached under ~/.cache/fabric-stack).
# --durations=30: CI prints the slowest 30 tests (bench/README.md keeps the last table).
# Two pytest-xdist workers: each real part's tests (a folder of tests/integration) stay on
# one worker, in order (serial_scope in tests/conftest.py); TEST_WORKERS=0: one process.
# The twin's tests run afterwards, alone: 96 lldpd daemons sharing the two cores with a
# NetBox test once missed LLDP convergence (156 s) in a two-worker run.
TEST_WORKERS ?= 2
test: setup postgres netbox ## set up, then run the whole suite (real PostgreSQL, NetBox, Pulumi)
	$(BIN)/pytest -n $(TEST_WORKERS) --durations=30 -m "not twin"
	$(BIN)/pytest --durations=10 -m twin

test-netbox: setup netbox ## only the real-NetBox inventory tests (see docs/netbox.md)
	$(BIN)/pytest -m netbox

# A path and a marker filter: no daemon or real validator runs here even as root (where the twin,
# Slurm and validate tests would find what they need), whatever a test under these folders marks.
REAL_PARTS := not twin and not slurm and not validate
test-fast: venv ## unit, property and golden tests only (tests/unit tests/golden: no real part)
	$(BIN)/pytest tests/unit tests/golden -m "$(REAL_PARTS)"

# The bad-input contract under a longer Hypothesis campaign (CI runs 25 examples per test,
# derandomized). FUZZ_EXAMPLES sets the examples per fuzz test.
FUZZ_EXAMPLES ?= 1000
fuzz: venv ## longer fuzz campaign of the bad-input contract (FUZZ_EXAMPLES per test)
	FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/pytest tests/unit/test_fuzz_contract.py -q \
		--hypothesis-show-statistics

lint: venv ## ruff + mypy
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy fabric_stack components policies validate fabric_stack_launch.py

goldens: venv ## regenerate golden files under tests/golden (review the git diff!)
	$(BIN)/python -m tests.regenerate

docs-examples: venv ## rerun the README's and docs' examples, rewrite their outputs (review the diff!)
	$(BIN)/python -m tests.docs_examples --update

docs-examples-pulumi: setup ## the same for the examples that need the Pulumi engine (plan, apply)
	$(BIN)/python -m tests.docs_examples --update --pulumi

docs-site: venv ## build the MkDocs site into .state/site (strict: a broken link fails)
	$(BIN)/mkdocs build --strict -d $(CURDIR)/.state/site

docs: venv ## regenerate docs/spec-reference.md from the models
	$(BIN)/python -m fabric_stack.views.reference > docs/spec-reference.md

# The main job on the built-in defaults (the seed card's 128-GPU cluster): the sizing
# card, the policy check, then `pulumi preview` of the `demo` stack (no config, so
# every default applies) summarized by role. Nothing is applied.
demo: setup demo-stack ## size the seed cluster, check it, and preview its Pulumi stack
	$(BIN)/fabric-stack size
	$(BIN)/fabric-stack check
	$(BIN)/fabric-stack plan --stack demo
	@echo "$$DEMO_DONE"

# What `make demo` did and the three next steps; README.md shows these lines (a test
# compares them with what `make demo` prints).
define DEMO_DONE

Done: the seed cluster's sizing card, its policy check and a preview of Pulumi stack
demo. Nothing was applied. Next, in a shell that ran `. .state/env.sh`:
  fabric-stack apply --stack demo                          # record it in the inventory
  pulumi config set fabric:gpus 512 --stack demo           # grow it (then plan again)
  fabric-stack render report --stack demo --out-dir build  # build/report/design-report.html
endef
export DEMO_DONE

# fabric-stack never creates a stack (a typo'd --stack is an error, not a new stack), so the
# demo's is made here, once, and not selected: a `pulumi stack select` of yours stays yours.
demo-stack: setup ## create the `demo` Pulumi stack if it does not exist (not selected)
	@$(BIN)/pulumi stack --stack demo --show-name --non-interactive >/dev/null 2>&1 \
	  || $(BIN)/pulumi stack init demo --no-select --non-interactive

bench: venv ## run the quick benchmarks and print their figures
	$(BIN)/python -m bench

bench-twin: venv twin-deps ## the digital twin benchmark (root; a few minutes)
	$(BIN)/python -m bench.bench_twin

bench-preview: setup ## the Pulumi preview benchmark (several minutes)
	$(BIN)/python -m bench.bench_preview

clean: ## remove the venv, Pulumi state and caches (not the engine cache)
	rm -rf $(VENV) .state .pytest_cache .mypy_cache .ruff_cache .hypothesis
