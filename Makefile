# sandloop: `make help` lists the targets.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml constraints.txt | cksum | cut -d' ' -f1)
TARGET ?=
ARGS ?=
SEED ?= 7
# make eval's issue-15 cases: banks without result.csv and short scans (EVAL_CASES= for the banks only)
EVAL_CASES ?= --cases

.DEFAULT_GOAL := help
.PHONY: help install run run-all eval eval-intake check images serve test test-unit test-docker bench lint docs lock clean
.PHONY: stack stack-down
.PHONY: fuzz llm-smoke gvisor test-gvisor
.PHONY: k8s-images k8s-manifests k8s-smoke

help: ## List the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "sandloop needs Python 3.11 or newer; set PYTHON=/path/to/python3.11")'
	@echo "==> installing into $(VENV) (first run only)"
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install -q --upgrade pip
	@$(PY) -m pip install -q -c constraints.txt -e '.[dev]'
	@rm -f $(VENV)/.installed-* && touch $@

install: $(STAMP) ## Create the virtual environment and install sandloop into it

run: $(STAMP) ## Run the agent on data/$(TARGET): make run TARGET=icici [ARGS="--max-attempts 5"]
	@if [ -z "$(TARGET)" ]; then echo "usage: make run TARGET=<name>   (targets: $$(ls data | tr '\n' ' '))"; exit 2; fi
	@$(PY) -m controller run --target "$(TARGET)" $(ARGS)

run-all: $(STAMP) ## Run the agent on every target in data/, SBX_PARALLEL_RUNS (default 2) at a time
	@$(PY) -m controller run --all $(ARGS)

# make eval: a fresh folder under .cache/eval per run (the 5 newest are kept), so evals never
# share files; exit 0 once the corpus ran (its pass rate is the result), 2/3 on usage or
# environment errors. It ends with "N passed, M failed" and then the same per class of case
# (text, no result.csv, scan: tools/eval_classes.py).
eval: $(STAMP) ## Generate the synthetic corpus (SEED=7) and run the agent on every bank in it
	@set -e; mkdir -p .cache/eval; dir=$$(mktemp -d .cache/eval/run-XXXXXX); \
	ls -dt .cache/eval/run-* | tail -n +6 | xargs -r rm -rf; \
	echo "==> synthetic corpus (seed $(SEED)) and its runs: $$dir"; \
	$(PY) -m tests.corpus.generate --out "$$dir/data" --seed "$(SEED)" $(EVAL_CASES) >/dev/null; \
	status=0; SBX_DATA_DIR="$$dir/data" SBX_RUNS_DIR="$$dir/runs" SBX_PARSERS_DIR="$$dir/custom_parsers" \
	  $(PY) -m controller run --all $(ARGS) || status=$$?; \
	if [ $$status -gt 1 ]; then exit $$status; fi; \
	$(PY) -m tools.eval_classes "$$dir/data" "$$dir/runs"

eval-intake: $(STAMP) ## Run the intake agent's corpora (conversations: tests/intake_corpus; replies: tests/intake_replies); print the rates per class
	@$(PY) -m tests.intake_corpus $(ARGS)
	@$(PY) -m tests.intake_replies $(ARGS)

check: $(STAMP) ## Check existing parsers: make check TARGET=icici PARSER="custom_parsers/icici_parser.py more/"
	@if [ -z "$(TARGET)" ] || [ -z "$(PARSER)" ]; then echo "usage: make check TARGET=<name> PARSER=\"<file or folder>...\""; exit 2; fi
	@$(PY) -m controller check --target "$(TARGET)" --parser $(PARSER) $(ARGS)

images: $(STAMP) ## Build every sandbox image that is missing (bootstraps the base if needed)
	@$(PY) -m controller images

llm-smoke: $(STAMP) ## Each agent's OpenAI-compatible path against a real small model (SmolLM2 on llama.cpp; first use compiles it, 10-20 min)
	@$(PY) -m tools.llm_smoke

serve: $(STAMP) ## The service on 127.0.0.1:9466: runs over HTTP (/docs), /metrics, /healthz, /readyz [ARGS="--port 8080"]
	@$(PY) -m controller serve $(ARGS)

