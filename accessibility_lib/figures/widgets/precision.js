// Precision explorer of chapter 7 (anywidget front-end module, plain ESM, no imports, no URL).
//
// The exact number of representable values of a floating-point dtype in [-r, r] (closed form, as
// accessibility_lib/fp_grid.py), the packing bound and slope it gives (paper Thm 4.5 / Cor 4.6 with the
// dtype's count in place of the epsilon-packing), and the paper's conventions beside it. Recomputed in the
// browser, so it works in the kernel-less static site. Elements carry data-testid / data-value attributes.

const LN10 = Math.log(10);
const FORMATS = { fp32: [8, 23], bf16: [8, 7], fp16: [5, 10] }; // [exponent bits E, explicit significand bits M]
const COLORS = { dtype: "#0072B2", replication: "#D55E00", unit: "#009E73", table1: "#CC79A7", slope: "#222222" };

// K(r): representable values x with 0 <= x <= r (zero once), the bit-pattern closed form of fp_grid.count_nonnegative.
export function countNonnegative(r, dtype) {
  const [E, M] = FORMATS[dtype];
  const bias = 2 ** (E - 1) - 1;
  const eMin = 1 - bias;
  const maxFinite = (2 - 2 ** -M) * 2 ** bias;
  if (r >= maxFinite) return (2 ** E - 1) * 2 ** M;
  if (r < 2 ** eMin) return Math.floor(r / 2 ** (eMin - M)) + 1;
  let e = Math.floor(Math.log2(r));
  while (2 ** e > r) e -= 1;
  while (2 ** (e + 1) <= r) e += 1;
  const frac = r / 2 ** e - 1; // exact: division by a power of two
  return (e + bias) * 2 ** M + Math.floor(frac * 2 ** M) + 1;
}

// N(r): representable values with |x| <= r (+0 and -0 once).
export function countInInterval(r, dtype) {
  return 2 * countNonnegative(r, dtype) - 1;
}

// Everything the explorer shows for a model entry {d, d_vocab, r_inf, radii?, slope?, table1_ratio?}.
export function compute(entry, dtype, m) {
  const d = entry.d;
  const logV = Math.log(entry.d_vocab);
  let logCount = 0;
  if (entry.radii) for (const r of entry.radii) logCount += Math.log(countInInterval(r, dtype));
  else logCount = d * Math.log(countInInterval(entry.r_inf, dtype));
  const C = logCount / logV;
  const u = 2 ** -(FORMATS[dtype][1] + 1);
  const out = {
    logCount, C, nstar: C * m, log10P: (m * logCount) / LN10, perCoordinate: logCount / d,
    equivalentRatio: Math.expm1(logCount / d),
    C_replication: (d * Math.log1p(4096)) / logV,
    C_unit: (d * Math.log1p(2 / u)) / logV,
    C_table1: entry.table1_ratio == null ? null : (d * Math.log1p(entry.table1_ratio)) / logV,
    slope: entry.slope == null ? null : entry.slope,
  };
  for (const k of ["C", "C_replication", "C_unit", "C_table1"]) {
    out[`ratio_${k}`] = !entry.slope || out[k] == null ? null : out[k] / entry.slope;
  }
  return out;
}

function el(tag, attrs = {}, text = "") {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text) e.textContent = text;
  return e;
}

function svgEl(tag, attrs = {}) {
  const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}

// exponents as superscript characters (text nodes and SVG text cannot hold <sup>), as the other explorers write them
const SUPERS = { "0": "⁰", "1": "¹", "2": "²", "3": "³", "4": "⁴", "5": "⁵", "6": "⁶", "7": "⁷", "8": "⁸", "9": "⁹", "-": "⁻" };
function sup(k) {
  return String(k).split("").map((c) => SUPERS[c] || c).join("");
}

function fmt(x, digits = 4) {
  if (x == null) return "—";
  if (!Number.isFinite(x)) return String(x);
  const a = Math.abs(x);
  if (a !== 0 && (a >= 1e6 || a < 1e-3)) {
    const k = Math.floor(Math.log10(a));
    return `${(x / 10 ** k).toFixed(3)}×10${sup(k)}`;
  }
  return Number(x.toPrecision(digits)).toString();
}

