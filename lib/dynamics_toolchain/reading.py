"""The whole reading of a built book, as the rendered-book test and the Pages workflow do it:
:func:`read_book` reads every chapter page in Chromium at each of :data:`WIDTHS`, in the theme
of :data:`SCHEMES` (each chapter in both themes, audited by axe-core in each), the landing page
in both themes, and every page's text (:mod:`.htmlcheck`), and returns what is wrong, page by
page. ``python -m dynamics_toolchain read <html dir>`` runs it on any build: the smoke build in
the tests (``pytest -m book``), the published cpu build before it deploys.
"""
from __future__ import annotations

from pathlib import Path

from . import access, darkmode, htmlcheck, pages

__all__ = ["WIDTHS", "SCHEMES", "AUDITED", "read_book"]

WIDTHS = (390, 700, 1280)  # a phone (390 x 844, touch), a narrow window, a laptop
# the system's colour scheme at each width: each chapter is read in both themes, and audited in
# each (axe-core), in the visits that read it at 390 and 1280 px
SCHEMES = {390: "light", 700: "dark", 1280: "dark"}
AUDITED = (390, 1280)


def _structure(name: str, r: dict, width: int) -> list[str]:
    """What a chapter page must hold beyond :func:`pages.problems`: typeset equations, a figure
    with a slider that moved; on a phone every figure in its narrow layout, a tap's hover and
    every slider dragged; wider, every figure in its wide layout."""
    out = []
    if r["math"] <= 0:
        out.append("no typeset equations")
    if not (r["figures"] and r["slider_moved"]):
        out.append("no figure with a slider to move")
    layout = "narrow" if width < 500 else "wide"
    out += [f"figure {f['id']} in the {f['layout']} layout, not the {layout}"
            for f in r["figures"] if f["layout"] != layout]
    if width < 500:
        if not (r["tapped"] and r["tapped"]["hover"]):
            out.append("a tap showed no hover")
        if len(r["dragged"]) != sum(f["slider"] for f in r["figures"]):
            out.append(f"{len(r['dragged'])} sliders dragged of {sum(f['slider'] for f in r['figures'])}")
    return out


def read_book(html, names=None, shots_dir=None) -> dict[str, list[str]]:
    """Read the built book at ``html`` (chapter pages ``names``, default all) as a reader
    would, and return ``{what: [problems]}`` (every list empty: nothing wrong). With
    ``shots_dir``, a screenshot of each page's first screen at each width is saved under
    ``shots_dir/<width>``."""
    html = Path(html)
    whole = not names  # the whole book has a 3-D figure for a finger to turn; a chapter may not
    names = names or sorted(p.stem for p in (html / "chapters").glob("*.html"))
    found = {f"{page} (its HTML)": ps for page, ps in htmlcheck.check_dir(html).items()}
    turned, themes = 0, set()
    for width in WIDTHS:
        shots = Path(shots_dir) / str(width) if shots_dir is not None else None
        scheme = SCHEMES[width]
        reports = pages.inspect_pages(html, names, shots_dir=shots, width=width, scheme=scheme,
                                      audit=width in AUDITED)
        for name, r in reports.items():
            found[f"{name} at {width} px"] = pages.problems(r) + _structure(name, r, width)
            turned += bool(r.get("turned_3d"))
            if width in AUDITED:  # the figures follow the theme; axe finds nothing serious
                theme = r["theme"]
                themes.add(theme["theme"])
                found[f"{name} in the {scheme} theme"] = (
                    ([] if theme["theme"] == scheme else [f"the page is in the {theme['theme']} theme"])
                    + darkmode.theme_problems(theme) + access.audit_problems(theme["audit"]))
    if whole and not turned:
        found["the phone"] = ["no 3-D figure was turned with a finger"]
    if themes != {"light", "dark"}:
        found["the themes"] = [f"read only in {sorted(themes)}"]
    if (html / "intro.html").exists():  # the landing page in both themes, with the same audit
        for name, modes in darkmode.inspect_themes(html, pages=["intro"], audit=True).items():
            for mode, report in modes.items():
                found[f"{name} in the {mode} theme"] = (
                    ([] if report["theme"] == mode else [f"the page is in the {report['theme']} theme"])
                    + darkmode.theme_problems(report) + access.audit_problems(report["audit"]))
    return found


def main(html, shots_dir=None) -> int:
    """Print every problem :func:`read_book` finds; 1 if any, else 0."""
    found = read_book(html, shots_dir=shots_dir)
    bad = [(what, p) for what, ps in found.items() for p in ps]
    for what, p in bad:
        print(f"{what}: {p}")
    print(f"read {len(found)} page views: {len(bad)} problem(s)")
    return 1 if bad else 0
