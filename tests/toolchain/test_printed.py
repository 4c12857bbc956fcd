"""The printed edition: the whole book as one PDF, every figure drawn in it."""
from __future__ import annotations

import shutil
import unicodedata
from pathlib import Path

import plotly.graph_objects as go
import pytest
import yaml

from dynamics import book, plots

from dynamics_toolchain import printed
from dynamics_toolchain import scripts
from dynamics_toolchain import sphinx

ROOT = Path(__file__).resolve().parents[2]


def _book(folder: Path) -> tuple[Path, dict]:
    """A built book's shape without building it: the landing page and one page per chapter of
    the table of contents, each with a line plot, and the chapters with a slider figure and a
    3-D figure too (what the real chapters hold). Returns (html dir, figures per page)."""
    import plotly

    static = folder / "_static"
    static.mkdir(parents=True)
    shutil.copyfile(Path(plotly.__file__).parent / "package_data" / "plotly.min.js",
                    static / "plotly.min.js")
    (static / "dynamics.js").write_text(scripts.book_js())
    (static / "dynamics.css").write_text(scripts.book_css())
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]] + [c["file"] for c in toc["chapters"]]
    counts = {}
    for i, f in enumerate(files):
        figs = [plots.figure(f"loss {i}", "step", "loss").add_scatter(x=[1, 2, 3], y=[3, 2, i], mode="lines")]
        if f != toc["root"]:
            runs = [plots.figure(f"run {k}", "step", "loss").add_scatter(x=[1, 2], y=[k, 1]) for k in range(5)]
            figs.append(plots.slider(runs, list(range(5)), name="run"))
            figs.append(go.Figure(go.Scatter3d(x=[0, 1], y=[0, 1], z=[0, i], mode="markers"),
                                  layout=dict(height=380, title=f"points {i}")))
        counts[f] = len(figs)
        depth = "../" * f.count("/")
        body = "".join(plots.to_html(fig) for fig in figs)
        path = folder / f"{f}.html"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f'<html><head><link rel="stylesheet" href="{depth}_static/dynamics.css">'
            f'<script src="{depth}_static/plotly.min.js"></script>'
            f'<script src="{depth}_static/dynamics.js"></script></head><body>'
            f'<div class="bd-sidebar-primary">NAVIGATION</div><article class="bd-article">'
            f'<h1>Page {i}: {f}</h1><p>{"Some prose. " * 200}</p>{body}'
            f'<h2>References</h2><p>A paper of chapter {i}.</p></article></body></html>')
    return folder, counts


def test_the_printed_book_holds_every_figure_numbered_pages_and_contents(tmp_path):
    from pypdf import PdfReader

    html, counts = _book(tmp_path / "html")
    pdf = printed.print_book(html)
    assert pdf == html / printed.PDF_NAME
    reader = PdfReader(str(pdf))
    raw = [p.extract_text() for p in reader.pages]
    # the PDF's text as words; NFKC undoes the font's ligatures ("ﬀ" in a commit hash with "ff")
    text = [" ".join(unicodedata.normalize("NFKC", t).split()) for t in raw]
    # the title page with the book's version, then the contents with each page's first page
    assert "Training Dynamics" in text[0] and sphinx.stamp().split(",")[0] in text[0]
    assert "Contents" in text[1]
    outline = {item.title: reader.get_destination_page_number(item) for item in reader.outline}
    assert len(outline) == len(counts)
    for title, page in outline.items():
        assert title in text[1] and str(page + 1) in text[1]
        assert title in text[page]  # the contents point at the page that starts with it
    # every page but the title page has its number at its foot
    for k, t in enumerate(raw[1:], start=2):
        assert t.strip().splitlines()[-1].strip() == str(k), (k, t[-80:])
    # no navigation printed, the references are
    assert not any("NAVIGATION" in t for t in text) and sum("References" in t for t in text) == len(counts)
    # every figure is drawn: one picture per figure, none blank, the slider's value said
    pics = printed.figures_in(pdf)
    assert sum(len(p) for p in pics) == sum(counts.values())
    assert all(p["colours"] > 8 for page in pics for p in page)
    assert sum("Shown at run = 4" in t for t in text) == len(counts) - 1


def test_printing_needs_a_built_book(tmp_path):
    with pytest.raises(FileNotFoundError, match="build the book first"):
        printed.print_book(tmp_path)
