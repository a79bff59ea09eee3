// Slider explorers of the paper's bounds (anywidget front-end module, plain ESM, no imports, no URL).
//
// Source: Meyer, Michelessa, Chaux, Tan, "How Many Different Outputs Can a Transformer Generate?",
// ICML 2026, arXiv 2605.22223: Thm 4.5 / Cor 4.6 (formula "ball"), Thm 4.9 / Cor 4.10 (formula
// "mean_field") and the cramming comparison of Section 5 / Table 1 (formula "cramming"). The formulas
// mirror accessibility_lib/bounds.py (log space, natural logs) so that the numbers shown in a
// kernel-less static page equal the Python ones (tests/test_widgets.py runs compute() in node).
//
// Axes stay where the reader put them with the "axis" menus, so a slider visibly moves the curve and n* along
// them; only when the cliff at n* would leave the plot does the n axis widen to the next choice that holds it
// (said under the chart), and past the widest choice it stops there with n* marked at its right edge
// (followAxis). Chart text is 16 px or more as drawn (the SVG's viewBox is its drawn width), readouts larger;
// "Present" enlarges one explorer to the window for a lecture. Huge numbers are handled as log10 values and shown
// as m×10^k; nothing finite is ever displayed as infinity. Drawing is plain DOM + SVG. Elements carry
// data-testid / data-value attributes for the browser tests.

const LN2 = Math.log(2);
const LN10 = Math.log(10);
const COLORS = {
  curve: "#0072B2", nstar: "#D55E00", natural: "#009E73", random: "#CC79A7", point: "#E69F00", ball: "#777777",
};
const SERIES_COLORS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#999933", "#882255"];

// ---- the paper's formulas -----------------------------------------------------------------------

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

// Everything the bound explorers display, for p = {eps, r, d, d_vocab, m, n, log10_n, q}.
//   ball (Thm 4.5, Cor 4.6): C = d ln(1 + 2r/ε)/ln|V|, ln P = d m ln(1 + 2r/ε), n* = C m,
//     ln fraction(n) = min(0, ln P − n ln|V|) at n = p.n tokens.
//   mean_field (Thm 4.9, Cor 4.10): ln ln #acc = d ln(1 + 2r/ε) + ln(1 + ln(1 + (2r/ε)^q)),
//     ln n* = ln ln #acc − ln ln|V|; at n = 10^log10_n the fraction is 1 or 10^(−10^negLog10FracN)
//     (negLog10FracN = log10(−log10 fraction), null when the fraction is 1). The ball bound at the same
//     d, r, ε, |V| and m is returned too (C, nstarBall), for the comparison drawn beside it.
export function compute(formula, p) {
  const L = log1pRatio(p.r, p.eps); // ln(1 + 2r/ε)
  const logV = Math.log(p.d_vocab); // ln|V|
  const C = (p.d * L) / logV; // Cor 4.6
  if (formula === "mean_field") {
    const lx = LN2 + Math.log(p.r) - Math.log(p.eps); // ln(2r/ε)
    const loglog = p.d * L + Math.log1p(softplus(p.q * lx)); // Thm 4.9
    const logNstar = loglog - Math.log(logV); // Cor 4.10
    // log10(−log10 fraction) at n = 10^t: −log10 fraction = (n ln|V| − e^loglog)/ln 10, in log space
    const negLog10Frac = (t) => {
      const a = t * LN10 + Math.log(logV); // ln(n ln|V|)
      if (a <= loglog) return null;
      return (a + Math.log(-Math.expm1(loglog - a))) / LN10 - Math.log10(LN10);
    };
    return {
      L, logV, C, loglog, logNstar, log10Nstar: logNstar / LN10, nstarBall: C * p.m,
      log10NstarBall: Math.log10(C * p.m), negLog10Frac, negLog10FracN: negLog10Frac(p.log10_n),
    };
  }
  const logP = p.d * p.m * L; // Thm 4.5
  const nstar = C * p.m;
  const lnFrac = (n) => Math.min(0, logP - n * logV);
  return { L, logV, logP, C, nstar, log10Nstar: Math.log10(nstar), lnFrac, lnFracN: lnFrac(p.n) };
}

// Least-squares line n50 = slope·m + intercept through the points (as fitting.fit_slope); null when the
// points do not fix a slope (fewer than two distinct m).
export function olsSlope(points) {
  const pts = points.filter((q) => Number.isFinite(q[0]) && Number.isFinite(q[1]));
  if (pts.length < 2) return null;
  const mx = pts.reduce((s, q) => s + q[0], 0) / pts.length;
  const my = pts.reduce((s, q) => s + q[1], 0) / pts.length;
  let sxx = 0, sxy = 0;
  for (const [x, y] of pts) { sxx += (x - mx) * (x - mx); sxy += (x - mx) * (y - my); }
  if (!(sxx > 0)) return null;
  const slope = sxy / sxx;
  return { slope, intercept: my - slope * mx };
}

// The cramming explorer's numbers for one series s = {d, vocab, points, slope?} at (ε, r): the bound
// C (Cor 4.6), the measured slope (the series' own `slope` when given, e.g. the paper's reported one,
// else the least-squares slope of its points) and the ratio C / slope of Table 1 (null if slope ≤ 0, or if
// the series marks its slope not reliable: s.reliable === false).
export function computeCramming(s, eps, r) {
  const L = log1pRatio(r, eps);
  const C = (s.d * L) / Math.log(s.d_vocab);
  const fit = olsSlope(s.points || []);
  const given = s.slope !== null && s.slope !== undefined && Number.isFinite(s.slope);
  const slope = given ? s.slope : fit ? fit.slope : null;
  return {
    L, C, log10Ratio2rEps: (LN2 + Math.log(r) - Math.log(eps)) / LN10, slope,
    slopePoints: fit ? fit.slope : null, unreliable: s.reliable === false,
    ratio: slope !== null && slope > 0 && s.reliable !== false ? C / slope : null,
  };
}

// (r, ε) of a model under a named ε convention c = {factor, reference, radius} (precision.EpsConvention.ball):
// r is the largest L2 norm r_l2 (radius "l2") or the largest |coordinate| r∞ (radius "r_inf"); ε is
// factor × r (reference "r") or factor × r∞ (reference "r_inf").
export function conventionBall(c, r_l2, rInf) {
  const r = c.radius === "r_inf" ? rInf : r_l2;
  return { r, eps: c.factor * (c.reference === "r_inf" ? rInf : r) };
}

// ---- numbers as text ----------------------------------------------------------------------------
// Never "∞" or "NaN": a value that is not finite here is a bug, shown as "undefined" (the tests look for it).
function trimNum(s) {
  return s.includes("e") ? s : s.replace(/(\.\d*?)0+$/, "$1").replace(/\.$/, "");
}
function sci(mant, exp) {
  return `${mant}×10<sup>${String(exp).replace("-", "−")}</sup>`;
}
export function fmt(x, digits = 4) {
  if (x === null || x === undefined || !Number.isFinite(x)) return "undefined";
  if (x === 0) return "0";
  const a = Math.abs(x);
  const sign = x < 0 ? "−" : "";
  if (a >= 1e-3 && a < 1e6) return sign + String(Number(a.toPrecision(digits)));
  let e = Math.floor(Math.log10(a));
  let mant = a / Math.pow(10, e);
  if (Number(mant.toPrecision(3)) >= 10) { mant /= 10; e += 1; }
  return sign + sci(trimNum(mant.toPrecision(3)), e);
}
// ±10^l given l = log10 of the magnitude (any size), as text.
export function fmtPow10(l, negative = false) {
  if (l === null || l === undefined || !Number.isFinite(l)) return "undefined";
  if (l < 6 && l > -3) return fmt((negative ? -1 : 1) * Math.pow(10, l));
  let e = Math.floor(l);
  let mant = Math.pow(10, l - e);
  if (Number(mant.toPrecision(3)) >= 10) { mant /= 10; e += 1; }
  return (negative ? "−" : "") + sci(trimNum(mant.toPrecision(3)), e);
}
function fmtInt(x) {
  return String(Math.round(x));
}
// "10⁴", "10⁻¹⁰⁰": superscripts for plain text (menus), where <sup> cannot go
const SUPERS = { "0": "⁰", "1": "¹", "2": "²", "3": "³", "4": "⁴", "5": "⁵", "6": "⁶", "7": "⁷", "8": "⁸", "9": "⁹", "-": "⁻" };
function pow10Text(k) {
  return "10" + String(k).split("").map((c) => SUPERS[c] || c).join("");
}