# make test: first the host programs a few tests drive (Tesseract, PostgreSQL, Chromium), installed
# with apt-get when missing on a Debian machine as root, else named in one line (tools/host_packages.py).
# --durations: the 25 slowest tests, printed before the summary line (where CI's time goes).
# XDIST: parallel by default (pytest-xdist): the integration tests that use the engine in order on one
# worker, started first; the unit tests and the engine-free integration folders on the others meanwhile
# (tests/conftest.py). Every item has an id of its own, or the run stops (a shared id ran once).
# XDIST= runs it serially.
XDIST ?= -n auto --dist loadgroup
test: $(STAMP) ## Run the whole test suite (unit and integration against the Docker engine, in parallel) [XDIST= serially]
	@$(PY) -m tools.host_packages
	@$(PY) -m pytest $(XDIST) --durations=25 -m "not gvisor"

# make test-gvisor: the sandbox's guarantees under gVisor (issue 45): the same tests as under runc
# (hostile parsers and inputs, limits and isolation, warm pool, handed containers), not copies,
# with every container created under runsc, plus tests/integration/gvisor (the kernel, an ICICI run).
# Needs runsc registered with the engine (make gvisor); without it they skip (fail when CI=true).
GVISOR_TESTS = tests/integration/gvisor tests/integration/hostile tests/integration/sandbox/test_docker_guarantees.py \
	tests/integration/sandbox/test_warm_pool.py tests/integration/sandbox/test_warm_offer.py
test-gvisor: $(STAMP) ## The hostile suites, the sandbox's limits, warm pool and handed containers, and an ICICI run, all under gVisor (runsc)
	@SBX_SANDBOX_RUNTIME=runsc $(PY) -m pytest --durations=10 $(GVISOR_TESTS)

# make gvisor: Debian's runsc installed (apt-get, as root) and registered with the running engine
# (daemon.json merged and backed up, SIGHUP: no restart); idempotent. GVISOR_PLATFORM=systrap or kvm
# where the installed runsc and the machine support them (docs/sandbox.md).
gvisor: $(STAMP) ## Install gVisor's runsc (Debian) and register it with the Docker engine [GVISOR_PLATFORM=ptrace]
	@$(PY) -m tools.gvisor

test-unit: $(STAMP) ## Run only the tests that need no Docker, in parallel [XDIST= serially]
	@$(PY) -m pytest $(XDIST) tests/unit

FUZZ_SECONDS ?= 60
fuzz: $(STAMP) ## Fuzz every decoder of untrusted bytes for FUZZ_SECONDS (60) in all; ends "N passed, M failed"
	@$(PY) -m tests.fuzz.run --seconds "$(FUZZ_SECONDS)" $(ARGS)

lint: $(STAMP) ## ruff (unused or undefined names, bugbear, sorted imports, pyupgrade, simplify, lines of 120 at most), vulture (dead code: vulture_allowlist.py), import-linter (the layers of docs/architecture.md), mypy --strict
	@$(PY) -m ruff check controller agents sandbox_images tests tools
	@$(PY) -m vulture
	@$(VENV)/bin/lint-imports --no-cache
	@$(PY) -m mypy

# make docs: under CI (CI=true, .ci/run) the references are checked, not rewritten, so a drifted
# committed file fails the build instead of being fixed in CI's checkout only. No --quiet: it
# raises mkdocs' log level past WARNING, so strict mode counts no warning (mkdocs issue 4126)
# and a broken link or anchor passed; the INFO lines are filtered out instead.
docs: $(STAMP) ## Regenerate docs/reference/ (settings, CLI, API) and build the site into site/ with mkdocs --strict (offline)
	@$(PY) -m tools.docs_gen $(if $(filter true,$(CI)),--check)
	@set -o pipefail; NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict 2>&1 | { grep -v '^INFO ' || true; }
	@echo "==> site/index.html"

bench: $(STAMP) ## Time the ICICI parser in-process, as a fresh process, in cold and warm sandboxes (phases); check of 100 parsers; a warm run; a scan's parser (peak memory, time a page); the service (first event, overhead, 100 queued runs); the console (10,000 runs, 1,000,000 lines, a node's end); runsc against runc (cold, warm, check) when the engine lists it
	@$(PY) -m tools.bench
	@$(PY) -m tools.bench_scan
	@$(PY) -m tools.bench_intake_reply
	@$(PY) -m tools.bench_service
	@$(PY) -m tools.bench_console

