# OL2R Book: `make book` builds the whole book on the default data, `make test` runs the tests.
# Both create the virtual environment (.venv) and install everything on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PROFILE ?= quick
MATHJAX_VERSION := 3.2.2

.PHONY: book test browser-test env mathjax benchmarks lint clean assignments bubblewrap chromium pdf

$(BIN)/olr: requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt
	$(BIN)/pip install --quiet --no-deps -e .
	touch $(BIN)/olr

env: $(BIN)/olr

# MathJax is served from the build's root (html_extra_path), not from _static: Jupyter Book adds
# every .js file under _static to every page, which would load the whole distribution.
_mathjax/mathjax/tex-chtml.js:
	npm install --silent --no-save --no-audit --no-fund --prefix .build-tools mathjax@$(MATHJAX_VERSION)
	mkdir -p _mathjax/mathjax
	cp -r .build-tools/node_modules/mathjax/es5/. _mathjax/mathjax/

mathjax: _mathjax/mathjax/tex-chtml.js

book: env mathjax
	$(BIN)/olr book --profile $(PROFILE)

# Two workers (pytest-xdist); --dist loadfile keeps each notebook's cells, which run in order, on one worker.
# The grader's tests need Debian's bubblewrap (each graded notebook runs in its namespaces), installed here when
# missing, as root or with sudo; without it the grading tests fail rather than grade unconfined.
test: env bubblewrap
	OLR_RESULTS_DIR=$$(mktemp -d) $(BIN)/python -m pytest -q -p no:cacheprovider -n 2 --dist loadfile tests notebooks \
		--nbval-lax --nbval-current-env

bubblewrap:
	@if [ ! -x /usr/bin/bwrap ]; then \
		echo "installing Debian's bubblewrap (the grading sandbox)"; \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq bubblewrap >/dev/null; \
	fi

# Debian's chromium and chromium-driver (headless), installed here when missing, as root or with sudo.
chromium:
	@if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then \
		echo "installing Debian's chromium and chromium-driver"; \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium chromium-driver >/dev/null; \
	fi

# The whole book as one PDF (after make book): the single-page HTML build printed by headless Chromium into
# _build/html/ol2r-book.pdf; the HTML book is then built again (incrementally) so that the intro links it.
pdf: env mathjax chromium
	$(BIN)/python -m olr_book.pdf

# The built book in headless Chromium: the checker's own tests on planted faults, then every page of _build/html
# (the intro's link to the PDF included); screenshots in _build/screenshots.
browser-test: env mathjax chromium
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/browser
	$(BIN)/python -m olr_book.browsercheck _build/html --screenshots _build/screenshots

# The graded assignments: student notebooks (to hand out) and autograders (private) in _build/assignments,
# from the solution notebooks in assignments/ (otter-grader's Otter Assign); grade with 'olr course grade DIR'.
assignments: env bubblewrap
	$(BIN)/olr course build

benchmarks: env
	$(BIN)/python benchmarks/run_all.py

lint: env
	$(BIN)/ruff check .

clean:
	rm -rf _build book/generated results
