/* Training Dynamics: each figure in the layout that suits its width (dynamics.plots.to_html).
   A figure narrower than NARROW px, as on a phone, is drawn in the narrow layout that the house
   style computed for it (panels stacked, legend below, titles wrapped, ...), and in the column
   layout again when it grows (a rotation, a wider window). A tap on a plot shows its hover.
   On a phone a slider spans the figure's whole width (its steps far enough apart for a finger),
   and a 3-D view turned by a finger stays turned when a slider redraws the figure. In the
   theme's dark mode each figure is drawn in the page's dark colours (window.dynamicsDark); a
   slider's step and a turned 3-D view are written in the address (window.dynamicsView).
   A figure with no redraw pending says how it is drawn in data-drawn ('wide', 'narrow dark',
   ...): a check waits for that, not for a number of seconds (evaluate/figures_drawn.js).
   NARROW comes from Python (dynamics.plots.NARROW_BELOW), in window.dynamicsConfig: the prelude
   that dynamics_toolchain.scripts.book_js writes before the scripts. */
(function () {
  'use strict';
  var NARROW = window.dynamicsConfig.narrow, EDGE = 8;  // px: a figure narrower than NARROW is on a phone

  function copy(x) { return JSON.parse(JSON.stringify(x)); }

  // the figure in one of its layouts: the column's, or the column's patched for a phone
  function variant(fig, patch) {
    var layout = copy(fig.layout), data = copy(fig.data), k;
    if (patch) {
      for (k in patch.layout) {
        if (patch.layout[k] === null) { delete layout[k]; } else { layout[k] = copy(patch.layout[k]); }
      }
      (patch.data || []).forEach(function (p, i) { if (data[i]) { Object.assign(data[i], copy(p)); } });
    }
    return {data: data, layout: layout};
  }

  // what the reader changed stays: slider positions (and the traces and title they show),
  // traces hidden from the legend, a turned 3-D view
  function keep(gd, v) {
    (gd.data || []).forEach(function (t, i) { if (v.data[i] && t.visible !== undefined) { v.data[i].visible = t.visible; } });
    (gd.layout.sliders || []).forEach(function (s, i) {
      var mine = (v.layout.sliders || [])[i];
      if (!mine || s.active === undefined) { return; }
      mine.active = s.active;
      var step = mine.steps[s.active], args = step && step.args && step.args[1];
      if (args && args['title.text'] !== undefined && v.layout.title) { v.layout.title.text = args['title.text']; }
    });
    Object.keys(gd.layout).forEach(function (k) {
      if (/^scene\d*$/.test(k) && gd.layout[k].camera && v.layout[k]) { v.layout[k].camera = copy(gd.layout[k].camera); }
    });
  }

  // on a phone, each slider as wide as the figure (EDGE px from each side), not only the plot
  // area: its steps are then as far apart as the screen allows (the page check wants them
  // dynamics_toolchain.pages.MIN_STEP px apart, a fingertip's target). The slider keeps its place in the
  // plot area (x 0, len 1: what plotly reserves margins for) and reaches out by negative pads;
  // pads = the room its layout kept for its end labels.
  function fitSliders(gd, pads) {
    var L = gd._fullLayout, upd = {};
    if (!L || !L._size || !(L.sliders || []).length) { return null; }
    var out = {l: L._size.l - EDGE, r: L.width - L._size.l - L._size.w - EDGE};
    L.sliders.forEach(function (s, i) {
      var want = {l: (pads[i] || {}).l || 0, r: (pads[i] || {}).r || 0}, k;
      for (k in want) {
        want[k] -= out[k];
        if (Math.abs(s.pad[k] - want[k]) > 0.5) { upd['sliders[' + i + '].pad.' + k] = want[k]; }
      }
    });
    return Object.keys(upd).length ? Plotly.relayout(gd, upd) : null;
  }

  // plotly keeps a turned 3-D view in the layout on mouseup only: after a finger turned it, a
  // slider's redraw turned it back. Keep it on touchend too, as plotly does on mouseup.
  function keepTurnedView(gd) {
    gd.addEventListener('touchend', function () {
      var L = gd._fullLayout || {};
      Object.keys(L).forEach(function (k) {
        var sc = /^scene\d*$/.test(k) && L[k]._scene, ev = {};
        if (!sc || !sc.isCameraChanged || !sc.isCameraChanged(gd.layout)) { return; }
        ev[k + '.camera'] = sc.getCamera();
        sc.saveLayout(gd.layout);
        gd.emit('plotly_relayout', ev);
      });
    }, true);
  }

  var figures = 0;  // a figure's place on the page (1, 2, ...): its name in a link to a view
  window.dynamicsFigure = function (id, fig, narrow, config) {
    var gd = document.getElementById(id), shown = null, queue = Promise.resolve(), n = ++figures;
    var pending = 0;  // redraws asked for and not done yet
    var phone = narrow && narrow.layout && Object.keys(narrow.layout).length ? narrow : null;
    function wanted() {
      var w = gd.getBoundingClientRect().width;
      return phone && w > 0 && w < NARROW ? 'narrow' : 'wide';
    }
    var pads = ((phone && phone.layout.sliders) || fig.layout.sliders || []).map(function (s) { return copy(s.pad || {}); });
    function dark() { return !!(window.dynamicsIsDark && window.dynamicsIsDark()); }
    function fit() { return shown && shown.indexOf('narrow') === 0 ? fitSliders(gd, pads) : null; }
    function apply() {
      var kind = wanted(), look = kind + (dark() ? ' dark' : '');
      if (look === shown) { return fit(); }
      var v = variant(fig, kind === 'narrow' ? phone : null), first = shown === null;
      if (dark()) { window.dynamicsDark(v); }  // the dark theme's colours (dynamics_toolchain.darkmode)
      if (!first) { keep(gd, v); }
      shown = look;
      gd.setAttribute('data-layout', kind);
      gd.style.height = v.layout.height + 'px';
      if (!first) { return Plotly.react(gd, v.data, v.layout, config).then(fit); }
      return Plotly.newPlot(gd, v.data, v.layout, config).then(function () {
        // plotly redraws on its own when the window changes size: fit the sliders again then
        gd.on('plotly_afterplot', function () { queue = queue.then(fit); });
        if (fig.frames) { return Plotly.addFrames(gd, fig.frames); }
      }).then(function () {
        if (window.dynamicsView) { window.dynamicsView(gd, n); }  // dynamics_toolchain.viewlink
        if (window.dynamicsAccess) { window.dynamicsAccess(gd); }  // dynamics_toolchain.access
      }).then(fit);
    }
    function update() {
      pending += 1;
      gd.removeAttribute('data-drawn');
      queue = queue.then(apply).catch(function (e) { console.error(e); }).then(function () {
        pending -= 1;
        if (!pending) { gd.setAttribute('data-drawn', shown); }
      });
    }
    keepTurnedView(gd);
    update();
    if (window.ResizeObserver) { new ResizeObserver(update).observe(gd); }
    window.addEventListener('orientationchange', update);
    // the theme's toggle (or the system's setting) marks <html data-theme>: redraw in its colours
    if (window.MutationObserver) {
      new MutationObserver(update).observe(document.documentElement, {attributes: true, attributeFilter: ['data-theme']});
    }
    window.addEventListener('resize', update);
  };
})();