# The observability stack (deploy/): exporter, Prometheus, Pushgateway, Grafana.
# STACK_IMAGES=debian builds Prometheus and the Pushgateway from Debian's packages and leaves
# Grafana out (for machines that cannot pull images); see docs/observability.md.
COMPOSE ?= $(shell if docker compose version >/dev/null 2>&1; then echo "docker compose"; else echo docker-compose; fi)
STACK_IMAGES ?= official
STACK_FILES := -f deploy/docker-compose.yml $(if $(filter debian,$(STACK_IMAGES)),-f deploy/docker-compose.debian.yml)

stack: $(STAMP) ## Start exporter, Prometheus, Pushgateway, Grafana (STACK_IMAGES=debian: no registry)
	@mkdir -p runs
	@$(PY) -m controller.platform.observability.exporter_image deploy/images/exporter/wheels
	@$(COMPOSE) -p sandloop $(STACK_FILES) up -d --build
	@echo "==> exporter http://127.0.0.1:9466/metrics  prometheus http://127.0.0.1:9090  pushgateway http://127.0.0.1:9091$(if $(filter debian,$(STACK_IMAGES)),,  grafana http://127.0.0.1:3000)"
	@echo "    runs push their result with SBX_OBSERVABILITY__PUSHGATEWAY_URL=http://127.0.0.1:9091"

stack-down: ## Stop and remove the stack's containers (Prometheus and Grafana data volumes are kept)
	@$(COMPOSE) -p sandloop -f deploy/docker-compose.yml down --remove-orphans

lock: $(STAMP) ## Rewrite constraints.txt from the current environment
	@$(PY) -m pip freeze --exclude-editable | grep -v '^sandloop' > constraints.txt.new && mv constraints.txt.new constraints.txt

clean: ## Remove the virtual environment, caches and run artefacts (keeps images)
	rm -rf $(VENV) .cache runs .pytest_cache site

# Kubernetes (docs/kubernetes.md). k8s-images builds the controller image and every sandbox
# image locally (no registry needed to build) and, with REGISTRY=host/path, tags and pushes
# them there; k8s-manifests prints the deployment with those references (k8s render);
# k8s-smoke deploys to the current kubectl context, runs the ICICI Job and cleans up.
REGISTRY ?=
K8S_OUT ?= .cache/k8s

k8s-images: $(STAMP) ## Build the controller + sandbox images; with REGISTRY=host/path also push them there
	@# exit 2 = an image whose source is missing (idris2 offline): the others are still built and pushed
	@SBX_SANDBOX_BACKEND=docker $(PY) -m controller images || [ $$? -eq 2 ]
	@$(PY) -c 'import sys; from controller.platform.images.controller_image import prepare; from pathlib import Path; prepare(Path(".cache"))'
	@tag=$$($(PY) -c 'from controller.platform.images.controller_image import controller_tag; print(controller_tag("sandloop"))'); \
	  echo "==> building $$tag"; docker build -q -t "$$tag" deploy/images/controller >/dev/null || exit 3; \
	  if [ -n "$(REGISTRY)" ]; then \
	    for image in "$$tag" $$($(PY) -c 'from controller.entry.k8s_render import sandbox_image_tags; from controller.platform.settings import load_settings; print(" ".join(sandbox_image_tags(load_settings()).values()))'); do \
	      if ! docker image inspect "$$image" >/dev/null 2>&1; then echo "skipping $$image (not built)"; continue; fi; \
	      echo "==> pushing $(REGISTRY)/$$image"; docker tag "$$image" "$(REGISTRY)/$$image" && docker push -q "$(REGISTRY)/$$image" || exit 3; \
	    done; \
	  fi

k8s-manifests: $(STAMP) ## Print every object the deployment creates, and one sandbox Pod + ConfigMap (REGISTRY=...)
	@$(PY) -m controller k8s render $(if $(REGISTRY),--registry "$(REGISTRY)")

k8s-smoke: $(STAMP) ## On a real cluster (current kubectl context): deploy, run the ICICI Job, check it passed, clean up
	@tools/k8s-smoke.sh "$(REGISTRY)"
