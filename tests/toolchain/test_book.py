"""The book as readers get it: Colab cells, the table of contents, the layout of the packages,
and the rendered HTML read in a real browser (``test_rendered_book``)."""
from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
import yaml

from dynamics import CHAPTERS, book

from dynamics_toolchain import htmlcheck, printed, reading
from dynamics_toolchain.colab import colab_cell, repository_url
from dynamics_toolchain import pages
from dynamics_toolchain import scripts
from dynamics_toolchain import sphinx

ROOT = Path(__file__).resolve().parents[2]
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
TOC = yaml.safe_load((ROOT / "_toc.yml").read_text())
NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb"))


def test_show_source_renders_the_library_code_with_a_link():
    from dynamics.book import show_source
    from dynamics.train import eval_schedule

    out = show_source(eval_schedule).data
    assert out.startswith("<details") and "Show the code: eval_schedule" in out
    assert "lib/dynamics/train.py#L" in out and CONFIG["repository"]["url"] in out
    assert "evaluation" in out and "def" in out
    with pytest.raises(ValueError, match="no source"):
        show_source(len)


def toc_files() -> list[str]:
    """The chapters in the table of contents (the pages under chapters/, not the corrections)."""
    return [entry["file"] for entry in TOC.get("chapters") or [] if entry["file"].startswith("chapters/")]


def test_glue_prints_outside_the_book_and_writes_numbers_as_the_book_does(capsys, monkeypatch):
    from dynamics.book import glue

    monkeypatch.delenv("DYNAMICS_BOOK_BUILD", raising=False)
    out = glue(t=1234.0, share="93%", etas=[0.001, 0.003, 0.01], one=[2.0])
    assert capsys.readouterr().out.strip() == \
        "t = 1,234; share = 93%; etas = 0.001, 0.003 and 0.01; one = 2"
    assert out is None  # a cell ending in glue(...) shows no output of its own
    with pytest.raises(ValueError, match="at least one"):
        glue()
    with pytest.raises(ValueError, match="empty list"):
        glue(x=[])


def test_glued_text_reads_back_verbatim_in_myst_nb():
    """``{glue:text}`` reads the stored text/plain back as a Python literal before printing it
    (``myst_nb``'s ``format_plain_text``): what ``Glued`` stores reads back as the text itself,
    where a bare "2,000" read back as the tuple (2, 0) and "0.100" as 0.1."""
    from IPython.core.formatters import format_display_data
    from myst_nb.core.variables import format_plain_text

    from dynamics.book import Glued

    texts = ["2,000", "6,218", "0.100", "1×10⁻⁵", "12,345,678", "1, 3 and 10", "93%",
             'it\'s "quoted", 50%', "a\\b", "(2, 0)", "None", ""]
    for text in texts:
        data, _ = format_display_data(Glued(text))
        assert format_plain_text(data["text/plain"], "s") == text
        assert data["text/html"] == html.escape(text)
    assert format_plain_text("2,000", "s") == "(2, 0)"  # what a bare text became


