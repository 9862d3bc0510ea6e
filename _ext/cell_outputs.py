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
"""

from __future__ import annotations

from docutils import nodes
from sphinx.transforms import SphinxTransform

#: Text that the author wrote for an output (``mystnb: figure: caption``).
AUTHORED = (nodes.caption, nodes.legend)


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


def render_error_minimal(self, output, cell_metadata, cell_index, source_line):
    """myst-nb's ``render_error``, showing ``ename: evalue`` instead of the frames."""
    text = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}".rstrip()
    lexer = self.renderer.get_cell_level_config(
        "render_error_lexer", cell_metadata, line=source_line
    )
    node = self.renderer.create_highlighted_code_block(
        text, lexer, source=self.source, line=source_line
    )
    node["classes"] += ["output", "traceback"]
    return [node]


class OutputsAreNotMessages(SphinxTransform):
    """Mark the text of cell outputs ``translatable = False``."""

    default_priority = 17

    def apply(self, **kwargs):
        for node in output_text_elements(self.document):
            node["translatable"] = False


def setup(app):
    from myst_nb.core.render import NbElementRenderer

    NbElementRenderer.render_error = render_error_minimal
    app.add_transform(OutputsAreNotMessages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
