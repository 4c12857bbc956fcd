/* Training Dynamics: the book for every reader (dynamics_toolchain.access).
   window.dynamicsAccess(gd), called by figures.js once a figure is drawn: its slider a keyboard
   control and a text alternative that says what it shows. On load: the theme's markup mended. */
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
      var now = gd.layout.sliders[0], i = now.active || 0, n = now.steps.length, to;
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

  // an icon inside a named control is decoration (Font Awesome's advice): its title (the theme
  // switch's "Light", "Dark", "System Settings", which Font Awesome's script turns into an
  // <svg role="img"> with a <title>, whenever it runs) is not the control's visible text
  var ICONS = 'i[class*="fa-"], svg.svg-inline--fa';
  function quiet(root) {
    root.querySelectorAll(ICONS).forEach(function (el) {
      if (el.getAttribute('aria-hidden') === 'true') { return; }
      el.setAttribute('aria-hidden', 'true');
      el.removeAttribute('role');
      el.removeAttribute('aria-labelledby');
      el.removeAttribute('title');
      el.querySelectorAll('title').forEach(function (t) { t.remove(); });
    });
  }
  function watch() {  // Font Awesome swaps each <i> for its <svg> inside the button, when it runs
    document.querySelectorAll('button[aria-label]').forEach(function (button) {
      quiet(button);
      new MutationObserver(function () { quiet(button); }).observe(button, {childList: true, subtree: true});
    });
  }

  // the theme's markup, mended: a citation list is a list of entries (no roles that need
  // particular children), and a control's name holds the text it shows (WCAG 2.5.3, axe's
  // label-content-name-mismatch: the search button, the theme switch, the code cells'
  // "Show code cell source" toggles named "Toggle hidden content"): a control that shows text
  // is named by that text, which follows it when it changes (show / hide)
  function mend() {
    watch();
    document.querySelectorAll('.citation-list[role], .citation-list [role="doc-biblioentry"], '
                              + '.citation-list [role="doc-backlink"]').forEach(function (el) { el.removeAttribute('role'); });
    document.querySelectorAll('button[aria-label], summary[aria-label], a[aria-label], [role="button"][aria-label]').forEach(function (el) {
      var shown = plain(el.innerText || '').toLowerCase();
      if (shown && el.getAttribute('aria-label').toLowerCase().indexOf(shown) < 0) {
        el.removeAttribute('aria-label');
      }
    });
  }
  if (document.readyState === 'loading') { document.addEventListener('DOMContentLoaded', mend); } else { mend(); }
})();