// ---- SVG helpers --------------------------------------------------------------------------------
// The SVG namespace is taken from a parsed <svg> element, so the module holds no URL at all.
// (Looked up lazily, so that compute() can also be imported where there is no DOM: node in the tests.)
let SVGNS = null;
function svgEl(tag, attrs, text) {
  if (SVGNS === null) {
    const d = document.createElement("div");
    d.innerHTML = "<svg></svg>";
    SVGNS = d.firstChild.namespaceURI;
  }
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

// Chart text sizes in px. The SVG's viewBox is as wide as the SVG is drawn (chartSize), so these are the sizes a
// reader sees at any page width: at least 16 px, for a class reading a projector from the back of a room.
export const TICK_PX = 16, TITLE_PX = 17;
// A tick label is a string or [base, superscript]; its drawn width is estimated for spacing.
function labelWidth(label, size = TICK_PX) {
  const cw = 0.6 * size, sw = 0.5 * size;
  return typeof label === "string" ? cw * label.length : cw * label[0].length + sw * label[1].length;
}
function labelText(attrs, label, size = TICK_PX) {
  const t = svgEl("text", { "font-size": size, ...attrs });
  if (typeof label === "string") {
    t.textContent = label;
  } else {
    t.appendChild(document.createTextNode(label[0]));
    t.appendChild(svgEl("tspan", { dy: -0.42 * size, "font-size": Math.round(size * 0.8) }, label[1]));
  }
  return t;
}
function pow10Label(k) {
  if (k === 0) return "1";
  if (k === 1) return "10";
  if (k === 2) return "100";
  return ["10", (k < 0 ? "−" : "") + fmtInt(Math.abs(k))];
}

function niceStep(span, count) {
  const raw = span / count;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  return [1, 2, 2.5, 5, 10].map((s) => s * mag).find((s) => span / s <= count) || 10 * mag;
}
function niceTicks(lo, hi, count = 5) {
  const span = hi - lo;
  if (!(span > 0)) return [lo];
  const step = niceStep(span, count);
  const ticks = [];
  for (let t = Math.ceil(lo / step - 1e-9) * step; t <= hi + 1e-9 * span; t += step) ticks.push(Math.abs(t) < 1e-12 * span ? 0 : t);
  return ticks;
}

// Axes in "axis units" u: the value itself (lin), log10 of it (log) or log10 log10 of it (loglog).
// Each axis: {lo, hi, ticks: [{u, label}], title}.
function logAxis(uLo, uHi, title) {
  const span = uHi - uLo;
  const step = span <= 8 ? 1 : niceStep(span, 6);
  const ticks = [];
  for (let k = Math.ceil(uLo / step) * step; k <= uHi + 1e-9; k += step) ticks.push({ u: k, label: pow10Label(Math.round(k)) });
  return { lo: uLo, hi: uHi, ticks, title };
}
function logLogAxis(uLo, uHi, title) {
  // n = 10^(10^u): ticks at n = 2 (left edge), 10, 10^10, 10^100, ...
  const ticks = [{ u: uLo, label: "2" }];
  const step = uHi - 0 <= 7 ? 1 : Math.ceil((uHi - 0) / 7);
  for (let k = 0; k <= uHi + 1e-9; k += step) ticks.push({ u: k, label: k === 0 ? "10" : ["10", fmtInt(Math.pow(10, k))] });
  return { lo: uLo, hi: uHi, ticks, title };
}
function fractionAxis(floor) {
  const ticks = niceTicks(floor, 0, 5).map((t) => ({ u: t, label: t === 0 ? "1" : ["10", "−" + fmtInt(-t)] }));
  return { lo: floor, hi: 0, ticks, title: "accessible fraction" };
}
function linAxis(lo, hi, title) {
  return { lo, hi, ticks: niceTicks(lo, hi, 6).map((t) => ({ u: t, label: trimNum(String(Number(t.toPrecision(6)))) })), title };
}
function logValueAxis(lo, hi, title, subs) {
  // log10 axis labelled with plain values at 1, 2, 3, 5 × 10^k (the cramming plot's m and n50)
  const ticks = [];
  for (let k = Math.floor(lo) - 1; k <= Math.ceil(hi); k++) {
    for (const s of subs) {
      const u = k + Math.log10(s);
      if (u >= lo - 1e-9 && u <= hi + 1e-9) {
        const v = s * Math.pow(10, k);
        ticks.push({ u, label: v < 1e4 ? trimNum(String(Number(v.toPrecision(6)))) : pow10Label(k) });
      }
    }
  }
  return { lo, hi, ticks, title };
}

// Drop ticks until neighbouring labels do not overlap (x: widths; y: line height); toPx(tick) is where its label is centred.
function thinTicks(ticks, toPx, vertical) {
  let out = ticks;
  for (let stride = 1; stride <= ticks.length; stride++) {
    const keep = ticks.filter((_, i) => i % stride === 0);
    let ok = true;
    for (let i = 1; i < keep.length && ok; i++) {
      const gap = Math.abs(toPx(keep[i]) - toPx(keep[i - 1]));
      const need = vertical ? TICK_PX + 4 : (labelWidth(keep[i].label) + labelWidth(keep[i - 1].label)) / 2 + 8;
      if (gap < need) ok = false;
    }
    if (ok) { out = keep; break; }
  }
  return out;
}

// The chart's size in viewBox units, equal to the width it is drawn at (so that TICK_PX is what a reader sees):
// W is the SVG's rendered width (640 before it is laid out: the ResizeObserver of observeWidth redraws then);
// H keeps the chart's proportions (0.38 W, 250 to 330) in the page, and fills the window's height when the
// explorer is presented (at most 0.7 W).
export function chartSize(width, presenting = false, windowHeight = 720) {
  const W = Math.round(Math.max(300, Math.min(1400, width > 0 ? width : 640)));
  const H = presenting ? Math.round(Math.max(260, Math.min(0.7 * W, windowHeight - 150)))
    : Math.round(Math.max(250, Math.min(330, 0.38 * W)));
  return { W, H };
}
function svgSize(svg) {
  const root = svg.closest(".abx-root");
  const presenting = !!(root && root.classList.contains("abx-presenting"));
  return chartSize(svg.getBoundingClientRect().width, presenting, window.innerHeight || 720);
}

// A frame with both axes; returns {sx, sy, clipId, W, H, ml, mt, plotW, plotH}.
function drawFrame(svg, xa, ya, opts = {}) {
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  const { W, H } = svgSize(svg);
  const mt = 26, mr = 20, mb = TICK_PX + TITLE_PX + 26;
  const yTicksRaw = ya.ticks;
  const maxYLabel = Math.max(...yTicksRaw.map((t) => labelWidth(t.label)), 12);
  const ml = TITLE_PX + 26 + maxYLabel; // y title column + gap + the widest tick label
  const sx = (u) => ml + ((W - ml - mr) * (u - xa.lo)) / (xa.hi - xa.lo);
  const sy = (u) => mt + ((H - mt - mb) * (ya.hi - u)) / (ya.hi - ya.lo);
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  const clipId = `abx-clip-${Math.random().toString(36).slice(2)}`;
  const defs = svgEl("defs");
  const cp = svgEl("clipPath", { id: clipId });
  cp.appendChild(svgEl("rect", { x: ml, y: mt - 1, width: W - ml - mr, height: H - mt - mb + 2 }));
  defs.appendChild(cp);
  svg.appendChild(defs);
  svg.appendChild(svgEl("rect", { x: ml, y: mt, width: W - ml - mr, height: H - mt - mb, fill: "#fff", stroke: "#999" }));
  const xt = svgEl("g", { "data-testid": "x-ticks" });
  // a label's centre: under its tick, moved inward where it would leave the chart (thinned at these places)
  const xAt = (t) => { const half = labelWidth(t.label) / 2; return Math.min(W - 2 - half, Math.max(half + 2, sx(t.u))); };
  for (const t of thinTicks(xa.ticks, xAt, false)) {
    xt.appendChild(svgEl("line", { x1: sx(t.u), x2: sx(t.u), y1: mt, y2: H - mb, stroke: "#e6e6e6" }));
    xt.appendChild(svgEl("line", { x1: sx(t.u), x2: sx(t.u), y1: H - mb, y2: H - mb + 5, stroke: "#555" }));
    const x = xAt(t);
    xt.appendChild(labelText({ x, y: H - mb + TICK_PX + 6, "text-anchor": "middle", "data-tick": t.u }, t.label));
  }
  svg.appendChild(xt);
  const yt = svgEl("g", { "data-testid": "y-ticks" });
  for (const t of thinTicks(yTicksRaw, (q) => sy(q.u), true)) {
    yt.appendChild(svgEl("line", { x1: ml, x2: W - mr, y1: sy(t.u), y2: sy(t.u), stroke: "#e6e6e6" }));
    yt.appendChild(svgEl("line", { x1: ml - 5, x2: ml, y1: sy(t.u), y2: sy(t.u), stroke: "#555" }));
    yt.appendChild(labelText({ x: ml - 8, y: sy(t.u) + 0.35 * TICK_PX, "text-anchor": "end", "data-tick": t.u }, t.label));
  }
  svg.appendChild(yt);
  // axis titles at TITLE_PX where the chart is large enough for them (a projector), smaller on a phone
  const xFont = Math.max(11, Math.min(TITLE_PX, (W - 8) / (0.6 * xa.title.length)));
  const xHalf = (0.6 * xFont * xa.title.length) / 2;
  svg.appendChild(svgEl("text", { x: Math.min(W - xHalf - 4, Math.max((ml + W - mr) / 2, xHalf + 4)), y: H - 8, "text-anchor": "middle",
    "font-size": Number(xFont.toFixed(1)), "data-testid": "x-title" }, xa.title));
  const yc = (mt + H - mb) / 2, yx = TITLE_PX + 1;
  const yFont = Math.max(12, Math.min(TITLE_PX, (H - 24) / (0.6 * ya.title.length)));  // it may reach into the margins
  svg.appendChild(svgEl("text", { x: yx, y: yc, "text-anchor": "middle", "font-size": Number(yFont.toFixed(1)), transform: `rotate(-90 ${yx} ${yc})`, "data-testid": "y-title" }, ya.title));
  return { sx, sy, clipId, W, H, ml, mt, mr, mb };
}

function polyline(frame, pts, attrs) {
  const s = pts.filter((q) => Number.isFinite(q[0]) && Number.isFinite(q[1]))
    .map(([u, v]) => `${frame.sx(u).toFixed(2)},${frame.sy(v).toFixed(2)}`).join(" ");
  return svgEl("polyline", { points: s, fill: "none", "clip-path": `url(#${frame.clipId})`, ...attrs });
}
function vline(frame, u, attrs) {
  const x = frame.sx(u);
  return svgEl("line", { x1: x, x2: x, y1: frame.mt, y2: frame.H - frame.mb, "clip-path": `url(#${frame.clipId})`, ...attrs });
}
function triangle(frame, u, color, testid) {
  const x = frame.sx(u), y = frame.mt;
  return svgEl("polygon", { points: `${x - 6},${y - 10} ${x + 6},${y - 10} ${x},${y}`, fill: color, "data-testid": testid });
}

// ---- shared DOM pieces --------------------------------------------------------------------------
// Sizes: controls 15 px, readouts 19 px (larger than the chart's 16 px text), so that a class reads them on a
// projector. The explorer fits a 1280×720 window in the book's text column; on a phone (its container under
// 560 px) the slider rows wrap (label, then slider, then number box and value) and nothing is wider than the
// page. "Present" (or the page's URL parameter ?present=k, the k-th explorer of the page) enlarges one
// explorer to the window: chart on the left, controls on the right; Esc or the button goes back.
const STYLE = `
.abx-root { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; font-size: 15px; line-height: 1.3;
  width: 100%; max-width: 860px; box-sizing: border-box; border: 1px solid #ddd; border-radius: 6px; padding: 8px 10px;
  background: #fff; color: #222; container-type: inline-size; }
.abx-head { display: flex; align-items: flex-start; justify-content: space-between; gap: 4px 10px; margin-bottom: 4px; }
.abx-title { font-weight: 600; font-size: 16px; }
.abx-present-btn { font: inherit; font-size: 14px; padding: 1px 10px; border: 1px solid #aaa; border-radius: 4px;
  background: #f6f6f6; cursor: pointer; white-space: nowrap; }
.abx-menus { display: flex; flex-wrap: wrap; gap: 3px 14px; margin-bottom: 3px; }
.abx-menus label { display: inline-flex; flex-wrap: wrap; gap: 2px 6px; align-items: center; max-width: 100%; }
.abx-menus select { max-width: 100%; min-width: 0; font-size: 14px; }
.abx-menus select[data-testid=select-model], .abx-menus select[data-testid=select-series] { max-width: 11em; }
.abx-status { font-size: 14px; color: #444; margin: 1px 0 4px; }
.abx-sliders { display: grid; grid-template-columns: minmax(7.5em, max-content) minmax(5em, 1fr) 6.5em minmax(5.5em, 8.5em);
  gap: 1px 10px; align-items: center; }
.abx-sliders input[type=range] { width: 100%; margin: 0; min-width: 0; }
.abx-sliders .abx-val { font-variant-numeric: tabular-nums; white-space: nowrap; }
.abx-sliders .abx-num { width: 100%; min-width: 0; box-sizing: border-box; font-size: 14px; font-variant-numeric: tabular-nums; }
.abx-readout { margin: 4px 0 2px; display: grid; grid-template-columns: repeat(auto-fill, minmax(17em, 1fr)); gap: 0 14px;
  font-size: 14px; }
.abx-readout .abx-wide { grid-column: 1 / -1; }
.abx-readout b { font-size: 19px; font-variant-numeric: tabular-nums; }
.abx-readout .abx-aside { font-size: 14px; font-weight: normal; }
.abx-legend { display: flex; flex-wrap: wrap; gap: 0 16px; font-size: 14px; color: #333; margin-top: 1px; }
.abx-legend span { display: inline-flex; align-items: center; gap: 5px; }
.abx-sw { display: inline-block; width: 18px; height: 0; border-top: 2px solid; }
.abx-note { font-size: 14px; color: #555; margin-top: 3px; }
.abx-warn { font-size: 15px; color: #7a2900; background: #fff3e6; border-left: 4px solid #D55E00; padding: 3px 8px; margin: 4px 0; }
.abx-root svg { display: block; width: 100%; height: auto; }
@container (max-width: 560px) {
  .abx-sliders { grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); }
  .abx-sliders > label { grid-column: 1 / -1; margin-top: 3px; }
  .abx-sliders input[type=range] { grid-column: 1 / -1; }
  .abx-readout { grid-template-columns: minmax(0, 1fr); }
  .abx-readout > div, .abx-status, .abx-legend span { overflow-wrap: anywhere; }
}
.abx-root.abx-presenting { position: fixed; inset: 0; z-index: 100000; max-width: none; border: 0; border-radius: 0;
  overflow: auto; padding: 10px 18px; font-size: 17px; display: grid; grid-template-columns: minmax(0, 3fr) minmax(300px, 2fr);
  grid-template-rows: auto 1fr; gap: 0 22px; align-content: start; }
.abx-presenting .abx-head { grid-column: 1 / -1; }
.abx-presenting .abx-title { font-size: 20px; }
.abx-presenting .abx-chart { grid-column: 1; grid-row: 2; }
.abx-presenting .abx-controls { grid-column: 2; grid-row: 2; }
.abx-presenting .abx-sliders { row-gap: 6px; }
.abx-presenting .abx-menus select[data-testid=select-model], .abx-presenting .abx-menus select[data-testid=select-series] { max-width: 100%; }
.abx-presenting .abx-readout { grid-template-columns: minmax(0, 1fr); font-size: 16px; }
.abx-presenting .abx-readout b { font-size: 24px; }
.abx-presenting .abx-readout .abx-aside { font-size: 16px; }
.abx-presenting .abx-status, .abx-presenting .abx-legend, .abx-presenting .abx-menus select { font-size: 16px; }
@media (max-width: 800px) {
  .abx-root.abx-presenting { grid-template-columns: minmax(0, 1fr); }
  .abx-presenting .abx-controls { grid-column: 1; grid-row: 3; }
}
`;

function el(tag, attrs = {}, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else e.setAttribute(k, String(v));
  }
  if (text !== undefined) e.textContent = text;
  return e;
}

