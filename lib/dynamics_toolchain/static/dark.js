/* Training Dynamics: figures in the dark theme's colours (dynamics_toolchain.darkmode).
   window.dynamicsDark(v) recolours one figure's {data, layout} in place for a dark page: the
   page's own background and text colours, a faint grid, and the house palette lightened.
   The palettes and the theme's dark background come from Python (dynamics.plots.PALETTE,
   dynamics_toolchain.darkmode.DARK_PALETTE and DARK_BACKGROUND), in window.dynamicsConfig. */
(function () {
  'use strict';
  var C = window.dynamicsConfig, PALETTE = C.palette, DARK = C.darkPalette;
  var LIGHT_TEXT = /^(#222|#222222|#444|#444444|black|#000|#000000)$/i;

  function page() {
    var cs = getComputedStyle(document.body), bg = cs.backgroundColor, fg = cs.color;
    if (!bg || /rgba\(0, 0, 0, 0\)|transparent/.test(bg)) { bg = C.darkBackground; }
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
  // mixed with white until it stands `ratio`:1 from the background: 3.5 for lines and marks
  // (WCAG's 3:1 for graphics), 4.5 for text drawn on a figure (WCAG AA)
  function mixed(c, bg, ratio) {
    var v = rgb(c), b = rgb(bg);
    if (!v || !b || v[3] < 0.99) { return c; }
    for (var t = 0; t <= 1.0001; t += 0.05) {
      var w = v.slice(0, 3).map(function (x) { return Math.round(x + (255 - x) * t); });
      if ((lum(w.concat([1])) + 0.05) / (lum(b) + 0.05) >= ratio) {
        return t === 0 ? c : 'rgb(' + w.join(', ') + ')';
      }
    }
    return '#ffffff';
  }
  function visible(c, bg) { return mixed(c, bg, 3.5); }
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
  // text on a figure: the page's text colour where it had the light theme's, and a colour of its
  // own (a grey label, a palette colour) lightened until it reads against the dark background
  function font(f, p) {
    if (!f) { return; }
    if (!f.color || LIGHT_TEXT.test(f.color)) { f.color = p.fg; return; }
    if (typeof f.color !== 'string') { return; }
    var i = PALETTE.indexOf(f.color.toLowerCase());
    f.color = mixed(i >= 0 ? DARK[i] : f.color, BG || p.bg, 4.5);
  }

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
      if (sh.label && sh.label.font) { font(sh.label.font, p); }
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
