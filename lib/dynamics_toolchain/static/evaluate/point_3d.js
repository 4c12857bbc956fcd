// Where a 3-D figure's largest point is on the screen (of every trace with hover, the one a
// finger most surely hits), projected as plotly projects a 3-D annotation (dynamics_toolchain.pages).
(id) => {
  const gd = document.getElementById(id), L = gd._fullLayout;
  const sc = L.scene._scene, ds = sc.dataScale, cp = sc.glplot.cameraParams;
  const box = sc.container.getBoundingClientRect();
  const mul = (m, v) => [0, 1, 2, 3].map(i => m[i] * v[0] + m[4 + i] * v[1] + m[8 + i] * v[2] + m[12 + i] * v[3]);
  let pick = null;
  for (const t of gd._fullData) {
    if (t.visible !== true || t.type !== 'scatter3d' || t.scene !== 'scene' || t.hoverinfo === 'skip'
        || !/markers/.test(t.mode)) continue;
    const size = Array.isArray(t.marker.size) ? t.marker.size : t.x.map(() => t.marker.size);
    size.forEach((s, i) => {
      if (t.x[i] !== null && s > 0 && (!pick || s > pick.size)) pick = {t, i, size: s};
    });
  }
  if (!pick) return null;
  const {t, i} = pick;
  const v = [L.scene.xaxis.d2l(t.x[i]) * ds[0], L.scene.yaxis.d2l(t.y[i]) * ds[1],
             L.scene.zaxis.d2l(t.z[i]) * ds[2], 1];
  const p = mul(cp.projection, mul(cp.view, mul(cp.model, v)));
  return {x: box.left + box.width * (1 + p[0] / p[3]) / 2, y: box.top + box.height * (1 - p[1] / p[3]) / 2};
}