// Which explorer of the page (1-based, in document order) the URL asks to present: ?present=k (?present alone: 1);
// null when the URL does not ask. (The parameter is read from location.search or from the hash: #present=k.)
export function presentIndex(search, hash = "") {
  for (const part of [search || "", (hash || "").replace(/^#/, "?")]) {
    const m = /[?&]present(?:=(\d+))?(?:&|$)/.exec(part);
    if (m) return m[1] === undefined ? 1 : Math.max(1, Number(m[1]));
  }
  return null;
}

// The explorer's frame: a head (title and the Present button), a controls column and a chart column.
// Returns {root, controls, chart, present(on)}; `redraw` is called when the chart's width changes (resize,
// presentation on or off), so that the SVG's viewBox follows its drawn width.
function makeRoot(el_, testid, title, redraw) {
  const root = el("div", { class: "abx-root", "data-testid": testid });
  const style = document.createElement("style");
  style.textContent = STYLE;
  root.appendChild(style);
  const head = el("div", { class: "abx-head" });
  head.appendChild(el("div", { class: "abx-title" }, title));
  const btn = el("button", { type: "button", class: "abx-present-btn", "data-testid": "present",
    title: "Enlarge this explorer to the window, for a lecture (Esc goes back)" }, "Present");
  head.appendChild(btn);
  root.appendChild(head);
  const controls = el("div", { class: "abx-controls" });
  const chart = el("div", { class: "abx-chart" });
  root.appendChild(controls);
  root.appendChild(chart);
  el_.appendChild(root);
  const present = (on) => {
    root.classList.toggle("abx-presenting", on);
    root.setAttribute("data-presenting", on ? "true" : "false");
    btn.textContent = on ? "Exit presentation (Esc)" : "Present";
    if (document.body) document.body.style.overflow = on ? "hidden" : "";
    redraw();
  };
  btn.addEventListener("click", () => present(!root.classList.contains("abx-presenting")));
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && root.classList.contains("abx-presenting")) present(false);
  });
  // the chart follows its drawn width (viewBox = drawn size, so chart text stays at TICK_PX)
  let lastW = -1, pending = false;
  if (typeof ResizeObserver !== "undefined") {
    new ResizeObserver(() => {
      const w = Math.round(chart.getBoundingClientRect().width);
      if (w === lastW || pending) return;
      lastW = w;
      pending = true;
      requestAnimationFrame(() => { pending = false; redraw(); });
    }).observe(chart);
  }
  // ?present=k: present the k-th explorer of the page once it is in the document
  const k = presentIndex(window.location.search, window.location.hash);
  if (k !== null) {
    const tryPresent = (tries) => {
      if (!root.isConnected) { if (tries > 0) setTimeout(() => tryPresent(tries - 1), 50); return; }
      const all = [...document.querySelectorAll(".abx-root, .abx-precision")];
      if (all.indexOf(root) + 1 === k) present(true);
    };
    setTimeout(() => tryPresent(100), 0);
  }
  return { root, controls, chart, present };
}

