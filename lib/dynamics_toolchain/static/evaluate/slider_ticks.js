// A finger dragging a slider from its first step to its last: where the ticks are, and a record
// of the steps the slider passes (gd._dynamicsSeen) (dynamics_toolchain.pages).
(id) => {
  const gd = document.getElementById(id);
  gd.querySelector('.slider-rail-rect').scrollIntoView({block: 'center'});
  const xs = [...gd.querySelectorAll('g.slider-container')[0].querySelectorAll('rect.slider-tick-rect')]
    .map(t => { const r = t.getBoundingClientRect(); return r.left + r.width / 2; }).sort((a, b) => a - b);
  const rail = gd.querySelector('.slider-rail-rect').getBoundingClientRect();
  if (!gd._dynamicsSeen) { gd._dynamicsSeen = []; gd.on('plotly_sliderchange', e => gd._dynamicsSeen.push(e.slider.active)); }
  // a slider already at its first step, where the finger lands, does not change there
  gd._dynamicsSeen.length = 0;
  if (gd._fullLayout.sliders[0].active === 0) gd._dynamicsSeen.push(0);
  return {xs, y: rail.top + rail.height / 2};
}
