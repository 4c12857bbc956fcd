// Every figure of the page drawn, none with a redraw pending (figures.js's data-drawn), and with
// the argument 'dark' or 'light', drawn in that theme's colours: what a check of a page in a
// browser waits for (page.wait_for_function(FIGURES_DRAWN_JS, arg=...)), not seconds.
(theme) => {
  return [...document.querySelectorAll('.dynamics-figure')].every((gd) => {
    const look = gd.getAttribute('data-drawn');
    return !!look && (!theme || look.endsWith(' dark') === (theme === 'dark'));
  });
}
