"""A link to a view: a figure's slider position or a 3-D figure's turned view, in the address.

Moving a figure's slider writes ``fig<N>=<step label>`` into the page address's fragment (N:
the figure's place on the page, 1 for the first), turning a 3-D figure writes
``fig<N>cam=<x>,<y>,<z>`` (the camera's eye); a section anchor already there stays in front.
Opening the page from such a link draws each named figure at that step and that view, and
scrolls to the first of them: an instructor can point a class at "the phase diagram at weight
decay 3". :data:`VIEW_JS` is served with the book's ``dynamics.js``; its
``window.dynamicsView(gd, n)`` is called once a figure is first drawn.
"""
from __future__ import annotations

__all__ = ["VIEW_JS", "view_fragment"]

VIEW_JS = r"""/* Training Dynamics: a link to a view (dynamics_toolchain.viewlink). */
(function () {
  'use strict';
  function parts() { return location.hash.replace(/^#/, '').split('&').filter(function (p) { return p; }); }
  function read() {
    var out = {};
    parts().forEach(function (p) {
      var m = /^fig(\d+)(cam)?=(.*)$/.exec(p);
      if (m) { out['fig' + m[1] + (m[2] || '')] = decodeURIComponent(m[3]); }
    });
    return out;
  }
  function write(key, value) {
    var kept = parts().filter(function (p) { return p.indexOf(key + '=') !== 0; });
    if (value !== null) { kept.push(key + '=' + encodeURIComponent(value)); }
    history.replaceState(null, '', '#' + kept.join('&'));
  }
  function stepOf(slider, label) {
    for (var i = 0; i < slider.steps.length; i++) {
      if (String(slider.steps[i].label) === label) { return i; }
    }
    return -1;
  }
  var scrolled = false;
  window.dynamicsView = function (gd, n) {
    var want = read(), key = 'fig' + n, moved = false;
    var sliders = (gd.layout.sliders || []), s = sliders[0];
    if (s && want[key] !== undefined) {
      var i = stepOf(s, want[key]), step = s.steps[i];
      if (step && step.method && step.method !== 'skip') {
        Plotly[step.method].apply(null, [gd].concat(step.args || []));
        Plotly.relayout(gd, {'sliders[0].active': i});
        moved = true;
      }
    }
    if (want[key + 'cam'] !== undefined) {
      var e = want[key + 'cam'].split(',').map(Number), upd = {};
      if (e.length === 3 && e.every(isFinite)) {
        Object.keys(gd._fullLayout || {}).forEach(function (k) {
          if (/^scene\d*$/.test(k)) { upd[k + '.camera.eye'] = {x: e[0], y: e[1], z: e[2]}; }
        });
        if (Object.keys(upd).length) { Plotly.relayout(gd, upd); moved = true; }
      }
    }
    if (moved && !scrolled) { scrolled = true; gd.scrollIntoView({block: 'center'}); }
    gd.on('plotly_sliderchange', function (ev) {
      if (ev && ev.step) { write(key, String(ev.step.label)); }
    });
    gd.on('plotly_relayout', function (ev) {
      Object.keys(ev || {}).forEach(function (k) {
        var m = /^scene\d*\.camera$/.exec(k), eye = m && ev[k] && ev[k].eye;
        if (eye) { write(key + 'cam', [eye.x, eye.y, eye.z].map(function (v) { return v.toFixed(2); }).join(',')); }
      });
    });
  };
})();
"""


def view_fragment(views: dict[int, str] | None = None, cameras: dict[int, tuple] | None = None,
                  anchor: str = "") -> str:
    """The address fragment :data:`VIEW_JS` reads: ``view_fragment({3: "0.1"})`` is
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
