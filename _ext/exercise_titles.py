"""Exercise titles as translation messages.

sphinx-exercise's titles ("Exercise 3 (A sandwich)") are not messages for
Sphinx: gettext leaves them out and the Chinese page kept them in English.
Each exercise's own title becomes a message here (a marker node that gettext
extracts), and the Chinese build puts its translation in, both in the
exercise and in the title of its solution.

Each exercise's label also gets its (translated) title as its name, so that
``{numref}`{name} <label>``` shows the title in the page's language: the
"All exercises" page lists them that way (sphinx-exercise names every
exercise label "Exercise", which says nothing).

sphinx-exercise has no public way to reach the copy of an exercise that
titles its solution: its private ``env.sphinx_exercise_registry`` is read,
guarded (_ext/pins.py) at sphinx-exercise 1.2.1; upstream:
docs/upstream/sphinx-exercise-translatable-titles.md.
"""

from __future__ import annotations

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms import SphinxTransform


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
    return {"parallel_read_safe": True, "parallel_write_safe": True}
