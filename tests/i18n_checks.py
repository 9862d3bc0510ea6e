"""Checks of the Chinese catalogs, locales/zh_CN/LC_MESSAGES/*.po.

Used by tests/test_i18n.py, and runnable while translating:

    .venv/bin/python tests/i18n_checks.py [file.po ...]

prints every problem as "file: message: problem" (all catalogs by default).

A catalog's header is the book's (not sphinx-intl's template), and a
message passes when
- it has a translation (not empty) and is not marked fuzzy;
- its MyST markup survived: the same inline code spans, the same inline and
  display math (whose \\text{...} words may be translated), and the same
  roles with the same targets ({ref}`text <target>`
  may translate its text; {term}`upstream gradient` becomes
  {term}`上游梯度 <upstream gradient>`, the English term kept as the target;
  a glued value that is words, not a number, has a Chinese twin glued under
  the same key plus "_zh", which the translation uses);
- a message with English prose has Chinese in its translation;
- where the English uses a term of the Chinese edition's term table
  (locales/zh_CN/terms.md), the translation uses that table's Chinese term;
- its Chinese prose uses Chinese punctuation: no half-width , ; : ? ! ( )
  next to a Chinese character (spaces and emphasis stars in between count as
  next to), but ，；：？！（）. Code, math, roles, URLs and link targets keep
  theirs, and so does a shape such as (5, 3) or 5×3.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCALE = ROOT / "locales" / "zh_CN" / "LC_MESSAGES"
# The interface words of Sphinx and the themes (_ext/book_zh.py), beside the pages' catalogs.
INTERFACE = LOCALE / "sphinx.po"

ROLE = re.compile(r"\{([a-z:-]+)\}`([^`]*)`")
CODE = re.compile(r"(?<![`}])`([^`]+)`")
MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$", re.S)
CJK = re.compile(r"[\u3400-\u9fff]")
# What Chinese prose leaves alone: roles, code, math, link targets, URLs, HTML.
VERBATIM = re.compile(
    r"\{[a-z:-]+\}`[^`]*`|``[^`]+``|`[^`]+`|\$\$.*?\$\$|\$[^$\n]+\$"
    r"|\]\([^)\s]*\)|<https?://[^>]+>|https?://[^\s)）]+|<[a-z/][^>]*>",
    re.S,
)
HALF_WIDTH = ",;:?!()"
SHAPE = re.compile(r"\(\s*-?\d+(?:\s*[,×]\s*-?\d+)*\s*,?\s*\)")  # (5, 3), (15×15)


def catalogs() -> list[Path]:
    return sorted(LOCALE.rglob("*.po"))


def read(path: Path):
    from babel.messages.pofile import read_po

    with path.open("rb") as handle:
        return read_po(handle)


def role_targets(text: str) -> Counter:
    found = Counter()
    for name, body in ROLE.findall(text):
        target = re.search(r"<([^<>]*)>\s*$", body)
        key = (target.group(1) if target else body).strip()
        if name == "term":
            key = key.lower()
        if name.startswith("glue") and key.endswith("_zh"):
            key = key[:-3]  # a page glues words for the Chinese prose under <key>_zh
        found[(name, key)] += 1
    return found


def code_spans(text: str) -> Counter:
    return Counter(CODE.findall(ROLE.sub("", text)))


def maths(text: str) -> Counter:
    """The math of a message; words in \\text{...} may be translated."""
    without = CODE.sub("", ROLE.sub("", text))
    return Counter(
        re.sub(r"\\text\{[^{}]*\}", r"\\text{}", m.strip()) for m in MATH.findall(without)
    )


def prose(text: str) -> str:
    """The words of a message that a reader reads as English prose."""
    text = re.sub(r"\{(?:ref|numref|doc|term)\}`([^`<]*)<[^`]*>`", r"\1", text)
    text = re.sub(r"\{term\}`([^`]*)`", r"\1", text)
    # numref's placeholders for a title and a number are not prose
    text = re.sub(r"\{(?:name|number)\}", "", text)
    text = ROLE.sub("", text)
    text = CODE.sub("", text)
    text = MATH.sub("", text)
    text = re.sub(r"\\(?:begin|end)\{[^}]*\}", "", text)  # TeX environments (outputs)
    text = re.sub(r"\\[a-zA-Z]+|https?://\S+", "", text)
    return text


def needs_translation(msgid: str) -> bool:
    if msgid.startswith("\n") or msgid.startswith('{"') or msgid in ("jupytext", "kernelspec"):
        return False
    return bool(re.search(r"[A-Za-z]{2,}", prose(msgid)))


def term_table() -> list[tuple[str, str]]:
    """(English, Chinese) rows of the term table (locales/zh_CN/terms.md),
    longest English first
    (read by the book's own extension, which also gives them to the search)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("zh_search", ROOT / "_ext" / "zh_search.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return sorted(module.term_table(ROOT), key=lambda r: -len(r[0]))


def term_problems(msgid: str, msgstr: str, table) -> list[str]:
    """The table's terms that the English uses and the translation does not.

    A word with two senses has two rows (Jacobian: 雅可比矩阵 flattened,
    雅可比张量 not; adjoint: 伴随 of a linear map, 共轭转置 of a matrix); the
    translation uses one of them."""
    english = prose(msgid)
    senses: dict[str, list[str]] = {}
    for term, chinese in table:
        senses.setdefault(term, []).append(chinese)
    problems = []
    for term, chinese in senses.items():
        # (not inside a dotted name such as tape.jacobian)
        pattern = re.compile(
            r"(?<![\w.])" + re.escape(term).replace(r"\ ", r"[\s-]") + r"(s|es)?\b", re.I
        )
        if pattern.search(english):
            english = pattern.sub(" ", english)
            if not any(c in msgstr for c in chinese):
                problems.append(f"uses '{term}' but not " + " or ".join(f"'{c}'" for c in chinese))
    return problems


def punctuation_problems(msgstr: str) -> list[str]:
    """Half-width , ; : ? ! ( ) next to Chinese characters, each with its context."""
    if not CJK.search(msgstr):
        return []
    # Verbatim spans and shapes become a neutral letter, so that what stands
    # next to a mark is the prose around them.
    masked = SHAPE.sub(
        lambda m: "x" * len(m.group()), VERBATIM.sub(lambda m: "x" * len(m.group()), msgstr)
    )
    found = []
    for i, mark in enumerate(masked):
        if mark not in HALF_WIDTH:
            continue
        left = masked[:i].rstrip(" *_")[-1:]
        right = masked[i + 1 :].lstrip(" *_")[:1]
        if CJK.match(left) or CJK.match(right):
            found.append(
                f"half-width '{mark}' in Chinese prose: "
                f"{msgstr[max(0, i - 12) : i + 13]!r} (use {chr(ord(mark) + 0xFEE0)})"
            )
    return found


def _term_table_english(msgid: str, msgstr: str) -> bool:
    """A cell of the term table's English column, "*term* (sense)": the term stays."""
    term = re.match(r"\*[^*]+\*", msgid)
    return bool(term) and msgstr.startswith(term.group())


def problems(path: Path) -> list[tuple[str, str]]:
    """(message, problem) for every failing message of one catalog."""
    table = term_table()
    found = []
    catalog = read(path)
    if (
        catalog.fuzzy
        or "not set" in (catalog.project or "")
        or "FULL NAME" in (catalog.last_translator or "")
    ):  # sphinx-intl's template header, never filled in: msgfmt -c rejects it
        found.append(("(header)", "copy the header of another catalog of the book"))
    for message in catalog:
        msgid, msgstr = message.id, message.string
        if not msgid or isinstance(msgid, tuple):
            continue
        short = msgid if len(msgid) < 70 else msgid[:67] + "..."
        if message.fuzzy:
            found.append(
                (
                    short,
                    "fuzzy (the English changed: check the translation, "
                    "then remove the '#, fuzzy' line)",
                )
            )
            continue
        if not msgstr.strip():
            found.append((short, "not translated"))
            continue
        for name, get in (("roles", role_targets), ("code", code_spans), ("math", maths)):
            if get(msgid) != get(msgstr):
                missing = get(msgid) - get(msgstr)
                extra = get(msgstr) - get(msgid)
                found.append(
                    (short, f"{name} differ: missing {sorted(missing)}, added {sorted(extra)}")
                )
        if needs_translation(msgid) and not CJK.search(msgstr) and msgid != msgstr:
            found.append((short, "the translation has no Chinese"))
        if (
            needs_translation(msgid)
            and msgid == msgstr
            and CJK.search(msgid) is None
            and len(prose(msgid).split()) > 3
        ):
            found.append((short, "left in English"))
        for problem in punctuation_problems(msgstr):
            found.append((short, problem))
        if msgstr == msgid or _term_table_english(msgid, msgstr):
            continue  # kept in English on purpose (a name, or the term table's English)
        for problem in term_problems(msgid, msgstr, table):
            found.append((short, problem))
    return found


def main(argv: list[str]) -> int:
    paths = [Path(a).resolve() for a in argv] or catalogs()
    count = 0
    for path in paths:
        for short, problem in problems(path):
            count += 1
            print(f"{path.relative_to(LOCALE)}: {short!r}: {problem}")
    print(f"{count} problems in {len(paths)} catalogs")
    return 1 if count else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
