"""Display math in the Chinese edition: a translated formula renders as the formula.

Sphinx's Locale transform parses a translated message again before it puts
it in the page. A literal-type message (a code or math block) is first
wrapped in reStructuredText's literal-block notation: ``::``, a blank line,
and the text indented. The MyST parser does not know that notation, so a
math block whose msgstr differs from its msgid (a formula with Chinese inside
``\\text{}``) came out as the two characters ``::``, which MathJax showed as
``\\[::\\]``. Formulas whose msgstr equals the msgid are left alone by Locale
and were never affected.

Upstream: executablebooks/MyST-Parser#444 (code blocks translated as
``::``) and #980 (translated formulas lost). Until MyST can read that
notation, or Sphinx stops using it for parsers other than reST, this
transform runs just before Locale: it puts the translated TeX into the math
block itself, as plain text that is never parsed, and marks the block as not
translatable, so that Locale leaves it alone. It uses the transform API
only; nothing of Sphinx or MyST is replaced.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.transforms import SphinxTransform

from editions import catalog, is_english


class TranslatedMath(SphinxTransform):
    """Put each display formula's translation into the page, unparsed."""

    default_priority = 18  # before Sphinx's Locale (20) and the book's TranslationCheck (19)

    def apply(self, **kwargs):
        if is_english(self.config) or str(self.document.get("source", "")).endswith("<translated>"):
            return  # the English edition, or a translated paragraph being parsed
        messages = catalog(self.env, self.env.docname)
        for block in self.document.findall(nodes.math_block):
            translated = messages.get(block.rawsource, "")
            if translated.strip() and translated != block.rawsource:
                block.children = []
                block += nodes.Text(translated)
                block.rawsource = translated
                block["translatable"] = False  # done: Locale must not parse it again


def setup(app):
    app.add_transform(TranslatedMath)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
