// Small SVG charts drawn in the browser: no library, nothing fetched from elsewhere. Labels are text nodes.
const NS = 'http://www.w3.org/2000/svg';
const el = (name, attrs = {}, text) => {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = String(text);
  return e;
};

/** A line (with area) of `points` [{ label, value }], with the largest value and the first and last labels. */
export function lineChart(points, { width = 720, height = 180, id } = {}) {
  const svg = el('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', ...(id ? { id } : {}) });
  const pad = { l: 44, r: 10, t: 10, b: 22 };
  const max = Math.max(1, ...points.map((p) => p.value));
  const x = (i) => pad.l + (points.length <= 1 ? 0 : (i * (width - pad.l - pad.r)) / (points.length - 1));
  const y = (v) => height - pad.b - (v / max) * (height - pad.t - pad.b);
  svg.append(el('line', { x1: pad.l, y1: height - pad.b, x2: width - pad.r, y2: height - pad.b, stroke: '#c3ccd6' }));
  svg.append(el('text', { x: 4, y: pad.t + 10 }, max.toLocaleString()));
  svg.append(el('text', { x: 4, y: height - pad.b }, '0'));
  if (points.length > 0) {
    const line = points.map((p, i) => `${x(i).toFixed(1)},${y(p.value).toFixed(1)}`).join(' ');
    svg.append(el('polygon', { points: `${x(0)},${height - pad.b} ${line} ${x(points.length - 1)},${height - pad.b}`, fill: '#bfd7ef' }));
    svg.append(el('polyline', { points: line, fill: 'none', stroke: '#2b6cb0', 'stroke-width': 2 }));
    svg.append(el('text', { x: pad.l, y: height - 6 }, points[0].label));
    svg.append(el('text', { x: width - pad.r, y: height - 6, 'text-anchor': 'end' }, points[points.length - 1].label));
  }
  return svg;
}

/** Horizontal bars of `items` [{ label, value }], largest first as given. */
export function barChart(items, { width = 720, id } = {}) {
  const row = 22;
  const height = Math.max(row, items.length * row + 4);
  const svg = el('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', ...(id ? { id } : {}) });
  const max = Math.max(1, ...items.map((i) => i.value));
  const labelW = 230;
  items.forEach((it, i) => {
    const y = i * row + 2;
    svg.append(el('text', { x: 0, y: y + 14 }, it.label));
    svg.append(el('rect', { x: labelW, y: y + 3, height: 14, width: Math.max(1, ((width - labelW - 80) * it.value) / max), fill: '#2b6cb0', rx: 3 }));
    svg.append(el('text', { x: width - 4, y: y + 14, 'text-anchor': 'end' }, it.value.toLocaleString()));
  });
  return svg;
}
