// The book's search page, from file:// as from a server. Sphinx's search fetches every result's page to
// cut a snippet from it; Chromium refuses fetch() on file:// (CORS), so the snippets were empty there.
// book/_ext/sphinx_search_offline.py writes each page's searchable text (prose, tables, outputs; no hidden
// code, navigation or page furniture; math as plain text) into _static/search_pages.js, loaded as a script
// before this one; here Sphinx's fetch of a page is answered from it. Any other request goes to fetch().
(() => {
  const pages = window.BOOK_SEARCH_PAGES || {};
  const root = document.documentElement.dataset.content_root || "";
  const suffix = typeof DOCUMENTATION_OPTIONS !== "undefined" ? DOCUMENTATION_OPTIONS.FILE_SUFFIX : ".html";
  const byUrl = new Map();
  for (const [doc, html] of Object.entries(pages)) byUrl.set(new URL(root + doc + suffix, location.href).href, html);
  const realFetch = window.fetch ? window.fetch.bind(window) : null;
  window.fetch = (input, init) => {
    const url = new URL(typeof input === "string" ? input : input.url, location.href);
    url.hash = "";
    url.search = "";
    const html = byUrl.get(url.href);
    if (html !== undefined) return Promise.resolve(new Response(html, { headers: { "Content-Type": "text/html" } }));
    if (!realFetch) return Promise.reject(new Error("fetch is unavailable here"));
    return realFetch(input, init);
  };
})();
