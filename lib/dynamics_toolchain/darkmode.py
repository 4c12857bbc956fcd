"""Figures that follow the book's dark mode, and the check that they do.

The book's theme (sphinx-book-theme on pydata-sphinx-theme) turns dark from its toggle or, on a
first visit, from the reader's system setting, and marks it on the page as
``<html data-theme="dark">``. ``static/dark.js`` (served in the book's ``dynamics.js``) redraws
every figure in the page's own colours then: the background and text of the theme, a faint
grid, hover labels, legends and sliders in the same colours, and the house palette lightened
(:data:`DARK_PALETTE`) so that every line keeps a 3:1 contrast against the dark background
(WCAG 2.2, 1.4.11) and its hue. When the reader switches back, the figures return to the
column's light colours. The palettes reach the script from Python (:func:`js_config`, in
``window.dynamicsConfig``: :func:`dynamics_toolchain.scripts.book_js`).

:func:`inspect_themes` reads pages in Chromium in both modes, and :func:`theme_problems` fails a
figure whose background does not follow the theme or whose text falls below WCAG AA contrast
(4.5:1) against it.
"""
from __future__ import annotations

import re
from pathlib import Path

from dynamics.plots import PALETTE

from .scripts import evaluate

__all__ = ["DARK_BACKGROUND", "DARK_PALETTE", "THEME_REPORT_JS", "contrast", "lighten", "js_config",
           "theme_problems", "inspect_themes"]

DARK_BACKGROUND = "#14181e"  # pydata-sphinx-theme's --pst-color-background in its dark theme
TEXT_CONTRAST = 4.5          # WCAG AA, normal text
LINE_CONTRAST = 3.0          # WCAG 2.2 1.4.11, graphical objects


def _rgb(color: str) -> tuple[float, float, float, float]:
    """``#rrggbb``, ``#rgb``, ``rgb(r, g, b)`` or ``rgba(r, g, b, a)`` as (r, g, b, a), 0-255."""
    c = color.strip().lower()
    if c.startswith("#"):
        h = c[1:]
        if len(h) == 3:
            h = "".join(ch * 2 for ch in h)
        if len(h) != 6:
            raise ValueError(f"not a colour: {color!r}")
        return (*(int(h[i:i + 2], 16) for i in (0, 2, 4)), 1.0)
    m = re.fullmatch(r"rgba?\(([^)]*)\)", c)
    if not m:
        named = {"white": (255, 255, 255), "black": (0, 0, 0)}
        if c in named:
            return (*named[c], 1.0)
        if c == "transparent":
            return (0, 0, 0, 0.0)
        raise ValueError(f"not a colour: {color!r}")
    parts = [float(p) for p in m.group(1).replace("/", ",").replace(" ", ",").split(",") if p]
    return (*parts[:3], parts[3] if len(parts) > 3 else 1.0)


def _luminance(color: str) -> float:
    def lin(v: float) -> float:
        v /= 255
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b, _ = _rgb(color)
    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio of two opaque colours (1 to 21)."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def lighten(color: str, against: str = DARK_BACKGROUND, ratio: float = 4.5) -> str:
    """``color`` mixed with white, as little as gives ``ratio`` contrast against ``against``
    (the hue stays; a colour that already has it is returned as it is)."""
    r, g, b, _ = _rgb(color)
    for step in range(101):
        t = step / 100
        mixed = "#" + "".join(f"{round(c + (255 - c) * t):02x}" for c in (r, g, b))
        if contrast(mixed, against) >= ratio:
            return mixed
    return "#ffffff"


DARK_PALETTE = [lighten(c) for c in PALETTE]

def js_config() -> dict:
    """What ``static/dark.js`` takes from Python: the house ``palette`` (lower case), each
    colour's ``darkPalette`` counterpart (:data:`DARK_PALETTE`) and ``darkBackground``
    (:data:`DARK_BACKGROUND`, used when the page's own background cannot be read)."""
    return {"palette": [c.lower() for c in PALETTE], "darkPalette": list(DARK_PALETTE),
            "darkBackground": DARK_BACKGROUND}


