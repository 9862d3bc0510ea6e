"""Cell outputs are never translation messages.

myst-nb parses a Markdown output (a table that a code cell prints with
``IPython.display.Markdown``) into ordinary paragraphs and tables, and Sphinx
then treats their text like the author's prose: the gettext builder extracts
it into the catalogs, and the Chinese build looks each cell up there. But
what code prints is computed on the machine that builds the book: the last
digits of an error table differ between CPUs, so a catalog written on one
machine shows those cells as "untranslated" on another. Outputs belong to
the code, which is the same on both editions.

This transform marks every text element inside a cell's output as not
translatable, before the gettext builder extracts messages and before
Sphinx's Locale transform (priority 20) and the untranslated-message check
(19) look them up. What the author wrote about an output stays a message:
a figure's caption and its alt text come from the cell's metadata, not from
the output's data.

Errors shown on purpose (cells tagged ``raises-exception``) are rendered as
the exception's type and message, as IPython's ``%xmode Minimal`` prints
them. The frames of a full traceback name files of the machine that built
the book (its checkout, its virtual environment's ``site-packages``), which
no reader has; the type and the message are what the page is about. A
reader who runs the notebook still gets the full traceback.

Figures and tables in the reader's language: a page draws each figure with
``matgrad.plotting`` and shows it with ``matgrad.plotting.show``, which
displays the English figure and puts its Chinese twin (same data, same
numbers, Chinese labels) in the output's metadata,
``{"matgrad": {"zh_CN": {"image/png": ...}}}``; a table that code prints
comes the same way from ``matgrad.tables.markdown_table`` (``text/markdown``).
A translated edition renders the twin instead of the English output. An
output whose twin could not be made (a figure without a CJK font when the
page was executed) stops the build with the reason, rather than showing
English or boxes.

Both are MyST-NB's supported route, a renderer plugin: ``BookRenderer`` is
registered under the ``myst_nb.renderers`` entry point (pyproject.toml) and
chosen by ``nb_render_plugin`` (_config.yml). The entry point names this
module by its name on ``sys.path``, where Jupyter Book puts _ext/ for the
local extensions before any page is read. After a change to the entry point,
``make venv`` installs it again.
"""

from __future__ import annotations

import dataclasses

from docutils import nodes
from myst_nb.core.render import NbElementRenderer
from sphinx.transforms import SphinxTransform

#: Text that the author wrote for an output (``mystnb: figure: caption``).
AUTHORED = (nodes.caption, nodes.legend)
#: Where matgrad.plotting.show and matgrad.tables put an output's twins.
TWIN_KEY = "matgrad"


def output_text_elements(document):
    """The text elements that a cell's output data produced."""
    for container in document.findall(nodes.container):
        if "cell_output" not in container.get("classes", ()):
            continue
        for node in container.findall(nodes.TextElement):
            if not any(isinstance(n, AUTHORED) for n in _self_and_ancestors(node, container)):
                yield node


def _self_and_ancestors(node, stop):
    while node is not None and node is not stop:
        yield node
        node = node.parent


class BookRenderer(NbElementRenderer):
    """MyST-NB's renderer, with minimal errors and outputs in the page's language."""

    def render_error(self, output, cell_metadata, cell_index, source_line):
        """``ename: evalue`` instead of the frames."""
        text = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}".rstrip()
        lexer = self.renderer.get_cell_level_config(
            "render_error_lexer", cell_metadata, line=source_line
        )
        node = self.renderer.create_highlighted_code_block(
            text, lexer, source=self.source, line=source_line
        )
        node["classes"] += ["output", "traceback"]
        return [node]

    def render_mime_type(self, data):
        """The output's twin in the page's language, when the output has twins."""
        twins = (data.output_metadata or {}).get(TWIN_KEY)
        env = self.renderer.sphinx_env
        language = (env.config.language or "en") if env is not None else "en"
        if twins is not None and language != "en":
            # myst-nb renders every format of an output (and picks one per
            # builder later): the twin replaces the formats it has; the
            # others (text/plain's "<Figure ...>") stay.
            twin = twins.get(language)
            reason = twins.get("error", "none was made")
            if not twin and reason not in _REPORTED:  # once per cause, not once per figure
                _REPORTED.add(reason)
                self.logger.warning(
                    f"this output has no {language} version, so the page would "
                    f"show the English one: {reason}",
                    subtype="image",
                    line=data.line,
                )
            elif data.mime_type in twin:
                data = dataclasses.replace(data, content=twin[data.mime_type])
        return super().render_mime_type(data)


# The causes of missing twins already reported by this build (a missing CJK
# font would otherwise be reported once for every figure of every page).
_REPORTED: set[str] = set()


class OutputsAreNotMessages(SphinxTransform):
    """Mark the text of cell outputs ``translatable = False``."""

    default_priority = 17

    def apply(self, **kwargs):
        for node in output_text_elements(self.document):
            node["translatable"] = False


def setup(app):
    app.add_transform(OutputsAreNotMessages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
