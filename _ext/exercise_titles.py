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

The role ``{exercise-asks}`label``` stands for the first paragraph of that
exercise, in the page's language (the translated paragraph in the Chinese
edition): the "All exercises" page lists what each exercise asks that way.
When a page is read again, so is the page that uses the role.

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


# What each exercise asks: its first paragraph, kept per label.


ASKS = "exercise-asks"  # the role, and the reftype of its placeholder


def _asks_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """Where ``{exercise-asks}`label``` stands until the page is written: a
    pending cross-reference (the doctree is pickled, and read back without
    this module), replaced before cross-references are resolved."""
    label = text.strip()
    # (no reftarget: sphinx-exercise rewrites every reference to an exercise)
    xref = addnodes.pending_xref(rawtext, refdomain="", reftype=ASKS, reftarget="", exercise=label)
    xref += nodes.Text(label)
    return [xref], []


def _placeholders(document):
    return [n for n in document.findall(addnodes.pending_xref) if n.get("reftype") == ASKS]


def _asks_store(env) -> dict:
    if not hasattr(env, "matgrad_exercise_asks"):
        env.matgrad_exercise_asks = {}  # label -> (docname, paragraph)
    return env.matgrad_exercise_asks


def _keep_first_paragraphs(app, document):
    store = _asks_store(app.env)
    for node in document.findall(nodes.Element):
        if type(node).__name__ != "exercise_enumerable_node" or not node.get("names"):
            continue
        for content in node.findall(nodes.section):
            paragraph = next(iter(content.findall(nodes.paragraph)), None)
            if paragraph is not None:
                copy = paragraph.deepcopy()
                for part in copy.findall():
                    part._document = None  # not the page's whole doctree, in the env
                store[node["names"][0]] = (app.env.docname, copy)
            break


def _purge(app, env, docname):
    store = _asks_store(env)
    for label in [k for k, (doc, _) in store.items() if doc == docname]:
        del store[label]


def _merge(app, env, docnames, other):
    _asks_store(env).update({k: v for k, v in _asks_store(other).items() if v[0] in docnames})


def _users_of_the_role(app, env, added, changed, removed):
    """The pages that list exercises are read again when any page is."""
    if not (added or changed or removed):
        return []
    users = getattr(env, "matgrad_asks_users", set())
    return sorted(users - set(added) - set(changed))


def _note_user(app, document):
    if _placeholders(document):
        if not hasattr(app.env, "matgrad_asks_users"):
            app.env.matgrad_asks_users = set()
        app.env.matgrad_asks_users.add(app.env.docname)


class FillExerciseAsks(SphinxPostTransform):
    """Replace each placeholder by a copy of the exercise's first
    paragraph, before cross-references are resolved (10), as if written here."""

    default_priority = 5

    def run(self, **kwargs):
        store = _asks_store(self.env)
        for node in _placeholders(self.document):
            entry = store.get(node["exercise"])
            if entry is None:
                raise ValueError(f"exercise-asks: no exercise labelled {node['exercise']!r}")
            copy = entry[1].deepcopy()
            for xref in list(copy.findall(addnodes.pending_xref)):
                xref["refdoc"] = self.env.docname  # links made from this page
                _mark_for_context(self.env, xref, entry[0])
            node.replace_self(copy.children)
        # The math domain noted this page's equations when it was read, before
        # the copies existed; without this the page would get no MathJax and
        # show the copied formulas as raw TeX.
        if any(self.document.findall(nodes.math)):
            self.env.get_domain("math").data["has_equations"][self.env.docname] = True


# Out of its page, a reference in an exercise's first paragraph loses its
# context: a section's title read as part of the sentence, "(3)" or "Fig. 2"
# of some other page. Each such reference gets a marker before it is
# resolved, and the resolved link is then quoted ("“Title”") or given its
# page ("equation (3) of “Jacobian tensors”"). A reference whose text the
# author wrote is left as written.

_CONTEXT = {
    "en": {
        "section": "“{link}”",
        "equation": "equation {link} of “{title}”",
        "other": "{link} of “{title}”",
    },
    "zh": {
        "section": "“{link}”",
        "equation": "“{title}”中的式{link}",
        "other": "“{title}”中的{link}",
    },
}


class asks_reference(nodes.inline):
    """A reference copied into an exercise's excerpt, before it is resolved."""


def _target_doc(env, xref):
    target = xref.get("reftarget", "")
    if xref.get("refdomain") == "math" or xref.get("reftype") == "eq":
        equation = env.get_domain("math").equations.get(target)
        return equation[0] if equation else None
    std = env.get_domain("std")
    found = std.labels.get(target) or std.anonlabels.get(target)
    return found[0] if found else None


def _mark_for_context(env, xref, exercise_doc):
    reftype = xref.get("reftype")
    # A reference with its own words ({ref}`the determinant's gradient
    # <label>`) keeps them: they are part of the author's sentence.
    if reftype == "ref" and not xref.get("refexplicit"):
        kind = "section"
    elif reftype == "eq":
        kind = "equation"
    elif reftype == "numref" and not xref.get("refexplicit"):
        kind = "other"
    else:
        return
    marker = asks_reference(kind=kind, doc=_target_doc(env, xref) or exercise_doc)
    xref.replace_self(marker)
    marker += xref


class ExerciseAsksContext(SphinxPostTransform):
    """Quote a section's title, name the page of an equation or figure
    (after cross-references are resolved, 10)."""

    default_priority = 11

    def run(self, **kwargs):
        words = _CONTEXT["en" if (self.config.language or "en") == "en" else "zh"]
        for marker in list(self.document.findall(asks_reference)):
            doc = marker["doc"]
            title = self.env.titles[doc].astext() if doc in self.env.titles else ""
            pattern = words[marker["kind"]] if title or marker["kind"] == "section" else "{link}"
            head, _, tail = pattern.replace("{title}", title).partition("{link}")
            siblings = marker.parent.children[: marker.parent.index(marker)]
            blanks = []
            while siblings and isinstance(siblings[-1], nodes.Text) and not siblings[-1].strip():
                blanks.append(siblings.pop())  # a line break ("of\n")
            before = siblings[-1] if siblings else None
            last = before.astext().rstrip()[-1:] if isinstance(before, nodes.Text) else ""
            if last and last in _QUOTES:
                head, tail = head.lstrip("“"), tail.rstrip("”")  # quoted already
            elif isinstance(before, nodes.Text) and head and words is _CONTEXT["zh"]:
                # no space before the page's title in Chinese ("求出 “…”")
                before.parent.replace(before, nodes.Text(before.astext().rstrip()))
                for blank in blanks:
                    blank.parent.replace(blank, nodes.Text(""))
            marker.replace_self([nodes.Text(head), *marker.children, nodes.Text(tail)])


_QUOTES = '“"「‘'


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


def _visit_inline(self, node):  # never left in a page: replaced at 11
    self.visit_inline(node)


def _depart_inline(self, node):
    self.depart_inline(node)


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
    app.add_role(ASKS, _asks_role)
    app.add_node(asks_reference, html=(_visit_inline, _depart_inline))
    app.add_post_transform(FillExerciseAsks)
    app.add_post_transform(ExerciseAsksContext)
    app.add_post_transform(ChineseExerciseTitles)
    app.connect("doctree-read", _keep_first_paragraphs)
    app.connect("doctree-read", _note_user)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("env-get-outdated", _users_of_the_role)
    app.connect("html-page-context", _no_space_before_title)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
