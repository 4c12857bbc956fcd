// What a reader sees, measured in the page (dynamics_toolchain.pages.inspect_pages): run after
// the page has drawn, with {phone, minStep}.
({phone, minStep}) => {
  const art = document.querySelector('article.bd-article') || document.querySelector('main');
  const A = art.getBoundingClientRect();
  const wide = [];
  const sels = ['.cell_output', '.dynamics-table-wrap', '.dynamics-figure', 'div.cell_input',
                'table', 'img', 'mjx-container[display="true"]', 'details.dynamics-source'];
  for (const sel of sels) {
    for (const el of art.querySelectorAll(sel)) {
      // a table inside a scrolling wrapper scrolls within the column: the wrapper is what counts
      if (sel === 'table' && el.closest('.dynamics-table-wrap, .pst-scrollable-table-container, .table-wrapper')) continue;
      const r = el.getBoundingClientRect();
      if (r.width === 0) continue;
      if (r.right > A.right + 2 || r.left < A.left - 2)
        wide.push(`${sel} is ${Math.round(r.width)} px, the column ${Math.round(A.width)} px: ` +
                  (el.textContent || '').trim().slice(0, 60));
    }
  }
  // a display equation or a table that needs its box's scrollbar is cut off for a reader
  // (on a phone they scroll in their own boxes, as they must: the page does not)
  if (!phone) for (const el of art.querySelectorAll('mjx-container[display="true"], .dynamics-table-wrap'))
    if (el.scrollWidth > el.clientWidth + 2)
      wide.push(`${el.tagName === 'MJX-CONTAINER' ? 'equation' : 'table'} cut off ` +
                `(${el.scrollWidth} px in ${el.clientWidth} px): ` + (el.textContent || '').trim().slice(0, 60));
  // one that scrolls (on a phone) shows it: a shade at each edge with more table beyond it
  // (tables.TABLE_CSS: backgrounds that scroll with the table cover the shade at its ends)
  if (phone) for (const el of art.querySelectorAll('.dynamics-table-wrap'))
    if (el.scrollWidth > el.clientWidth + 2) {
      const st = getComputedStyle(el);
      if (!st.backgroundAttachment.includes('local') || (st.backgroundImage.match(/gradient/g) || []).length < 4)
        wide.push('a table scrolls sideways with no cue at its edges: ' + (el.textContent || '').trim().slice(0, 60));
    }
  for (const pre of art.querySelectorAll('.cell_output pre')) {
    // the library's code keeps its lines and scrolls inside its own box (show_source)
    let box = false;
    for (let el = pre.parentElement; el && el.closest('.dynamics-source'); el = el.parentElement)
      if (getComputedStyle(el).overflowX === 'auto') { box = true; break; }
    if (box) continue;
    if (pre.scrollWidth > pre.clientWidth + 2) wide.push('output cut off: ' + pre.textContent.trim().slice(0, 60));
  }
  // equations: MathJax output present, no raw TeX delimiters in the visible text
  const clone = art.cloneNode(true);
  for (const el of clone.querySelectorAll('pre, code, script, style, .cell_input, mjx-container')) el.remove();
  const text = clone.innerText || clone.textContent;
  const rawTex = (text.match(/\\\(|\\\[|\$\$/g) || []).length;
  const math = document.querySelectorAll('mjx-container').length;
  // figures: drawn; no two of a figure's texts on top of each other, none cut off by its edge
  const overlaps = (div) => {
  // every text of a plotly figure a reader reads, with what it belongs to: two texts of
  // different owners must not meet (texts of one owner, e.g. one axis's ticks, are placed by plotly)
  const items = [];
  const visible = (el) => {
    for (let e = el; e && e !== div; e = e.parentElement) {
      const s = getComputedStyle(e);
      if (s.display === 'none' || s.visibility === 'hidden' || s.opacity === '0') return false;
    }
    const fill = getComputedStyle(el).fill;
    return !/rgba\(.*,\s*0\)$/.test(fill);
  };
  const add = (el, kind, owner) => {
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1 || !visible(el)) return;
    if (el.tagName === 'text' && !(el.textContent || '').trim()) return;
    items.push({kind, owner, text: (el.textContent || '').trim().slice(0, 40), r});
  };
  const q = (sel) => [...div.querySelectorAll(sel)];
  q('text.gtitle').forEach(el => add(el, 'title', 'title'));
  q('g.infolayer text').forEach(el => {
    const c = el.getAttribute('class') || '';
    if (/^[xy]\d*title$/.test(c)) add(el, 'axis title', c);
  });
  q('g.colorbar').forEach((cb, i) => {
    cb.querySelectorAll('g.cbtitle text').forEach(el => add(el, 'colorbar title', 'colorbar' + i));
    cb.querySelectorAll('g.cbaxis text').forEach(el => add(el, 'colorbar ticks', 'colorbar' + i));
  });
  q('g.annotation').forEach((a, i) => a.querySelectorAll('text').forEach(el => add(el, 'annotation', 'annotation' + i)));
  q('g.legend g.traces').forEach(el => add(el, 'legend', 'legend'));
  q('g.slider-container').forEach((s, i) => {
    s.querySelectorAll('g.slider-labels text').forEach(el => add(el, 'slider label', 'slider labels' + i));
    s.querySelectorAll('g.slider-group > text').forEach(el => add(el, 'slider value', 'slider value' + i));
    s.querySelectorAll('rect.slider-rail-rect').forEach(el => add(el, 'slider', 'slider rail' + i));
  });
  q('g.xaxislayer-above > g, g.yaxislayer-above > g').forEach(g => {
    const c = (g.getAttribute('class') || '').split(' ')[0];
    if (/^[xy]\d*tick$/.test(c)) g.querySelectorAll('text').forEach(el => add(el, 'tick label', c + '@' + (g.closest('g.subplot') || {getAttribute: () => ''}).getAttribute('class')));
  });
  q('g.heatmap-label text').forEach((el, i) => add(el, 'heatmap cell label', 'cell' + i));
  q('text.bartext').forEach((el, i) => add(el, 'bar label', 'bar' + i));
  const overlaps = [];
  const box = div.getBoundingClientRect();
  for (const a of items)
    if (a.r.left < box.left - 2 || a.r.right > box.right + 2 || a.r.top < box.top - 2 || a.r.bottom > box.bottom + 2)
      overlaps.push(`${a.kind} "${a.text}" is cut off by the figure's edge`);
  for (let i = 0; i < items.length; i++) for (let j = i + 1; j < items.length; j++) {
    const a = items[i], b = items[j];
    if (a.owner === b.owner) continue;
    const w = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
    const h = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
    if (w > 2 && h > 2) overlaps.push(`${a.kind} "${a.text}" × ${b.kind} "${b.text}"`);
  }
  return overlaps;
};
  const figures = [];
  for (const div of art.querySelectorAll('.dynamics-figure')) {
    const box = div.getBoundingClientRect();
    const f = {id: div.id, drawn: !!div.querySelector('.main-svg'), problems: []};
    const rect = (sel) => { const e = div.querySelector(sel); return e ? e.getBoundingClientRect() : null; };
    const meet = (a, b) => a && b && a.width > 0 && b.width > 0 && a.left < b.right && b.left < a.right
                           && a.top < b.bottom && b.top < a.bottom;
    const inside = (a) => !a || a.width === 0 || (a.left >= box.left - 1 && a.right <= box.right + 1 &&
                                                  a.top >= box.top - 1 && a.bottom <= box.bottom + 1);
    const legend = rect('g.legend'), slider = rect('g.slider-container'), title = rect('g.g-gtitle');
    if (meet(legend, slider)) f.problems.push('a slider overlaps the legend');
    if (meet(legend, title)) f.problems.push('the legend overlaps the title');
    if (!inside(title)) f.problems.push('the title is cut off');
    if (!inside(legend)) f.problems.push('the legend is cut off');
    if (!inside(slider)) f.problems.push('the slider is cut off');
    f.problems.push(...overlaps(div));
    if (box.width > innerWidth + 1 || box.left < -1 || box.right > innerWidth + 1)
      f.problems.push(`the figure is ${Math.round(box.width)} px wide, the screen ${innerWidth} px`);
    // a finger's target: on a phone, a slider's steps (one tick each) far enough apart to hit
    f.sliders = [...div.querySelectorAll('g.slider-container')].map(s => {
      const xs = [...s.querySelectorAll('rect.slider-tick-rect')].map(t => {
        const r = t.getBoundingClientRect(); return r.left + r.width / 2; }).sort((a, b) => a - b);
      const gaps = xs.slice(1).map((x, i) => x - xs[i]);
      return {steps: xs.length, gap: gaps.length ? Math.min(...gaps) : null};
    });
    if (phone) for (const s of f.sliders) if (s.gap !== null && s.gap < minStep - 0.5)
      f.problems.push(`a slider's ${s.steps} steps are ${s.gap.toFixed(1)} px apart, under the ` +
                      `${minStep} px a finger needs`);
    f.layout = div.getAttribute('data-layout');
    f.slider = !!slider;
    figures.push(f);
  }
  const sideways = document.scrollingElement.scrollWidth > innerWidth + 1 ?
    [`the page scrolls sideways (${document.scrollingElement.scrollWidth} px in ${innerWidth} px)`] : [];
  const colab = [...document.querySelectorAll('a')].some(a => (a.href || '').startsWith('https://colab.research.google.com/github/'));
  return {wide: [...wide, ...sideways], rawTex, math, figures, colab,
          traceback: text.includes('Traceback (most recent call last)')};
}
