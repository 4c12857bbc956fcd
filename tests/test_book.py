"""The book as readers get it: Colab cells, the table of contents, and the rendered HTML.

``test_rendered_book`` builds the whole book in the smoke profile with warnings as errors
(every chapter notebook is executed), then loads each chapter page in headless Chromium with
all network access blocked and checks that every plotly figure drew its SVG and that the page
has a Colab launch link.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dynamics import CHAPTERS
from dynamics.book import colab_cell, repository_url
from dynamics.bench import BOOK_COPY_IGNORE

ROOT = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
TOC = yaml.safe_load((ROOT / "_toc.yml").read_text())
NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb"))


def test_show_source_renders_the_library_code_with_a_link():
    from dynamics.book import show_source
    from dynamics.train import eval_schedule

    out = show_source(eval_schedule).data
    assert out.startswith("<details") and "Show the code: eval_schedule" in out
    assert "lib/dynamics/train.py#L" in out and CONFIG["repository"]["url"] in out
    assert "eval_every" in out and "def" in out
    with pytest.raises(ValueError, match="no source"):
        show_source(len)


def toc_files() -> list[str]:
    return [entry["file"] for entry in TOC.get("chapters") or []]


def test_config_points_launch_buttons_at_the_repository():
    url = CONFIG["repository"]["url"]
    assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", url)
    assert CONFIG["repository"]["branch"] == "main"
    assert CONFIG["launch_buttons"]["colab_url"] == "https://colab.research.google.com"
    assert CONFIG["bibtex_bibfiles"] == ["data/references.bib"]
    assert "dynamics.book" in CONFIG["sphinx"]["extra_extensions"]


def test_toc_lists_intro_and_every_chapter_that_exists():
    assert TOC["root"] == "intro" and (ROOT / "intro.md").exists()
    files = toc_files()
    assert sorted(files) == sorted(f"chapters/{nb.stem}" for nb in NOTEBOOKS)
    for stem in (Path(f).name for f in files):
        assert stem in CHAPTERS, f"{stem} is not a chapter of dynamics.CHAPTERS"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_chapter_starts_with_the_colab_cell(nb):
    cells = json.loads(nb.read_text())["cells"]
    first = next(c for c in cells if c["cell_type"] == "code")
    assert "".join(first["source"]) == colab_cell(repository_url())
    assert CONFIG["repository"]["url"] in "".join(first["source"])


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_chapter_is_committed_without_outputs_and_mirrors_its_module(nb):
    cells = json.loads(nb.read_text())["cells"]
    assert all(not c.get("outputs") and not c.get("execution_count")
               for c in cells if c["cell_type"] == "code")
    module = CHAPTERS[nb.stem]
    assert (ROOT / "lib" / "dynamics" / f"{module}.py").exists()
    assert (ROOT / "tests" / f"test_{module}.py").exists()
    text = "".join("".join(c["source"]) for c in cells)
    assert "{cite}" in text and "{bibliography}" in text


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise RuntimeError("the rendered-book test needs Chromium (Debian: apt-get install chromium)")


def _render(browser: str, page: Path, tmp: Path) -> str:
    """The page's DOM after its scripts ran, with every network request refused."""
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--disable-quic", f"--user-data-dir={tmp / 'profile'}",
           "--host-resolver-rules=MAP * ~NOTFOUND", "--virtual-time-budget=15000",
           "--dump-dom", page.as_uri()]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    return out.stdout


@pytest.mark.book
def test_rendered_book(tmp_path):
    src = tmp_path / "book"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(*BOOK_COPY_IGNORE))
    env = dict(os.environ, DYNAMICS_PROFILE="smoke", DYNAMICS_PROGRESS="0")
    build = subprocess.run([str(Path(sys.executable).parent / "jupyter-book"), "build", str(src),
                            "-W", "-n", "--keep-going"], capture_output=True, text=True, env=env)
    assert build.returncode == 0, build.stdout[-6000:] + build.stderr[-6000:]
    html = src / "_build" / "html"
    assert (html / "_static" / "plotly.min.js").stat().st_size > 1_000_000
    browser = _chromium()
    intro = (html / "intro.html").read_text()
    assert len(re.findall(r'<script[^>]*src="[^"]*plotly\.min\.js', intro)) == 1, "plotly.js not loaded once"
    for chapter in toc_files():
        page = html / f"{chapter}.html"
        remote = [src for src in re.findall(r'<script[^>]*src="(https?://[^"]+)"', page.read_text())
                  if "mathjax" not in src]  # equations only: MathJax 3 comes from its CDN
        assert not remote, f"{chapter}: scripts loaded from the network: {remote}"
        dom = _render(browser, page, tmp_path)
        figures = re.findall(r'<div id="(dyn-[0-9a-f]+)"', dom)
        assert figures, f"{chapter}: no figures on the page"
        # plotly draws inside the figure's div, before the script that follows it
        blocks = re.split(r'<div id="dyn-[0-9a-f]+"', dom)[1:]
        blank = [fid for fid, block in zip(figures, blocks) if "main-svg" not in block.split("<script")[0]]
        assert not blank, f"{chapter}: {len(blank)} of {len(figures)} figures did not render"
        colab = f"https://colab.research.google.com/github/{CONFIG['repository']['url'].split('github.com/')[1]}/blob/main/{chapter}.ipynb"
        assert colab in dom, f"{chapter}: no Colab launch link"
        assert "Traceback" not in dom, f"{chapter}: a cell raised"
