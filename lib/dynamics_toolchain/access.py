"""The book for every reader: sliders from the keyboard, a text alternative for every figure,
and an automated audit (axe-core) of the pages.

``static/access.js``, served in the book's ``dynamics.js``, makes each figure's slider a
keyboard control (Tab to reach it; the arrow keys, Home and End to move it; a screen reader
hears its name and the value it shows) and gives each figure a text alternative that says what
it shows: its kind, title, axes and the series it draws. It also mends two pieces of the
theme's markup that assistive technology misreads: the citation list's roles and the search
button's accessible name.

:func:`audit` runs axe-core (from npm) in a page and :func:`audit_problems` keeps the
violations of serious or critical impact, which the rendered-book test fails on.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from .scripts import evaluate

__all__ = ["AXE_VERSION", "axe_path", "audit", "audit_problems", "VISIONS",
           "colour_distances"]

AXE_VERSION = "4.11.0"  # what .ci/run installs from npm

def axe_path() -> Path:
    """axe-core's ``axe.min.js``: ``$DYNAMICS_AXE`` (a folder with it), else the cache that
    ``.ci/run`` fills from npm (filled here once when npm is present)."""
    from dynamics.runtime import folder

    env = folder("DYNAMICS_AXE")
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "dynamics-axe"
    folder = Path(env) if env else cache / "node_modules" / "axe-core"
    if not (folder / "axe.min.js").exists() and not env and shutil.which("npm"):
        subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix",
                        str(cache), f"axe-core@{AXE_VERSION}"], capture_output=True)
    if not (folder / "axe.min.js").exists():
        raise RuntimeError(f"axe-core is not installed: install Node.js and npm (then it is fetched "
                           f"once: axe-core@{AXE_VERSION}), or point DYNAMICS_AXE at a folder "
                           "holding axe.min.js")
    return folder / "axe.min.js"


AXE_RUN_JS = evaluate("axe_run")


def audit(page) -> list[dict]:
    """axe-core's violations in a loaded Playwright ``page``: ``[{id, impact, help, nodes}]``."""
    page.add_script_tag(path=str(axe_path()))
    return page.evaluate(AXE_RUN_JS)


def audit_problems(violations: list[dict]) -> list[str]:
    """The violations of serious or critical impact, one line each."""
    return [f"{v['impact']} {v['id']}: {v['help']} ({', '.join(v['nodes'])})"
            for v in violations if v["impact"] in ("serious", "critical")]


# Machado, Oliveira & Fernandes (2009), "A Physiologically-based Model for Simulation of Color
# Vision Deficiency": the full-severity matrices, on linear RGB.
VISIONS = {
    "normal": ((1, 0, 0), (0, 1, 0), (0, 0, 1)),
    "protanopia": ((0.152286, 1.052583, -0.204868), (0.114503, 0.786281, 0.099216),
                   (-0.003882, -0.048116, 1.051998)),
    "deuteranopia": ((0.367322, 0.860646, -0.227968), (0.280085, 0.672501, 0.047413),
                     (-0.011820, 0.042940, 0.968881)),
    "tritanopia": ((1.255528, -0.076749, -0.178779), (-0.078411, 0.930809, 0.147602),
                   (0.004733, 0.691367, 0.303900)),
}


def _lab(rgb_linear):
    import numpy as np

    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722],
                    [0.0193, 0.1192, 0.9505]]) @ rgb_linear
    t = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(t > 0.008856, np.cbrt(t), 7.787 * t + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def colour_distances(colours) -> dict:
    """For each of :data:`VISIONS`, the smallest CIELAB distance (ΔE*ab) between two of
    ``colours`` (hex) as a reader with that vision sees them: ``{vision: (distance, a, b)}``."""
    import itertools

    import numpy as np

    def linear(h):
        c = np.array([int(h.lstrip("#")[i:i + 2], 16) for i in (0, 2, 4)]) / 255
        return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)

    out = {}
    for vision, m in VISIONS.items():
        seen = {c: _lab(np.clip(np.array(m) @ linear(c), 0, 1)) for c in colours}
        out[vision] = min((float(np.linalg.norm(seen[a] - seen[b])), a, b)
                          for a, b in itertools.combinations(colours, 2))
    return out
