// Charts drawn by hand on canvas (activity over time, a memory's activation curve) and
// bar lists as plain elements. Each chart also says what it shows in text.

import { h } from './dom.js';

const INK = '#1f2d3d';
const ACCENT = '#2f5d8a';
const SECOND = '#c77d1a';
const GRID = '#d9e0e7';

function canvasFor(width, height, label) {
  const c = h('canvas', { role: 'img', 'aria-label': label, class: 'chart' });
  const ratio = window.devicePixelRatio || 1;
  c.width = width * ratio;
  c.height = height * ratio;
  c.style.width = '100%';
  c.style.maxWidth = width + 'px';
  const ctx = c.getContext('2d');
  ctx.scale(ratio, ratio);
  return [c, ctx];
}

/** Horizontal bars for a `{name: count}` map, largest first. */
export function barList(counts, label) {
  const entries = Object.entries(counts || {}).sort((a, b) => b[1] - a[1]);
  const max = Math.max(1, ...entries.map(([, n]) => n));
  return h('ul', { class: 'bars', 'aria-label': label },
    entries.length ? entries.map(([name, n]) => {
      const bar = h('span', { class: 'bar' });
      bar.style.width = (100 * n / max).toFixed(1) + '%';
      return h('li', {}, h('span', { class: 'bar-name' }, name), h('span', { class: 'bar-track' }, bar), h('span', { class: 'bar-n' }, String(n)));
    }) : h('li', { class: 'muted' }, 'none'));
}

/** Daily memories added and recalls made, as paired columns. */
export function activityChart(days) {
  const W = 640, H = 180, P = 28;
  const [c, ctx] = canvasFor(W, H, 'Memories added and recall hits per day, last ' + days.length + ' days');
  const max = Math.max(1, ...days.map((d) => Math.max(d.created, d.recalls)));
  ctx.strokeStyle = GRID;
  ctx.fillStyle = INK;
  ctx.font = '11px system-ui, sans-serif';
  for (let k = 0; k <= 4; k++) {
    const y = H - P - (H - 2 * P) * k / 4;
    ctx.beginPath(); ctx.moveTo(P, y); ctx.lineTo(W - 8, y); ctx.stroke();
    ctx.fillText(String(Math.round(max * k / 4)), 2, y + 4);
  }
  const step = (W - P - 8) / Math.max(1, days.length);
  days.forEach((d, i) => {
    const x = P + i * step;
    const bh = (n) => (H - 2 * P) * n / max;
    ctx.fillStyle = ACCENT;
    ctx.fillRect(x + 1, H - P - bh(d.created), step / 2 - 1, bh(d.created));
    ctx.fillStyle = SECOND;
    ctx.fillRect(x + step / 2, H - P - bh(d.recalls), step / 2 - 1, bh(d.recalls));
    if (i % 7 === 0 || i === days.length - 1) {
      ctx.fillStyle = INK;
      ctx.fillText(d.day.slice(5), x, H - 8);
    }
  });
  const added = days.reduce((s, d) => s + d.created, 0);
  const recalls = days.reduce((s, d) => s + d.recalls, 0);
  return h('figure', {}, c, h('figcaption', {},
    h('span', { class: 'key key-a' }), ' added (' + added + ')  ',
    h('span', { class: 'key key-b' }), ' recall hits (' + recalls + ')'));
}

/** A memory's activation over time: the past solid, the projection dashed, events marked. */
export function curveChart(curve) {
  const W = 640, H = 200, P = 30;
  const pts = curve.points;
  const [c, ctx] = canvasFor(W, H, 'Activation over time with ' + curve.events.length + ' events and the decay ahead');
  if (!pts.length) return c;
  const t0 = pts[0].at, t1 = pts[pts.length - 1].at;
  const x = (t) => P + (W - P - 10) * (t - t0) / Math.max(1, t1 - t0);
  const y = (a) => H - P - (H - 2 * P) * a;
  ctx.strokeStyle = GRID;
  ctx.fillStyle = INK;
  ctx.font = '11px system-ui, sans-serif';
  for (const a of [0, 0.5, 1]) {
    ctx.beginPath(); ctx.moveTo(P, y(a)); ctx.lineTo(W - 10, y(a)); ctx.stroke();
    ctx.fillText(a.toFixed(1), 4, y(a) + 4);
  }
  const line = (subset, dashed) => {
    if (subset.length < 2) return;
    ctx.setLineDash(dashed ? [5, 4] : []);
    ctx.strokeStyle = ACCENT;
    ctx.lineWidth = 2;
    ctx.beginPath();
    subset.forEach((p, i) => (i ? ctx.lineTo(x(p.at), y(p.activation)) : ctx.moveTo(x(p.at), y(p.activation))));
    ctx.stroke();
  };
  const nowIdx = pts.findIndex((p) => p.projected);
  const past = nowIdx < 0 ? pts : pts.slice(0, nowIdx);
  line(past, false);
  if (nowIdx >= 0) line(pts.slice(Math.max(0, nowIdx - 1)), true);
  ctx.setLineDash([]);
  const now = Date.parse(curve.now);
  ctx.strokeStyle = SECOND;
  ctx.beginPath(); ctx.moveTo(x(now), P - 10); ctx.lineTo(x(now), H - P); ctx.stroke();
  ctx.fillStyle = SECOND;
  ctx.fillText('now', x(now) + 3, P - 2);
  for (const [at, kind] of curve.events) {
    ctx.fillStyle = kind === 'create' ? INK : kind === 'reinforce' ? '#2e7d32' : SECOND;
    ctx.beginPath(); ctx.arc(x(at), H - P + 6, 3.5, 0, 2 * Math.PI); ctx.fill();
  }
  ctx.fillStyle = INK;
  ctx.fillText(new Date(t0).toISOString().slice(0, 10), P, H - 4);
  const end = new Date(t1).toISOString().slice(0, 10);
  ctx.fillText(end, W - 10 - ctx.measureText(end).width, H - 4);
  const current = past.length ? past[past.length - 1].activation : 0;
  const last = pts[pts.length - 1];
  return h('figure', { 'data-testid': 'curve' }, c, h('figcaption', {},
    'Activation now ' + current.toFixed(3) + '; with no further use, ' + last.activation.toFixed(3) +
    ' on ' + end + '. Dots: events (black create, green reinforce, orange other).'));
}