def _tiny_book(folder: Path) -> Path:
    """A one-page Jupyter Book with the book's own configuration (its Sphinx extension, theme
    and MyST-NB settings): a notebook that glues ``GLUED`` and a paragraph with the roles."""
    import shutil
    import subprocess
    import sys

    import nbformat

    shutil.copyfile(ROOT / "_config.yml", folder / "_config.yml")
    (folder / "data").mkdir()
    shutil.copyfile(ROOT / "data" / "references.bib", folder / "data" / "references.bib")
    (folder / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n  - file: chapters/glued\n")
    (folder / "intro.md").write_text("# A tiny book\n\nOne page of glued values.\n")
    (folder / "chapters").mkdir()
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    args = ", ".join(f"{k}={v!r}" for k, v in GLUED.items())
    nb.cells = [nbformat.v4.new_markdown_cell("# Glued values"),
                nbformat.v4.new_code_cell(f"from dynamics.book import glue\nglue({args})"),
                nbformat.v4.new_markdown_cell(" ".join(f"{k}: {{glue:text}}`{k}`." for k in GLUED))]
    nbformat.write(nb, folder / "chapters" / "glued.ipynb")
    out = subprocess.run([str(Path(sys.executable).parent / "jupyter-book"), "build", str(folder),
                          "-W", "-n", "--keep-going"], capture_output=True, text=True)
    assert out.returncode == 0, (out.stdout + out.stderr)[-4000:]
    return folder / "_build" / "html"


# what the tiny book glues: numbers of 1,000 and more (once read back as tuples), a decimal
# string with a trailing zero (once read back as 0.1), a tiny number, texts with commas and %
GLUED = dict(a=2000, b=6218.4, c="0.100", d=1e-5, e="1,000 runs, 93% of them",
             f=[1000, 25000], g=1234567)


@pytest.fixture(scope="module")
def tiny_book(tmp_path_factory):
    return _tiny_book(tmp_path_factory.mktemp("tiny"))


def test_glued_values_print_as_glue_wrote_them(tiny_book):
    """Built with Jupyter Book, each glued value is on the page exactly as ``glue()`` writes it
    (its own formatting: what it prints outside the book)."""
    from bs4 import BeautifulSoup

    from dynamics.book import glue_texts

    soup = BeautifulSoup((tiny_book / "chapters" / "glued.html").read_text(), "html.parser")
    shown = [span.get_text() for span in soup.select("article span.pasted-text")]
    expected = list(glue_texts(**GLUED).values())
    assert expected[:4] == ["2,000", "6,218", "0.100", "1×10⁻⁵"]
    assert shown == expected


def test_a_built_page_passes_the_html_check_and_logs_no_console_error(tiny_book):
    """The tiny book's pages pass :mod:`dynamics_toolchain.htmlcheck`, list each script once (sphinx-thebe's
    ``const THEBE_JS_URL`` twice was a SyntaxError on every page), and log nothing to the
    JavaScript console in Chromium."""
    scanned = htmlcheck.check_dir(tiny_book)
    assert "chapters/glued.html" in scanned and not any(scanned.values()), scanned
    page = (tiny_book / "chapters" / "glued.html").read_text()
    inline = re.findall(r"<script>(.*?)</script>", page, re.S)
    assert inline and len(inline) == len(set(inline)), inline
    assert page.count("const THEBE_JS_URL") == 1
    report = pages.inspect_pages(tiny_book, ["glued"])["glued"]
    assert report["console"] == [] and pages.problems(report) == [], pages.problems(report)
    assert htmlcheck.main([str(tiny_book), "--console"]) == 0  # every page, intro and index too


def test_the_page_check_reports_console_errors(tmp_path, capsys):
    """A script declared twice (the error sphinx-thebe's duplicate caused) and a console.error
    are each a problem of the page, in the rendered-book check and in ``python -m
    dynamics_toolchain.htmlcheck --console``, which the Pages workflow runs."""
    page = tmp_path / "chapters" / "broken.html"
    page.parent.mkdir()
    page.write_text('<html><body><article class="bd-article"><a href="https://colab.research.'
                    'google.com/github/x/y">Colab</a></article><script>const THEBE_JS_URL = 1;'
                    '</script><script>const THEBE_JS_URL = 1;</script><script>console.error('
                    '"a figure failed")</script></body></html>')
    found = pages.problems(pages.inspect_pages(tmp_path, ["broken"])["broken"])
    assert found == ["JavaScript console error: uncaught Identifier 'THEBE_JS_URL' has already "
                     "been declared", "JavaScript console error: a figure failed"], found
    assert htmlcheck.main([str(tmp_path)]) == 0  # the text alone is fine
    capsys.readouterr()
    assert htmlcheck.main([str(tmp_path), "--console"]) == 1
    out = capsys.readouterr().out
    assert all(f"chapters/broken.html: {p}" in out for p in found), out


def test_config_points_launch_buttons_at_the_repository():
    url = CONFIG["repository"]["url"]
    assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", url)
    assert CONFIG["repository"]["branch"] == "main"
    assert CONFIG["launch_buttons"]["colab_url"] == "https://colab.research.google.com"
    assert CONFIG["bibtex_bibfiles"] == ["data/references.bib"]
    assert "dynamics_toolchain.sphinx" in CONFIG["sphinx"]["extra_extensions"]


def test_toc_lists_intro_and_every_chapter_that_exists():
    assert TOC["root"] == "intro" and (ROOT / "intro.md").exists()
    files = toc_files()
    assert sorted(files) == sorted(f"chapters/{nb.stem}" for nb in NOTEBOOKS)
    for stem in (Path(f).name for f in files):
        assert stem in CHAPTERS, f"{stem} is not a chapter of dynamics.CHAPTERS"
    # the corrections page closes the book, and the landing page links it
    assert TOC["chapters"][-1]["file"] == "corrections" and (ROOT / "corrections.md").exists()
    assert "](corrections.md)" in (ROOT / "intro.md").read_text()


def map_nodes(intro: str) -> list[str]:
    """The chapters the landing page's threads map draws as nodes (``<a class="node...`` links)."""
    svg = intro.split('<figure class="dynamics-threads">', 1)[1].split("</svg>", 1)[0]
    return re.findall(r'<a class="node[^"]*" href="chapters/([\w-]+)\.html"', svg)


def test_the_threads_map_draws_every_chapter_once():
    """Every chapter of the table of contents is a node of intro.md's threads map, once, and
    the map names no other page: a new chapter that is not drawn fails here."""
    nodes = map_nodes((ROOT / "intro.md").read_text())
    chapters = [Path(f).name for f in toc_files()]
    assert sorted(nodes) == sorted(chapters), (sorted(nodes), sorted(chapters))
    one_missing = '<figure class="dynamics-threads"><svg><a class="node" href="chapters/a.html">'
    assert map_nodes(one_missing + "</svg>") == ["a"] != sorted(chapters)


def test_the_corrections_page_has_one_section_per_chapter_and_version():
    """Under each version, each chapter's corrections sit in one section (two helpers appending
    to the same page once made two "Lottery tickets" sections under 0.2.0)."""
    import re

    text = (ROOT / "corrections.md").read_text()
    for version in re.split(r"^## ", text, flags=re.M)[1:]:
        heads = re.findall(r"^### (.+)$", version, flags=re.M)
        assert len(heads) == len(set(heads)), (version.splitlines()[0], heads)


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_chapter_starts_with_the_colab_cell(nb):
    cells = json.loads(nb.read_text())["cells"]
    first = next(c for c in cells if c["cell_type"] == "code")
    assert "".join(first["source"]) == colab_cell(repository_url())
    assert CONFIG["repository"]["url"] in "".join(first["source"])


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_chapter_is_committed_without_outputs_and_mirrors_its_package(nb):
    cells = json.loads(nb.read_text())["cells"]
    assert all(not c.get("outputs") and not c.get("execution_count")
               for c in cells if c["cell_type"] == "code")
    theme = CHAPTERS[nb.stem]
    package = ROOT / "lib" / "dynamics" / theme
    assert {"__init__.py", "science.py", "experiments.py", "figures.py", "panels.py",
            "claims.py"} <= {p.name for p in package.glob("*.py")}
    assert {"test_science.py", "test_experiments.py"} <= \
        {p.name for p in (ROOT / "tests" / theme).glob("test_*.py")}
    text = "".join("".join(c["source"]) for c in cells)
    assert "{cite}" in text and "{bibliography}" in text


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_code_on_the_page_fits_the_column(nb):
    """Code a reader sees on the page fits the ~700 px column (76 characters) instead of
    scrolling out of sight; hidden cells (the Colab cell) are exempt."""
    long = []
    for k, cell in enumerate(json.loads(nb.read_text())["cells"]):
        tags = cell.get("metadata", {}).get("tags", [])
        if cell["cell_type"] != "code" or {"remove-cell", "remove-input"} & set(tags):
            continue
        long += [f"cell {k}: {line}" for line in "".join(cell["source"]).splitlines() if len(line) > 76]
    assert not long, "\n".join(long)


def _section_module(path) -> bool:
    """A module that holds one section's experiment whole (its runner ``run*`` and its
    ``*_figure``, once also its ``*_claims`` rows, which now live in the theme's claims.py on the
    claims engine; e.g. weight_decay/window.py, grokking/algorithm.py): it draws, so the
    stand-alone rule of the science modules does not apply to it (CONTRIBUTING.md, "Where
    things live")."""
    import ast

    names = {n.name for n in ast.parse(path.read_text()).body if isinstance(n, ast.FunctionDef)}
    return any(n.endswith("_figure") for n in names) and any(
        n.endswith("_claims") or n.startswith("run") for n in names)


def _runner_module(path) -> bool:
    """A module of runners split off from ``experiments`` (every public function a ``run*``;
    e.g. weight_decay/together.py, many runs trained at once): a runner, not science, so it
    may import the experiments whose runs it repeats."""
    import ast

    public = [n.name for n in ast.parse(path.read_text()).body
              if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")]
    return bool(public) and all(n.startswith("run") for n in public)


SCIENCE = [(theme, path.name) for theme in sorted(set(CHAPTERS.values()))
           for path in sorted((ROOT / "lib" / "dynamics" / theme).glob("*.py"))
           if path.stem not in ("__init__", "experiments", "figures", "panels", "claims", "facts")
           and not _section_module(path) and not _runner_module(path)]


def test_the_runner_modules_are_the_ones_meant():
    """The exemption above covers runner modules and no science module: today exactly
    weight_decay/together.py."""
    found = [f"{t}/{p.name}" for t in sorted(set(CHAPTERS.values()))
             for p in sorted((ROOT / "lib" / "dynamics" / t).glob("*.py"))
             if p.stem not in ("__init__", "experiments") and _runner_module(p)]
    assert found == ["weight_decay/together.py"], found


@pytest.mark.parametrize("theme, module", SCIENCE, ids=lambda v: v)
def test_science_modules_stand_alone(theme, module):
    """A theme's science module (and each module it split off, e.g. initialization's
    ``meanfield.py``) reads like a reference implementation: it imports no plotting, no
    widgets, and nothing of its own package's runners, figures, panels or claims (the one home of this
    rule; the theme packages' tests do not repeat it)."""
    import ast

    tree = ast.parse((ROOT / "lib" / "dynamics" / theme / module).read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            sep = "" if module.endswith(".") else "."
            names |= {module} | {f"{module}{sep}{a.name}" for a in node.names}
    banned = sorted(n for n in names
                    if n.lstrip(".").split(".")[0] in ("plotly", "ipywidgets")
                    or n.split(".")[-1] in ("plots", "widgets", "panels", "claims", "figures",
                                           "experiments"))
    assert not banned, f"{theme}/{module} imports {banned}"


def test_readme_says_where_the_book_is_published():
    owner, repo = CONFIG["repository"]["url"].split("github.com/")[1].split("/")
    assert f"https://{owner}.github.io/{repo}/" in (ROOT / "README.md").read_text()


def _touch_page(folder: Path) -> Path:
    """A page of the book's kind, without building the book: plotly.js and dynamics.js as the
    book serves them, a line plot, and three figures with sliders: 40 steps (more than a phone's
    width can space for a finger), 5 steps, and a 3-D scatter with 2 steps."""
    import shutil

    import plotly
    import plotly.graph_objects as go

    from dynamics import plots

    static = folder / "_static"
    static.mkdir(parents=True)
    shutil.copyfile(Path(plotly.__file__).parent / "package_data" / "plotly.min.js",
                    static / "plotly.min.js")
    (static / "dynamics.js").write_text(scripts.book_js())

    def lines(k):
        fig = plots.figure(f"run {k}", "step", "loss")
        fig.add_scatter(x=list(range(1, 21)), y=[1 / (s + k) for s in range(1, 21)], mode="lines")
        return fig

    dense = plots.slider([lines(k) for k in range(40)], list(range(40)), name="run")
    sparse = plots.slider([lines(k) for k in range(5)], list(range(5)), name="run")
    cubes = []
    for k in range(2):
        fig = go.Figure(go.Scatter3d(x=[0, 1, k], y=[0, 1, 0], z=[0, 1, 1], mode="markers",
                                     marker=dict(size=12), name="points"))
        fig.update_layout(title=f"points {k}", height=420)
        cubes.append(fig)
    cube = plots.slider(cubes, ["a", "b"], name="set")
    body = "".join(plots.to_html(f) for f in (lines(0), dense, sparse, cube))
    page = folder / "chapters" / "touch.html"
    page.parent.mkdir()
    page.write_text(
        '<html><head><meta name="viewport" content="width=device-width, initial-scale=1">'
        '<script src="../_static/plotly.min.js"></script><script src="../_static/dynamics.js">'
        '</script></head><body><article class="bd-article">'
        '<a href="https://colab.research.google.com/github/x/y">Colab</a>'
        f"{body}</article></body></html>")
    return folder


def test_page_check_with_a_finger_on_a_phone(tmp_path):
    """On a phone the page check fails a slider whose steps are too close for a finger
    (40 steps on a 390 px screen), passes one of 5 steps that the book's dynamics.js spreads
    over the figure's width, drags every slider through all its steps, and turns a 3-D figure
    with a finger, taps one of its points for the hover, and moves its slider without turning
    the view back."""
    report = pages.inspect_pages(_touch_page(tmp_path), width=390)["touch"]
    _, dense, sparse, cube = report["figures"]
    assert all(f["drawn"] and f["layout"] == "narrow" for f in report["figures"])
    assert dense["sliders"][0]["gap"] < pages.MIN_STEP <= sparse["sliders"][0]["gap"]
    found = pages.problems(report)
    too_close = [p for p in found if "px apart" in p]
    assert len(too_close) == 1 and dense["id"] in too_close[0] and "40 steps" in too_close[0], found
    dragged = {d["id"]: d for d in report["dragged"]}
    assert dragged[sparse["id"]]["reached"] == dragged[sparse["id"]]["steps"] == 5
    assert dragged[cube["id"]]["reached"] == 2
    turn = report["turned_3d"]
    assert turn["id"] == cube["id"] and turn["turned"] and turn["kept"], turn
    assert "points" in turn["hover"], turn
    assert found == too_close, found  # nothing else is wrong with the page


@pytest.mark.book
def test_rendered_book(tmp_path):
    """Build the whole book in the smoke profile with warnings as errors, then read every chapter
    page as a reader would, in the system Chromium (Playwright), with every non-file request
    refused, at each of reading.WIDTHS: equations typeset, nothing wider than the article column or the
    screen, a page that does not scroll sideways, every figure drawn in the layout for its width
    with no two of its texts on top of each other and none cut off, no slider over a legend,
    the Colab link there, one slider moved (on the phone: tapped) and its figure redrawn, a tap
    on a line plot showing its hover, nothing in the JavaScript console; on the phone, with a
    finger, every slider's steps wide enough apart and reached by a drag, a 3-D figure turned,
    its hover shown on a tap; read at 390 px in the light theme and at 700 and 1280 px in the
    dark, the figures following the theme with their text and lines in contrast, and axe-core
    finding nothing serious or critical in either. Every page's text passes
    :mod:`dynamics_toolchain.htmlcheck`. A screenshot of each page at each width is saved
    under _build/screenshots/<width> for a person to look at."""
    html = pages.build(tmp_path / "book", profile="smoke")
    assert (html / "_static" / "plotly.min.js").stat().st_size > 1_000_000
    assert (html / "_static" / "mathjax" / "tex-chtml.js").exists()
    intro = (html / "intro.html").read_text()
    # the book's own icon, served (no page asks for a missing /favicon.ico)
    assert re.search(r'<link rel="icon" href="[^"]*favicon\.svg"', intro) and (html / "_static" / "favicon.svg").exists()
    assert len(re.findall(r'<script[^>]*src="[^"]*plotly\.min\.js', intro)) == 1, "plotly.js not loaded once"
    names = [Path(f).name for f in toc_files()]
    for name in names:
        source = (html / "chapters" / f"{name}.html").read_text()
        remote = re.findall(r'<script[^>]*src="(https?://[^"]+)"', source)
        assert not remote, f"{name}: scripts loaded from the network: {remote}"
    # the whole reading (dynamics_toolchain.reading): every page's text without a browser
    # (htmlcheck), then every chapter in Chromium at each width and in both themes, audited
    assert sorted(names) == sorted(p.stem for p in (html / "chapters").glob("*.html"))
    found = reading.read_book(html, shots_dir=ROOT / "_build" / "screenshots")  # every chapter
    for width in reading.WIDTHS:
        assert all((ROOT / "_build" / "screenshots" / str(width) / f"{n}.png").stat().st_size > 10_000
                   for n in names)
    # every page's footer says which version of the book it is and when it was built
    assert sphinx.stamp().split(" (")[0] in intro and ", built 20" in intro
    # the printed edition: every figure of every chapter drawn in the PDF, each page numbered
    pdf = printed.print_book(html)
    # linked: the published edition's PDF (a book built here has one only once printed)
    assert pdf == html / printed.PDF_NAME and re.search(rf'href="https://[^"]+/{printed.PDF_NAME}"', intro)
    pictures = sum(len(p) for p in printed.figures_in(pdf))
    drawn = sum((html / f"{f}.html").read_text().count("dynamicsFigure(")
                for f in ["intro", *toc_files()])
    # every figure drawn in the PDF (a page's own pictures, if any, come in addition)
    assert pictures >= drawn, f"{pictures} figures in the PDF, {drawn} on the pages"
    assert all(p["colours"] > 8 for page in printed.figures_in(pdf) for p in page), "a blank figure"
    assert not any(found.values()), "\n".join(f"{n}: {p}" for n, ps in found.items() for p in ps)


def test_the_book_says_how_to_cite_it_and_which_version_it_is():
    """CITATION.cff, the landing page's "How to cite" and every page's footer agree with the
    library's version and the repository's address."""
    from types import SimpleNamespace

    import dynamics

    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    url = CONFIG["repository"]["url"]
    owner, repo = re.fullmatch(r"https://github\.com/([\w.-]+)/([\w.-]+)", url).groups()
    assert cff["cff-version"] == "1.2.0" and cff["version"] == dynamics.__version__
    assert cff["repository-code"] == url and cff["url"] == f"https://{owner}.github.io/{repo}/"
    intro = (ROOT / "intro.md").read_text()
    cite = intro.split("## How to cite", 1)[1]
    assert f"Version {dynamics.__version__}" in cite and cff["url"] in cite and cff["title"] in cite
    assert sphinx.stamp("abc1234", "2026-11-26") == \
        f"Training Dynamics {dynamics.__version__} (abc1234), built 2026-11-26"
    config = SimpleNamespace(html_theme_options={"extra_footer": "Reads offline."})
    sphinx._stamp_footer(None, config)
    footer = config.html_theme_options["extra_footer"]
    assert footer.startswith("Reads offline. Training Dynamics ") and ", built 20" in footer


def test_references_parse_and_every_entry_has_its_exact_title(tmp_path):
    """data/references.bib parses as BibTeX, strictly (a merge that drops a closing brace fails
    here, not in the book build), with no key twice and a title in every entry; a broken copy
    is refused."""
    import pybtex.database
    import pybtex.errors

    pybtex.errors.set_strict_mode(True)
    text = (ROOT / "data" / "references.bib").read_text()
    keys = re.findall(r"^@\w+\{([^,]+),", text, flags=re.M)
    assert len(keys) == len(set(keys)), f"keys listed twice: {sorted(k for k in keys if keys.count(k) > 1)}"
    db = pybtex.database.parse_string(text, "bibtex")
    assert len(db.entries) == len(keys) and all(e.fields.get("title") for e in db.entries.values())
    broken = text.replace("}\n\n@", "\n\n@", 1)  # one entry's closing brace lost
    with pytest.raises(Exception):
        pybtex.database.parse_string(broken, "bibtex")


PLUMBING = ("glue(", "live_cost(", "claims_table(")  # calls that put the run's numbers on the page


def plumbing_departures(cells: list[dict]) -> list[str]:
    """How a notebook departs from the one rule for plumbing: a cell that glues numbers into
    the prose does only that (the experiment it reads stays in a cell of its own, shown), and
    every cell that puts the run's numbers on the page (glue, the cost line, the claims table)
    shows its output with its code folded (``hide-input``: one click opens it), never removed."""
    import ast

    wrong = []
    for cell in cells:
        source = "".join(cell["source"])
        if cell["cell_type"] != "code" or not any(call in source for call in PLUMBING):
            continue
        tags = set(cell.get("metadata", {}).get("tags", []))
        if "hide-input" not in tags or {"remove-input", "remove-cell", "hide-cell"} & tags:
            wrong.append(f"tagged {sorted(tags)}: {source[:60]!r}")
        if "glue(" in source and not ("claims_table(" in source or "live_cost(" in source):
            others = [s for s in ast.parse(source).body
                      if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
                              and ast.unparse(s.value.func).split(".")[-1] == "glue")]
            if others:
                wrong.append(f"glues and does more: {source[:60]!r}")
    return wrong


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_one_rule_for_what_a_reader_sees_of_the_plumbing(nb):
    assert not plumbing_departures(json.loads(nb.read_text())["cells"]), plumbing_departures(
        json.loads(nb.read_text())["cells"])


def test_the_plumbing_rule_sees_a_departure():
    def cell(src, tags=()):
        return {"cell_type": "code", "source": [src], "metadata": {"tags": list(tags)}}

    assert not plumbing_departures([cell("glue(**x)", ["hide-input"]), cell("h = train()")])
    assert plumbing_departures([cell("h = train()\nglue(**x)", ["hide-input"])])  # mixed
    assert plumbing_departures([cell("glue(**x)", ["remove-input"])])             # removed
    assert plumbing_departures([cell("dynamics.book.live_cost('x')")])           # shown open


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_first_cell_names_its_chapter(nb):
    """``dynamics.setup(chapter=...)`` with the notebook's own name: the first cell then says
    this chapter's measured time at the other profile on the reader's GPU."""
    code = ["".join(c["source"]) for c in json.loads(nb.read_text())["cells"]
            if c["cell_type"] == "code"]
    assert any(f'dynamics.setup(chapter="{nb.stem}")' in c for c in code), nb.name
