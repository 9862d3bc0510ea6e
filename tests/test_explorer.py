"""The Jacobian explorer: its data (matgrad.explorer), and the chart in Chromium.

The browser tests drive the explorer on chapter 04 of the built book, in
both editions; before any build, they build a tiny site in a temporary
folder instead, with the book's extension (_ext/vega_explorer.py, with its
script and style sheet), the Vega files from node_modules, and one page per
edition (English, and the Chinese twin that matgrad.explorer puts in the
output's metadata). By pointer and by keyboard: the ones seed gives B's
row sums in every row; one-hot at (0, 0) gives B's first column in row 0.
They check that no request leaves the machine, that axe finds no serious
violation in the explorer, and that the static PNG stays where scripts do
not run and in print (the PDFs are printed from the site).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

from bookbuild import local_server
from conftest import HTML, ROOT, require_or_skip
from matgrad import explorer as E
from matgrad.examples import EXPECTED_SEED_GRAD_ROW, SEED_B, SEED_T

# ---- data ------------------------------------------------------------------------


def test_explorer_table_is_the_jacobian():
    table = E.explorer_table(SEED_T, SEED_B)
    assert len(table) == 5 * 3 * 5 * 3
    for r in table:
        want = float(SEED_B[r["l"], r["j"]]) if r["i"] == r["k"] else 0.0
        assert r["d"] == pytest.approx(want)
        assert (r["row"], r["col"]) == (3 * r["i"] + r["j"], 3 * r["k"] + r["l"])


def test_explorer_gradient_for_each_seed():
    G = np.random.default_rng(3).standard_normal((5, 3))
    table = E.explorer_table(SEED_T, SEED_B, G)
    ones = E.explorer_gradient(table, "ones")
    np.testing.assert_allclose(ones, np.tile(EXPECTED_SEED_GRAD_ROW, (5, 1)), rtol=1e-6)
    hot = E.explorer_gradient(table, "one-hot", at=(0, 0))
    np.testing.assert_allclose(hot[0], SEED_B[:, 0], rtol=1e-7)  # B's first column, row 0
    assert not hot[1:].any()
    hot = E.explorer_gradient(table, "one-hot", at=(3, 2))
    np.testing.assert_allclose(hot[3], SEED_B[:, 2], rtol=1e-7)
    B64 = SEED_B.astype(np.float64)
    np.testing.assert_allclose(E.explorer_gradient(table, "random"), G @ B64.T, atol=1e-12)
    for seed in E.SEEDS:
        g = E.seed_matrix(seed, (5, 3), G=G)
        np.testing.assert_allclose(E.explorer_gradient(table, seed), g @ B64.T, atol=1e-12)


def test_explorer_rejects_bad_input():
    with pytest.raises(ValueError, match="G must have"):
        E.explorer_table(SEED_T, SEED_B, np.ones((3, 5)))
    with pytest.raises(ValueError, match="T @ B"):
        E.explorer_table(SEED_T, SEED_T)
    with pytest.raises(TypeError, match="T must have"):
        E.explorer_table(np.ones((5, 3), dtype=int), SEED_B)
    with pytest.raises(ValueError, match="seed must be"):
        E.explorer_gradient(E.explorer_table(SEED_T, SEED_B), "zeros")
    with pytest.raises(ValueError, match="outside"):
        E.seed_matrix("one-hot", (5, 3), at=(5, 0))
    with pytest.raises(ValueError, match="lang"):
        E.jacobian_explorer(SEED_T, SEED_B, lang="fr")


def test_chart_is_vega_lite_5_with_keyboard_inputs_and_chinese_twin():
    spec = E.jacobian_explorer(SEED_T, SEED_B).to_dict()
    assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/v5")
    bound = {p["name"]: p["bind"] for p in spec["params"] if "bind" in p}
    assert bound["seed"]["input"] == "radio" and bound["seed"]["options"] == list(E.SEEDS)
    assert {bound["hot_i"]["input"], bound["hot_j"]["input"]} == {"range"}
    zh = E.jacobian_explorer(SEED_T, SEED_B, lang="zh_CN").to_dict()
    zh_bound = {p["name"]: p["bind"] for p in zh["params"] if "bind" in p}
    assert zh_bound["seed"]["labels"] == ["全 1", "独热", "随机"]
    assert spec["data"] == zh["data"] and len(spec["data"]["values"]) == 225  # same numbers


def _colours(spec):
    """Every colour encoding with a field in a Vega-Lite spec (nested views)."""
    found = []
    if isinstance(spec, dict):
        colour = spec.get("encoding", {}).get("color", {})
        if "field" in colour:
            found.append(colour)
        for value in spec.values():
            found += _colours(value)
    elif isinstance(spec, list):
        for value in spec:
            found += _colours(value)
    return found


def test_explorer_scale_covers_every_cell_of_every_seed():
    G = np.random.default_rng(3).standard_normal((5, 3))
    table = E.explorer_table(SEED_T, SEED_B, G)
    top = E.explorer_scale(table)
    B64 = SEED_B.astype(np.float64)
    cells = [np.abs(G).max(), np.abs(B64).max() * max(1.0, np.abs(G).max())]
    for seed in E.SEEDS:
        ats = [(i, j) for i in range(5) for j in range(3)] if seed == "one-hot" else [(0, 0)]
        for at in ats:
            cells.append(np.abs(E.seed_matrix(seed, (5, 3), at=at, G=G) @ B64.T).max())
    assert top == pytest.approx(max(cells))
    assert E.explorer_scale([{**r, "d": 0.0, "g": 0.0} for r in table]) == 1.0
    with pytest.raises(ValueError, match="empty"):
        E.explorer_scale([])


def test_chart_has_one_colour_scale_one_legend_and_its_title():
    for lang, words in (("en", E.EXPLORER_WORDS), ("zh_CN", E.EXPLORER_WORDS_ZH)):
        spec = E.jacobian_explorer(SEED_T, SEED_B, lang=lang).to_dict()
        colours = _colours(spec)
        assert {c["field"] for c in colours} == {"w", "wd", "grad"}
        top = E.explorer_scale(E.explorer_table(SEED_T, SEED_B))
        for c in colours:  # the same symmetric scale, the same legend: Vega-Lite merges them
            assert c["scale"]["domain"] == [-top, top]
            assert c["legend"]["title"] == words["value (one colour scale)"]
        assert spec["resolve"]["scale"]["color"] == "shared"
        assert "".join(spec["title"]["text"]) == words["title"].replace(": ", ":")  # in the PNG
        assert len(spec["title"]["text"]) == 2  # two lines, for a phone
        readout = json.dumps(spec, ensure_ascii=False)
        assert words["seed G: "] in readout  # the readout names the seed shown


def test_bundle_has_vega_lite_png_and_the_twin():
    import base64

    from matgrad.plotting import cjk_font

    data, metadata = E.explorer_bundle(SEED_T, SEED_B)
    assert set(data) == {E.VEGALITE_MIME, "image/png", "text/plain"}
    assert base64.b64decode(data["image/png"]).startswith(b"\x89PNG")
    if cjk_font() is None:
        require_or_skip("no CJK font: the Chinese twin is not drawn")
    twin = metadata["matgrad"]["zh_CN"]
    assert set(twin) == {E.VEGALITE_MIME, "image/png"} and twin["image/png"] != data["image/png"]


# ---- the chart in Chromium, on a tiny site ---------------------------------------

ALT = "The Jacobian explorer, as a static picture."


def _notebook(bundle):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    cell = nbformat.v4.new_code_cell("show_explorer(SEED_T, SEED_B)")
    cell.metadata["mystnb"] = {"figure": {"caption": "The explorer."}, "image": {"alt": ALT}}
    cell.outputs = [nbformat.v4.new_output("display_data", data=bundle, metadata={})]
    nb.cells = [nbformat.v4.new_markdown_cell("# Explorer"), cell]
    return nb


@pytest.fixture(scope="module")
def explorer_site(tmp_path_factory):
    import nbformat

    for package in ("vega", "vega-lite", "vega-embed"):
        if not (ROOT / "node_modules" / package).exists():
            require_or_skip(f"{package} is not installed in node_modules: run 'npm ci'")
    src = tmp_path_factory.mktemp("explorer-src")
    out = src.parent / "explorer-html"
    data, metadata = E.explorer_bundle(SEED_T, SEED_B)
    zh = metadata["matgrad"]["zh_CN"]
    if zh is None:
        require_or_skip("no CJK font: the Chinese twin is not drawn")
    nbformat.write(_notebook(data), src / "en.ipynb")
    nbformat.write(_notebook({**zh, "text/plain": data["text/plain"]}), src / "zh.ipynb")
    (src / "index.md").write_text("# Test\n\n```{toctree}\nen\nzh\n```\n")
    vega = src / "assets" / "vega"
    vega.mkdir(parents=True)
    from bookbuild.__main__ import VEGA_FILES

    for package, name in VEGA_FILES.items():
        shutil.copy2(ROOT / "node_modules" / package / "build" / name, vega)
    (src / "favicon.svg").write_text(
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"></svg>'
    )
    (src / "conf.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT / '_ext')!r})\n"
        'extensions = ["myst_nb", "vega_explorer"]\n'
        'nb_execution_mode = "off"\n'
        'html_extra_path = ["assets"]\n'
        'html_favicon = "favicon.svg"\n'
        'exclude_patterns = ["assets"]\n'
    )
    built = subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-W", "-b", "html", str(src), str(out)],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    return out


@pytest.fixture(scope="module")
def explorer_server(explorer_site):
    with local_server.serving(explorer_site) as url:
        yield url


def _number(text: str) -> float:
    return float(text.replace("−", "-"))


def _gradient(tab) -> np.ndarray:
    """The gradient the chart shows: the texts of its 5x3 cells, row by row."""
    texts = tab.eval_on_selector_all(
        ".matgrad-vega-view g.gradient_marks text", "els => els.map(t => t.textContent)"
    )
    assert len(texts) == 15, texts
    return np.array([_number(t) for t in texts]).reshape(5, 3)


def _readout(tab) -> str:
    return " ".join(
        tab.eval_on_selector_all(
            ".matgrad-vega-view g.readout_marks text", "els => els.map(t => t.textContent)"
        )
    )


def _open(browser, url, **context):
    ctx = browser.new_context(viewport={"width": 390, "height": 1400}, **context)
    tab = ctx.new_page()
    errors, requests = [], []
    tab.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
    tab.on("pageerror", lambda e: errors.append(str(e)))
    tab.on("request", lambda r: requests.append(r.url))
    tab.goto(url, wait_until="load")  # the explorer's own readiness is awaited by each test
    return ctx, tab, errors, requests


# Where the explorer is: chapter 04 of the built book in both editions, as a
# reader sees it, when the book is built (as in `make test`); otherwise the two
# pages of the tiny site, so that this file also runs before any build. The
# tiny site drives the same extension and the same bundle, so driving both
# would only repeat the check (about a minute of a two-core run).
BOOK_PAGES = {
    "book-en": ("server", "chapters/04_vjp.html"),
    "book-zh": ("server", "zh_CN/chapters/04_vjp.html"),
}
TINY_PAGES = {
    "tiny-en": ("explorer_server", "en.html"),
    "tiny-zh": ("explorer_server", "zh.html"),
}
BOOK_BUILT = all((HTML / path).exists() for _, path in BOOK_PAGES.values())
EXPLORER_PAGES = BOOK_PAGES if BOOK_BUILT else TINY_PAGES


def _page_url(request, page: str) -> tuple[str, str]:
    """``(site, url)`` of one of :data:`EXPLORER_PAGES`."""
    fixture, path = EXPLORER_PAGES[page]
    site = request.getfixturevalue(fixture)
    return site, f"{site}/{path}"


def _drive(tab) -> None:
    """The explorer by pointer, then by keyboard: the ones seed gives B's row
    sums in every row, one-hot at (0, 0) gives B's first column in row 0, and
    an entry's (i, j, k, l) and value are read out."""
    row_sums = SEED_B.astype(np.float64).sum(axis=1)
    first_column = SEED_B[:, 0].astype(np.float64)

    # The ones seed, by pointer: every row is B's row sums.
    tab.click("input[name=seed][value=ones]")
    np.testing.assert_allclose(_gradient(tab), np.tile(row_sums, (5, 1)), atol=6e-5)
    # One-hot at (0, 0), by pointer: B's first column in row 0, zeros elsewhere.
    tab.click("input[name=seed][value=one-hot]")
    want = np.zeros((5, 3))
    want[0] = first_column
    np.testing.assert_allclose(_gradient(tab), want, atol=6e-5)
    # Pointing at the cell of (i, j, k, l) = (1, 2, 1, 0) shows its indices and value.
    cells = tab.query_selector_all(".matgrad-vega-view g.jacobian_marks path")
    assert len(cells) == 225
    cells[(3 * 1 + 2) * 15 + (3 * 1 + 0)].hover()
    assert "(1, 2, 1, 0)" in _readout(tab)
    assert f"{SEED_B[0, 2]:.4f}".replace("-", "−") in _readout(tab)  # ∂Y_12/∂T_10 = B_02
    assert tab.input_value("input[name=entry_i]") == "1"  # the sliders follow the pointer

    # By keyboard only: back to ones, then one-hot at (0, 0), then an entry.
    tab.mouse.move(0, 0)
    tab.focus("input[name=seed][value=one-hot]")
    tab.keyboard.press("ArrowLeft")  # radio buttons: the arrow keys choose
    assert tab.is_checked("input[name=seed][value=ones]")
    np.testing.assert_allclose(_gradient(tab), np.tile(row_sums, (5, 1)), atol=6e-5)
    tab.keyboard.press("ArrowRight")
    assert tab.is_checked("input[name=seed][value=one-hot]")
    tab.focus("input[name=hot_i]")
    tab.keyboard.press("Home")
    tab.focus("input[name=hot_j]")
    tab.keyboard.press("Home")
    np.testing.assert_allclose(_gradient(tab), want, atol=6e-5)
    tab.focus("input[name=hot_i]")
    tab.keyboard.press("ArrowRight")  # one-hot at (1, 0): B's first column moves to row 1
    np.testing.assert_allclose(_gradient(tab), np.roll(want, 1, axis=0), atol=6e-5)
    for name, value in (("entry_i", 0), ("entry_j", 0), ("entry_k", 0), ("entry_l", 2)):
        tab.focus(f"input[name={name}]")
        tab.keyboard.press("Home")
        for _ in range(value):
            tab.keyboard.press("ArrowRight")
    assert "(0, 0, 0, 2)" in _readout(tab)
    assert f"{SEED_B[2, 0]:.4f}".replace("-", "−") in _readout(tab)  # ∂Y_00/∂T_02 = B_20


