"""Links to the whole book as PDF (``make pdf``, bookbuild/pdf.py).

``make pdf`` writes _build/pdf/matgrad-{en,zh_CN}.pdf. The English site
serves them at its top, and the index page of both editions links them,
below its title, only when both exist at the time the site is built:
``make pdf`` writes the index pages again after printing, and ``make book``
removes the PDFs when the site changes, so a PDF is never older than the
pages that link to it.
"""

from __future__ import annotations

from pathlib import Path

from editions import EDITION_LINKS, is_english

PDF_DIR = Path(__file__).resolve().parents[1] / "_build" / "pdf"
PDF_FILES = {"en": "matgrad-en.pdf", "zh_CN": "matgrad-zh_CN.pdf"}
PDF_NOTE = {  # per edition: the note's words, and the PDFs (its own first)
    "en": ("The whole book as one PDF:", [("en", "en", "English"), ("zh_CN", "zh-CN", "中文")]),
    "zh_CN": ("全书 PDF：", [("zh_CN", "zh-CN", "中文"), ("en", "en", "English")]),
}


def built_pdfs() -> bool:
    return all((PDF_DIR / name).is_file() for name in PDF_FILES.values())


def _configure(app, config):
    # Whether the book's PDFs exist: a configuration value of the HTML
    # builder, so that pages are written again when they appear or go.
    config.html_context = {**config.html_context, "matgrad_pdfs": built_pdfs()}
    if built_pdfs() and is_english(config):
        config.html_extra_path = [*config.html_extra_path, str(PDF_DIR)]


def _pdf_links(app, pagename, templatename, context, doctree):
    """Below the index page's title: links to the book's PDFs (when built)."""
    edition = "en" if is_english(app.config) else app.config.language
    if (
        not app.config.html_context.get("matgrad_pdfs")
        or app.builder.name != "html"
        or pagename != app.config.root_doc
        or edition not in PDF_NOTE
        or "</h1>" not in context.get("body", "")
    ):
        return
    up = "../" * EDITION_LINKS[edition]["up"]
    words, pdfs = PDF_NOTE[edition]
    links = " · ".join(
        f'<a href="{up}{PDF_FILES[pdf]}" hreflang="{lang}" lang="{lang}" '
        f'type="application/pdf">{label}</a>'
        for pdf, lang, label in pdfs
    )
    note = (
        f'<p class="matgrad-book-pdfs"><i class="fa-solid fa-file-pdf" aria-hidden="true">'
        f"</i> {words} {links}</p>"
    )
    context["body"] = context["body"].replace("</h1>", "</h1>\n" + note, 1)


def setup(app):
    app.connect("config-inited", _configure)
    app.connect("html-page-context", _pdf_links, priority=600)  # after the theme's 501
    return {"parallel_read_safe": True, "parallel_write_safe": True}
