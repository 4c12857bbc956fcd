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
    // text drawn on the figure in a colour of its own: annotations and shapes' labels
    const labels = [...(L.annotations || []), ...(L.shapes || []).map(sh => sh.label || {})]
      .filter(a => a.text && a.font && typeof a.font.color === 'string')
      .map(a => ({text: String(a.text).slice(0, 40), color: a.font.color}));
    return {id: gd.id, paper: L.paper_bgcolor, plot: L.plot_bgcolor, text: (L.font || {}).color, colors: colors,
            labels: labels};
  });
  return {theme: document.documentElement.dataset.theme || 'light', background: cs.backgroundColor,
          text: cs.color, figures: figs};
}