@pytest.mark.site
@pytest.mark.parametrize("page", list(EXPLORER_PAGES))
def test_explorer_by_pointer_and_keyboard_with_no_serious_axe_violation(page, browser, request):
    """One load of each page serves both checks: driving the explorer, then
    axe-core on the explorer as the driving left it."""
    axe = ROOT / "node_modules" / "axe-core" / "axe.min.js"
    if not axe.exists():
        require_or_skip("axe-core is not installed in node_modules: run 'npm ci'")
    site, url = _page_url(request, page)
    ctx, tab, errors, requests = _open(browser, url)
    tab.wait_for_selector(".matgrad-vega-live", timeout=30_000)
    assert len(tab.query_selector_all(".matgrad-vega-view")) == 1  # one explorer
    assert not tab.is_visible(".matgrad-vega-fallback img")  # the chart replaced it
    _drive(tab)
    tab.add_script_tag(content=axe.read_text())
    violations = tab.evaluate(
        """async () => (await axe.run('.matgrad-vega', {resultTypes: ['violations']}))
             .violations.map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.length}))"""
    )
    ctx.close()
    outside = [u for u in requests if not u.startswith(site) and not u.startswith("data:")]
    assert not outside, outside  # offline: nothing but the site itself
    assert not errors, errors
    serious = [v for v in violations if v["impact"] in ("serious", "critical")]
    assert not serious, serious


@pytest.mark.site
def test_explorer_degrades_to_its_png_without_scripts_and_in_print(browser, request):
    """The English page of :data:`EXPLORER_PAGES`, without scripts and in print."""
    _, url = _page_url(request, next(iter(EXPLORER_PAGES)))
    ctx, tab, _, _ = _open(browser, url, java_script_enabled=False)
    image = tab.locator(".matgrad-vega-fallback img")
    assert image.is_visible() and image.get_attribute("alt")
    assert (
        tab.evaluate("() => document.querySelector('.matgrad-vega-fallback img').naturalWidth") > 0
    )
    ctx.close()
    ctx, tab, _, _ = _open(browser, url)
    tab.wait_for_selector(".matgrad-vega-live", timeout=30_000)
    tab.emulate_media(media="print")
    assert tab.locator(".matgrad-vega-fallback img").is_visible()
    assert not tab.locator(".matgrad-vega-view").is_visible()
    ctx.close()