function makeSelect(label, testid, options, value, onChange) {
  const lab = el("label");
  lab.appendChild(document.createTextNode(label));
  const sel = el("select", { "data-testid": testid, "aria-label": label });
  for (const o of options) {
    if (o.group) {
      const g = el("optgroup", { label: o.group });
      for (const c of o.options) g.appendChild(el("option", { value: c.value }, c.text));
      sel.appendChild(g);
    } else {
      sel.appendChild(el("option", { value: o.value }, o.text));
    }
  }
  sel.value = String(value);
  sel.addEventListener("change", () => onChange(sel.value));
  lab.appendChild(sel);
  return { lab, sel };
}

// Sliders: [name, label, kind] with kind "log" (real, log10 position), "logint" (integer, log10
// position), "real" (linear) or "dlog" (the value is log10 n, the position is log10 of it).
function toPosition(kind, value) {
  if (kind === "log" || kind === "logint") return Math.log10(value);
  if (kind === "dlog") return Math.log10(value);
  return value;
}
function fromPosition(kind, pos, lo) {
  if (kind === "log") return Math.pow(10, pos);
  if (kind === "logint") return Math.max(Math.round(lo), Math.round(Math.pow(10, pos)));
  if (kind === "dlog") return Math.pow(10, pos);
  if (kind === "int") return Math.round(pos);
  return pos;
}

// Integer quantities on a log slider (d, |V|) cannot reach every integer by dragging, so a slider position
// within half a step of a listed value (the menu's models' d and |V|: `snaps(name)`) lands on it exactly;
// every slider also has a number box: a typed value is clamped to the slider's range (integers rounded).
export function snapped(kind, pos, lo, step, list) {
  const v = fromPosition(kind, pos, lo);
  if (kind !== "logint" || !list || !list.length) return v;
  let best = null, dist = step / 2 + 1e-12;
  for (const s of list) {
    if (!(s > 0)) continue;
    const dd = Math.abs(Math.log10(s) - pos);
    if (dd <= dist) { best = s; dist = dd; }
  }
  return best === null ? v : best;
}
function boxText(kind, v) {
  if (v === undefined || v === null || !Number.isFinite(Number(v))) return "";
  return kind === "int" || kind === "logint" ? String(Math.round(v)) : String(Number(Number(v).toPrecision(6)));
}

function makeSliders(model, specs, ranges, onInput, snaps) {
  const grid = el("div", { class: "abx-sliders" });
  const inputs = {}, vals = {}, boxes = {};
  const integer = (kind) => kind === "int" || kind === "logint";
  for (const [name, label, kind] of specs) {
    const [lo, hi] = ranges(name);
    const lab = el("label", {}, label);
    const input = el("input", { type: "range", "data-testid": `slider-${name}`, "aria-label": label });
    const plo = toPosition(kind, lo), phi = toPosition(kind, hi);
    input.min = String(plo);
    input.max = String(phi);
    input.step = kind === "int" ? "1" : String((phi - plo) / 1000);
    input.value = String(Math.min(phi, Math.max(plo, toPosition(kind, model.get(name)))));
    input.id = `abx-${name}-${Math.random().toString(36).slice(2)}`;
    lab.htmlFor = input.id;
    const box = el("input", { type: "number", class: "abx-num", "data-testid": `number-${name}`,
      "aria-label": `${label}, exact value` });
    box.step = integer(kind) ? "1" : "any";
    box.min = String(lo); box.max = String(hi);
    box.value = boxText(kind, model.get(name));
    const val = el("span", { class: "abx-val", "data-testid": `value-${name}` });
    input.addEventListener("input", () => {
      const [lo2] = ranges(name);
      onInput(name, snapped(kind, Number(input.value), lo2, Number(input.step), snaps ? snaps(name) : null));
    });
    box.addEventListener("change", () => {
      const [lo2, hi2] = ranges(name);
      let v = Number(box.value);
      if (box.value.trim() === "" || !Number.isFinite(v)) { box.value = boxText(kind, model.get(name)); return; }
      v = Math.min(hi2, Math.max(lo2, v));
      if (integer(kind)) v = Math.min(Math.floor(hi2), Math.max(Math.ceil(lo2), Math.round(v)));
      box.value = boxText(kind, v);
      onInput(name, v);
    });
    grid.appendChild(lab); grid.appendChild(input); grid.appendChild(box); grid.appendChild(val);
    inputs[name] = input; vals[name] = val; boxes[name] = box;
  }
  const sync = (name, kind) => {
    const [lo, hi] = ranges(name);
    const input = inputs[name], box = boxes[name];
    const plo = toPosition(kind, lo), phi = toPosition(kind, hi);
    if (Number(input.min) !== plo || Number(input.max) !== phi) {
      input.min = String(plo); input.max = String(phi); input.step = kind === "int" ? "1" : String((phi - plo) / 1000);
      box.min = String(lo); box.max = String(hi);
    }
    const pos = Math.min(phi, Math.max(plo, toPosition(kind, model.get(name))));
    if (Math.abs(Number(input.value) - pos) > 1e-12) input.value = String(pos);
    if (document.activeElement !== box) box.value = boxText(kind, model.get(name));
  };
  return { grid, inputs, vals, boxes, sync };
}

function save(model) {
  try { model.save_changes(); } catch (e) { /* static page: no kernel to sync with */ }
}

function readoutRow(parent, key, text, wide = false) {
  const row = el("div", wide ? { class: "abx-wide" } : {});
  row.appendChild(document.createTextNode(`${text} = `));
  const b = el("b", { "data-testid": `out-${key}` });
  row.appendChild(b);
  parent.appendChild(row);
  return b;
}
function setOut(b, html, value) {
  b.innerHTML = html;
  b.setAttribute("data-value", value === null || value === undefined ? "" : String(value));
}

function legendItem(parent, color, dash, text, marker) {
  const s = el("span");
  if (marker) {
    const m = el("span", {}, marker);
    m.style.color = color;
    s.appendChild(m);
  } else {
    const sw = el("span", { class: "abx-sw" });
    sw.style.borderTopColor = color;
    if (dash) sw.style.borderTopStyle = "dashed";
    s.appendChild(sw);
  }
  s.appendChild(document.createTextNode(text));
  parent.appendChild(s);
}

