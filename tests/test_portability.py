"""The same book on every machine.

The book is built on one machine and read, run and rebuilt on others, whose
kernels add numbers in other orders. Two things are checked here:

- **Other kernels.** The pages whose numbers depend on kernels run again
  with other kernels chosen on this very machine: oneDNN capped to AVX2
  (``ONEDNN_MAX_CPU_ISA``, what a CPU without AVX-512 gets) and NumPy's
  OpenBLAS on another kernel (``OPENBLAS_CORETYPE=Prescott``). Every page
  runs twice in one kernel, as a reader's second Run All does (this is
  these pages' run-twice check: tests/test_pages.py leaves them out), must
  pass both times, make the same kinds of output as the build, and the
  Chinese edition built from those runs must have no untranslated message. The
  glued values that changed are reported (``_build/portability.json``, and
  at the end of the pytest run), so one sees which variants changed what.
  A probe checks that each variant takes effect (oneDNN reports an
  instruction set below AVX-512, OpenBLAS a core older than AVX) and that
  the results it moves stay within the pages' tolerances.
- **No build path.** No file of the built site names the checkout, a
  ``site-packages`` folder or the home folder of the machine that built it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import (
    ROOT,
    assert_same_output_kinds_as_the_build,
    build_helper,
    built_notebook,
    execute_page,
)

# Pages with numbers computed by TensorFlow's, NumPy's or JAX's kernels.
KERNEL_PAGES = [
    "index.md",
    "chapters/01_symbolic.md",
    "chapters/04_vjp.md",
    "chapters/06_matmul_grad.md",
    "chapters/06b_around_the_rule.md",
    "chapters/07_complex.md",
    "further/frameworks.md",
    "appendix/tolerances.md",
    "appendix/onednn.md",
    "appendix/kernel_differences.md",
]
VARIANTS = {
    "oneDNN capped to AVX2": {"ONEDNN_MAX_CPU_ISA": "AVX2"},
    "NumPy's OpenBLAS on its Prescott kernel": {"OPENBLAS_CORETYPE": "Prescott"},
}
REPORT = ROOT / "_build" / "portability.json"

# Numbers that depend on the kernels each variant changes, computed in a fresh
# process (both variables are read when the library loads), and which kernel
# each library says it chose: oneDNN's instruction set (its verbose log) and
# OpenBLAS's core (when NumPy's OpenBLAS exports openblas_get_corename).
_PROBE = """
import ctypes, glob, json, os
import numpy as np
from matgrad.tf_env import onednn_seed_gradient

def openblas_core():
    for lib in glob.glob(os.path.join(os.path.dirname(np.__file__) + ".libs", "*openblas*")):
        for name in ("scipy_openblas_get_corename64_", "openblas_get_corename64_",
                     "openblas_get_corename"):
            f = getattr(ctypes.CDLL(lib), name, None)
            if f is not None:
                f.restype = ctypes.c_char_p
                return f().decode()
    return None

