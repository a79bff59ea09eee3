"""Copy the static site's third-party JS into book/_vendor/abx (git-ignored), so pages load it locally.

Run by scripts/setup.sh after ``npm ci``. Sources, none of them committed:

- node_modules/requirejs/require.js                          (npm ``requirejs``)
- node_modules/@jupyter-widgets/html-manager/dist/embed-amd.js and its icon fonts (npm
  ``@jupyter-widgets/html-manager@^1``; webpack resolves the fonts next to the script)
- node_modules/mathjax/es5/tex-chtml.js with the components and fonts it loads (npm ``mathjax@3``)
- <venv>/share/jupyter/nbextensions/anywidget/index.js       (anywidget's AMD module, pip ``anywidget``)

plus our own accessibility_lib/figures/widgets/require_config.js (maps the AMD name ``anywidget`` to that copy).

The html-manager validates the saved widget state with ajv (v8), which it creates with no options, so ajv's
default strict mode logs two "strict mode: ..." console warnings on every page with widgets (the widget-state
schema uses keywords ajv does not know). The copy of embed-amd.js is patched where the html-manager creates
its two ajv instances (:func:`patch_embed`): they are built with ``{strict: false}``; the validation itself
is unchanged. The patch fails loudly (naming what it expected) when a new html-manager no longer matches.
``_config.yml`` points ``nb_ipywidgets_js`` and ``mathjax_path`` at ``_static/abx/...`` and lists
``book/_vendor`` in ``html_static_path``. Idempotent; exits non-zero naming what is missing.

Usage: ``.venv/bin/python scripts/vendor_assets.py [--check]`` (``--check`` only verifies the copy).
"""

from __future__ import annotations

import re
import shutil
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NODE = ROOT / "node_modules"
DEST = ROOT / "book" / "_vendor" / "abx"

#: files every page with widgets or math needs, relative to DEST (the build config names these)
REQUIRED = [
    "require.js",
    "require_config.js",
    "embed-amd.js",
    "anywidget/index.js",
    "mathjax/tex-chtml.js",
    "mathjax/output/chtml/fonts/woff-v2",
]

# MathJax's big all-in-one bundles other than the one we load are not needed.
_MATHJAX_SKIP = {
    "tex-chtml-full-speech.js",
    "tex-chtml-full.js",
    "tex-mml-chtml.js",
    "tex-mml-svg.js",
    "tex-svg-full.js",
    "tex-svg.js",
    "mml-chtml.js",
    "mml-svg.js",
    "node-main.js",
}


#: where the html-manager's bundle creates ajv and compiles the widget-state schemas with it, e.g.
#: ``gt=new(ht());gt.compile(At)`` and ``k=new(w()),E=k.compile(y)`` (minified names differ between its builds)
_AJV_NEW = re.compile(r"(?P<v>[\w$]+)=new\((?P<f>[\w$]+)\(\)\)(?P<rest>[,;](?:[\w$]+=)?(?P=v)\.compile\()")
#: how many ajv instances @jupyter-widgets/html-manager 1.x creates in embed-amd.js
AJV_INSTANCES = 2


def patch_embed(text: str) -> str:
    """``embed-amd.js`` with its ajv instances created in non-strict mode (no "strict mode" console warnings).

    Raises:
        ValueError: if the bundle does not create exactly :data:`AJV_INSTANCES` ajv instances in the expected
            form (a new html-manager version: look for ``new(...)`` followed by ``.compile(`` of the schemas).
    """
    patched, count = _AJV_NEW.subn(r"\g<v>=new(\g<f>())({strict:!1})\g<rest>", text)
    if count != AJV_INSTANCES:
        raise ValueError(
            f"embed-amd.js: expected {AJV_INSTANCES} ajv instances created as `x=new(f());x.compile(`, found {count}; "
            "update scripts/vendor_assets.py's patch_embed for this html-manager version"
        )
    return patched


def _anywidget_amd() -> Path:
    """anywidget's AMD module shipped by the pip package into <prefix>/share/jupyter/nbextensions."""
    candidates = [Path(sys.prefix), Path(sysconfig.get_paths()["data"]), ROOT / ".venv"]
    for prefix in candidates:
        path = prefix / "share" / "jupyter" / "nbextensions" / "anywidget" / "index.js"
        if path.is_file():
            return path
    raise FileNotFoundError(
        "anywidget's AMD module (share/jupyter/nbextensions/anywidget/index.js) not found under "
        f"{[str(c) for c in candidates]}; install requirements.txt (anywidget) into .venv"
    )


def _copy(src: Path, dst: Path) -> None:
    if not src.exists():
        raise FileNotFoundError(f"{src} is missing: run `npm ci` in {ROOT} (scripts/setup.sh does)")
    dst.parent.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        shutil.copytree(src, dst, dirs_exist_ok=True)
    elif not dst.exists() or dst.stat().st_mtime < src.stat().st_mtime or dst.stat().st_size != src.stat().st_size:
        shutil.copy2(src, dst)


def vendor() -> None:
    """Copy everything into DEST."""
    _copy(NODE / "requirejs" / "require.js", DEST / "require.js")
    _copy(ROOT / "accessibility_lib" / "figures" / "widgets" / "require_config.js", DEST / "require_config.js")
    dist = NODE / "@jupyter-widgets" / "html-manager" / "dist"
    if not (dist / "embed-amd.js").is_file():
        raise FileNotFoundError(f"{dist / 'embed-amd.js'} is missing: run `npm ci` in {ROOT} (scripts/setup.sh does)")
    embed = patch_embed((dist / "embed-amd.js").read_text(encoding="utf-8"))
    if not (DEST / "embed-amd.js").is_file() or (DEST / "embed-amd.js").read_text(encoding="utf-8") != embed:
        DEST.mkdir(parents=True, exist_ok=True)
        (DEST / "embed-amd.js").write_text(embed, encoding="utf-8")
    for font in dist.iterdir():  # the widget icon fonts (Font Awesome), hashed names, next to the script
        if font.suffix in {".woff", ".woff2", ".ttf", ".eot", ".svg"}:
            _copy(font, DEST / font.name)
    _copy(_anywidget_amd(), DEST / "anywidget" / "index.js")
    mj = NODE / "mathjax" / "es5"
    if not mj.is_dir():
        raise FileNotFoundError(f"{mj} is missing: run `npm ci` in {ROOT} (scripts/setup.sh does)")
    for item in mj.iterdir():
        if item.name not in _MATHJAX_SKIP:
            _copy(item, DEST / "mathjax" / item.name)


def check() -> list[str]:
    """The required files that are missing from DEST."""
    return [name for name in REQUIRED if not (DEST / name).exists()]


def main(argv: list[str]) -> int:
    if "--check" not in argv:
        try:
            vendor()
        except (FileNotFoundError, ValueError) as err:
            print(f"vendor_assets: {err}", file=sys.stderr)
            return 1
    missing = check()
    if missing:
        print(f"vendor_assets: missing in {DEST}: {missing}", file=sys.stderr)
        return 1
    print(f"vendor_assets: widget runtime and MathJax ready in {DEST.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