// ---- the bound explorers (chapters 1 and 4) ---------------------------------------------------
const BOUND_SLIDERS = {
  ball: [
    ["eps", "ε (precision)", "log"],
    ["r", "r (radius)", "log"],
    ["d", "d (width)", "logint"],
    ["d_vocab", "|V| (vocabulary)", "logint"],
    ["m", "m (prompt vectors)", "logint"],
    ["n", "n (sequence length)", "logint"],
  ],
  mean_field: [
    ["eps", "ε (precision)", "log"],
    ["r", "r (radius)", "log"],
    ["d", "d (width)", "logint"],
    ["d_vocab", "|V| (vocabulary)", "logint"],
    ["q", "q (Wasserstein order)", "real"],
    ["m", "m (ball bound, cramming)", "logint"],
    ["log10_n", "log₁₀ n (sequence length)", "dlog"],
  ],
};
// The paper's symbol of each parameter, for text a reader sees (status lines): never the code's name.
const SYMBOLS = { eps: "ε", r: "r", d: "d", d_vocab: "|V|", m: "m", n: "n", log10_n: "log₁₀ n", q: "q" };
export function symbol(name) {
  return SYMBOLS[name] || name;
}
// x-axis choices: ball: n from 1 to 10^k (log axis); mean field: n from 2 to 10^(10^k) (double log).
export const AXIS_CHOICES = { ball: [2, 3, 4, 5, 6, 7, 8, 9], mean_field: [1, 2, 3, 4, 5, 6] };
export const FLOOR_CHOICES = [-10, -30, -100, -300, -1000, -10000];
const LOG10_2 = Math.log10(2);

function boundXAxis(formula, k) {
  return formula === "mean_field"
    ? logLogAxis(Math.log10(LOG10_2), k, "sequence length n (tokens), double log scale")
    : logAxis(0, k, "sequence length n (tokens), log scale");
}
function nRange(formula, k) {
  // slider range of n: ball: tokens 1..10^k; mean field: log10 n from log10 2 to 10^k
  return formula === "mean_field" ? [LOG10_2, Math.pow(10, k)] : [1, Math.pow(10, k)];
}

function renderBound({ model, el: host }) {
  const formula = model.get("formula") === "mean_field" ? "mean_field" : "ball";
  const mf = formula === "mean_field";
  const frame = makeRoot(host, "bound-explorer", model.get("title") || (mf
    ? "Mean-field bound (Thm 4.9, Cor 4.10): prompts of any length"
    : "Ball bound (Thm 4.5, Cor 4.6): prompts of m vectors"), () => refresh());
  const root = frame.root, controls = frame.controls;
  root.setAttribute("data-formula", formula);

  const models = model.get("models") || [];
  const conventions = model.get("conventions") || [];
  const byName = Object.fromEntries(models.map((m) => [m.name, m]));
  const convByKey = Object.fromEntries(conventions.map((c) => [c.key, c]));
  let edited = [];

  // menus: model, ε convention, axis range, floor
  const menus = el("div", { class: "abx-menus" });
  const groups = [{ value: "", text: "custom (sliders only)" }];
  for (const g of ["paper", "book"]) {
    const opts = models.filter((m) => m.group === g).map((m) => ({ value: m.name, text: m.label || m.name }));
    if (opts.length) groups.push({ group: g === "paper" ? "the paper's models" : "this book's models (r measured here)", options: opts });
  }
  const modelSel = makeSelect("model", "select-model", groups, model.get("model") || "", (v) => selectModel(v, null));
  const convSel = makeSelect("ε convention", "select-convention",
    conventions.map((c) => ({ value: c.key, text: c.key })), model.get("convention"), (v) => selectModel(model.get("model") || "", v));
  const axisSel = makeSelect("n up to", "select-axis",
    AXIS_CHOICES[formula].map((k) => ({ value: k, text: mf ? `10^(${pow10Text(k)})` : pow10Text(k) })), model.get("axis_max"),
    (v) => { model.set("axis_max", Number(v)); clampN(); save(model); refresh(); });
  const floorSel = makeSelect("fraction down to", "select-floor",
    FLOOR_CHOICES.map((f) => ({ value: f, text: pow10Text(f) })), model.get("floor"),
    (v) => { model.set("floor", Number(v)); save(model); refresh(); });
  for (const s of [modelSel, convSel, axisSel, floorSel]) menus.appendChild(s.lab);
  controls.appendChild(menus);
  const status = el("div", { class: "abx-status", "data-testid": "status" });
  controls.appendChild(status);

  const rangeOf = (name) => {
    if (name === "n" || name === "log10_n") return nRange(formula, model.get("axis_max"));
    return (model.get("ranges") || {})[name] || [1, 100];
  };
  const specs = BOUND_SLIDERS[formula];
  const snapTo = (name) => (name === "d" || name === "d_vocab" ? models.map((m) => m[name]) : null);
  const sliders = makeSliders(model, specs, rangeOf, (name, v) => {
    model.set(name, v);
    if (["eps", "r", "d", "d_vocab"].includes(name) && model.get("model") && !edited.includes(name)) edited.push(name);
    save(model);
    refresh();
  }, snapTo);
  controls.appendChild(sliders.grid);

  const readout = el("div", { class: "abx-readout" });
  const outs = {};
  if (mf) {
    outs.loglog = readoutRow(readout, "loglog", "ln ln #accessible");
    outs.nstar = readoutRow(readout, "nstar", "n* = ln #accessible / ln|V| (tokens)");
    outs.fracN = readoutRow(readout, "fracN", "log₁₀ fraction at n");
    outs.ratio = readoutRow(readout, "ratio", "2r/ε");
    outs.nstarBall = readoutRow(readout, "nstarBall", "ball bound n* = C·m (tokens)");
    outs.cramming = readoutRow(readout, "cramming", "measured cramming n₅₀ ≈ slope·m", true);
  } else {
    outs.C = readoutRow(readout, "C", "C (tokens/vector)");
    outs.nstar = readoutRow(readout, "nstar", "n* = C·m (tokens)");
    outs.logP = readoutRow(readout, "logP", "ln P (nats)");
    outs.lnFracN = readoutRow(readout, "lnFracN", "ln fraction at n");
    outs.ratio = readoutRow(readout, "ratio", "2r/ε");
    outs.measured = readoutRow(readout, "measured", "C / measured cramming slope", true);
  }
  controls.appendChild(readout);
  const svg = svgEl("svg", { role: "img", "aria-label": "bound on the accessible fraction against n", "data-testid": "plot" });
  frame.chart.appendChild(svg);
  const legend = el("div", { class: "abx-legend", "data-testid": "legend" });
  frame.chart.appendChild(legend);

  function clampN() {
    const key = mf ? "log10_n" : "n";
    const [lo, hi] = rangeOf(key);
    const v = model.get(key);
    if (v > hi) model.set(key, mf ? hi : Math.round(hi));
    if (v < lo) model.set(key, lo);
  }

  function selectModel(name, convKey) {
    const conv = convByKey[convKey || model.get("convention")] || conventions[0];
    if (convKey) model.set("convention", conv.key);
    model.set("model", name);
    edited = [];
    const m = byName[name];
    if (m) {
      const { r, eps } = conventionBall(conv, m.r_l2, m.r_inf);
      model.set("d", m.d);
      model.set("d_vocab", m.d_vocab);
      model.set("r", r);
      model.set("eps", eps);
    } else if (convKey) {
      // custom: keep r, take ε from the convention with r as the reference radius
      model.set("eps", conv.factor * model.get("r"));
    }
    save(model);
    refresh();
  }

  function params() {
    const o = {};
    for (const k of ["eps", "r", "d", "d_vocab", "m", "n", "log10_n", "q"]) o[k] = model.get(k);
    return o;
  }

  function refresh() {
    const p = params();
    for (const [name, , kind] of specs) {
      sliders.sync(name, kind);
      const v = p[name];
      sliders.vals[name].innerHTML = name === "log10_n" ? `n = ${fmtPow10(v)}` : kind === "logint" ? fmt(v, 12) : fmt(v, 4);
      sliders.vals[name].setAttribute("data-value", String(v));
      root.setAttribute(`data-${name.replace("_", "-")}`, String(v));
    }
    modelSel.sel.value = model.get("model") || "";
    convSel.sel.value = model.get("convention");
    axisSel.sel.value = String(model.get("axis_max"));
    floorSel.sel.value = String(model.get("floor"));
    const out = compute(formula, p);
    const m = byName[model.get("model") || ""];
    const conv = convByKey[model.get("convention")];
    if (m) {
      const rName = conv && conv.radius === "r_inf" ? "r∞ (largest |coordinate|)" : "max L2 norm";
      status.textContent = `${m.label || m.name} (${m.source}): d = ${m.d}, |V| = ${m.d_vocab}, r = ${rName}, `
        + `ε: ${conv ? conv.plain || conv.name : "?"}` + (edited.length ? `; moved by hand since: ${edited.map(symbol).join(", ")}` : "");
    } else {
      status.textContent = "custom values: pick a model to load its d, |V|, r and ε.";
    }
    const slopes = m ? [["natural", m.slope_natural], ["random", m.slope_random]].filter(([, s]) => s !== null && s !== undefined) : [];
    const atSteps = m && m.slope_steps ? ` at ${m.slope_steps} steps` : "";  // the step budget of a slope measured in the book
    if (mf) {
      setOut(outs.loglog, fmt(out.loglog, 6), out.loglog);
      setOut(outs.nstar, fmtPow10(out.log10Nstar), out.log10Nstar);
      outs.nstar.setAttribute("data-log10", String(out.log10Nstar));
      const f = out.negLog10FracN;
      setOut(outs.fracN, f === null ? "0 (every sequence may be accessible)" : fmtPow10(f, true), f === null ? 0 : f);
      setOut(outs.ratio, fmtPow10(Math.log10(2) + Math.log10(p.r) - Math.log10(p.eps)), 2 * p.r / p.eps);
      setOut(outs.nstarBall, fmt(out.nstarBall), out.nstarBall);
      setOut(outs.cramming, slopes.length ? slopes.map(([k, s]) => `${fmt(s * p.m)} <span class="abx-aside">(${k}${atSteps})</span>`).join(", ") : "not measured for this model", "");
    } else {
      setOut(outs.C, fmt(out.C, 6), out.C);
      setOut(outs.nstar, fmt(out.nstar, 6), out.nstar);
      setOut(outs.logP, fmt(out.logP, 6), out.logP);
      setOut(outs.lnFracN, fmt(out.lnFracN, 6), out.lnFracN);
      setOut(outs.ratio, fmtPow10(Math.log10(2) + Math.log10(p.r) - Math.log10(p.eps)), 2 * p.r / p.eps);
      setOut(outs.measured, slopes.length ? slopes.map(([k, s]) => `${fmt(out.C / s, 3)} <span class="abx-aside">(${k}: ${fmt(s)} tokens/vector${atSteps})</span>`).join(", ")
        : "not measured for this model", slopes.length ? out.C / slopes[0][1] : "");
    }
    drawBound(svg, legend, formula, p, out, slopes, model.get("axis_max"), model.get("floor"));
  }

  const names = ["eps", "r", "d", "d_vocab", "m", "n", "log10_n", "q", "model", "convention", "axis_max", "floor"];
  const onChange = () => { clampN(); refresh(); };
  for (const name of names) model.on(`change:${name}`, onChange);
  clampN();
  refresh();
  return () => { for (const name of names) model.off(`change:${name}`, onChange); };
}

