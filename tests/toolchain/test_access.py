"""The book for every reader: sliders from the keyboard, text alternatives for the figures, and
the automated audit (axe-core) that the rendered-book test runs on every page."""
from __future__ import annotations

from pathlib import Path

import pytest

from bookpage import book_assets
from dynamics import plots
from dynamics_toolchain import access

# pieces of the theme's markup that the audit flags as they come (see dynamics_toolchain.access)
THEME_BITS = """<button class="search-button__button" aria-label="Search">Search <kbd>Ctrl</kbd>+<kbd>K</kbd></button>
<div class="citation-list" role="doc-bibliography"><div class="citation" id="c1" role="doc-biblioentry">
<span class="label"><span class="fn-bracket">[</span><a role="doc-backlink" href="#r1">1</a>
<span class="fn-bracket">]</span></span><p>A paper.</p></div></div>
<details class="hide above-input"><summary aria-label="Toggle hidden content">
<span class="collapsed">Show code cell source</span><span class="expanded" style="display:none">Hide code cell source</span>
</summary><pre>glue(x=1)</pre></details>
<button class="btn theme-switch-button" aria-label="Color mode">
<i class="theme-switch fa-solid fa-sun fa-lg" data-mode="light" title="Light"></i></button>"""


def _page(folder: Path, extra: str = "") -> Path:
    book_assets(folder)
    line = plots.figure("loss against step", "step", "loss")
    line.add_scatter(x=[1, 2, 3], y=[3, 2, 1], mode="lines", name="AdamW")
    line.add_scatter(x=[1, 2, 3], y=[3, 1, 1], mode="lines", name="Muon")
    runs = [plots.figure(f"weight decay {k}", "step", "loss").add_scatter(x=[1, 2], y=[k, 1], name="run")
            for k in (0, 1, 3, 10)]
    decay = plots.slider(runs, [0, 1, 3, 10], name="weight decay")
    # a table wider than the page: it scrolls in its own box, which the keyboard can reach
    wide = plots.table([{f"column number {i}": 1000.0 * i for i in range(30)}]).data
    body = plots.to_html(line) + plots.to_html(decay) + wide
    page = folder / "page.html"
    page.write_text('<!DOCTYPE html><html lang="en"><head><title>A page</title>'
                    '<script src="_static/plotly.min.js"></script><script src="_static/dynamics.js">'
                    f'</script></head><body><main><h1>A page</h1>{THEME_BITS}{body}{extra}</main>'
                    '</body></html>')
    return page


def _open(pw, page_path: Path):
    from dynamics_toolchain.pages import _browser
    from dynamics_toolchain.scripts import FIGURES_DRAWN_JS

    browser = _browser(pw)
    page = browser.new_page(viewport={"width": 1000, "height": 900})
    page.goto(page_path.as_uri(), wait_until="load")
    page.wait_for_function(FIGURES_DRAWN_JS)  # drawn, with their labels and keyboard
    return browser, page


def _moved(page, was: str) -> None:
    """Wait until the focused slider's value is no longer ``was`` (its move done and labelled)."""
    page.wait_for_function("(was) => document.activeElement.getAttribute('aria-valuenow') !== was", arg=was)


