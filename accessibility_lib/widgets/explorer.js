// Slider explorer of the paper's closed-form bounds (anywidget front-end module, plain ESM, no imports).
//
// Source: Meyer, Michelessa, Chaux, Tan, "How Many Different Outputs Can a Transformer Generate?",
// ICML 2026, arXiv 2605.22223: Thm 4.5 / Cor 4.6 (formula "ball") and Thm 4.9 / Cor 4.10
// (formula "mean_field"). The formulas mirror accessibility_lib/bounds.py line for line (log space,
// natural logs) so that the numbers shown in a kernel-less static page equal the Python ones.
// Drawing is plain DOM + SVG. Elements carry data-testid / data-value attributes for the browser test.

const LN2 = Math.log(2);

// ln(1 + 2r/ε), exact also when 2r/ε overflows a double (bounds._log1p_ratio).
export function log1pRatio(r, eps) {
  const x = (2 * r) / eps;
  if (Number.isFinite(x)) return Math.log1p(x);
  const lx = LN2 + Math.log(r) - Math.log(eps);
  return lx + Math.log1p(Math.exp(-lx));
}

// ln(1 + e^x) without overflow (bounds._softplus).
function softplus(x) {
  return x > 0 ? x + Math.log1p(Math.exp(-x)) : Math.log1p(Math.exp(x));
}

// All displayed quantities for parameters p = {eps, r, d, vocab_size, m, n, q} under `formula`.
export function compute(formula, p) {
  const L = log1pRatio(p.r, p.eps); // ln(1 + 2r/ε)
  const logV = Math.log(p.vocab_size); // ln|V|
  if (formula === "mean_field") {
    const lx = LN2 + Math.log(p.r) - Math.log(p.eps); // ln(2r/ε)
    const loglog = p.d * L + Math.log1p(softplus(p.q * lx)); // ln ln #accessible (Thm 4.9)
    const logNstar = loglog - Math.log(logV); // ln n*, n* = ln #accessible / ln|V| (Cor 4.10)
    const lnFrac = (n) => {
      if (n === 0) return 0;
      if (loglog >= Math.log(n * logV)) return 0;
      return Math.min(0, Math.exp(loglog) - n * logV);
    };
    return { L, logV, loglog, logNstar, nstar: Math.exp(logNstar), lnFrac, lnFracN: lnFrac(p.n) };
  }
  const logP = p.d * p.m * L; // ln P (Thm 4.5)
  const C = (p.d * L) / logV; // Cor 4.6
  const lnFrac = (n) => Math.min(0, logP - n * logV);
  return { L, logV, logP, C, nstar: C * p.m, logNstar: Math.log(C * p.m), lnFrac, lnFracN: lnFrac(p.n) };
}

// ---- formatting -------------------------------------------------------------------------------
function fmt(x, digits = 6) {
  if (!Number.isFinite(x)) return x > 0 ? "∞" : x < 0 ? "−∞" : "NaN";
  if (x === 0) return "0";
  const a = Math.abs(x);
  if (a >= 1e-3 && a < 1e7) return String(Number(x.toPrecision(digits)));
  return x.toExponential(digits - 1).replace("e+", "e");
}

// ---- sliders: position <-> value ----------------------------------------------------------------
// spec: [name, label, kind] where kind is "log" (log10 position, real), "logint" (log10, integer),
// "int" (linear integer) or "real" (linear real). Ranges come from the model's `ranges` trait.
const SLIDERS = {
  ball: [
    ["eps", "ε (precision)", "log"],
    ["r", "r (radius)", "real"],
    ["d", "d (width)", "int"],
    ["vocab_size", "|V| (vocabulary)", "logint"],
    ["m", "m (prompt vectors)", "int"],
    ["n", "n (sequence length)", "int"],
  ],
  mean_field: [
    ["eps", "ε (precision)", "log"],
    ["r", "r (radius)", "real"],
    ["d", "d (width)", "int"],
    ["vocab_size", "|V| (vocabulary)", "logint"],
    ["q", "q (Wasserstein order)", "real"],
    ["n", "n (sequence length)", "int"],
  ],
};

function toPosition(kind, value) {
  return kind === "log" || kind === "logint" ? Math.log10(value) : value;
}
function fromPosition(kind, pos) {
  if (kind === "log") return Math.pow(10, pos);
  if (kind === "logint") return Math.max(2, Math.round(Math.pow(10, pos)));
  if (kind === "int") return Math.round(pos);
  return pos;
}

