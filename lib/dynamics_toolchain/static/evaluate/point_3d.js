// Where one of a 3-D figure's points is on the screen (the largest marker of a trace with hover),
// projected as plotly projects a 3-D annotation (dynamics_toolchain.pages).
(id) => {
  const gd = document.getElementById(id), L = gd._fullLayout;
  const sc = L.scene._scene, ds = sc.dataScale, cp = sc.glplot.cameraParams;
  const box = sc.container.getBoundingClientRect();
  const mul = (m, v) => [0, 1, 2, 3].map(i => m[i] * v[0] + m[4 + i] * v[1] + m[8 + i] * v[2] + m[12 + i] * v[3]);
  for (const t of gd._fullData) {
    if (t.visible !== true || t.type !== 'scatter3d' || t.scene !== 'scene' || t.hoverinfo === 'skip'
        || !/markers/.test(t.mode)) continue;
    const size = Array.isArray(t.marker.size) ? t.marker.size : t.x.map(() => t.marker.size);
    let best = -1;
    size.forEach((s, i) => { if (t.x[i] !== null && (best < 0 || s > size[best])) best = i; });
    if (best < 0 || !(size[best] > 0)) continue;
    const v = [L.scene.xaxis.d2l(t.x[best]) * ds[0], L.scene.yaxis.d2l(t.y[best]) * ds[1],
               L.scene.zaxis.d2l(t.z[best]) * ds[2], 1];
    const p = mul(cp.projection, mul(cp.view, mul(cp.model, v)));
    return {x: box.left + box.width * (1 + p[0] / p[3]) / 2, y: box.top + box.height * (1 - p[1] / p[3]) / 2};
  }
  return null;
}