rng = np.random.default_rng(0)
a, b = rng.standard_normal((64, 64)), rng.standard_normal((64, 64))
run = onednn_seed_gradient()
print(json.dumps({
    "oneDNN seed gradient, row 0": [float(v) for v in run.gradient[0]],
    "oneDNN isa": run.isa,
    "NumPy float64 64x64 product": (a @ b).tolist(),
    "OpenBLAS core": openblas_core(),
}))
"""
# OpenBLAS cores with AVX or newer: OPENBLAS_CORETYPE=Prescott must leave them.
AVX_CORES = {"Sandybridge", "Haswell", "SkylakeX", "Cooperlake", "SapphireRapids", "Zen"}


def _probe(env: dict) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _glued(nb) -> dict:
    """The values a notebook glued, by key (their text/plain form)."""
    found = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            key = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if key:
                found[key] = out.get("data", {}).get("text/plain")
    return found


@pytest.mark.tf
def test_variants_take_effect_and_move_only_last_bits():
    """Each variant makes its library choose another kernel (when this CPU has
    a newer one), and the results stay within the tolerances the pages state;
    what changed here goes to the report."""
    base = _probe({})
    runs = {name: _probe(env) for name, env in VARIANTS.items()}
    report = json.loads(REPORT.read_text()) if REPORT.exists() else {}
    report["probe"] = {
        "kernels": {
            name: {k: r[k] for k in ("oneDNN isa", "OpenBLAS core")}
            for name, r in {"none": base, **runs}.items()
        },
        "changed by each variant": {
            name: sorted(k for k in base if r[k] != base[k]) for name, r in runs.items()
        },
    }
    REPORT.parent.mkdir(exist_ok=True)
    REPORT.write_text(json.dumps(report, indent=1, ensure_ascii=False))
    for name, r in runs.items():
        np.testing.assert_allclose(
            r["oneDNN seed gradient, row 0"],
            base["oneDNN seed gradient, row 0"],
            rtol=1e-6,
            err_msg=name,
        )
        np.testing.assert_allclose(
            r["NumPy float64 64x64 product"],
            base["NumPy float64 64x64 product"],
            rtol=1e-12,
            atol=1e-12,
            err_msg=name,
        )
    capped = runs["oneDNN capped to AVX2"]["oneDNN isa"]
    assert "AVX-512" not in capped and "AMX" not in capped, capped
    core = runs["NumPy's OpenBLAS on its Prescott kernel"]["OpenBLAS core"]
    if core is not None:
        assert core not in AVX_CORES, core


def _variant_runs(tmp_path_factory) -> dict:
    """Every kernel page, run twice in one kernel with all the variants set,
    in kernels forked from a zygote that imported NumPy and TensorFlow under
    them: page -> the notebook of each run."""
    from bookbuild.kernel_zygote import Zygote

    env = {k: v for variant in VARIANTS.values() for k, v in variant.items()}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    runs = {}
    try:
        with Zygote():
            for page in KERNEL_PAGES:
                workdir = tmp_path_factory.mktemp(page.replace("/", "_"))
                runs[page] = execute_page(Path(page), workdir, env=env, runs=2)
    finally:
        for key, value in saved.items():
            os.environ.pop(key, None) if value is None else os.environ.__setitem__(key, value)
    return runs


# One test, not a module fixture shared by several: pytest-xdist would make
# the fixture once on each worker that gets one of them, running the seven
# pages twice (its xdist_group does not work with pytest 9's node ids).
@pytest.mark.tf
@pytest.mark.timeout(900)
def test_kernel_pages_pass_with_other_kernels(tmp_path_factory, tmp_path):
    """Every kernel page passes twice with the variants, makes the same kinds
    of output as the build (the glued values that changed go to the report),
    and the Chinese edition built from those runs is fully translated."""
    runs = _variant_runs(tmp_path_factory)  # execute_page already failed on any error or stderr
    for page, (first, second) in runs.items():
        assert_same_output_kinds_as_the_build(Path(page), first)
        _same_kinds_as_the_build(page, second)
    _chinese_edition_is_fully_translated({p: second for p, (_, second) in runs.items()}, tmp_path)


def _same_kinds_as_the_build(page: str, nb) -> None:
    assert_same_output_kinds_as_the_build(Path(page), nb)
    built = built_notebook(Path(page))
    if built is not None:
        ours, theirs = _glued(nb), _glued(built)
        assert ours.keys() == theirs.keys(), f"{page}: other glued keys"
        report = json.loads(REPORT.read_text()) if REPORT.exists() else {}
        report.setdefault("glued values changed by the variants", {})[page] = {
            k: [theirs[k], ours[k]] for k in sorted(ours) if ours[k] != theirs[k]
        }
        REPORT.write_text(json.dumps(report, indent=1, ensure_ascii=False))


def _chinese_edition_is_fully_translated(variant_runs: dict, tmp_path) -> None:
    """The Chinese edition built from the variant runs shows no untranslated message."""
    from jupyter_cache import get_cache
    from jupyter_cache.cache.main import CacheBundleIn

    helper = build_helper()
    if not (helper.CACHE / "global.db").exists():
        pytest.skip("no execution cache: run 'make book' first")
    build = tmp_path / "_build"
    shutil.copytree(helper.CACHE, build / ".jupyter_cache")
    cache = get_cache(build / ".jupyter_cache")
    for page, nb in variant_runs.items():
        path = ROOT / page
        executed = helper.read(path)
        for cell, out in zip(
            [c for c in executed.cells if c.cell_type == "code"],
            [c for c in nb.cells if c.cell_type == "code"],
            strict=True,
        ):
            cell.outputs = out.outputs
        cache.cache_notebook_bundle(
            CacheBundleIn(executed, str(path)), check_validity=False, overwrite=True
        )
    result = subprocess.run(
        [sys.executable, "-m", "bookbuild.build_site", "--edition", "zh_CN", "--all"],
        env={**os.environ, "MATGRAD_BUILD_DIR": str(build)},
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    untranslated = json.loads((build / "zh_CN" / "untranslated.json").read_text())
    assert untranslated == {}, untranslated


def test_no_build_machine_path_on_any_page(built_site):
    needles = {str(ROOT), "site-packages"}
    home = os.path.expanduser("~")
    if home not in ("", "/"):
        needles.add(home.rstrip("/") + "/")
    hits = []
    for path in sorted(built_site.rglob("*")):
        if (
            path.suffix not in (".html", ".ipynb", ".md", ".txt", ".js", ".json")
            or "mathjax" in path.parts
            or "_static" in path.parts
            or not path.is_file()
        ):
            continue
        text = path.read_text("utf8", errors="replace")
        hits += [f"{path.relative_to(built_site)}: {n}" for n in needles if n in text]
    assert not hits, "the built site names the build machine:\n" + "\n".join(hits)
