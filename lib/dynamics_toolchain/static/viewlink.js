/* Training Dynamics: a link to a view (dynamics_toolchain.viewlink).
   window.dynamicsView(gd, n), called by figures.js once figure n is first drawn: draws it at the
   slider step and 3-D view the address names (fig<n>=<label>, fig<n>cam=<x>,<y>,<z>) and writes
   them there when the reader moves them. */
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