// ---- SVG plot of ln fraction against n ----------------------------------------------------------
// The SVG namespace is taken from a parsed <svg> element, so the module holds no URL at all.
// (Looked up lazily, so that compute() can also be imported where there is no DOM, e.g. node in the tests.)
let SVGNS = null;

function svgEl(tag, attrs, text) {
  if (SVGNS === null) {
    const d = document.createElement("div");
    d.innerHTML = "<svg></svg>";
    SVGNS = d.firstChild.namespaceURI;
  }
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

function niceTicks(lo, hi, count = 5) {
  const span = hi - lo;
  if (!(span > 0)) return [lo];
  const raw = span / count;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((s) => s * mag).find((s) => span / s <= count) || 10 * mag;
  const ticks = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + 1e-9 * span; t += step) ticks.push(t);
  return ticks;
}

function drawPlot(svg, formula, p, out) {
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  const W = 560, H = 250, ml = 62, mr = 14, mt = 12, mb = 40;
  const finiteStar = Number.isFinite(out.nstar);
  let xmax = Math.max(p.n * 1.1, finiteStar ? 2 * out.nstar : 0, 10);
  if (!Number.isFinite(xmax)) xmax = Math.max(p.n * 1.1, 10);
  const N = 200;
  const xs = Array.from({ length: N + 1 }, (_, i) => (xmax * i) / N);
  const ys = xs.map((x) => out.lnFrac(x) / Math.LN10); // log10 of the fraction
  let ymin = Math.min(...ys.filter(Number.isFinite), -1);
  const sx = (x) => ml + ((W - ml - mr) * x) / xmax;
  const sy = (y) => mt + ((H - mt - mb) * (0 - y)) / (0 - ymin);
  svg.appendChild(svgEl("rect", { x: ml, y: mt, width: W - ml - mr, height: H - mt - mb, fill: "none", stroke: "#999" }));
  for (const t of niceTicks(0, xmax)) {
    svg.appendChild(svgEl("line", { x1: sx(t), x2: sx(t), y1: H - mb, y2: H - mb + 4, stroke: "#555" }));
    svg.appendChild(svgEl("text", { x: sx(t), y: H - mb + 16, "text-anchor": "middle", "font-size": 11 }, fmt(t, 3)));
  }
  for (const t of niceTicks(ymin, 0)) {
    svg.appendChild(svgEl("line", { x1: ml - 4, x2: ml, y1: sy(t), y2: sy(t), stroke: "#555" }));
    svg.appendChild(svgEl("text", { x: ml - 6, y: sy(t) + 4, "text-anchor": "end", "font-size": 11 }, fmt(t, 3)));
  }
  svg.appendChild(svgEl("text", { x: (ml + W - mr) / 2, y: H - 6, "text-anchor": "middle", "font-size": 12 }, "n (tokens)"));
  svg.appendChild(svgEl("text", { x: 14, y: (mt + H - mb) / 2, "text-anchor": "middle", "font-size": 12,
    transform: `rotate(-90 14 ${(mt + H - mb) / 2})` }, "log10 accessible fraction (bound)"));
  const pts = xs.map((x, i) => `${sx(x).toFixed(2)},${sy(Math.max(ys[i], ymin)).toFixed(2)}`).join(" ");
  svg.appendChild(svgEl("polyline", { points: pts, fill: "none", stroke: "#0072B2", "stroke-width": 2, "data-testid": "curve" }));
  if (finiteStar && out.nstar <= xmax) {
    svg.appendChild(svgEl("line", { x1: sx(out.nstar), x2: sx(out.nstar), y1: mt, y2: H - mb, stroke: "#D55E00",
      "stroke-dasharray": "5,4", "data-testid": "threshold-line" }));
    svg.appendChild(svgEl("text", { x: sx(out.nstar) + 4, y: mt + 14, "font-size": 11, fill: "#D55E00" }, "n*"));
  }
  const yn = Math.max(out.lnFracN / Math.LN10, ymin);
  svg.appendChild(svgEl("circle", { cx: sx(p.n), cy: sy(yn), r: 4, fill: "#E69F00" }));
}