// The n axis actually drawn: the menu's upper end k, widened (to the smallest choice that holds it) when the
// cliff, from n* down to where the bound reaches the floor, would leave the plot; at the widest choice the axis
// stops ({clamped: true}) and n* is marked at its right edge. Returns {k, clamped}.
export function followAxis(formula, out, k, floor) {
  const mf = formula === "mean_field";
  const choices = AXIS_CHOICES[formula];
  const shift = -floor * LN10;
  // log10 of the length where the bound reaches the floor (the cliff's foot), in log space
  const l10F = out.log10Nstar + Math.log10(1 + (shift / out.logV) * Math.pow(10, -out.log10Nstar));
  const uNeed = mf ? (l10F > 0 ? Math.log10(l10F) : -Infinity) : l10F;
  if (!(uNeed > k)) return { k, clamped: false };
  const wider = choices.find((c) => c >= k && c >= uNeed + 0.02);
  return wider === undefined ? { k: choices[choices.length - 1], clamped: true } : { k: wider, clamped: false };
}

// Points of a "flat at 1, then a cliff" curve in axis units: 0 up to uStar, then yAt(u) down to the floor,
// reached at uF (both may lie outside the axis; a vertical cliff when uF equals uStar in floating point).
function cliffCurve(xa, uStar, uF, yAt, floor) {
  const pts = [];
  if (uStar > xa.lo) pts.push([xa.lo, 0], [Math.min(uStar, xa.hi), 0]);
  const u0 = Math.max(xa.lo, uStar);
  if (u0 < xa.hi) {
    if (!(uF > u0)) {
      pts.push([u0, Math.max(yAt(u0), floor)]);
    } else {
      const u1 = Math.min(uF, xa.hi);
      for (let j = 0; j <= 80; j++) {
        const u = u0 + ((u1 - u0) * j) / 80;
        pts.push([u, Math.max(yAt(u), floor)]);
      }
      if (uF <= xa.hi) pts.push([uF, floor]);
    }
  }
  return pts;
}

