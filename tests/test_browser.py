"""The built static site works offline: the theory chapter's slider explorer recomputes in the browser.

Builds a minimal book (intro, theory, status, references) in a temporary folder with the repository's
own ``_config.yml`` and vendored widget runtime (book/_vendor, from scripts/setup.sh) — the same
``jupyter-book build -W -n --keep-going`` path as ``make book`` — then opens the theory page from
``file://`` in Debian's headless Chromium (Playwright, never a downloaded browser), moves every slider
and checks the displayed C and n* against :mod:`accessibility_lib.bounds` to 4 significant digits.
Every request that is not ``file:``/``data:``/``blob:`` is aborted and counted; the count must be 0.
A last test starts JupyterLab on 127.0.0.1 and checks the same widget live: it renders, recomputes on
a slider move, and the moved value reaches the kernel.

Needs: /usr/bin/chromium (``scripts/setup.sh --browser``), node_modules + book/_vendor (``scripts/setup.sh``).
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from accessibility_lib import bounds

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
MINIMAL_TOC = """format: jb-book
root: book/intro
chapters:
  - file: book/01_theory
  - file: book/presets
  - file: book/status
  - file: book/references
"""
BOOK_FILES = ["intro.md", "01_theory.md", "presets.md", "status.md", "references.md", "references.bib"]


def _vendor_ready() -> bool:
    return (ROOT / "book" / "_vendor" / "abx" / "embed-amd.js").is_file()


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """Build the minimal book; returns its _build/html folder."""
    if not _vendor_ready():
        pytest.fail("book/_vendor is missing: run `bash scripts/setup.sh` (npm ci + scripts/vendor_assets.py)")
    work = tmp_path_factory.mktemp("book")
    shutil.copy(ROOT / "_config.yml", work / "_config.yml")
    (work / "_toc.yml").write_text(MINIMAL_TOC)
    (work / "book").mkdir()
    for name in BOOK_FILES:
        src = ROOT / "book" / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, work / "book" / name)
    (work / "book" / "_vendor").symlink_to(ROOT / "book" / "_vendor", target_is_directory=True)
    env = dict(os.environ, ACCESSIBILITY_BOOK_BUILD="1")
    jb = Path(sys.executable).with_name("jupyter-book")
    proc = subprocess.run(
        [str(jb), "build", ".", "-W", "-n", "--keep-going"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, f"book build failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    html = work / "_build" / "html"
    assert (html / "book" / "01_theory.html").is_file()
    return html


def test_built_pages_hold_no_remote_urls(site: Path) -> None:
    """No page names anything on the network: no http(s) URL with a host in any built .html file.

    (A bare ``https://`` is allowed: it is one of the paper's Fig 1 prompts, listed on the presets page.)
    """
    offenders = {}
    for page in site.rglob("*.html"):
        urls = re.findall(
            r"https?://[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+", page.read_text(encoding="utf-8", errors="replace")
        )
        if urls:
            offenders[str(page.relative_to(site))] = sorted(set(urls))[:5]
    assert offenders == {}
    theory = (site / "book" / "01_theory.html").read_text(encoding="utf-8")
    assert "application/vnd.jupyter.widget-state+json" in theory  # the widget state is embedded
    assert "_static/abx/embed-amd.js" in theory and "_static/abx/require.js" in theory


def _read(page, testid: str) -> float:
    return float(page.get_attribute(f'[data-testid="{testid}"]', "data-value"))


def _params(page) -> dict:
    root = '[data-testid="bound-explorer"]'
    get = lambda name: page.get_attribute(root, f"data-{name}")  # noqa: E731
    return {
        "eps": float(get("eps")),
        "r": float(get("r")),
        "d": int(get("d")),
        "vocab_size": int(get("vocab-size")),
        "m": int(get("m")),
        "n": int(get("n")),
    }


def _shown(page, testid: str) -> float:
    """The number as displayed (text, 6 significant digits), not the hidden full-precision value."""
    return float(page.inner_text(f'[data-testid="{testid}"]'))


def _close4(shown: float, expected: float) -> bool:
    return math.isclose(shown, expected, rel_tol=1e-4, abs_tol=0.0) or f"{shown:.4g}" == f"{expected:.4g}"


def _check_against_bounds(page) -> dict:
    p = _params(page)
    C = bounds.ball_slope(p["d"], p["r"], p["eps"], p["vocab_size"])
    nstar = bounds.ball_threshold_length(p["d"], p["r"], p["eps"], p["vocab_size"], p["m"])
    frac = bounds.log_accessible_fraction(p["d"], p["r"], p["eps"], p["vocab_size"], p["m"], p["n"])
    shown = {"C": _shown(page, "out-C"), "nstar": _shown(page, "out-nstar"), "lnFracN": _shown(page, "out-lnFracN")}
    assert _close4(shown["C"], C), (p, shown, C)
    assert _close4(shown["nstar"], nstar), (p, shown, nstar)
    assert frac == 0.0 and shown["lnFracN"] == 0.0 or _close4(shown["lnFracN"], frac), (p, shown, frac)
    return {**p, **shown}


# slider -> fraction of its range to move to (chosen so every move changes the value)
MOVES = {"eps": 0.35, "r": 0.6, "d": 0.25, "vocab_size": 0.8, "m": 0.002, "n": 0.7}


def test_sliders_recompute_offline(site: Path) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists():
        pytest.fail("/usr/bin/chromium is missing: run `bash scripts/setup.sh --browser` (apt-get install chromium)")
    external: list[str] = []
    with playwright.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page()

            def route(r):
                if r.request.url.split(":", 1)[0] in ("file", "data", "blob"):
                    r.continue_()
                else:
                    external.append(r.request.url)
                    r.abort()

            page.route("**/*", route)
            page.on(
                "request",
                lambda req: None if req.url.split(":", 1)[0] in ("file", "data", "blob") else external.append(req.url),
            )
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            missing: list[str] = []  # local files the page asked for and did not find (e.g. icon fonts)
            page.on("requestfailed", lambda req: missing.append(req.url) if req.url.startswith("file:") else None)
            page.goto((site / "book" / "01_theory.html").as_uri())
            page.wait_for_selector('[data-testid="out-C"]', timeout=60_000)
            before = _check_against_bounds(page)
            assert math.isclose(before["C"], 590.091, rel_tol=1e-5)  # Pythia-160M, 2r/ε = 4096
            for name, frac in MOVES.items():
                slider = page.locator(f'[data-testid="slider-{name}"]')
                lo, hi = float(slider.get_attribute("min")), float(slider.get_attribute("max"))
                target = lo + frac * (hi - lo)
                slider.evaluate(
                    "(el, v) => { el.value = String(v); el.dispatchEvent(new Event('input', {bubbles: true})); }",
                    target,
                )
                after = _check_against_bounds(page)
                assert after[name] != before[name], f"moving slider {name} did not change it"
                changed = [k for k in ("C", "nstar", "lnFracN") if after[k] != before[k]]
                assert changed, f"moving slider {name} changed no output"
                before = after
            # the curve was redrawn and the threshold marked
            assert page.locator('[data-testid="curve"]').count() == 1
            page.wait_for_timeout(500)  # let late requests (fonts, MathJax components) show up
            assert errors == []
            assert missing == [], f"local files missing from the site: {missing[:5]}"
        finally:
            browser.close()
    assert external == [], f"the page made {len(external)} requests outside the local site: {external[:5]}"


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_live_in_jupyterlab(tmp_path: Path) -> None:
    """In JupyterLab the same widget renders, recomputes on a slider move, and syncs the value to the kernel."""
    import socket
    import time

    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    playwright = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists():
        pytest.fail("/usr/bin/chromium is missing: run `bash scripts/setup.sh --browser` (apt-get install chromium)")
    nb = new_notebook(
        cells=[
            new_code_cell("from accessibility_lib.widgets import BoundExplorer\nw = BoundExplorer()\nw"),
            new_code_cell("print('KERNEL', w.d, repr(w.values()['C']))"),
        ]
    )
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, tmp_path / "live.ipynb")
    port = _free_port()
    jupyter = Path(sys.executable).with_name("jupyter")
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"))
    lab = subprocess.Popen(
        [
            str(jupyter),
            "lab",
            "--no-browser",
            "--allow-root",
            f"--port={port}",
            "--ServerApp.ip=127.0.0.1",
            "--IdentityProvider.token=",
            "--ServerApp.password=",
            "--ServerApp.disable_check_xsrf=True",
            f"--ServerApp.root_dir={tmp_path}",
            "--LabApp.news_url=",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ],
        stdout=open(tmp_path / "lab.log", "w"),
        stderr=subprocess.STDOUT,
        env=env,
    )
    external: list[str] = []
    try:
        for _ in range(240):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.5)
        local = (f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}", "data:", "blob:")
        with playwright.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
            try:
                page = browser.new_page(viewport={"width": 1200, "height": 900})
                page.on("request", lambda req: None if req.url.startswith(local) else external.append(req.url))
                page.goto(f"http://127.0.0.1:{port}/lab/tree/live.ipynb")
                page.wait_for_selector(".jp-Notebook", timeout=90_000)
                page.wait_for_timeout(2000)
                page.keyboard.press("Escape")
                page.click("text=Run", timeout=30_000)
                page.click("text=Run All Cells", timeout=30_000)
                page.wait_for_selector('[data-testid="out-C"]', timeout=90_000)
                assert float(page.inner_text('[data-testid="out-C"]')) == pytest.approx(590.091, rel=1e-6)
                page.locator('[data-testid="slider-d"]').evaluate(
                    "(el) => { el.value = '2048'; el.dispatchEvent(new Event('input', {bubbles: true})); }"
                )
                expected = bounds.ball_slope(2048, 1.0, 2.0**-11, 50304)
                assert _close4(float(page.inner_text('[data-testid="out-C"]')), expected)
                page.wait_for_timeout(1000)  # let the new value reach the kernel
                page.locator(".jp-Cell").nth(1).click()
                page.keyboard.press("Shift+Enter")
                page.wait_for_selector("text=KERNEL 2048", timeout=60_000)
                text = next(t for t in page.locator(".jp-OutputArea-output").all_inner_texts() if "KERNEL" in t)
                assert _close4(float(text.split()[2]), expected)
            finally:
                browser.close()
    finally:
        lab.terminate()
        lab.wait(15)
    assert external == [], f"JupyterLab page requested {external[:5]}"