// ---- the view -----------------------------------------------------------------------------------
function render({ model, el }) {
  const formula = model.get("formula") === "mean_field" ? "mean_field" : "ball";
  const root = document.createElement("div");
  root.className = "accessibility-bound-explorer";
  root.setAttribute("data-testid", "bound-explorer");
  root.setAttribute("data-formula", formula);
  root.style.cssText = "font-family: system-ui, sans-serif; font-size: 13px; max-width: 600px; border: 1px solid #ddd; padding: 8px; border-radius: 6px;";
  const title = document.createElement("div");
  title.style.cssText = "font-weight: 600; margin-bottom: 6px;";
  title.textContent = model.get("title") || (formula === "mean_field"
    ? "Mean-field bound (Thm 4.9, Cor 4.10): any prompt length"
    : "Ball bound (Thm 4.5, Cor 4.6): prompts of m vectors");
  root.appendChild(title);

  const ranges = model.get("ranges") || {};
  const inputs = {};
  const labels = {};
  const table = document.createElement("div");
  table.style.cssText = "display: grid; grid-template-columns: 150px 1fr 110px; gap: 2px 8px; align-items: center;";
  for (const [name, label, kind] of SLIDERS[formula]) {
    const [lo, hi] = ranges[name] || [1, 100];
    const lab = document.createElement("label");
    lab.textContent = label;
    const input = document.createElement("input");
    input.type = "range";
    input.setAttribute("data-testid", `slider-${name}`);
    input.setAttribute("aria-label", label);
    const plo = toPosition(kind, lo), phi = toPosition(kind, hi);
    input.min = String(plo);
    input.max = String(phi);
    input.step = kind === "int" ? "1" : String((phi - plo) / 1000);
    input.value = String(toPosition(kind, model.get(name)));
    const val = document.createElement("span");
    val.setAttribute("data-testid", `value-${name}`);
    val.style.cssText = "font-variant-numeric: tabular-nums;";
    input.addEventListener("input", () => {
      const v = fromPosition(kind, Number(input.value));
      model.set(name, v);
      try { model.save_changes(); } catch (e) { /* static page: no kernel to sync with */ }
      update();
    });
    lab.htmlFor = input.id = `abx-${name}-${Math.random().toString(36).slice(2)}`;
    table.appendChild(lab); table.appendChild(input); table.appendChild(val);
    inputs[name] = input; labels[name] = val;
  }
  root.appendChild(table);

  const readout = document.createElement("div");
  readout.style.cssText = "margin: 8px 0; display: grid; grid-template-columns: repeat(2, 1fr); gap: 2px 12px;";
  const fields = formula === "mean_field"
    ? [["loglog", "ln ln #accessible"], ["logNstar", "ln n* (tokens)"], ["nstar", "n* (tokens)"], ["lnFracN", "ln fraction at n"]]
    : [["C", "C (tokens / vector)"], ["logP", "ln P (nats)"], ["nstar", "n* = C·m (tokens)"], ["lnFracN", "ln fraction at n"]];
  const outs = {};
  for (const [key, text] of fields) {
    const row = document.createElement("div");
    const b = document.createElement("b");
    b.setAttribute("data-testid", `out-${key}`);
    row.appendChild(document.createTextNode(`${text} = `));
    row.appendChild(b);
    readout.appendChild(row);
    outs[key] = b;
  }
  root.appendChild(readout);
  const svg = svgEl("svg", { viewBox: "0 0 560 250", width: "100%", role: "img", "aria-label": "accessible fraction against n" });
  root.appendChild(svg);
  el.appendChild(root);

  function params() {
    return { eps: model.get("eps"), r: model.get("r"), d: model.get("d"), vocab_size: model.get("vocab_size"),
      m: model.get("m"), n: model.get("n"), q: model.get("q") };
  }
  function update() {
    const p = params();
    for (const [name, , kind] of SLIDERS[formula]) {
      labels[name].textContent = fmt(p[name], kind === "int" || kind === "logint" ? 10 : 4);
      labels[name].setAttribute("data-value", String(p[name]));
      root.setAttribute(`data-${name.replace("_", "-")}`, String(p[name]));
    }
    const out = compute(formula, p);
    for (const [key] of fields) {
      outs[key].textContent = fmt(out[key]);
      outs[key].setAttribute("data-value", String(out[key]));
    }
    drawPlot(svg, formula, p, out);
  }
  const names = SLIDERS[formula].map(([n]) => n);
  const onChange = () => {
    for (const [name, , kind] of SLIDERS[formula]) {
      const pos = toPosition(kind, model.get(name));
      if (Number(inputs[name].value) !== pos) inputs[name].value = String(pos);
    }
    update();
  };
  for (const name of names) model.on(`change:${name}`, onChange);
  update();
  return () => { for (const name of names) model.off(`change:${name}`, onChange); };
}

export default { render };
