// Loaded by every book page with widget output, after require.js and before the widget html-manager
// (see nb_ipywidgets_js in _config.yml). Maps the AMD module "anywidget" to the copy served next to
// this file (book/_vendor/abx/anywidget/index.js, copied from the anywidget pip package at build time),
// so that the html-manager finds it locally and never falls back to a CDN.
(function () {
  var src = document.currentScript && document.currentScript.src;
  var base = src ? src.substring(0, src.lastIndexOf("/") + 1) : "_static/abx/";
  window.require.config({ paths: { anywidget: base + "anywidget/index" } });
})();
