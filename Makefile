# RNNs by hand: set-up, notebooks and checks. `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SLIDES_NPM := build/slides-npm
# JupyterLab reads every file in this folder as default settings (overrides.json there stays the user's).
LAB_OVERRIDES := $(VENV)/share/jupyter/lab/settings/overrides.d/rnns-by-hand.json
NOTEBOOKS := $(sort $(wildcard notebooks/[0-9][0-9]_*.ipynb))
# Kernels from this venv come first, so a `python3` kernelspec in the user's home cannot
# shadow it; jupyter_client runs a spec's `python` with the interpreter that starts it.
export JUPYTER_PATH := $(CURDIR)/$(VENV)/share/jupyter
export PATH := $(CURDIR)/$(BIN):$(PATH)
# JupyterLab refuses to run as root unless told; only then is the flag added.
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: help setup lab present restore test unit nbval hosted release release-check course lint execute parity bench bench-diagnosis mutation compat test-browser slides html handouts clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

setup: $(STAMP) $(LAB_OVERRIDES) ## Create .venv and install requirements.txt and helpers (quick when nothing changed)

$(STAMP): requirements.txt pyproject.toml config/jupyter-server-config.json
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	@# otter-grader (make release) brings jupytext and ipylab, whose JupyterLab extensions students never get:
	@# off, so that make lab and the browser tests show JupyterLab as students see it. The server setting's
	@# file name sorts after jupytext's own, so it wins.
	$(BIN)/jupyter labextension disable --level=sys_prefix jupyterlab-jupytext ipylab >/dev/null 2>&1
	cp config/jupyter-server-config.json $(VENV)/etc/jupyter/jupyter_server_config.d/rnns-by-hand.json
	@touch $@

# config/jupyterlab-overrides.json: JupyterLab starts without asking about Jupyter news and never
# checks for updates (no pop-up in class, no request to jupyter.org).
$(LAB_OVERRIDES): config/jupyterlab-overrides.json $(STAMP)
	@mkdir -p $(@D)
	cp $< $@

lab: setup ## Start JupyterLab on 127.0.0.1 (with a token), opened on notebooks/, with no news pop-up
	$(BIN)/jupyter lab --ip=127.0.0.1 $(ALLOW_ROOT) --ServerApp.root_dir=$(CURDIR) \
		--ServerApp.default_url=/lab/tree/notebooks

present: setup ## JupyterLab set for a projector (config/presenting.json: 22px text, 20px code that wraps, 18px controls); your own settings stay as they are
	$(BIN)/python tools/present_settings.py build/present/settings
	JUPYTERLAB_SETTINGS_DIR=$(CURDIR)/build/present/settings $(BIN)/jupyter lab --ip=127.0.0.1 $(ALLOW_ROOT) \
		--ServerApp.root_dir=$(CURDIR) --ServerApp.default_url=/lab/tree/notebooks

restore: ## Put NB=notebooks/NN_name.ipynb back as committed; yours is kept in notebooks/backups/ (dated)
	@bash tools/restore_notebook.sh "$(NB)"

test: setup lint slides unit nbval hosted release-check ## Lint, build the slides, unit tests, every notebook's stored outputs (strict nbval), the hosted checks, a grading round trip

unit: setup ## Unit and property tests of helpers (one process: two workers fight over torch's two threads)
	$(BIN)/python -m pytest -q tests

nbval: setup ## Re-run every notebook and compare each cell with its stored output (strict)
	$(BIN)/python -m pytest -q -n 2 --dist loadfile -p no:cacheprovider --nbval \
		--nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg $(NOTEBOOKS)

# Its venv is kept in ~/.cache/rnns-by-hand/ (about 1.5 GB) under a hash of the requirements: quick on a rerun.
hosted: setup ## As students outside this repo get it: build the wheel; Binder's install steps in a fresh venv, then a notebook; a notebooks-only folder where the first cell installs the wheel; notebooks 01, 08, 13 there
	$(BIN)/python tools/hosted.py

