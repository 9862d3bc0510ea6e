# The book's two commands are `make book` and `make test`; see README.md.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := book

# The interpreter: PYTHON=/path/to/python chooses one; otherwise bookbuild/venv.py
# takes the first supported one on PATH (3.11 from 3.11.2, 3.12, 3.13).
PYTHON ?=
BOOT   := $(or $(PYTHON),$(shell command -v python3 || command -v python))
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

.PHONY: book test serve clean bench lab lock venv translations

venv: $(STAMP)

# (Re)create the virtual environment when a pin changes (bookbuild/venv.py:
# which Python, and uv installing the exact pins).
$(STAMP): requirements.txt requirements-dev.txt constraints.txt pyproject.toml bookbuild/venv.py
	@$(BOOT) bookbuild/venv.py --venv $(VENV) $(if $(PYTHON),--python "$(PYTHON)")

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
# jupyter-cache re-executes a page only when its own code changes, but every
# page imports matgrad: when the package changes, clear the execution cache
# (and Sphinx's environment) so that no page keeps outputs of the old code.
PKG_SOURCES := $(shell find src/matgrad -name '*.py' 2>/dev/null)
PKG_STAMP := _build/.matgrad-sources

$(PKG_STAMP): $(PKG_SOURCES)
	@if [ -e $@ ]; then echo "matgrad changed: every page will be executed again"; fi
	rm -rf _build/.jupyter_cache _build/jupyter_execute _build/.doctrees _build/zh_CN
	@mkdir -p _build && touch $@

# Work that cannot matter is skipped, by content digests (sha256 of every file,
# not modification times):
# - EXEC_INPUTS decide what runs: when their digest equals the one saved after
#   the last pre-execution in which every page passed, nothing needs running
#   (the stamp lives in the cache folder, so clearing the cache clears it).
# - SITE_INPUTS are everything that feeds the site: when their digest equals
#   the one saved by the last successful build, the site is up to date.
EXEC_INPUTS := index.md chapters further appendix _config.yml _toc.yml src/matgrad
SITE_INPUTS := $(EXEC_INPUTS) _static _ext $(wildcard locales) Makefile \
               requirements.txt requirements-dev.txt constraints.txt package-lock.json
digest = find $(1) -type f -not -path '*/__pycache__/*' -not -path '*/.ipynb_checkpoints/*' \
         -not -name '*.pyc' -not -name '*.ipynb' -not -name '*.mo' -print0 | LC_ALL=C sort -z \
         | xargs -0 sha256sum | sha256sum | cut -d' ' -f1
EXEC_OK := _build/.jupyter_cache/.executed-inputs
# Sphinx re-writes a page only when the page (or the configuration) changed;
# a change in the book's own extension or static files must reach every page
# too, so when their digest differs from the last successful build's, every
# page is rebuilt (--all; executed pages still come from the cache).
CODE_INPUTS := _ext _static
CODE_OK := _build/.site-code
# Sphinx re-reads only changed pages, so after a failed build an unchanged
# failing page would be skipped and the next build would pass with the page's
# outputs missing. BOOK_OK exists only after a successful build (it holds the
# digest of SITE_INPUTS); without it, Sphinx's saved environment is forgotten
# and every page is re-read (executed ones still come from the cache).
BOOK_OK := _build/.book-succeeded
# The Sphinx builds: English (_build/html) and Chinese (_build/html/zh_CN),
# side by side, both from the execution cache (_ext/build_site.py).
JB_BUILD = $(BIN)/python _ext/build_site.py $$all

book: $(STAMP) $(MATHJAX_OUT) $(PKG_STAMP)
	@site=$$($(call digest,$(SITE_INPUTS))); \
	if [ -e $(BOOK_OK) ] && [ -e $(HTML)/index.html ] && [ "$$(cat $(BOOK_OK))" = "$$site" ]; then \
	  echo "make book: nothing changed since the last successful build ($(HTML))"; exit 0; fi; \
	[ -e $(BOOK_OK) ] || rm -rf _build/.doctrees _build/zh_CN/.doctrees; \
	rm -rf $(HTML)/reports _build/zh_CN/html/reports $(BOOK_OK); \
	code=$$($(call digest,$(CODE_INPUTS))); all=; \
	[ -e $(CODE_OK) ] && [ "$$(cat $(CODE_OK))" = "$$code" ] || all=--all; \
	exec=$$($(call digest,$(EXEC_INPUTS))); \
	if [ ! -e $(EXEC_OK) ] || [ "$$(cat $(EXEC_OK))" != "$$exec" ]; then \
	  $(BIN)/python _ext/execute_pages.py; echo "$$exec" > $(EXEC_OK); fi; \
	if $(JB_BUILD); then \
	  echo "$$site" > $(BOOK_OK); echo "$$code" > $(CODE_OK); \
	else \
	  status=$$?; \
	  for f in $$(find $(HTML)/reports _build/zh_CN/html/reports -name '*.log' 2>/dev/null | sort); do \
	    echo; echo "===== execution report: $$f"; cat "$$f"; done; \
	  echo "make book: the build failed (exit $$status); reports above." >&2; exit $$status; fi

# Two pytest workers (pytest-xdist): the page executions and browser checks
# are independent, and the machine this targets has two cores.
test: book
	$(BIN)/python -m pytest -n 2

serve: book
	@echo "Serving $(HTML) at http://127.0.0.1:8000/ (English) and http://127.0.0.1:8000/zh_CN/ (中文); Ctrl-C stops"
	$(BIN)/python -m http.server 8000 --bind 127.0.0.1 --directory $(HTML)

# JupyterLab from the pinned venv; binder/postBuild (the same script Binder runs)
# makes the .md chapters open as notebooks through jupytext.
lab: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" bash binder/postBuild
	$(BIN)/jupyter lab --ServerApp.ip=127.0.0.1 $$([ "$$(id -u)" = 0 ] && echo --allow-root)

# After the English changes: extract the messages again (_build/gettext) and
# merge them into locales/zh_CN (new messages empty, changed ones fuzzy), then
# list what needs translating. README.md, "Updating the translation".
translations: $(STAMP)
	$(BIN)/python _ext/execute_pages.py
	$(BIN)/python _ext/build_site.py --gettext
	$(BIN)/sphinx-intl update -p _build/gettext -l zh_CN -d locales -w 0 | grep -v '^Not Changed' || true
	$(BIN)/python _ext/build_site.py --drop-obsolete
	$(BIN)/python tests/i18n_checks.py | tail -n 40 || true  # a list of work, not a failure

bench: book
	$(BIN)/python benchmarks/build_time.py
	$(BIN)/python benchmarks/jacobians.py

# Refresh constraints.txt: one universal resolve for every supported Python.
lock: $(STAMP)
	$(BIN)/python bookbuild/venv.py --lock --venv $(VENV)

clean:
	rm -rf _build .pytest_cache .hypothesis
	find locales -name '*.mo' -delete 2>/dev/null || true
	find . -name __pycache__ -not -path './$(VENV)/*' -prune -exec rm -rf {} +
