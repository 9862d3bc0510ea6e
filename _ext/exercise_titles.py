"""Exercise titles as translation messages.

sphinx-exercise's titles ("Exercise 3 (A sandwich)") are not messages for
Sphinx: gettext leaves them out and the Chinese page kept them in English.
Each exercise's own title becomes a message here (a marker node that gettext
extracts), and the Chinese build puts its translation in, both in the
exercise and in the title of its solution.

Each exercise's label also gets its (translated) title as its name, so that
``{numref}`{name} <label>``` shows the title in the page's language
(sphinx-exercise names every exercise label "Exercise", which says nothing).

In the Chinese edition, the titles that sphinx-exercise writes in English
order and punctuation, 「练习 10 (标题)」 and 「解答 练习 10 (标题)」, become
「练习 10（标题）」 and 「练习 10 的解答」.

sphinx-exercise has no public way to reach the copy of an exercise that
titles its solution, nor to format a title: its private
``env.sphinx_exercise_registry`` is read, and the titles its post-transforms
made are rewritten, guarded (_ext/pins.py) at sphinx-exercise 1.2.1;
upstream: docs/upstream/sphinx-exercise-translatable-titles.md.
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms import SphinxTransform
from sphinx.transforms.post_transforms import SphinxPostTransform


class exercise_title_message(nodes.Element, addnodes.translatable):
    """The text of an exercise's title, as a message (never rendered)."""

    def extract_original_messages(self):
        return [self["original"]]

    def apply_translated_message(self, original_message, translated_message):
        if original_message == self["original"]:
            self["translated"] = translated_message


def _exercise_subtitles(document):
    return [
        node
        for node in document.findall(nodes.subtitle)
        if type(node).__name__ == "exercise_subtitle"
    ]


class ExerciseTitleMessages(SphinxTransform):
    """Put a message marker beside each exercise title (before Locale, 20)."""

    default_priority = 18

    def apply(self, **kwargs):
        if str(self.document.get("source", "")).endswith("<translated>"):
            return
        for subtitle in _exercise_subtitles(self.document):
            marker = exercise_title_message(original=subtitle.astext())
            marker.source, marker.line = subtitle.source, subtitle.line
            # beside the exercise, not in it: sphinx-exercise rebuilds its
            # nodes after reading
            exercise = subtitle.parent.parent
            exercise.parent.insert(exercise.parent.index(exercise) + 1, marker)


class ExerciseTitleTranslations(SphinxTransform):
    """Use the translated exercise titles and drop the markers (after Locale).

    The gettext builder keeps the markers, which is how it extracts them."""

    default_priority = 21

    def apply(self, **kwargs):
        if self.app.builder.name == "gettext":
            return
        for marker in list(self.document.findall(exercise_title_message)):
            translated = marker.get("translated")
            exercise = marker.parent[marker.parent.index(marker) - 1]
            if translated:
                # the page's exercise, and sphinx-exercise's copy of it, from
                # which it titles the solution ("Solution to Exercise 3 (...)")
                copies = [
                    entry["node"]
                    for entry in getattr(self.env, "sphinx_exercise_registry", {}).values()
                    if entry.get("docname") == self.env.docname
                ]
                for node in [exercise, *copies]:
                    for subtitle in node.findall(nodes.subtitle):
                        if subtitle.astext() == marker["original"]:
                            subtitle.children = []
                            subtitle += nodes.Text(translated)
            marker.parent.remove(marker)


def _name_labels_by_title(app, document):
    """Name each exercise's label after its title (after sphinx-exercise's
    doctree-read, which names them all "Exercise")."""
    domain = app.env.get_domain("std")
    for node in document.findall(nodes.Element):
        if type(node).__name__ != "exercise_enumerable_node":
            continue
        subtitles = _exercise_subtitles(node)
        name = node.get("names", [None])[0]
        if subtitles and name in domain.labels:
            docname, labelid, _ = domain.labels[name]
            domain.labels[name] = docname, labelid, subtitles[0].astext()


# The Chinese edition's titles.

_NUMBER = re.compile(r"^\s*(\S+ \d+)\s*$")  # " 练习 10"


class ChineseExerciseTitles(SphinxPostTransform):
    """「练习 10（标题）」 and 「练习 10 的解答」, after sphinx-exercise's
    own title post-transforms (20 and 21)."""

    default_priority = 22

    def run(self, **kwargs):
        if (self.config.language or "en") == "en":
            return
        for node in self.document.findall(nodes.Element):
            kind = type(node).__name__
            if kind == "exercise_enumerable_node":
                title = node.children[0]
                texts = [c for c in title.children if isinstance(c, nodes.Text)]
                if len(texts) >= 2 and texts[0] == " (" and texts[-1] == ")":
                    title.replace(texts[0], nodes.Text("（"))
                    title.replace(texts[-1], nodes.Text("）"))
            elif kind == "solution_node":
                title = node.children[0]
                refs = [c for c in title.children if isinstance(c, nodes.reference)]
                number = _NUMBER.match(refs[0].children[0].astext()) if refs else None
                if number:
                    ref = refs[0]
                    ref.children = []
                    ref += nodes.Text(number.group(1))
                    title.children = []
                    title += ref
                    title += nodes.Text(" 的解答")


# The HTML writer puts a space after an exercise's number ("练习 10 "), which
# stands before the full-width parenthesis of its title.
_NUMBER_SPACE = re.compile(r'(<span class="caption-number">练习 \d+) (</span>)（')


def _no_space_before_title(app, pagename, templatename, context, doctree):
    if (app.config.language or "en") != "en" and "body" in context:
        context["body"] = _NUMBER_SPACE.sub(r"\1\2（", context["body"])


def _skip(self, node):
    raise nodes.SkipNode


def setup(app):
    from pins import check

    check("exercise_titles")  # see the module's docstring
    app.add_node(
        exercise_title_message, html=(_skip, None), latex=(_skip, None), text=(_skip, None)
    )
    app.add_transform(ExerciseTitleMessages)
    app.add_transform(ExerciseTitleTranslations)
    app.connect("doctree-read", _name_labels_by_title, priority=600)
    app.add_post_transform(ChineseExerciseTitles)
    app.connect("html-page-context", _no_space_before_title)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