release: setup ## A course release in build/release/: student/ (notebooks, a package with a sealed answer key), autograder/ (Otter-Grader zips); grades every notebook filled in right and partly wrong
	$(BIN)/python tools/release.py --round-trip

release-check: setup ## make release for notebook 01 only, into build/release-check (part of make test; make release grades all 13)
	$(BIN)/python tools/release.py --round-trip --notebooks 01 --out build/release-check

lint: setup ## ruff over helpers, tests, benchmarks, tools, slides and notebooks
	$(BIN)/ruff check setup.py helpers tests benchmarks tools slides notebooks
	$(BIN)/ruff format --check setup.py helpers tests benchmarks tools slides

execute: setup ## Re-run notebooks in place to refresh outputs, without this machine's paths (NB=path for one; FORCE=1 to overwrite uncommitted edits)
	@targets="$(or $(NB),$(NOTEBOOKS))"; \
	if [ "$(FORCE)" != 1 ]; then \
	  for nb in $$targets; do \
	    if ! git ls-files --error-unmatch "$$nb" >/dev/null 2>&1 || [ -n "$$(git status --porcelain -- "$$nb")" ]; then \
	      echo "make execute: $$nb has changes that are not committed; executing would overwrite"; \
	      echo "  them with fresh outputs. Commit them first, or run 'make execute FORCE=1'."; \
	      exit 1; \
	    fi; \
	  done; \
	fi; \
	for nb in $$targets; do \
	  echo "executing $$nb"; \
	  $(BIN)/jupyter nbconvert --to notebook --execute --inplace \
	    --ExecutePreprocessor.timeout=120 --ExecutePreprocessor.record_timing=False --ExecutePreprocessor.kernel_name=python3 "$$nb" || exit 1; \
	  $(BIN)/python tools/clean_outputs.py "$$nb" || exit 1; \
	done

test-browser: setup slides html handouts ## Headless Chromium: widget notebooks in JupyterLab and Voila (build/browser), every slide deck offline (build/slides-screenshots), the handout PDFs, accessibility (axe-core, keyboard: build/accessibility)
	@test -x /usr/bin/chromium || { apt-get update && apt-get install -y chromium; }
	$(BIN)/python -m pytest -v -p no:cacheprovider -n 2 --dist loadgroup tests/browser

slides: setup $(SLIDES_NPM)/.installed ## One offline reveal.js deck per notebook, and an index: build/slides/index.html
	$(BIN)/python slides/build.py --npm $(SLIDES_NPM)/node_modules --out build/slides $(NOTEBOOKS)

# The pages load MathJax, require.js and the widget renderer from build/slides/vendor (relative paths).
html: slides ## Each notebook as one accessible page, offline: build/html/NN_name.html (figures with alt text, named widget controls)
	$(BIN)/python slides/build.py --npm $(SLIDES_NPM)/node_modules --out build/slides --html build/html $(NOTEBOOKS)

# A course from part of the series: PLAN=3 or PLAN=6 (notebooks/course.yml), or NB="01 02 07".
COURSE := build/course-$(or $(PLAN),$(subst $(eval) ,-,$(strip $(NB))))
course: slides ## A course from part of the series (PLAN=3, PLAN=6 or NB="01 02 07"): $(COURSE)/notebooks, slides, handouts; references to notebooks left out lead online
	@test -n "$(PLAN)$(NB)" || { echo 'make course: say PLAN=3, PLAN=6 or NB="01 02 07"'; exit 1; }
	@test -x /usr/bin/chromium || { apt-get update && apt-get install -y chromium; }
	$(BIN)/python slides/course.py $(if $(PLAN),--plan $(PLAN),--notebooks $(NB)) --out $(COURSE)
	$(BIN)/python slides/build.py --npm $(SLIDES_NPM)/node_modules --out $(COURSE)/slides $(if $(PLAN),--plan $(PLAN)) $(COURSE)/notebooks/[0-9][0-9]_*.ipynb
	$(BIN)/python slides/handouts.py --slides $(COURSE)/slides --out $(COURSE)/handouts
	$(BIN)/python slides/build.py --npm $(SLIDES_NPM)/node_modules --out $(COURSE)/slides $(if $(PLAN),--plan $(PLAN)) $(COURSE)/notebooks/[0-9][0-9]_*.ipynb

