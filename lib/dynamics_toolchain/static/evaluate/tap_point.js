// A finger on a phone: the point of a line plot to tap, to see that its hover appears
// (dynamics_toolchain.pages.inspect_pages).
() => {
  for (const gd of document.querySelectorAll('.dynamics-figure')) {
    const L = gd._fullLayout;
    if (!L || !L.xaxis || L.sliders.length) continue;
    const t = gd._fullData.find(t => t.visible === true && t.type === 'scatter' && t.xaxis === 'x'
                                     && t.yaxis === 'y' && t.hoverinfo !== 'skip' && t.x && t.x.length > 2);
    if (!t) continue;
    gd.scrollIntoView({block: 'center'});
    const i = Math.floor(t.x.length / 2);
    const at = () => { const r = gd.getBoundingClientRect();
      return [r.left + L.xaxis._offset + L.xaxis.c2p(t.x[i]), r.top + L.yaxis._offset + L.yaxis.c2p(t.y[i])]; };
    let [x, y] = at();
    if (isFinite(y) && (y < 0 || y > innerHeight)) { window.scrollBy(0, y - innerHeight / 2); [x, y] = at(); }
    if (isFinite(x) && isFinite(y)) return {id: gd.id, x, y};
  }
  return null;
}