// The bound's fraction against n on fixed axes, with n*, the ball comparison (mean field) and the
// measured cramming lengths slope·m of the selected model.
function drawBound(svg, legend, formula, p, out, slopes, k, floor) {
  const mf = formula === "mean_field";
  const follow = followAxis(formula, out, k, floor);
  const xa = boundXAxis(formula, follow.k);
  svg.setAttribute("data-axis-max", String(follow.k));
  const ya = fractionAxis(floor);
  const fr = drawFrame(svg, xa, ya);
  // axis unit u of a length given by log10 n: u = log10 n (ball) or log10 log10 n (mean field)
  const uOf = (l10) => (mf ? (l10 > 0 ? Math.log10(l10) : -Infinity) : l10);
  const offRight = [];
  const mark = (l10, color, dash, testid, text) => {
    const u = uOf(l10);
    if (u > xa.hi) { offRight.push([text, l10, color, testid]); return; }
    if (!(u >= xa.lo)) return;
    svg.appendChild(vline(fr, u, { stroke: color, "stroke-width": 1.6, "stroke-dasharray": dash, "data-testid": testid, "data-u": u }));
  };
  legend.replaceChildren();
  const shift = -floor * LN10; // nats between fraction 1 and the floor
  if (mf) {
    const yAt = (u) => { const g = out.negLog10Frac(Math.pow(10, u)); return g === null ? 0 : -Math.pow(10, g); };
    // log10 of the length where the bound reaches the floor: n* + shift/ln|V|, in log space
    const l10F = out.log10Nstar + Math.log10(1 + (shift / out.logV) * Math.pow(10, -out.log10Nstar));
    const pts = cliffCurve(xa, uOf(out.log10Nstar), uOf(l10F), yAt, floor);
    // the ball bound at the same parameters with m vectors (grey), for comparison
    const logP = p.d * p.m * out.L;
    const ballAt = (u) => Math.max(Math.min(0, logP - Math.pow(10, Math.pow(10, u)) * out.logV) / LN10, -1e300);
    const bpts = cliffCurve(xa, uOf(Math.log10(out.nstarBall)), uOf(Math.log10((logP + shift) / out.logV)), ballAt, floor);
    svg.appendChild(polyline(fr, bpts, { stroke: COLORS.ball, "stroke-width": 1.4, "data-testid": "ball-curve" }));
    svg.appendChild(polyline(fr, pts, { stroke: COLORS.curve, "stroke-width": 2.2, "data-testid": "curve" }));
    legendItem(legend, COLORS.curve, false, "mean-field bound (any prompt length)");
    legendItem(legend, COLORS.ball, false, `ball bound, m = ${p.m}`);
    mark(out.log10Nstar, COLORS.nstar, "6,4", "threshold-line", "n*");
    legendItem(legend, COLORS.nstar, true, "n* (mean field)");
  } else {
    const yAt = (u) => out.lnFrac(Math.pow(10, u)) / LN10;
    const pts = cliffCurve(xa, out.log10Nstar, Math.log10((out.logP + shift) / out.logV), yAt, floor);
    svg.appendChild(polyline(fr, pts, { stroke: COLORS.curve, "stroke-width": 2.2, "data-testid": "curve" }));
    legendItem(legend, COLORS.curve, false, `ball bound, m = ${p.m}`);
    mark(out.log10Nstar, COLORS.nstar, "6,4", "threshold-line", "n* = C·m");
    legendItem(legend, COLORS.nstar, true, "n* = C·m");
  }
  if (follow.k !== k) {
    legendItem(legend, "#555", false, `n axis extended to ${mf ? `10^(${pow10Text(follow.k)})` : pow10Text(follow.k)} `
      + `(menu: ${mf ? `10^(${pow10Text(k)})` : pow10Text(k)}) so that the cliff at n* stays in view`, "↔");
    legend.lastChild.setAttribute("data-testid", "axis-followed");
  }
  if (follow.clamped) {
    legendItem(legend, COLORS.nstar, false, `n* lies beyond the widest n axis (${mf ? `10^(${pow10Text(follow.k)})` : pow10Text(follow.k)}): `
      + "the axis stops there, n* is marked at its right edge", "→");
    legend.lastChild.setAttribute("data-testid", "axis-clamped");
  }
  for (const [kind, s] of slopes) {
    const color = kind === "natural" ? COLORS.natural : COLORS.random;
    const l10 = Math.log10(s * p.m);
    mark(l10, color, "2,3", `mark-${kind}`, `cramming (${kind})`);
    const u = uOf(l10);
    if (u >= xa.lo && u <= xa.hi) svg.appendChild(triangle(fr, u, color, `tri-${kind}`));
    legendItem(legend, color, false, `measured cramming n₅₀ ≈ ${fmtPlain(s)}·m (${kind === "natural" ? "natural text" : "random"})`, "▼");
  }
  if (!mf && slopes.length) {
    // the gap between the measurement and the bound: C / slope, drawn where both are on the axis
    const [kind, s] = slopes[0];
    const u0 = Math.log10(s * p.m), u1 = out.log10Nstar;
    if (u0 >= xa.lo && u1 <= xa.hi && u1 > u0) {
      const x0 = fr.sx(u0), x1 = fr.sx(u1), y = fr.mt + 0.3 * (fr.H - fr.mt - fr.mb);
      const g = svgEl("g", { "data-testid": "ratio-arrow" });
      g.appendChild(svgEl("line", { x1: x0, x2: x1, y1: y, y2: y, stroke: "#333", "stroke-width": 1.2 }));
      g.appendChild(svgEl("polygon", { points: `${x1},${y} ${x1 - 7},${y - 4} ${x1 - 7},${y + 4}`, fill: "#333" }));
      const text = `bound / measured (${kind}) = ${fmtPlain(out.C / s, 3)}`;
      if (x1 - x0 > labelWidth(text) * 0.85 + 8) {
        g.appendChild(labelText({ x: (x0 + x1) / 2, y: y - 6, "text-anchor": "middle", fill: "#333" }, text));
      } else if (x1 - x0 > 60) {
        g.appendChild(labelText({ x: (x0 + x1) / 2, y: y - 6, "text-anchor": "middle", fill: "#333" }, `×${fmtPlain(out.C / s, 3)}`));
      }
      svg.appendChild(g);
    }
  }
  // the reader's n: a dot on the curve
  const l10n = mf ? p.log10_n : Math.log10(p.n);
  let yn;
  if (mf) { const g = out.negLog10FracN; yn = g === null ? 0 : -Math.pow(10, g); } else yn = out.lnFracN / LN10;
  const un = uOf(l10n);
  if (un >= xa.lo && un <= xa.hi) {
    svg.appendChild(svgEl("circle", { cx: fr.sx(un), cy: fr.sy(Math.max(yn, floor)), r: 4.5, fill: COLORS.point, stroke: "#fff", "data-testid": "n-dot" }));
    legendItem(legend, COLORS.point, false, "the slider's n", "●");
  }
  offRight.forEach(([text, l10, color, testid], i) => {
    const where = mf ? `10^${fmtPlain(l10)}` : fmtPlain(Math.pow(10, l10));
    svg.appendChild(labelText({ x: fr.W - fr.mr - 6, y: fr.mt + TICK_PX + 4 + (TICK_PX + 4) * i, "text-anchor": "end", fill: color, "data-testid": `offaxis-${testid}` },
      `${text} at n ≈ ${where}: beyond the axis →`));
  });
}
function fmtPlain(x, digits = 4) {
  // text-only number (SVG text and menus cannot hold <sup>): `digits` significant digits, e notation when large
  if (!Number.isFinite(x)) return "undefined";
  const a = Math.abs(x);
  if (a >= 1e-3 && a < 1e6) return String(Number(x.toPrecision(digits)));
  return x.toExponential(digits - 1).replace("e+", "e");
}

// ---- the cramming explorer (chapter 3) ------------------------------------------------------------
export const CRAMMING_AXES = {
  "log:3": "log–log, n50 up to 10³", "log:4": "log–log, n50 up to 10⁴", "log:5": "log–log, n50 up to 10⁵",
  "lin:50": "linear, n50 up to 50", "lin:500": "linear, n50 up to 500", "lin:5000": "linear, n50 up to 5000",
};

