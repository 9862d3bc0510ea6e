// Draws each Vega-Lite chart of the page (_ext/vega_explorer.py) with
// vega-embed, from the Vega files that the site serves itself. Until the
// chart is drawn, and wherever scripts do not run, the static PNG stays.
(function () {
  function draw(block) {
    var spec = JSON.parse(block.querySelector(".matgrad-vega-spec").textContent);
    var view = block.querySelector(".matgrad-vega-view");
    var first = ((spec.usermeta || {}).matgrad || {}).inputs_first || [];
    // Vega shows a chart's inputs in the order of its signals: the ones the
    // chart names come first (the seed before the entry it explores).
    function patch(vgSpec) {
      var rank = function (s) { var i = first.indexOf(s.name); return i < 0 ? first.length : i; };
      vgSpec.signals = (vgSpec.signals || []).map(function (s, i) { return [rank(s), i, s]; })
        .sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; })
        .map(function (x) { return x[2]; });
      return vgSpec;
    }
    return vegaEmbed(view, spec, { actions: false, renderer: "svg", patch: patch }).then(function (result) {
      block.matgradView = result.view;
      block.classList.add("matgrad-vega-live");
    });
  }
  function drawAll() {
    if (typeof vegaEmbed !== "function") return;
    document.querySelectorAll(".matgrad-vega").forEach(function (block) {
      draw(block).catch(function (error) {
        block.classList.add("matgrad-vega-failed");
        console.warn("matgrad: the chart could not be drawn; its image stays", error);
      });
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", drawAll);
  } else {
    drawAll();
  }
})();
