// The first figure with a slider, brought into view: where a click on its rail moves it
// (dynamics_toolchain.pages.inspect_pages).
async () => {
  const div = [...document.querySelectorAll('.dynamics-figure')].find(d => d.layout && d.layout.sliders && d.layout.sliders.length);
  if (!div) return null;
  div.scrollIntoView();
  // a figure stacked for a phone can be taller than the screen: bring its slider into view
  div.querySelector('.slider-rail-rect').scrollIntoView({block: 'center'});
  const before = div.data.map(t => t.visible);
  const rail = div.querySelector('.slider-rail-rect').getBoundingClientRect();
  const active = div._fullLayout.sliders[0].active, n = div._fullLayout.sliders[0].steps.length;
  return {id: div.id, before, active, n, x: rail.left + (active > 0 ? 3 : rail.width - 3), y: rail.top + rail.height / 2};
}
