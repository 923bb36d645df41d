// Draws the figures a page carries (the JSON in #kubemu-figures) with Plotly.
// When every chart is drawn, <body data-rendered="N"> says so (the browser tests wait for it).
(function () {
  "use strict";
  const holder = document.getElementById("kubemu-figures");
  const figures = holder ? JSON.parse(holder.textContent) : [];
  const config = { displaylogo: false, responsive: true };
  window.kubemuFigures = {};
  const drawn = figures.map(function (f) {
    const el = document.getElementById(f.id);
    if (!el) { return Promise.resolve(); }
    window.kubemuFigures[f.id] = f;
    return Plotly.newPlot(el, f.data, f.layout, config);
  });
  Promise.all(drawn).then(function () { document.body.dataset.rendered = String(figures.length); });
})();
