"""Dark mode: the figures follow the theme's dark colours, and the check that they do."""
from __future__ import annotations

import colorsys
from pathlib import Path

import pytest

from bookpage import book_assets
from dynamics import book, plots
from dynamics_toolchain import darkmode, pages

# What pydata-sphinx-theme does on a first visit: the system's setting decides the theme,
# marked on <html data-theme>, with the dark theme's background and text colours.
THEME = """<script>document.documentElement.dataset.theme =
  matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';</script>
<style>html[data-theme=dark] body { background: #14181e; color: #ced6dd; }
html[data-theme=light] body { background: #ffffff; color: #222832; }</style>"""


def _page(folder: Path, extra: str = "") -> Path:
    book_assets(folder)
    fig = plots.figure("two runs", "step", "loss")
    for k in range(len(plots.PALETTE)):
        fig.add_scatter(x=[1, 2, 3], y=[k, k + 1, k + 3], mode="lines", name=f"run {k}")
    # text drawn on the figure in colours of its own, as the chapters draw it: a grey label
    # ("fit 48 / grok 528"), a palette colour ("τ = 1/(ηλ)") and a reference line's label
    fig.add_annotation(x=2, y=3, text="fit 48 / grok 528", showarrow=False, font=dict(color="#555"))
    fig.add_annotation(x=1, y=5, text="τ = 1/(ηλ)", showarrow=False, font=dict(color=plots.PALETTE[4]))
    fig.add_vline(x=2.5, line=dict(color="#555555", dash="dot"), annotation_text="zero error",
                  annotation_font_color="#555555")
    heat = plots.heatmap([[0, 1], [1, 0]], ["a", "b"], ["c", "d"], "cells", "x", "y")
    body = plots.to_html(fig) + plots.to_html(heat)
    (folder / "chapters").mkdir()
    (folder / "chapters" / "dark.html").write_text(
        f'<html><head>{THEME}<script src="../_static/plotly.min.js"></script>'
        f'<script src="../_static/dynamics.js"></script>{extra}</head><body>'
        f'<article class="bd-article">{body}</article></body></html>')
    return folder


def test_contrast_and_the_dark_palette():
    assert darkmode.contrast("#ffffff", "#000000") == pytest.approx(21)
    assert darkmode.contrast("#777777", "#777777") == pytest.approx(1)
    assert len(darkmode.DARK_PALETTE) == len(plots.PALETTE)
    for light, dark in zip(plots.PALETTE, darkmode.DARK_PALETTE):
        assert darkmode.contrast(dark, darkmode.DARK_BACKGROUND) >= 4.5
        h1 = colorsys.rgb_to_hsv(*[int(light[i:i + 2], 16) / 255 for i in (1, 3, 5)])[0]
        h2 = colorsys.rgb_to_hsv(*[int(dark[i:i + 2], 16) / 255 for i in (1, 3, 5)])[0]
        assert abs(h1 - h2) < 0.01  # the same hue, lighter: a line keeps its colour's name
    assert len(set(darkmode.DARK_PALETTE)) == len(plots.PALETTE)
    with pytest.raises(ValueError, match="not a colour"):
        darkmode.contrast("nonsense", "#000")


def test_theme_problems_fail_a_white_figure_on_a_dark_page():
    dark_page = dict(theme="dark", background="rgb(20, 24, 30)", text="rgb(206, 214, 221)")
    white = dict(id="f1", paper="#fff", plot="#fff", text="#222", colors=["#3366cc"])
    found = darkmode.theme_problems(dict(dark_page, figures=[white]))
    assert any("background #fff on a dark page" in p for p in found)
    dim = dict(id="f2", paper="rgb(20, 24, 30)", plot="rgb(20, 24, 30)", text="#444",
               colors=["#316395"])
    found = darkmode.theme_problems(dict(dark_page, figures=[dim]))
    assert any("text #444" in p for p in found) and any("line colour #316395" in p for p in found)
    good = dict(id="f3", paper="rgb(20, 24, 30)", plot="rgb(20, 24, 30)", text="rgb(206, 214, 221)",
                colors=darkmode.DARK_PALETTE)
    assert darkmode.theme_problems(dict(dark_page, figures=[good])) == []
    # a label drawn in the light theme's grey on the dark page: 2.5:1 is caught
    grey = dict(good, id="f4", labels=[dict(text="fit 48 / grok 528", color="#555555")])
    assert any("'fit 48 / grok 528' in #555555" in p for p in darkmode.theme_problems(dict(dark_page, figures=[grey])))


