# The book's two commands are `make book` and `make test`; see README.md.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := book

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.matgrad-installed
HTML   := _build/html
# MathJax is copied from node_modules into a folder that Sphinx's html_extra_path
# serves at <site>/mathjax/, so math renders with no network (see _config.yml).
ASSETS := _build/assets
MATHJAX_SRC := node_modules/mathjax/es5
MATHJAX_OUT := $(ASSETS)/mathjax/tex-mml-chtml.js
JB_FLAGS := -W -n --keep-going

.PHONY: book test serve clean bench lab lock venv

venv: $(STAMP)

# (Re)create the virtual environment when a pin changes.
$(STAMP): requirements.txt requirements-dev.txt constraints.txt pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "matgrad needs Python 3.11 (found " + sys.version.split()[0] + "); set PYTHON=/path/to/python3.11")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt -c constraints.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	@touch $@

$(MATHJAX_SRC)/tex-mml-chtml.js: package.json package-lock.json
	@command -v npm >/dev/null || { echo "error: npm is needed to install MathJax (math is served from the book, not a CDN). Install Node.js/npm, e.g. 'apt-get install npm'." >&2; exit 1; }
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

$(MATHJAX_OUT): $(MATHJAX_SRC)/tex-mml-chtml.js
	rm -rf $(ASSETS)/mathjax && mkdir -p $(ASSETS)/mathjax/output
	cp $(MATHJAX_SRC)/tex-mml-chtml.js $(ASSETS)/mathjax/
	cp -r $(MATHJAX_SRC)/input $(MATHJAX_SRC)/ui $(MATHJAX_SRC)/a11y $(ASSETS)/mathjax/
	cp -r $(MATHJAX_SRC)/output/chtml $(MATHJAX_SRC)/output/chtml.js $(ASSETS)/mathjax/output/

# Execute every page (jupyter-cache: only changed pages rerun) and build the HTML.
# When a page fails, print its execution report (failing cell and traceback).
# jupyter-cache re-executes a page only when its own code changes, but every
# page imports matgrad: when the package changes, clear the execution cache
# (and Sphinx's environment) so that no page keeps outputs of the old code.
PKG_SOURCES := $(shell find src/matgrad -name '*.py' 2>/dev/null)
PKG_STAMP := _build/.matgrad-sources

$(PKG_STAMP): $(PKG_SOURCES)
	@if [ -e $@ ]; then echo "matgrad changed: every page will be executed again"; fi
	rm -rf _build/.jupyter_cache _build/jupyter_execute _build/.doctrees
	@mkdir -p _build && touch $@

# Sphinx re-reads only changed pages, so after a failed build an unchanged
# failing page would be skipped and the next build would pass with the page's
# outputs missing. Unless the last build succeeded, forget Sphinx's saved
# environment: every page is re-read (executed ones still come from the cache).
BOOK_OK := _build/.book-succeeded

book: $(STAMP) $(MATHJAX_OUT) $(PKG_STAMP)
	@[ -e $(BOOK_OK) ] || rm -rf _build/.doctrees
	@rm -rf $(HTML)/reports $(BOOK_OK)
	@$(BIN)/python _ext/execute_pages.py
	@$(BIN)/jupyter-book build . $(JB_FLAGS) && touch $(BOOK_OK) || { \
	  status=$$?; \
	  for f in $$(find $(HTML)/reports -name '*.log' 2>/dev/null | sort); do \
	    echo; echo "===== execution report: $$f"; cat "$$f"; done; \
	  echo "make book: the build failed (exit $$status); reports above." >&2; exit $$status; }

test: book
	$(BIN)/python -m pytest

serve: book
	@echo "Serving $(HTML) at http://127.0.0.1:8000/ (Ctrl-C to stop)"
	$(BIN)/python -m http.server 8000 --bind 127.0.0.1 --directory $(HTML)

# JupyterLab from the pinned venv; binder/postBuild (the same script Binder runs)
# makes the .md chapters open as notebooks through jupytext.
lab: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" bash binder/postBuild
	$(BIN)/jupyter lab --ServerApp.ip=127.0.0.1

bench: book
	$(BIN)/python benchmarks/build_time.py
	$(BIN)/python benchmarks/jacobians.py

# Refresh constraints.txt from a fresh resolve of the top-level pins.
lock:
	rm -rf _build/lockenv && $(PYTHON) -m venv _build/lockenv
	_build/lockenv/bin/python -m pip install --quiet -r requirements-dev.txt
	{ echo "# The full set that CI and Binder install, resolved from requirements-dev.txt on"; \
	  echo "# Linux x86_64 / Python 3.11. Regenerate with 'make lock' after changing a pin."; \
	  _build/lockenv/bin/python -m pip freeze --exclude-editable; } > constraints.txt
	rm -rf _build/lockenv

clean:
	rm -rf _build .pytest_cache .hypothesis
	find . -name __pycache__ -not -path './$(VENV)/*' -prune -exec rm -rf {} +
