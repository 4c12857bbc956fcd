"""Figures that follow the book's dark mode, and the check that they do.

The book's theme (sphinx-book-theme on pydata-sphinx-theme) turns dark from its toggle or, on a
first visit, from the reader's system setting, and marks it on the page as
``<html data-theme="dark">``. :data:`DARK_JS` (served with the book's ``dynamics.js``) redraws
every figure in the page's own colours then: the background and text of the theme, a faint
grid, hover labels, legends and sliders in the same colours, and the house palette lightened
(:data:`DARK_PALETTE`) so that every line keeps a 3:1 contrast against the dark background
(WCAG 2.2, 1.4.11) and its hue. When the reader switches back, the figures return to the
column's light colours.

:func:`inspect_themes` reads pages in Chromium in both modes, and :func:`theme_problems` fails a
figure whose background does not follow the theme or whose text falls below WCAG AA contrast
(4.5:1) against it.
"""
from __future__ import annotations

import re
from pathlib import Path

from dynamics.plots import PALETTE

__all__ = ["DARK_BACKGROUND", "DARK_PALETTE", "DARK_JS", "contrast", "lighten", "dark_js",
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

DARK_JS = r"""/* Training Dynamics: figures in the dark theme's colours (dynamics_toolchain.darkmode).
   window.dynamicsDark(v) recolours one figure's {data, layout} in place for a dark page: the
   page's own background and text colours, a faint grid, and the house palette lightened. */
(function () {
  'use strict';
  var PALETTE = __PALETTE__, DARK = __DARK_PALETTE__;
  var LIGHT_TEXT = /^(#222|#222222|#444|#444444|black|#000|#000000)$/i;

  function page() {
    var cs = getComputedStyle(document.body), bg = cs.backgroundColor, fg = cs.color;
    if (!bg || /rgba\(0, 0, 0, 0\)|transparent/.test(bg)) { bg = '__DARK_BACKGROUND__'; }
    return {bg: bg, fg: fg || '#ced6dd', grid: 'rgba(255,255,255,0.14)', line: '#8a94a0'};
  }
  function rgb(c) {
    var m = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(c), h;
    if (m) {
      h = m[1].length === 3 ? m[1].replace(/./g, function (x) { return x + x; }) : m[1];
      return [0, 2, 4].map(function (i) { return parseInt(h.substr(i, 2), 16); }).concat([1]);
    }
    m = /^rgba?\(([^)]*)\)$/i.exec(c);
    if (!m) { return null; }
    var v = m[1].split(',').map(Number);
    return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1];
  }
  function lum(v) {
    var f = v.slice(0, 3).map(function (x) { x /= 255; return x <= 0.04045 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); });
    return 0.2126 * f[0] + 0.7152 * f[1] + 0.0722 * f[2];
  }
  // a colour the page's dark background would swallow (a grey reference line, a dark blue),
  // mixed with white until it stands 3.5:1 from the background (WCAG's 3:1 for graphics)
  function visible(c, bg) {
    var v = rgb(c), b = rgb(bg);
    if (!v || !b || v[3] < 0.99) { return c; }
    for (var t = 0; t <= 1.0001; t += 0.05) {
      var w = v.slice(0, 3).map(function (x) { return Math.round(x + (255 - x) * t); });
      if ((lum(w.concat([1])) + 0.05) / (lum(b) + 0.05) >= 3.5) {
        return t === 0 ? c : 'rgb(' + w.join(', ') + ')';
      }
    }
    return '#ffffff';
  }
  var BG = null;
  function swap(c) {
    if (typeof c !== 'string') { return c; }
    var i = PALETTE.indexOf(c.toLowerCase());
    return i >= 0 ? DARK[i] : (BG ? visible(c, BG) : c);
  }
  function axis(a, p) {
    if (!a) { return; }
    a.gridcolor = p.grid; a.linecolor = p.line; a.zerolinecolor = p.line; a.color = p.fg;
    if (a.title && a.title.font) { a.title.font.color = p.fg; }
    if (a.tickfont) { a.tickfont.color = p.fg; }
  }
  function font(f, p) { if (f && (!f.color || LIGHT_TEXT.test(f.color))) { f.color = p.fg; } }

  window.dynamicsIsDark = function () { return document.documentElement.dataset.theme === 'dark'; };
  window.dynamicsDark = function (v) {
    var p = page(), L = v.layout, k;
    BG = p.bg;
    L.paper_bgcolor = p.bg; L.plot_bgcolor = p.bg;
    L.font = Object.assign({}, L.font || {}, {color: p.fg});
    if (L.title && L.title.font) { L.title.font.color = p.fg; }
    L.legend = Object.assign({}, L.legend || {}, {bgcolor: 'rgba(0,0,0,0)', font: Object.assign({}, (L.legend || {}).font || {}, {color: p.fg})});
    L.hoverlabel = Object.assign({}, L.hoverlabel || {}, {bgcolor: '#29313d', bordercolor: p.line, font: {color: '#f3f4f5'}});
    L.colorway = (L.colorway || PALETTE).map(swap);
    for (k in L) {
      if (/^[xy]axis\d*$/.test(k)) { axis(L[k], p); }
      if (/^scene\d*$/.test(k)) {
        ['xaxis', 'yaxis', 'zaxis'].forEach(function (a) {
          L[k][a] = L[k][a] || {}; axis(L[k][a], p); L[k][a].backgroundcolor = p.bg;
        });
        L[k].bgcolor = p.bg;
      }
    }
    if (!L.xaxis) { L.xaxis = {}; axis(L.xaxis, p); }
    if (!L.yaxis) { L.yaxis = {}; axis(L.yaxis, p); }
    (L.annotations || []).forEach(function (a) {
      a.font = a.font || {}; font(a.font, p);
      if (a.arrowcolor) { a.arrowcolor = swap(a.arrowcolor); }
    });
    (L.shapes || []).forEach(function (sh) {  // reference lines: the fit step, a threshold
      if (sh.line && sh.line.color) { sh.line.color = swap(sh.line.color); }
    });
    (L.sliders || []).forEach(function (s) {
      s.font = Object.assign({}, s.font || {}, {color: p.fg});
      s.bgcolor = '#29313d'; s.activebgcolor = '#5b6573'; s.bordercolor = p.line; s.tickcolor = p.line;
      if (s.currentvalue) { s.currentvalue.font = Object.assign({}, s.currentvalue.font || {}, {color: p.fg}); }
    });
    (L.updatemenus || []).forEach(function (m) {
      m.bgcolor = '#29313d'; m.bordercolor = p.line; m.font = Object.assign({}, m.font || {}, {color: p.fg});
    });
    (v.data || []).forEach(function (t) {
      if (t.line) { t.line.color = swap(t.line.color); }
      if (t.marker) {
        t.marker.color = Array.isArray(t.marker.color) ? t.marker.color.map(swap) : swap(t.marker.color);
        if (t.marker.colorbar) { t.marker.colorbar.tickfont = {color: p.fg}; }
      }
      if (t.fillcolor) { t.fillcolor = swap(t.fillcolor); }
      if (t.colorbar) {
        t.colorbar.tickfont = Object.assign({}, t.colorbar.tickfont || {}, {color: p.fg});
        if (t.colorbar.title) { t.colorbar.title.font = Object.assign({}, t.colorbar.title.font || {}, {color: p.fg}); }
      }
      if (t.textfont && !Array.isArray(t.textfont.color) && LIGHT_TEXT.test(t.textfont.color || '')) { t.textfont.color = p.fg; }
    });
    return v;
  };
})();
"""


def dark_js() -> str:
    """:data:`DARK_JS` with the palettes filled in."""
    import json

    return (DARK_JS.replace("__DARK_PALETTE__", json.dumps(DARK_PALETTE))
            .replace("__PALETTE__", json.dumps([c.lower() for c in PALETTE]))
            .replace("__DARK_BACKGROUND__", DARK_BACKGROUND))


# What a page shows in each mode: the theme, the page's colours, and each figure's as drawn.
THEME_REPORT_JS = r"""() => {
  const cs = getComputedStyle(document.body);
  const figs = [...document.querySelectorAll('.js-plotly-plot')].map(gd => {
    const L = gd._fullLayout || {};
    const colors = (gd._fullData || []).filter(t => t.visible !== false && t.visible !== 'legendonly')
      .map(t => (t.line && typeof t.line.color === 'string' && (t.mode || '').includes('lines')) ? t.line.color
                : (t.marker && typeof t.marker.color === 'string') ? t.marker.color : null)
      .filter(c => c);
    return {id: gd.id, paper: L.paper_bgcolor, plot: L.plot_bgcolor, text: (L.font || {}).color, colors: colors};
  });
  return {theme: document.documentElement.dataset.theme || 'light', background: cs.backgroundColor,
          text: cs.color, figures: figs};
}"""


def _opaque(color: str) -> bool:
    return _rgb(color)[3] >= 0.99


def theme_problems(report: dict) -> list[str]:
    """What is wrong with one page in one mode (:data:`THEME_REPORT_JS`): a figure whose
    background is not the page's (an opaque block of another colour: a white one in the dark
    theme), text under 4.5:1 against it, and, in the dark theme, a line or marker colour under
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
