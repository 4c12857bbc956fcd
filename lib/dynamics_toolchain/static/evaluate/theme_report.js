// What a page shows in one mode: the theme, the page's colours, and each figure's as drawn
// (dynamics_toolchain.darkmode.inspect_themes; judged by theme_problems).
() => {
  const cs = getComputedStyle(document.body);
  const figs = [...document.querySelectorAll('.js-plotly-plot')].map(gd => {
    const L = gd._fullLayout || {};
    const colors = (gd._fullData || []).filter(t => t.visible !== false && t.visible !== 'legendonly')
      .map(t => (t.line && typeof t.line.color === 'string' && (t.mode || '').includes('lines')) ? t.line.color
                : (t.marker && typeof t.marker.color === 'string') ? t.marker.color : null)
      .filter(c => c);
    return {id: gd.id, paper: L.paper_bgcolor, plot: L.plot_bgcolor, text: (L.font || {}).color, colors: colors};
  });
  return {theme: document.documentElement.dataset.theme || 'light', background: cs.backgroundColor,
          text: cs.color, figures: figs};
}
