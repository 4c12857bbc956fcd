"""A table wider than the column scrolls inside its box, and shows that it does: a shade at
each edge beyond which more of it lies, in both themes (tables.TABLE_CSS), read in Chromium
as the rendered-book check reads it (pages.inspect_pages)."""
from __future__ import annotations

from pathlib import Path

import pytest

from bookpage import book_assets
from dynamics import plots
from dynamics_toolchain import pages

pytest.importorskip("playwright")

PYDATA = """<script>document.documentElement.dataset.theme =
  matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';</script>
<style>html { --pst-color-background: #ffffff; }
html[data-theme=dark] { --pst-color-background: #14181e; }
body { background: var(--pst-color-background); margin: 0; }
article.bd-article { width: 360px; margin: 0 15px; }</style>"""

WIDE = plots.table([{f"column {k}": 0.001 * k for k in range(14)}] * 3).data


def _page(folder: Path, extra: str = "") -> Path:
    book_assets(folder)
    (folder / "chapters").mkdir()
    (folder / "chapters" / "table.html").write_text(
        f'<html><head>{PYDATA}{extra}</head><body><article class="bd-article">{WIDE}'
        f'</article></body></html>')
    return folder


def _edges(page) -> dict:
    """The grey level drawn at the box's left and right edge (a one-pixel row near its top,
    above the header's text), at three scroll positions."""
    import io

    import numpy as np
    from PIL import Image

    box = page.query_selector(".dynamics-table-wrap")
    out = {}
    for where, js in [("start", "e => e.scrollLeft = 0"), ("middle", "e => e.scrollLeft = e.scrollWidth / 3"),
                      ("end", "e => e.scrollLeft = e.scrollWidth")]:
        box.evaluate(js)
        b = box.bounding_box()
        shot = Image.open(io.BytesIO(page.screenshot(clip=dict(x=b["x"], y=b["y"] + 2,
                                                                width=b["width"], height=1))))
        row = np.asarray(shot.convert("L"), dtype=float)[0]
        out[where] = (row[1], row[-2])
    return out


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_wide_table_shows_a_shade_where_more_of_it_lies(tmp_path, scheme):
    from playwright.sync_api import sync_playwright

    folder = _page(tmp_path)
    with sync_playwright() as pw:
        browser = pages._browser(pw)
        page = browser.new_page(viewport={"width": 390, "height": 600}, color_scheme=scheme)
        page.goto((folder / "chapters" / "table.html").as_uri())
        edges = _edges(page)
        browser.close()
    bg = 255.0 if scheme == "light" else 0.299 * 0x14 + 0.587 * 0x18 + 0.114 * 0x1e
    shaded = lambda v: abs(v - bg) > 12  # noqa: E731  (a shade 0.25 deep moves it by ~30)
    (l0, r0), (lm, rm), (l1, r1) = edges["start"], edges["middle"], edges["end"]
    assert not shaded(l0) and shaded(r0), edges   # at its start: more to the right only
    assert shaded(lm) and shaded(rm), edges       # in the middle: both ways
    assert shaded(l1) and not shaded(r1), edges   # at its end: more to the left only


def test_the_reading_reports_a_scrolling_table_without_its_cue(tmp_path):
    ok = pages.inspect_pages(_page(tmp_path / "ok"), ["table"], width=390)["table"]
    assert not any("no cue" in w for w in ok["wide"]), ok["wide"]
    bare = "<style>.dynamics-table-wrap { background: none !important; }</style>"
    bad = pages.inspect_pages(_page(tmp_path / "bad", bare), ["table"], width=390)["table"]
    assert any("a table scrolls sideways with no cue" in w for w in bad["wide"]), bad["wide"]