def test_sliders_move_from_the_keyboard_and_figures_say_what_they_show(tmp_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser, page = _open(pw, _page(tmp_path))
        labels = page.evaluate("() => [...document.querySelectorAll('.js-plotly-plot')].map("
                               "g => [g.getAttribute('role'), g.getAttribute('aria-label')])")
        assert labels[0] == ["figure", "Line chart: loss against step. x: step, y: loss. "
                                    "2 series: AdamW and Muon."] or labels[0][1].startswith(
            "Line chart: loss against step. x: step, y: loss. 2 series: AdamW, Muon")
        assert "A slider over 4 values (0 to 10)" in labels[1][1]
        for _ in range(12):  # Tab through the page to the slider
            page.keyboard.press("Tab")
            if page.evaluate("() => document.activeElement.getAttribute('role')") == "slider":
                break
        slider = "() => { const e = document.activeElement; return [e.getAttribute('aria-label'), " \
                 "e.getAttribute('aria-valuenow'), e.getAttribute('aria-valuetext')]; }"
        active = "() => document.querySelectorAll('.js-plotly-plot')[1].layout.sliders[0].active"
        assert page.evaluate(slider) == ["weight decay", "3", "10"]
        page.keyboard.press("ArrowLeft")
        _moved(page, "3")
        assert page.evaluate(active) == 2 and page.evaluate(slider)[1:] == ["2", "3"]
        title = "() => document.querySelectorAll('.js-plotly-plot')[1].layout.title.text"
        assert "weight decay 3" in page.evaluate(title)
        page.keyboard.press("Home")
        _moved(page, "2")
        assert page.evaluate(active) == 0 and "weight decay 0" in page.evaluate(title)
        page.keyboard.press("End")
        _moved(page, "0")
        assert page.evaluate(active) == 3
        browser.close()


def test_the_audit_passes_a_clean_page_and_finds_a_planted_problem(tmp_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser, page = _open(pw, _page(tmp_path / "ok"))
        assert access.audit_problems(access.audit(page)) == []
        # the code cell's toggle is named by the text it shows, not "Toggle hidden content"
        assert page.evaluate("() => document.querySelector('summary').getAttribute('aria-label')") is None
        # the theme switch's icons are decoration, also once Font Awesome's script (after the page
        # has loaded) swaps each for an <svg role="img"> named by a <title>: in the book the audit
        # reads "Light" as the switch's visible text, not part of its name "Color mode"
        page.evaluate("""() => { const b = document.querySelector('.theme-switch-button');
          b.innerHTML = '<svg class="svg-inline--fa fa-sun" role="img" aria-labelledby="t-light">'
            + '<title id="t-light">Light</title></svg>'; }""")
        page.wait_for_function("() => document.querySelector('.theme-switch-button svg')"
                               ".getAttribute('aria-hidden') === 'true'")
        assert page.evaluate("() => document.querySelectorAll('.theme-switch-button title, "
                             ".theme-switch-button [role], .theme-switch-button [title]').length") == 0
        browser.close()
        browser, page = _open(pw, _page(tmp_path / "bad", '<img src="x.png"><button></button>'
                                        '<a href="#x" role="button" aria-label="Go">Read more</a>'))
        page.evaluate("() => { const a = document.createElement('button'); a.setAttribute('aria-label', 'Toggle');"
                      " a.textContent = 'Show code'; document.body.appendChild(a); }")  # after the mend
        found = access.audit_problems(access.audit(page))
        browser.close()
    assert any("image-alt" in p for p in found) and any("button-name" in p for p in found), found
    assert any("label-content-name-mismatch" in p for p in found), found  # the rule is on


def test_audit_problems_keep_the_serious_and_critical():
    violations = [dict(id="region", impact="moderate", help="h", nodes=["a"]),
                  dict(id="color-contrast", impact="serious", help="contrast", nodes=["td.x"]),
                  dict(id="image-alt", impact="critical", help="alt", nodes=["img"])]
    assert access.audit_problems(violations) == ["serious color-contrast: contrast (td.x)",
                                                 "critical image-alt: alt (img)"]


def test_axe_comes_from_npm_or_says_how(monkeypatch, tmp_path):
    monkeypatch.setenv("DYNAMICS_AXE", str(tmp_path))
    with pytest.raises(RuntimeError, match="axe-core is not installed"):
        access.axe_path()


def test_ci_installs_the_axe_this_module_fetches():
    root = Path(__file__).resolve().parents[2]
    assert f"axe-core@{access.AXE_VERSION}" in (root / ".ci" / "run").read_text()


def test_the_palette_stays_distinguishable_with_colour_vision_deficiencies():
    """Every pair of the house palette's colours is at least 12 CIELAB units apart, for normal
    vision and as simulated for protanopia, deuteranopia and tritanopia (Machado et al. 2009);
    the old palette's last colours fell to 1.9 (deuteranopia), which the check would catch."""
    distances = access.colour_distances(plots.PALETTE)
    assert set(distances) == {"normal", "protanopia", "deuteranopia", "tritanopia"}
    assert all(d >= 12 for d, _, _ in distances.values()), distances
    old = plots.PALETTE[:7] + ["#66aa00", "#b82e2e", "#316395"]
    assert min(d for d, _, _ in access.colour_distances(old).values()) < 12


def test_the_back_to_top_button_keeps_its_text_in_contrast():
    """The theme's "back to top" button (shown once a reader scrolls; axe found white on the
    theme's orange at 2.4:1 on the published pages): the book's own colours for it keep its
    text at WCAG AA's 4.5:1."""
    import re

    from dynamics_toolchain import darkmode, scripts

    rule = re.search(r"#pst-back-to-top\s*\{([^}]*)\}", scripts.book_css())
    assert rule, "dynamics.css sets no colours for #pst-back-to-top"
    colours = dict(re.findall(r"(background-color|(?<!-)color)\s*:\s*(#[0-9a-fA-F]{6})", rule.group(1)))
    assert darkmode.contrast(colours["color"], colours["background-color"]) >= 4.5, colours