function pow10(log10x) {
  const k = Math.floor(log10x);
  return `${(10 ** (log10x - k)).toFixed(3)}×10${sup(k)}`;
}

// Chart text in px (the SVG's viewBox is its drawn width, so these are the sizes a reader sees): at least 16 px.
const TEXT_PX = 16;
const STYLE = `
.abx-precision { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; font-size: 15px; width: 100%; max-width: 860px;
  box-sizing: border-box; border: 1px solid #ddd; padding: 8px 10px; border-radius: 6px; background: #fff; color: #222; }
.abx-precision .abx-head { display: flex; align-items: flex-start; justify-content: space-between; gap: 4px 10px; margin-bottom: 6px; }
.abx-precision .abx-title { font-weight: 600; font-size: 16px; }
.abx-precision .abx-present-btn { font: inherit; font-size: 14px; padding: 1px 10px; border: 1px solid #aaa; border-radius: 4px;
  background: #f6f6f6; cursor: pointer; white-space: nowrap; }
.abx-precision .abx-menus { display: flex; gap: 4px 14px; flex-wrap: wrap; margin-bottom: 6px; align-items: center; }
.abx-precision .abx-menus label { display: inline-flex; flex-wrap: wrap; gap: 2px 6px; align-items: center; max-width: 100%; }
.abx-precision select { max-width: 100%; font-size: 14px; }
.abx-precision .abx-table { overflow-x: auto; max-width: 100%; }
.abx-precision .abx-table table { border-collapse: collapse; margin: 4px 0; font-size: 14px; }
.abx-precision td[data-col=value] { font-size: 18px; font-weight: 600; font-variant-numeric: tabular-nums; }
.abx-precision svg { display: block; width: 100%; height: auto; }
.abx-precision.abx-presenting { position: fixed; inset: 0; z-index: 100000; max-width: none; border: 0; border-radius: 0;
  overflow: auto; padding: 12px 18px; font-size: 18px; }
.abx-precision.abx-presenting .abx-table table { font-size: 17px; }
.abx-precision.abx-presenting td[data-col=value] { font-size: 24px; }
`;