def test_figures_follow_the_dark_theme_in_a_browser(tmp_path):
    """Chromium with the system set to dark: every figure is drawn on the page's dark
    background in its text colour, its lines in the lightened palette; set to light, the
    figures stay white. A page whose figures ignore the theme is caught."""
    folder = _page(tmp_path / "ok")
    reports = darkmode.inspect_themes(folder, audit=True)["chapters/dark"]
    dark, light = reports["dark"], reports["light"]
    assert dark["theme"] == "dark" and light["theme"] == "light"
    assert len(dark["figures"]) == 2
    for f in dark["figures"]:
        assert darkmode.contrast(f["paper"], darkmode.DARK_BACKGROUND) < 1.05
    assert set(dark["figures"][0]["colors"]) == set(darkmode.DARK_PALETTE)
    assert len(dark["figures"][0]["labels"]) == 3  # the labels were read, in both themes
    assert darkmode.theme_problems(dark) == [] and darkmode.theme_problems(light) == []
    assert isinstance(dark["audit"], list) and isinstance(light["audit"], list)  # axe ran in both
    # planted: figures that do not follow the theme
    ignore = "<script>window.dynamicsIsDark = function () { return false; };</script>"
    bad_folder = _page(tmp_path / "bad", ignore)
    bad = darkmode.inspect_themes(bad_folder, ["chapters/dark"])["chapters/dark"]["dark"]
    assert any("on a dark page" in p for p in darkmode.theme_problems(bad))
    # the same reading in the rendered-book check's own visit of a page (scheme and audit)
    for scheme in ("dark", "light"):
        seen = pages.inspect_pages(folder, ["dark"], scheme=scheme, audit=True)["dark"]["theme"]
        assert seen["theme"] == scheme and isinstance(seen["audit"], list)
        assert [f["paper"] for f in seen["figures"]] == [f["paper"] for f in reports[scheme]["figures"]]
        assert darkmode.theme_problems(seen) == []
    seen = pages.inspect_pages(bad_folder, ["dark"], scheme="dark", audit=True)["dark"]["theme"]
    assert any("on a dark page" in p for p in darkmode.theme_problems(seen))
    with pytest.raises(ValueError, match="scheme must be"):
        pages.inspect_pages(folder, ["dark"], scheme="sepia")


def test_the_theme_toggle_redraws_the_figures(tmp_path):
    from playwright.sync_api import sync_playwright

    from dynamics_toolchain.pages import _browser
    from dynamics_toolchain.scripts import FIGURES_DRAWN_JS

    folder = _page(tmp_path)
    with sync_playwright() as pw:
        browser = _browser(pw)
        page = browser.new_page(color_scheme="light")
        page.goto((folder / "chapters" / "dark.html").as_uri(), wait_until="load")
        page.wait_for_function(FIGURES_DRAWN_JS, arg="light")
        before = page.evaluate(darkmode.THEME_REPORT_JS)
        page.evaluate("() => { document.documentElement.dataset.theme = 'dark'; }")
        page.wait_for_function(FIGURES_DRAWN_JS, arg="dark")  # the toggle's redraw, done
        after = page.evaluate(darkmode.THEME_REPORT_JS)
        page.evaluate("() => { document.documentElement.dataset.theme = 'light'; }")
        page.wait_for_function(FIGURES_DRAWN_JS, arg="light")
        back = page.evaluate(darkmode.THEME_REPORT_JS)
        browser.close()
    assert before["figures"][0]["paper"] in ("white", "#fff", "#ffffff", "rgb(255, 255, 255)")
    assert darkmode.contrast(after["figures"][0]["paper"], darkmode.DARK_BACKGROUND) < 1.05
    assert back["figures"][0]["paper"] == before["figures"][0]["paper"]


def test_the_whole_reading_reads_each_width_in_its_theme(tmp_path):
    """dynamics_toolchain.reading, the rendered-book test's and the Pages workflow's reading:
    each width in its theme (390 px light, 700 and 1280 px dark), the audited ones judged for
    their colours, a page's missing equations reported at every width. A page whose figures
    ignore the theme fails in the dark reading and only there."""
    from dynamics_toolchain import reading

    ignore = "<script>window.dynamicsIsDark = function () { return false; };</script>"
    found = reading.read_book(_page(tmp_path, ignore))
    assert {"dark at 390 px", "dark at 700 px", "dark at 1280 px", "dark in the light theme",
            "dark in the dark theme"} <= set(found), sorted(found)
    assert any("on a dark page" in p for p in found["dark in the dark theme"])
    assert not any("on a dark page" in p for p in found["dark in the light theme"])
    assert all("no typeset equations" in found[f"dark at {w} px"] for w in reading.WIDTHS)