# What a page shows in each mode: the theme, the page's colours, and each figure's as drawn.
THEME_REPORT_JS = evaluate("theme_report")


def _opaque(color: str) -> bool:
    return _rgb(color)[3] >= 0.99


def theme_problems(report: dict) -> list[str]:
    """What is wrong with one page in one mode (:data:`THEME_REPORT_JS`): a figure whose
    background is not the page's (an opaque block of another colour: a white one in the dark
    theme), text under 4.5:1 against it (its own, and each annotation's or label's in a colour
    of its own), and, in the dark theme, a line or marker colour under
    3:1."""
    found = []
    page_bg = report["background"]
    for f in report["figures"]:
        bg = f["paper"]
        if _opaque(bg) and abs(_luminance(bg) - _luminance(page_bg)) > 0.02 and _opaque(page_bg):
            found.append(f"{f['id']}: background {bg} on a {report['theme']} page of {page_bg}")
        against = bg if _opaque(bg) else page_bg
        if f["text"] and contrast(f["text"], against) < TEXT_CONTRAST:
            found.append(f"{f['id']}: text {f['text']} on {against}: contrast "
                         f"{contrast(f['text'], against):.1f} < {TEXT_CONTRAST}")
        for label in f.get("labels", []):  # text drawn on the figure in a colour of its own
            try:
                ratio = contrast(label["color"], against)
            except ValueError:
                continue
            if ratio < TEXT_CONTRAST:
                found.append(f"{f['id']}: the text {label['text']!r} in {label['color']} on {against}: "
                             f"contrast {ratio:.1f} < {TEXT_CONTRAST}")
        if report["theme"] == "dark":
            for c in dict.fromkeys(f["colors"]):
                try:
                    ratio = contrast(c, against)
                except ValueError:
                    continue  # a colour scale or gradient: not one line's colour
                if ratio < LINE_CONTRAST:
                    found.append(f"{f['id']}: line colour {c} on {against}: contrast {ratio:.1f} "
                                 f"< {LINE_CONTRAST}")
    return found


def inspect_themes(html_dir, pages=None, width: int = 1280, audit: bool = False) -> dict:
    """Open each page (paths under ``html_dir`` without ``.html``; default: the landing page
    and every chapter) in Chromium twice, with the system set to light and to dark (the theme
    follows it on a first visit), and return ``{page: {mode: report}}``
    (:data:`THEME_REPORT_JS`); :func:`theme_problems` judges each report. With ``audit``, each
    report also holds axe-core's violations in that mode (``report["audit"]``,
    :func:`dynamics_toolchain.access.audit`)."""
    from playwright.sync_api import sync_playwright

    from .pages import _browser
    from .scripts import FIGURES_DRAWN_JS

    html_dir = Path(html_dir)
    if pages is None:
        pages = ["intro"] * (html_dir / "intro.html").exists() + sorted(
            f"chapters/{p.stem}" for p in (html_dir / "chapters").glob("*.html"))
    out: dict = {}
    with sync_playwright() as pw:
        browser = _browser(pw)
        for name in pages:
            for mode in ("light", "dark"):
                context = browser.new_context(viewport={"width": width, "height": 900},
                                              color_scheme=mode)
                page = context.new_page()
                page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(
                    ("file:", "data:", "blob:")) else r.abort())
                page.goto((html_dir / f"{name}.html").as_uri(), wait_until="load")
                page.wait_for_function(FIGURES_DRAWN_JS)  # every figure drawn, in its theme
                report = page.evaluate(THEME_REPORT_JS)
                if audit:
                    from .access import audit as axe

                    report["audit"] = axe(page)
                out.setdefault(name, {})[mode] = report
                context.close()
        browser.close()
    return out
