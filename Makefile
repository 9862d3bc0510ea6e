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
MATHJAX_SRC := node_modules/mathjax/es5
MATHJAX_OUT := _build/assets/mathjax/tex-mml-chtml.js
# Vega, Vega-Lite and vega-embed, for the Jacobian explorer, the same way (<site>/vega/).
VEGA_OUT := _build/assets/vega/vega-embed.min.js

.PHONY: help assets book test serve clean bench lab lock venv translations pdf check-book check-test \
	notebooks release-notes linkcheck

# The targets and what they do, from the '## ' comments on their lines.
help:
	@sed -n 's/^\([a-z-]*\):.*## \(.*\)/  make \1\t\2/p' $(MAKEFILE_LIST) | expand -t 22

venv: $(STAMP)  ## make .venv from the pins

# What the machine must provide (a Python with venv, npm, a CJK font; for the
# tests Chromium and pdftoppm), checked before any work: one message, one
# install command (bookbuild/prereqs.py).
check-book:
	@$(BOOT) -m bookbuild.prereqs book $(if $(PYTHON),--python "$(PYTHON)")
check-test:
	@$(BOOT) -m bookbuild.prereqs test $(if $(PYTHON),--python "$(PYTHON)")

# (Re)create the virtual environment when a pin changes (bookbuild/venv.py:
# which Python, and uv installing the exact pins).
$(STAMP): requirements.txt requirements-dev.txt constraints.txt pyproject.toml bookbuild/venv.py | check-book
	@$(BOOT) bookbuild/venv.py --venv $(VENV) $(if $(PYTHON),--python "$(PYTHON)")

$(MATHJAX_SRC)/tex-mml-chtml.js: package.json package-lock.json | check-book
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

$(MATHJAX_OUT): $(MATHJAX_SRC)/tex-mml-chtml.js | $(STAMP)
	$(BIN)/python -m bookbuild mathjax

$(VEGA_OUT): $(MATHJAX_SRC)/tex-mml-chtml.js | $(STAMP)
	$(BIN)/python -m bookbuild vega

# Only Sphinx needs MathJax and Vega: `make book` makes them (`assets`, in a
# second make) while the pages execute, and waits for them before Sphinx.
assets: $(MATHJAX_OUT) $(VEGA_OUT)

# Execute the pages that changed (in parallel, into jupyter-cache) and build
# both editions from the cache. What changed, and so what must run again, is
# decided by content digests in bookbuild/pipeline.py (README.md, "How
# rebuilds work").
book: check-book $(STAMP)  ## run the changed pages and build both editions
	@MAKE="$(MAKE)" $(BIN)/python -m bookbuild book

# The whole book as one PDF per edition, _build/pdf/matgrad-{en,zh_CN}.pdf:
# single-page HTML from the same doctrees and cache, printed by Chromium
# (bookbuild/pdf.py); the site then links to both. `make book` removes them
# when the site changes (a PDF is never older than the site that links it).
pdf: book  ## both editions as PDFs (_build/pdf/)
	$(BIN)/python -m bookbuild.pdf

# Two pytest workers (pytest-xdist): the page executions and browser checks
# are independent, and the machine this targets has two cores.
test: check-test book  ## make book, then the tests (tests/README.md)
	$(BIN)/python -m pytest -n 2

serve: book  ## serve the site at http://127.0.0.1:8000/
	@$(BIN)/python -m bookbuild serve

# JupyterLab from the pinned venv; binder/postBuild (the same script Binder runs)
# makes the .md chapters open as notebooks through jupytext.
lab: $(STAMP)  ## JupyterLab, the pages opening as notebooks
	@$(BIN)/python -m bookbuild lab

# After the English changes: extract the messages again (_build/gettext) and
# merge them into locales/zh_CN (new messages empty, changed ones fuzzy), then
# list what needs translating. README.md, "Updating the translation".
translations: $(STAMP)  ## merge changed English into locales/zh_CN
	$(BIN)/python -m bookbuild translations

# The long timings (README.md, "Other targets"); the pages count, not time.
bench: book  ## measure builds, the PDFs and the long timings
	@$(BIN)/python -m bookbuild bench

notebooks: book  ## every page as an executed notebook, zipped (for a release)
	$(BIN)/python -m bookbuild notebooks

release-notes: $(STAMP)  ## the CHANGELOG section of TAG, which must be v<version>
	@TAG="$(TAG)" $(BIN)/python -m bookbuild release-notes

linkcheck: $(STAMP)  ## check the external links of both editions (needs the network)
	$(BIN)/python -m bookbuild linkcheck

# Refresh constraints.txt: one universal resolve for every supported Python.
lock: $(STAMP)  ## re-resolve constraints.txt after a pin changed
	$(BIN)/python bookbuild/venv.py --lock --venv $(VENV)

# Everything the build and the tests made (not the venv, nor node_modules).
clean:  ## remove _build and caches (keeps .venv, node_modules)
	rm -rf _build .pytest_cache .hypothesis $$(find locales -name '*.mo') $$(find . -name __pycache__ -not -path './.venv*')
