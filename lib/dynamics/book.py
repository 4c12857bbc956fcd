"""Book machinery: the Colab setup cell every chapter starts with, and a small Sphinx
extension (listed in ``_config.yml``) that

- serves plotly.js as the book's own static file, copied from the installed ``plotly``
  package, so figures render with no network access.
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


def _static_dir(app) -> Path:
    """Where the served assets are staged: inside the build directory, not the book's own
    ``_static`` (Jupyter Book adds every .js file found there as a <script> to every page)."""
    static = Path(app.doctreedir).parent / "dynamics_static"
    static.mkdir(parents=True, exist_ok=True)
    return static


def _serve_plotly(app, config) -> None:
    import plotly

    static = _static_dir(app)
    src = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    dst = static / "plotly.min.js"
    if not dst.exists() or dst.stat().st_size != src.stat().st_size:
        shutil.copyfile(src, dst)
    config.html_static_path = [*config.html_static_path, str(static)]  # copied to _static


def setup(app):
    os.environ.setdefault("DYNAMICS_PROGRESS", "0")
    app.connect("config-inited", _serve_plotly)
    app.add_js_file("plotly.min.js", priority=200)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
