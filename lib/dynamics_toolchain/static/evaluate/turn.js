// A finger on a 3-D figure: the middle of the first scene on the page (dynamics_toolchain.pages).
() => {
  const gd = [...document.querySelectorAll('.dynamics-figure')].find(d => d._fullLayout && d._fullLayout.scene && d._fullLayout.scene._scene);
  if (!gd) return null;
  gd.scrollIntoView({block: 'center'});
  const box = gd._fullLayout.scene._scene.container.getBoundingClientRect();
  return {id: gd.id, x: box.left + box.width / 2, y: box.top + box.height / 2, w: box.width};
}
