// Loaded by every book page with widget output, after require.js and before the widget html-manager
// (see nb_ipywidgets_js in _config.yml). Maps the AMD module "anywidget" to the copy served next to
// this file (book/_vendor/abx/anywidget/index.js, copied from the anywidget pip package at build time),
// so that the html-manager finds it locally and never falls back to a CDN, and points the
// html-manager at its icon fonts copied beside it.
(function () {
  var src = document.currentScript && document.currentScript.src;
  var base = src ? src.substring(0, src.lastIndexOf("/") + 1) : "_static/abx/";
  // The html-manager's webpack runtime locates its icon fonts (Font Awesome, copied beside embed-amd.js)
  // from the URI of its AMD module "@jupyter-widgets/html-manager/dist/libembed-amd": map that folder here.
  window.require.config({
    paths: { anywidget: base + "anywidget/index", "@jupyter-widgets/html-manager/dist": base.replace(/\/$/, "") },
  });
  window.__jupyter_widgets_assets_path__ = base;
})();
