"""Book machinery: the Colab setup cell every chapter starts with, and a small Sphinx
extension (listed in ``_config.yml``) that

- serves plotly.js as the book's own static file, copied from the installed ``plotly``
  package, so figures render with no network access.
- serves MathJax (2.7, from the ``jupyter-server-mathjax`` package) the same way, so the
  equations typeset offline too; without that package the book keeps Sphinx's CDN MathJax.
- tells the notebook kernels the book executes not to draw progress bars (they would be
  stale widget output in a static page).
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path


REPO_DIR = "training-dynamics"

COLAB_CELL = """\
# Colab setup: on Colab, fetch the book's repository (library + precomputed data) and install
# the library from it. Anywhere else this cell does nothing. It never reinstalls torch.
import os, subprocess, sys
REPO = "{url}"
if "google.colab" in sys.modules:
    if not os.path.isdir("{dir}"):
        subprocess.run(["git", "clone", "--depth", "1", REPO, "{dir}"], check=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "-e", "{dir}"], check=True)
    sys.path.insert(0, os.path.abspath("{dir}/lib"))"""


def colab_cell(url: str) -> str:
    """The source of a chapter's first code cell for the repository at ``url``."""
    return COLAB_CELL.format(url=url, dir=REPO_DIR)


def repository_url(config_path=None) -> str:
    """``repository.url`` from the book's ``_config.yml``."""
    import yaml

    from .results import ROOT

    config = yaml.safe_load(open(config_path or ROOT / "_config.yml"))
    return config["repository"]["url"]


# MathJax 2's combined TeX configuration, as shipped by jupyter-server-mathjax
MATHJAX_PATH = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"


def _static_dir(app) -> Path:
    """Where the served assets are staged: inside the build directory, not the book's own
    ``_static`` (Jupyter Book adds every .js file found there as a <script> to every page)."""
    static = Path(app.doctreedir).parent / "dynamics_static"
    static.mkdir(parents=True, exist_ok=True)
    return static


def _serve_assets(app, config) -> None:
    import plotly

    static = _static_dir(app)
    src = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    dst = static / "plotly.min.js"
    if not dst.exists() or dst.stat().st_size != src.stat().st_size:
        shutil.copyfile(src, dst)
    config.html_static_path = [*config.html_static_path, str(static)]  # copied to _static
    try:
        import jupyter_server_mathjax
    except ImportError:  # keep Sphinx's MathJax 3 from its CDN
        return
    if not (static / "mathjax" / "MathJax.js").exists():
        shutil.copytree(Path(jupyter_server_mathjax.__file__).parent / "static", static / "mathjax",
                        dirs_exist_ok=True)
    config.mathjax_path = MATHJAX_PATH  # a relative path is served from _static
    # MyST marks each page "tex2jax_ignore mathjax_ignore" and writes a MathJax 3 config that
    # re-enables the math spans; say the same in MathJax 2's terms instead.
    config.myst_update_mathjax = False
    config.mathjax3_config = None
    config.mathjax2_config = {"tex2jax": {
        "inlineMath": [["\\(", "\\)"]], "displayMath": [["\\[", "\\]"]],
        "processClass": "tex2jax_process|mathjax_process|math|output_area",
        "ignoreClass": "tex2jax_ignore|mathjax_ignore"},
        # always the web fonts shipped with it (STIX-Web, as in Jupyter): local fonts of another
        # version than MathJax 2 expects misplace hats and radicals
        "HTML-CSS": {"availableFonts": [], "preferredFont": None, "webFont": "STIX-Web",
                     "imageFont": None}}


def setup(app):
    os.environ.setdefault("DYNAMICS_PROGRESS", "0")
    app.connect("config-inited", _serve_assets)
    app.add_js_file("plotly.min.js", priority=200)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