# Printed with Debian's Chromium (installed here if missing), from the decks, offline. The second
# build.py run only rewrites the index (no deck is stale), which then links the PDFs.
handouts: slides html ## Print each deck to build/handouts/NN_name.pdf (a page per slide) and NN_name-notes.pdf (with notes), and each notebook as NN_name-article.pdf (A4)
	@test -x /usr/bin/chromium || { apt-get update && apt-get install -y chromium; }
	$(BIN)/python slides/handouts.py --slides build/slides --out build/handouts
	$(BIN)/python slides/articles.py --html build/html --out build/handouts --copies build/slides/handouts
	$(BIN)/python slides/build.py --npm $(SLIDES_NPM)/node_modules --out build/slides $(NOTEBOOKS)

# reveal.js, require.js, jQuery, MathJax and the widget renderer, at slides/package-lock.json's versions;
# and axe-core, which only the accessibility test loads (from here, never copied into the decks).
$(SLIDES_NPM)/.installed: slides/package.json slides/package-lock.json
	@command -v npm >/dev/null || { apt-get update && apt-get install -y nodejs npm; }
	@mkdir -p $(SLIDES_NPM) && cp slides/package.json slides/package-lock.json $(SLIDES_NPM)/
	cd $(SLIDES_NPM) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	@touch $@

parity: setup ## Measure the worst difference between helpers.unroll and torch over many modules
	$(BIN)/python benchmarks/parity.py

bench: setup ## Time a slider change: in the kernel (vs a naive redraw) and key press to picture in JupyterLab; the cells that train; each notebook's kernel memory and time, the server's memory
	MPLBACKEND=Agg $(BIN)/python benchmarks/widgets.py
	@test -x /usr/bin/chromium || { apt-get update && apt-get install -y chromium; }
	PYTHONPATH=slides $(BIN)/python benchmarks/browser.py notebooks/01_scalar_rnn.ipynb notebooks/10_lstm.ipynb
	$(BIN)/python benchmarks/notebook_cells.py notebooks/09_sequence_model.ipynb notebooks/13_text_to_predictions.ipynb
	PYTHONPATH=slides $(BIN)/python benchmarks/resources.py

# benchmarks/wrong_versions.py: the wrong versions, written without reading helpers/bugs.py; report in build/diagnosis-quality/.
bench-diagnosis: setup ## Wrong and right student versions through check_code and diagnose (the tuning set, then six sets written later; the last, blind4, written blind to the checks and run once): named, vague, misleading, missed
	$(BIN)/python benchmarks/diagnosis_quality.py
	$(BIN)/python benchmarks/diagnosis_quality.py --set holdout
	$(BIN)/python benchmarks/diagnosis_quality.py --set fresh
	$(BIN)/python benchmarks/diagnosis_quality.py --set blind
	$(BIN)/python benchmarks/diagnosis_quality.py --set blind2
	$(BIN)/python benchmarks/diagnosis_quality.py --set blind3
	$(BIN)/python benchmarks/diagnosis_quality.py --set blind4

# tools/mutation.py: each test file's coverage (which tests run which line) is kept in build/mutation/coverage/
# and mapped again only when helpers/ or that file changes; each mutant then runs only the tests of its line.
mutation: setup ## Mutation testing of diagnosis, packing, checks and exercises: the score per module and every survivor (build/mutation/report.txt); fails under 90%
	$(BIN)/python tools/mutation.py --modules diagnosis packing checks exercises --minimum 90

# Throwaway venvs under build/compat/ (about 5 GB each while they exist): not part of make test.
compat: setup ## Unit tests and hosted checks (must pass), nbval (report only), on the oldest torch pyproject.toml accepts and the newest on PyPI
	$(BIN)/python tools/compat.py

clean: ## Remove the venv and caches (notebooks and sources are untouched)
	rm -rf $(VENV) .pytest_cache .hypothesis .ruff_cache build *.egg-info
