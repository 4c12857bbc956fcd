"""The book for every reader: sliders from the keyboard, a text alternative for every figure,
and an automated audit (axe-core) of the pages.

:data:`ACCESS_JS`, served with the book's ``dynamics.js``, makes each figure's slider a
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

__all__ = ["ACCESS_JS", "AXE_VERSION", "axe_path", "audit", "audit_problems", "VISIONS",
           "colour_distances"]

AXE_VERSION = "4.11.0"  # what .ci/run installs from npm

ACCESS_JS = r"""/* Training Dynamics: the book for every reader (dynamics_toolchain.access). */
(function () {
  'use strict';
  function text(t) { return (t && (t.text !== undefined ? t.text : t)) || ''; }
  function plain(s) { return String(s || '').replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim(); }
  var KIND = {scatter: 'line chart', scattergl: 'line chart', bar: 'bar chart', heatmap: 'heat map',
              contour: 'contour map', scatter3d: '3-D scatter plot', surface: '3-D surface', histogram: 'histogram'};

  // "Line chart: <title>. x: <axis>, y: <axis>. 3 series: a, b and c."
  function describe(gd) {
    var L = gd.layout || {}, data = gd.data || [];
    var kinds = [];
    data.forEach(function (t) {
      var k = KIND[t.type || 'scatter'] || (t.type + ' chart');
      if (k === 'line chart' && t.mode && t.mode.indexOf('lines') < 0) { k = 'scatter plot'; }
      if (kinds.indexOf(k) < 0) { kinds.push(k); }
    });
    var parts = [(kinds.join(' and ') || 'chart').replace(/^./, function (c) { return c.toUpperCase(); })];
    var title = plain(text(L.title));
    if (title) { parts[0] += ': ' + title; }
    var axes = [];
    Object.keys(L).sort().forEach(function (k) {
      if (/^[xy]axis\d*$/.test(k) && plain(text((L[k] || {}).title))) { axes.push(k[0] + ': ' + plain(text(L[k].title))); }
    });
    if (axes.length) { parts.push(axes.join(', ')); }
    var names = data.map(function (t) { return plain(t.name); }).filter(function (n, i, all) { return n && all.indexOf(n) === i; });
    if (names.length) { parts.push(names.length + ' series: ' + names.slice(0, 8).join(', ') + (names.length > 8 ? ', ...' : '')); }
    var s = (L.sliders || [])[0];
    if (s && s.steps && s.steps.length) {
      parts.push('A slider over ' + s.steps.length + ' values (' + plain(s.steps[0].label) + ' to '
                 + plain(s.steps[s.steps.length - 1].label) + ') changes what it shows');
    }
    return parts.join('. ') + '.';
  }

  function go(gd, i) {
    var s = gd.layout.sliders[0], step = s.steps[i];
    if (!step || !step.method || step.method === 'skip') { return Promise.resolve(); }
    return Promise.resolve(Plotly[step.method].apply(null, [gd].concat(step.args || [])))
      .then(function () { return Plotly.relayout(gd, {'sliders[0].active': i}); })
      .then(function () { gd.emit('plotly_sliderchange', {slider: s, step: step, interaction: true}); });
  }

  // the slider as a keyboard control: reachable with Tab, moved with the arrow keys
  function keyboard(gd) {
    var s = (gd.layout.sliders || [])[0];
    var group = gd.querySelector('.slider-group');
    if (!s || !group || group.getAttribute('data-keys')) { return; }
    group.setAttribute('data-keys', '1');
    group.setAttribute('tabindex', '0');
    group.setAttribute('role', 'slider');
    function label() {
      var now = gd.layout.sliders[0], step = now.steps[now.active || 0] || {};
      group.setAttribute('aria-label', plain((now.currentvalue && now.currentvalue.prefix) || 'step').replace(/[=:]\s*$/, '').trim());
      group.setAttribute('aria-valuemin', '0');
      group.setAttribute('aria-valuemax', String(now.steps.length - 1));
      group.setAttribute('aria-valuenow', String(now.active || 0));
      group.setAttribute('aria-valuetext', plain(step.label));
    }
    label();
    group.addEventListener('keydown', function (e) {
      var now = gd.layout.sliders[0], i = now.active || 0, n = now.steps.length, to = i;
      if (e.key === 'ArrowRight' || e.key === 'ArrowUp') { to = Math.min(n - 1, i + 1); }
      else if (e.key === 'ArrowLeft' || e.key === 'ArrowDown') { to = Math.max(0, i - 1); }
      else if (e.key === 'Home') { to = 0; }
      else if (e.key === 'End') { to = n - 1; }
      else { return; }
      e.preventDefault();
      if (to !== i) { go(gd, to).then(label); }
    });
    gd.on('plotly_sliderchange', label);
  }

  window.dynamicsAccess = function (gd) {
    gd.setAttribute('role', 'figure');  // not 'img': a figure holds controls (its slider, its toolbar)
    gd.setAttribute('aria-label', describe(gd));
    keyboard(gd);
    gd.on('plotly_afterplot', function () { keyboard(gd); });  // a redraw builds the slider anew
  };

  // the theme's markup, mended: a citation list is a list of entries (no roles that need
  // particular children), and the search button's name holds the text it shows
  function mend() {
    document.querySelectorAll('.citation-list[role], .citation-list [role="doc-biblioentry"], '
                              + '.citation-list [role="doc-backlink"]').forEach(function (el) { el.removeAttribute('role'); });
    document.querySelectorAll('.search-button__button[aria-label]').forEach(function (b) {
      var shown = plain(b.textContent);
      if (shown && b.getAttribute('aria-label').indexOf(shown) < 0) { b.setAttribute('aria-label', shown); }
    });
  }
  if (document.readyState === 'loading') { document.addEventListener('DOMContentLoaded', mend); } else { mend(); }
})();
"""


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


AXE_RUN_JS = """async () => {
  const r = await axe.run(document, {resultTypes: ['violations']});
  return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}));
}"""


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
