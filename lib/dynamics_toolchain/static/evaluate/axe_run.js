// axe-core's violations in the page (dynamics_toolchain.access.audit, which injects axe first).
/* global axe */
async () => {
  // label-content-name-mismatch is experimental in axe, off unless asked for: the book asks
  const r = await axe.run(document, {resultTypes: ['violations'],
    rules: {'label-content-name-mismatch': {enabled: true}}});
  return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}));
}
