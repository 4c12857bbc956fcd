"""The Colab setup cell every chapter starts with: generated here (one home), written into the
notebooks by ``python -m dynamics_toolchain colab-cells``, and tested against ``_config.yml``."""
from __future__ import annotations

from pathlib import Path

from dynamics.book import repository_url  # noqa: F401 (one home: the library's, for show_source)

REPO_DIR = "training-dynamics"

# The first code cell of every chapter (``python -m dynamics_toolchain colab-cells`` writes it).
# Plain Python, no magics, so that Colab and the tests run the same code. Safe to run twice:
# the clone is updated, not made again; the library is installed once; sys.path gets one entry.
COLAB_CELL = """\
# Colab setup: on Colab, fetch the book's repository (library + precomputed data) and install
# the library from it; anywhere else this cell does nothing. Safe to run again: it updates the
# copy, installs once, and never reinstalls torch or Colab's other packages.
import os, shutil, subprocess, sys
from importlib.metadata import PackageNotFoundError, version
REPO, DIR, AGAIN = "{url}", "{dir}", "then run this cell again"
def git(*args):
    out = subprocess.run(["git", *args], capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else None
if "google.colab" in sys.modules:
    if not shutil.which("git"):
        raise RuntimeError(f"git is missing: install it (apt-get install -y git), {{AGAIN}}")
    if not os.path.isdir(DIR):
        if git("clone", "--depth", "1", "--branch", "{branch}", REPO, DIR) is None:
            raise RuntimeError(f"could not clone {{REPO}}: check the connection, {{AGAIN}}")
    elif git("-C", DIR, "config", "remote.origin.url") != REPO:
        raise RuntimeError(f"{{DIR}}/ is not a clone of {{REPO}}: delete or rename it, {{AGAIN}}")
    elif (git("-C", DIR, "fetch", "--depth", "1", "origin", "{branch}") is None
          or git("-C", DIR, "reset", "--hard", "FETCH_HEAD") is None):
        print(f"could not update {{DIR}}/ (offline?): using it as it is; delete it to start afresh")
    try:
        version("dynamics")  # installed by an earlier run
    except PackageNotFoundError:  # once: the library, and what Colab lacks (mnist1d)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "-e", DIR], check=True)
    LIB = os.path.abspath(f"{{DIR}}/lib")
    if LIB not in sys.path:
        sys.path.insert(0, LIB)"""


def colab_cell(url: str, branch: str = "main") -> str:
    """The source of a chapter's first code cell for the repository at ``url``."""
    return COLAB_CELL.format(url=url, dir=REPO_DIR, branch=branch)


def write_colab_cells(chapters_dir=None) -> list[Path]:
    """Make the first code cell of every chapter notebook the Colab cell for the repository
    in ``_config.yml`` (the cell is generated here, one home, and tested against this);
    returns the notebooks changed. Notebooks are read and written with nbformat, so nothing
    else in them changes."""
    import nbformat

    from dynamics.results import ROOT

    changed = []
    cell = colab_cell(repository_url())
    for path in sorted(Path(chapters_dir or ROOT / "chapters").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=nbformat.NO_CONVERT)
        first = next((c for c in nb.cells if c.cell_type == "code"), None)
        if first is None:
            raise ValueError(f"{path} has no code cell to hold the Colab setup")
        if first.source != cell:
            first.source = cell
            path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
            changed.append(path)
    return changed


