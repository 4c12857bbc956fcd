"""A link to a view: a figure's slider position or a 3-D figure's turned view, in the address.

Moving a figure's slider writes ``fig<N>=<step label>`` into the page address's fragment (N:
the figure's place on the page, 1 for the first), turning a 3-D figure writes
``fig<N>cam=<x>,<y>,<z>`` (the camera's eye); a section anchor already there stays in front.
Opening the page from such a link draws each named figure at that step and that view, and
scrolls to the first of them: an instructor can point a class at "the phase diagram at weight
decay 3". ``static/viewlink.js`` is served in the book's ``dynamics.js``; its
``window.dynamicsView(gd, n)`` is called once a figure is first drawn.
"""
from __future__ import annotations

__all__ = ["view_fragment"]

def view_fragment(views: dict[int, str] | None = None, cameras: dict[int, tuple] | None = None,
                  anchor: str = "") -> str:
    """The address fragment ``static/viewlink.js`` reads: ``view_fragment({3: "0.1"})`` is
    ``#fig3=0.1`` (figure 3 at its slider step labelled 0.1), ``cameras={2: (1, 1, 0.5)}``
    turns figure 2's 3-D view; ``anchor`` a section's anchor kept in front."""
    from urllib.parse import quote

    parts = [anchor] if anchor else []
    for n, label in (views or {}).items():
        if int(n) < 1:
            raise ValueError(f"figures are numbered from 1, got {n}")
        parts.append(f"fig{int(n)}={quote(str(label), safe='')}")
    for n, eye in (cameras or {}).items():
        if len(eye) != 3:
            raise ValueError(f"a camera's eye has three coordinates, got {eye!r}")
        parts.append(f"fig{int(n)}cam=" + quote(",".join(f"{float(v):.2f}" for v in eye), safe=""))
    return "#" + "&".join(parts)