// ?present=k (or #present=k): present the k-th explorer of the page (as explorer.js reads it)
function presentIndex(search, hash = "") {
  for (const part of [search || "", (hash || "").replace(/^#/, "?")]) {
    const m = /[?&]present(?:=(\d+))?(?:&|$)/.exec(part);
    if (m) return m[1] === undefined ? 1 : Math.max(1, Number(m[1]));
  }
  return null;
}

function render({ model, el: host }) {
  const root = el("div", { class: "abx-precision", "data-testid": "precision-explorer" });
  const style = document.createElement("style");
  style.textContent = STYLE;
  root.appendChild(style);
  const head = el("div", { class: "abx-head" });
  head.appendChild(el("div", { class: "abx-title" }, model.get("title") || ""));
  const btn = el("button", { type: "button", class: "abx-present-btn", "data-testid": "present",
    title: "Enlarge this explorer to the window, for a lecture (Esc goes back)" }, "Present");
  head.appendChild(btn);
  root.appendChild(head);
  host.appendChild(root);
  const present = (on) => {
    root.classList.toggle("abx-presenting", on);
    root.setAttribute("data-presenting", on ? "true" : "false");
    btn.textContent = on ? "Exit presentation (Esc)" : "Present";
    if (document.body) document.body.style.overflow = on ? "hidden" : "";
    refresh();
  };
  btn.addEventListener("click", () => present(!root.classList.contains("abx-presenting")));
  document.addEventListener("keydown", (e) => { if (e.key === "Escape" && root.classList.contains("abx-presenting")) present(false); });

  const menus = el("div", { class: "abx-menus" });
  const modelSel = el("select", { "data-testid": "select-model" });
  for (const group of ["paper", "book"]) {
    const items = (model.get("models") || []).filter((e) => e.group === group);
    if (!items.length) continue;
    const og = el("optgroup", { label: group === "paper" ? "the paper's models (box: cube of half-width r∞)" : "this book's models (box measured here)" });
    for (const e of items) og.appendChild(el("option", { value: e.name }, e.name));
    modelSel.appendChild(og);
  }
  modelSel.value = model.get("model");
  const dtypeSel = el("select", { "data-testid": "select-dtype" });
  for (const k of Object.keys(FORMATS)) dtypeSel.appendChild(el("option", { value: k }, k));
  dtypeSel.value = model.get("dtype");
  const mIn = el("input", { type: "range", min: "1", max: "64", step: "1", "data-testid": "slider-m" });
  mIn.value = String(model.get("m"));
  const mLab = el("span", { "data-testid": "value-m" });
  const lab = (text, node) => { const l = el("label", {}, text + " "); l.appendChild(node); return l; };
  menus.appendChild(lab("model", modelSel));
  menus.appendChild(lab("dtype", dtypeSel));
  const ml = lab("m (prompt vectors)", mIn);
  ml.appendChild(mLab);
  menus.appendChild(ml);
  root.appendChild(menus);

  const tableBox = el("div", { class: "abx-table" });
  const table = el("table", { "data-testid": "readout" });
  tableBox.appendChild(table);
  root.appendChild(tableBox);
  const svg = svgEl("svg", { role: "img", "aria-label": "slopes C on a log axis", "data-testid": "plot" });
  root.appendChild(svg);

  function row(key, label, value, ratio) {
    const tr = el("tr", { "data-testid": `row-${key}`, "data-value": value == null ? "" : String(value) });
    tr.appendChild(el("td", { style: "padding: 2px 10px 2px 0;" }, label));
    tr.appendChild(el("td", { style: "padding: 2px 10px; text-align: right;", "data-col": "value" }, fmt(value)));
    tr.appendChild(el("td", { style: "padding: 2px 10px; text-align: right; color: #555; white-space: nowrap;" }, ratio == null ? "" : `${fmt(ratio, 3)} × measured slope`));
    table.appendChild(tr);
  }

  function refresh() {
    const entries = model.get("models") || [];
    const entry = entries.find((e) => e.name === model.get("model")) || entries[0];
    if (!entry) return;
    const dtype = model.get("dtype");
    const m = model.get("m");
    mLab.textContent = String(m);
    const v = compute(entry, dtype, m);
    table.replaceChildren();
    const head = el("tr");
    for (const h of ["", "value", "ratio"]) head.appendChild(el("th", { style: "text-align: left; padding: 2px 10px 2px 0;" }, h));
    table.appendChild(head);
    row("C", `C from the exact ${dtype} count, Σᵢ ln N(rᵢ)/ln|V|`, v.C, v.ratio_C);
    row("nstar", `n* = C·m (tokens), m = ${m}`, v.nstar, null);
    const trP = el("tr", { "data-testid": "row-log10P", "data-value": String(v.log10P) });
    trP.appendChild(el("td", {}, `representable m-vector points of the box ≤ P = Πᵢ N(rᵢ)ᵐ`));
    trP.appendChild(el("td", { style: "padding: 2px 10px; text-align: right;", "data-col": "value" }, pow10(v.log10P)));
    table.appendChild(trP);
    row("equivalentRatio", `2r/ε of a uniform grid with the same count`, v.equivalentRatio, null);
    row("C_replication", "C, replication ε = r∞·2⁻¹¹ (2r/ε = 4096)", v.C_replication, v.ratio_C_replication);
    row("C_unit", `C, uniform grid ε = r∞·u(${dtype})`, v.C_unit, v.ratio_C_unit);
    if (v.C_table1 != null) row("C_table1", "C, the 2r/ε implied by Table 1's ball row", v.C_table1, v.ratio_C_table1);
    if (v.slope != null) row("slope", "measured cramming slope (natural text)", v.slope, null);
    draw(v, dtype);
  }

  function draw(v, dtype) {
    svg.replaceChildren();
    // the viewBox is the drawn width (700 before layout; a ResizeObserver redraws), so text stays at TEXT_PX
    const drawn = svg.getBoundingClientRect().width;
    const W = Math.round(Math.max(300, Math.min(1400, drawn > 0 ? drawn : 700)));
    const bars = [["exact " + dtype, v.C, COLORS.dtype], ["rinf_fp16", v.C_replication, COLORS.replication],
      ["uniform u(" + dtype + ")", v.C_unit, COLORS.unit]];
    if (v.C_table1 != null) bars.push(["Table 1 implied", v.C_table1, COLORS.table1]);
    const rowH = TEXT_PX + 14;
    const barsBottom = 8 + bars.length * rowH;
    const H = barsBottom + 2 * TEXT_PX + 22;
    svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
    const vals = bars.map((b) => b[1]).concat(v.slope ? [v.slope] : []);
    const lo = Math.floor(Math.log10(Math.min(...vals))) - 0.2;
    const hi = Math.ceil(Math.log10(Math.max(...vals))) + 0.2;
    const x0 = Math.round(TEXT_PX * 0.58 * 16) + 8, x1 = W - 24;
    const X = (c) => x0 + ((Math.log10(c) - lo) / (hi - lo)) * (x1 - x0);
    bars.forEach(([name, c, color], i) => {
      const y = 8 + i * rowH;
      const t = svgEl("text", { x: "4", y: String(y + TEXT_PX), "font-size": String(TEXT_PX) });
      t.textContent = name;
      svg.appendChild(t);
      svg.appendChild(svgEl("rect", { x: String(x0), y: String(y), width: String(Math.max(1, X(c) - x0)), height: String(rowH - 6),
        fill: color, "data-testid": `bar-${i}`, "data-value": String(c) }));
    });
    if (v.slope) {
      const x = X(v.slope);
      svg.appendChild(svgEl("line", { x1: String(x), x2: String(x), y1: "2", y2: String(barsBottom), stroke: COLORS.slope, "stroke-dasharray": "4 3" }));
      const label = "measured slope";
      const right = x + 3 + label.length * TEXT_PX * 0.58 > W;
      const t = svgEl("text", { x: String(right ? x - 3 : x + 3), y: String(barsBottom + TEXT_PX + 2), "font-size": String(TEXT_PX),
        "text-anchor": right ? "end" : "start" });
      t.textContent = label;
      svg.appendChild(t);
    }
    for (let k = Math.ceil(lo); k <= Math.floor(hi); k++) {
      const t = svgEl("text", { x: String(X(10 ** k)), y: String(H - 6), "font-size": String(TEXT_PX), fill: "#555", "text-anchor": "middle" });
      t.textContent = `10${sup(k)}`;
      svg.appendChild(t);
    }
  }
  let lastW = -1;
  if (typeof ResizeObserver !== "undefined") {
    new ResizeObserver(() => {
      const w = Math.round(svg.getBoundingClientRect().width);
      if (w !== lastW) { lastW = w; requestAnimationFrame(refresh); }
    }).observe(root);
  }
  const k = presentIndex(window.location.search, window.location.hash);
  if (k !== null) {
    setTimeout(() => {
      const all = [...document.querySelectorAll(".abx-root, .abx-precision")];
      if (all.indexOf(root) + 1 === k) present(true);
    }, 200);
  }

  const save = () => model.save_changes();
  modelSel.addEventListener("change", () => { model.set("model", modelSel.value); save(); refresh(); });
  dtypeSel.addEventListener("change", () => { model.set("dtype", dtypeSel.value); save(); refresh(); });
  mIn.addEventListener("input", () => { model.set("m", Number(mIn.value)); save(); refresh(); });
  model.on("change:model", () => { modelSel.value = model.get("model"); refresh(); });
  model.on("change:dtype", () => { dtypeSel.value = model.get("dtype"); refresh(); });
  model.on("change:m", () => { mIn.value = String(model.get("m")); refresh(); });
  refresh();
}

export default { render };