// The paper's series (group "paper"; older states: the name says "(paper"): their slopes C_exp are the
// columns of the paper's Table 1, drawn as a reference band behind the selected series.
export function isPaperSeries(s) {
  return s.group === "paper" || (s.group === undefined && / \(paper\b/.test(s.name));
}
// The band of the paper's measured slopes: {lo, hi, n} over the paper's series with a positive slope (null: none).
export function paperBand(series) {
  const slopes = series.filter(isPaperSeries).map((s) => s.slope).filter((v) => v !== null && v !== undefined && v > 0);
  return slopes.length ? { lo: Math.min(...slopes), hi: Math.max(...slopes), n: slopes.length } : null;
}

function renderCramming({ model, el: host }) {
  const frame = makeRoot(host, "cramming-explorer", model.get("title") || "Cramming: measured n₅₀(m) against the bound C·m (Cor 4.6, Table 1)", () => refresh());
  const root = frame.root, controls = frame.controls;
  root.setAttribute("data-formula", "cramming");
  const series = model.get("series") || [];
  const byName = Object.fromEntries(series.map((s) => [s.name, s]));
  const colorOf = Object.fromEntries(series.map((s, i) => [s.name, SERIES_COLORS[i % SERIES_COLORS.length]]));
  const mMax = Math.max(1, ...series.flatMap((s) => s.points.map((q) => q[0])));
  const band = paperBand(series);
  let edited = [];
  let showAll = false;

  const menus = el("div", { class: "abx-menus" });
  const seriesSel = makeSelect("series", "select-series", series.map((s) => ({ value: s.name, text: s.name })),
    model.get("selected"), (v) => {
      const s = byName[v];
      model.set("selected", v);
      model.set("r", s.r);
      model.set("eps", s.eps);
      edited = [];
      save(model);
      refresh();
    });
  const axisSel = makeSelect("axes", "select-axis", Object.entries(CRAMMING_AXES).map(([k, t]) => ({ value: k, text: t })),
    model.get("axis"), (v) => { model.set("axis", v); save(model); refresh(); });
  menus.appendChild(seriesSel.lab);
  menus.appendChild(axisSel.lab);
  const allLab = el("label");
  const allBox = el("input", { type: "checkbox", "data-testid": "toggle-all-series" });
  allBox.addEventListener("change", () => { showAll = allBox.checked; refresh(); });
  allLab.appendChild(allBox);
  allLab.appendChild(document.createTextNode("show the other series too"));
  menus.appendChild(allLab);
  controls.appendChild(menus);
  const status = el("div", { class: "abx-status", "data-testid": "status" });
  controls.appendChild(status);
  const specs = [["eps", "ε (precision)", "log"], ["r", "r (radius)", "log"]];
  const sliders = makeSliders(model, specs, (name) => (model.get("ranges") || {})[name] || [1e-3, 1e3], (name, v) => {
    model.set(name, v);
    if (!edited.includes(name)) edited.push(name);
    save(model);
    refresh();
  });
  controls.appendChild(sliders.grid);
  const readout = el("div", { class: "abx-readout" });
  const outs = {
    ratio2r: readoutRow(readout, "ratio2r", "2r/ε"),
    C: readoutRow(readout, "C", "bound C (tokens / vector)"),
    slope: readoutRow(readout, "slope", "measured slope C_exp", true),
    ratio: readoutRow(readout, "ratio", "ratio C / C_exp"),
    slopePoints: readoutRow(readout, "slopePoints", "least-squares slope of the points"),
  };
  controls.appendChild(readout);
  const warn = el("div", { class: "abx-warn", "data-testid": "above-bound", role: "status" });
  warn.style.display = "none";
  controls.appendChild(warn);
  const svg = svgEl("svg", { role: "img", "aria-label": "n50 against m with the bound C·m", "data-testid": "plot" });
  frame.chart.appendChild(svg);
  const legend = el("div", { class: "abx-legend", "data-testid": "legend" });
  frame.chart.appendChild(legend);

  function refresh() {
    const s = byName[model.get("selected")] || series[0];
    if (!s) { status.textContent = "no series given"; return; }
    const eps = model.get("eps"), r = model.get("r");
    for (const [name, , kind] of specs) {
      sliders.sync(name, kind);
      sliders.vals[name].innerHTML = fmt(model.get(name), 4);
      sliders.vals[name].setAttribute("data-value", String(model.get(name)));
      root.setAttribute(`data-${name}`, String(model.get(name)));
    }
    seriesSel.sel.value = s.name;
    axisSel.sel.value = model.get("axis");
    root.setAttribute("data-selected", s.name);
    root.setAttribute("data-d", String(s.d));
    root.setAttribute("data-d-vocab", String(s.d_vocab));
    const out = computeCramming(s, eps, r);
    status.textContent = `${s.name}: d = ${s.d}, |V| = ${s.d_vocab}; r and ε under "${s.convention}"`
      + (edited.length ? `; moved by hand: ${edited.map(symbol).join(", ")}` : "");
    setOut(outs.ratio2r, fmtPow10(out.log10Ratio2rEps), Math.pow(10, out.log10Ratio2rEps));
    setOut(outs.C, fmt(out.C, 5), out.C);
    setOut(outs.slope, out.slope === null ? "not available (fewer than two m)" : `${fmt(out.slope, 4)} <span class="abx-aside">tokens / vector (${s.slope_source || "least-squares fit of the points"})</span>`, out.slope);
    setOut(outs.ratio, out.ratio === null ? "undefined: the measured slope is not positive" : fmt(out.ratio, 3), out.ratio);
    if (out.ratio === null) outs.ratio.textContent = out.unreliable
      ? "not taken: the slope is not reliable (fewer than three m, or its interval includes 0)"
      : out.slope === null ? "not available" : "not defined (measured slope ≤ 0)";
    const above = out.ratio !== null && out.ratio < 1;
    root.setAttribute("data-above-bound", above ? "true" : "false");
    warn.style.display = above ? "" : "none";
    warn.textContent = above
      ? `The measurement is above the bound: C_exp = ${fmtPlain(out.slope)} tokens per vector, more than C = ${fmtPlain(out.C)} `
        + `(C / C_exp = ${fmtPlain(out.ratio, 3)} < 1). A bound cannot be beaten, so at this setting its hypotheses fail for `
        + "this model: r is smaller than the radius of its embeddings, or ε is coarser than the precision it computes at. "
        + "Raise r or lower ε."
      : "";
    setOut(outs.slopePoints, out.slopePoints === null ? "not available (fewer than two m)" : fmt(out.slopePoints, 4), out.slopePoints);
    drawCramming(svg, legend, s, out, model.get("axis"), mMax);
  }

  function drawCramming(svg, legend, s, out, axis, mMax) {
    const [kind, top] = axis.split(":");
    const log = kind === "log";
    const mTop = log ? Math.pow(10, Math.ceil(Math.log10(mMax * 1.5))) : Math.ceil(mMax * 1.2);
    const xa = log ? logValueAxis(Math.log10(0.8), Math.log10(mTop), "prompt length m (vectors), log scale", [1, 2, 3, 5])
      : linAxis(0, mTop, "prompt length m (vectors)");
    const ya = log ? logValueAxis(0, Number(top), "n₅₀ (tokens, log)", [1, 2, 5])
      : linAxis(0, Number(top), "n₅₀ (tokens)");
    const fr = drawFrame(svg, xa, ya);
    const X = (m) => (log ? Math.log10(m) : m);
    const Y = (n) => (log ? (n > 0 ? Math.log10(n) : -1e9) : n);
    legend.replaceChildren();
    const ms = [];
    const m0 = log ? 0.8 : 0, m1 = mTop;
    for (let i = 0; i <= 100; i++) ms.push(log ? m0 * Math.pow(m1 / m0, i / 100) : m0 + ((m1 - m0) * i) / 100);
    // the paper's measured slopes (Table 1's columns) as a band C_exp·m from the smallest to the largest
    if (band) {
      const upper = ms.map((m) => [X(m), Y(band.hi * m)]);
      const lower = ms.map((m) => [X(m), Y(band.lo * m)]).reverse();
      const pts = upper.concat(lower).filter((q) => Number.isFinite(q[1]))
        .map(([u, v]) => `${fr.sx(u).toFixed(2)},${fr.sy(v).toFixed(2)}`).join(" ");
      svg.appendChild(svgEl("polygon", { points: pts, fill: "#bbbbbb", "fill-opacity": 0.35, stroke: "none",
        "clip-path": `url(#${fr.clipId})`, "data-testid": "paper-band" }));
      legendItem(legend, "#aaaaaa", false, `the paper's measured slopes (Table 1): C_exp = ${fmtPlain(band.lo)} to ${fmtPlain(band.hi)}`, "▰");
    }
    // the bound line n = C·m of the selected series
    svg.appendChild(polyline(fr, ms.map((m) => [X(m), Y(out.C * m)]), { stroke: "#000", "stroke-width": 2.4, "data-testid": "bound-line" }));
    legendItem(legend, "#000", false, `bound n* = C·m, C = ${fmtPlain(out.C)}`);
    if (out.slope !== null && out.slope > 0) {
      svg.appendChild(polyline(fr, ms.map((m) => [X(m), Y(out.slope * m)]), { stroke: colorOf[s.name], "stroke-width": 2, "stroke-dasharray": "7,4", "data-testid": "slope-line" }));
      legendItem(legend, colorOf[s.name], true, `measured C_exp·m, C_exp = ${fmtPlain(out.slope)}`);
      // the ratio C / C_exp as the gap between the two lines, at the series' largest m
      const mA = Math.max(...s.points.map((q) => q[0]));
      const x = fr.sx(X(mA)) + 14;
      const yLo = fr.sy(Y(out.slope * mA)), yHi = fr.sy(Y(out.C * mA));
      const top = fr.mt, bottom = fr.H - fr.mb;
      if (out.ratio !== null && yHi < yLo - 16 && yHi > top && yLo < bottom) {
        const g = svgEl("g", { "data-testid": "ratio-arrow" });
        g.appendChild(svgEl("line", { x1: x, x2: x, y1: yLo, y2: yHi, stroke: "#333", "stroke-width": 1.2 }));
        g.appendChild(svgEl("polygon", { points: `${x},${yHi} ${x - 4},${yHi + 7} ${x + 4},${yHi + 7}`, fill: "#333" }));
        g.appendChild(labelText({ x: x + 6, y: (yLo + yHi) / 2 + 5, "text-anchor": "start", fill: "#333" }, `×${fmtPlain(out.ratio, 3)}`));
        svg.appendChild(g);
      }
    }
    // the selected series' points with their intervals; the others only when asked for, faint
    const others = showAll ? series.filter((q) => q.name !== s.name) : [];
    for (const q of others.concat([s])) {
      const sel = q.name === s.name;
      const g = svgEl("g", { opacity: sel ? 1 : 0.35, "data-series": q.name, "clip-path": `url(#${fr.clipId})` });
      for (const [m, n50, lo, hi] of q.points) {
        if (sel && Number.isFinite(lo) && Number.isFinite(hi) && lo !== null && hi !== null) {
          g.appendChild(svgEl("line", { x1: fr.sx(X(m)), x2: fr.sx(X(m)), y1: fr.sy(Y(Math.max(lo, 1e-9))), y2: fr.sy(Y(hi)), stroke: colorOf[q.name], "stroke-width": 1.6 }));
        }
        g.appendChild(svgEl("circle", { cx: fr.sx(X(m)), cy: fr.sy(Y(n50)), r: sel ? 5.5 : 3.5, fill: sel ? colorOf[q.name] : "none", stroke: colorOf[q.name], "stroke-width": 1.5 }));
      }
      svg.appendChild(g);
    }
    legendItem(legend, colorOf[s.name], false, `${s.name}: measured n₅₀ (95 % interval)`, "●");
    if (others.length) legendItem(legend, "#777", false, `${others.length} other series, faint (pick one in the menu)`, "○");
  }

  const names = ["eps", "r", "selected", "axis"];
  const onChange = () => refresh();
  for (const name of names) model.on(`change:${name}`, onChange);
  refresh();
  return () => { for (const name of names) model.off(`change:${name}`, onChange); };
}

function render(ctx) {
  return ctx.model.get("formula") === "cramming" ? renderCramming(ctx) : renderBound(ctx);
}

export default { render };
