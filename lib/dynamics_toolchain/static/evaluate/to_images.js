// The printed edition (dynamics_toolchain.printed): every drawn figure becomes a picture of itself
// and, for a slider figure, a note of the value it shows; returns how many.
async () => {
  const figs = [...document.querySelectorAll('.js-plotly-plot')];
  let n = 0;
  for (const gd of figs) {
    const L = gd._fullLayout;
    if (!L || !L.width) { continue; }
    const url = await Plotly.toImage(gd, {format: 'png', width: L.width, height: L.height, scale: 2});
    const img = document.createElement('img');
    img.src = url; img.className = 'dynamics-print'; img.alt = (L.title && L.title.text) || 'figure';
    img.style.width = Math.min(L.width, 680) + 'px';
    await img.decode();
    const box = document.createElement('div');
    box.appendChild(img);
    (L.sliders || []).forEach(s => {
      const step = s.steps && s.steps[s.active || 0];
      if (!step) { return; }
      const note = document.createElement('p');
      note.className = 'dynamics-print-note';
      const prefix = (s.currentvalue && s.currentvalue.prefix) || '';
      note.textContent = 'Shown at ' + (prefix ? prefix.trim() + ' ' : '') + step.label
        + ' (the online edition has a slider over ' + s.steps.length + ' values).';
      box.appendChild(note);
    });
    gd.replaceWith(box);
    n += 1;
  }
  document.querySelectorAll('details').forEach(d => { d.removeAttribute('open'); });
  return n;
}
