"""A link to a view: a slider's step and a 3-D figure's view written in the address and read
back from it."""
from __future__ import annotations

from pathlib import Path

import plotly.graph_objects as go
import pytest

from bookpage import book_assets
from dynamics import book, plots
from dynamics_toolchain.viewlink import view_fragment


def _page(folder: Path) -> Path:
    book_assets(folder)

    def lines(k):
        fig = plots.figure(f"weight decay {k}", "step", "loss")
        fig.add_scatter(x=[1, 2, 3], y=[k, k / 2, k / 3], mode="lines")
        return fig

    first = lines(1)
    decay = plots.slider([lines(k) for k in (0, 1, 3, 10)], [0, 1, 3, 10], name="weight decay")
    cube = go.Figure(go.Scatter3d(x=[0, 1], y=[0, 1], z=[0, 1], mode="markers"))
    cube.update_layout(height=400)
    body = "".join(plots.to_html(f) for f in (first, decay, cube))
    page = folder / "chapters" / "view.html"
    page.parent.mkdir()
    page.write_text('<html><head><script src="../_static/plotly.min.js"></script>'
                    '<script src="../_static/dynamics.js"></script></head><body>'
                    f'<h2 id="phase">Phase</h2>{body}</body></html>')
    return page


def test_fragment_names_figures_from_one():
    assert view_fragment({2: "3"}, {3: (1, 1, 0.5)}, anchor="phase") == "#phase&fig2=3&fig3cam=1.00%2C1.00%2C0.50"
    with pytest.raises(ValueError, match="numbered from 1"):
        view_fragment({0: "a"})
    with pytest.raises(ValueError, match="three coordinates"):
        view_fragment(cameras={1: (1, 2)})


def test_a_view_goes_into_the_address_and_comes_back_from_a_link(tmp_path):
    from playwright.sync_api import sync_playwright

    from dynamics_toolchain.pages import _browser
    from dynamics_toolchain.scripts import FIGURES_DRAWN_JS

    url = _page(tmp_path).as_uri()
    active = "() => [...document.querySelectorAll('.js-plotly-plot')].map(g => " \
             "((g.layout.sliders || [])[0] || {}).active)"
    with sync_playwright() as pw:
        browser = _browser(pw)
        page = browser.new_page(viewport={"width": 1000, "height": 900})
        page.goto(url + "#phase", wait_until="load")
        page.wait_for_function(FIGURES_DRAWN_JS)
        default = page.evaluate(active)[1]
        assert default == 3  # the slider starts at its last step (weight decay 10)
        # the reader moves the slider of figure 2 to its first step (weight decay 0)
        fig2 = page.locator(".js-plotly-plot").nth(1)
        fig2.scroll_into_view_if_needed()
        rail = fig2.locator(".slider-rail-rect").bounding_box()
        page.mouse.click(rail["x"] + 2, rail["y"] + rail["height"] / 2)
        page.wait_for_function("() => location.hash !== '#phase'")  # the step, written
        assert page.evaluate(active)[1] == 0
        assert page.evaluate("() => location.hash") == "#phase&fig2=0"
        # and turns the 3-D figure
        page.evaluate("() => Plotly.relayout(document.querySelectorAll('.js-plotly-plot')[2], "
                      "{'scene.camera': {eye: {x: 0.5, y: 2, z: 0.25}}})")  # awaited: relayout's event done
        link = page.evaluate("() => location.href")
        assert link.endswith("#phase&fig2=0&fig3cam=0.50%2C2.00%2C0.25")
        # a colleague opens the link: the same step and view
        other = browser.new_page(viewport={"width": 1000, "height": 900})
        other.goto(url + view_fragment({2: 3}, {3: (0.5, 2, 0.25)}, anchor="phase"), wait_until="load")
        other.wait_for_function(FIGURES_DRAWN_JS)  # drawn, then set to the link's view
        assert other.evaluate(active)[1] == 2  # the step labelled 3
        title = other.evaluate("() => document.querySelectorAll('.js-plotly-plot')[1].layout.title.text")
        assert "weight decay 3" in title
        eye = other.evaluate("() => document.querySelectorAll('.js-plotly-plot')[2]._fullLayout.scene.camera.eye")
        assert eye == {"x": 0.5, "y": 2, "z": 0.25}
        assert other.evaluate("() => window.scrollY") > 0  # scrolled to the figure
        plain = browser.new_page(viewport={"width": 1000, "height": 900})
        plain.goto(url, wait_until="load")
        plain.wait_for_function(FIGURES_DRAWN_JS)
        assert plain.evaluate(active)[1] == default and plain.evaluate("() => window.scrollY") == 0
        browser.close()
