// The memory graph on one canvas: nodes coloured by kind and faded by tier and activation,
// links by kind. The layout starts from a spiral per room and relaxes with springs and a
// grid-bucketed repulsion (linear per tick, so 2,000 nodes stay fluid), a few ticks per
// frame. Drag or arrow keys pan, the wheel or +/- zoom, a click or Enter opens a node.

export const KIND_COLORS = {
  preference: '#8e44ad', decision: '#2f5d8a', strategy: '#16a085', progress: '#27ae60',
  handoff: '#d35400', fact: '#34495e', knowledge: '#2980b9', pattern: '#7f8c8d', config: '#95a5a6',
  project: '#c0392b', assumption: '#f39c12', failure: '#e74c3c', bugfix: '#1abc9c', episode: '#b08d57',
};
export const LINK_COLORS = {
  semantic: '#9fb3c8', co_recall: '#e0a458', explicit: '#2f5d8a', derived_from: '#7f8c8d',
  supersedes: '#c0392b', conflicts_with: '#e74c3c', related: '#8aa1b8', compatible: '#27ae60', scoped: '#8e44ad',
};

/** Draws `graph` ({nodes, edges}) into `canvas`; returns a handle with `stop()`. */
export function drawGraph(canvas, graph, onOpen) {
  const ctx = canvas.getContext('2d');
  const nodes = graph.nodes.map((n) => ({ ...n, x: 0, y: 0, vx: 0, vy: 0 }));
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const edges = graph.edges.map((e) => ({ ...e, a: byId.get(e.src), b: byId.get(e.dst) })).filter((e) => e.a && e.b);
  seed(nodes);
  const view = { x: 0, y: 0, k: 1 };
  let ticks = 0, frame = 0, stopped = false;
  const started = performance.now();

  function size() {
    const r = canvas.getBoundingClientRect();
    const ratio = window.devicePixelRatio || 1;
    canvas.width = Math.max(1, r.width * ratio);
    canvas.height = Math.max(1, r.height * ratio);
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    return r;
  }
  let box = size();
  fit();

  function fit() {
    if (!nodes.length) return;
    let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    for (const n of nodes) { x0 = Math.min(x0, n.x); x1 = Math.max(x1, n.x); y0 = Math.min(y0, n.y); y1 = Math.max(y1, n.y); }
    view.k = Math.min(box.width / Math.max(1, x1 - x0 + 40), box.height / Math.max(1, y1 - y0 + 40), 3);
    view.x = box.width / 2 - view.k * (x0 + x1) / 2;
    view.y = box.height / 2 - view.k * (y0 + y1) / 2;
  }

  function draw() {
    ctx.clearRect(0, 0, box.width, box.height);
    ctx.save();
    ctx.translate(view.x, view.y);
    ctx.scale(view.k, view.k);
    ctx.lineWidth = 1 / view.k;
    for (const e of edges) {
      ctx.strokeStyle = LINK_COLORS[e.kind] || '#aaa';
      ctx.globalAlpha = 0.25 + 0.5 * Math.min(1, e.weight);
      ctx.beginPath(); ctx.moveTo(e.a.x, e.a.y); ctx.lineTo(e.b.x, e.b.y); ctx.stroke();
    }
    for (const n of nodes) {
      const fade = n.tier === 'active' ? 0.35 + 0.65 * n.activation : 0.2;
      ctx.globalAlpha = fade;
      ctx.fillStyle = KIND_COLORS[n.kind] || '#555';
      ctx.beginPath(); ctx.arc(n.x, n.y, n === hover ? 7 : 4.5, 0, 2 * Math.PI); ctx.fill();
    }
    ctx.globalAlpha = 1;
    if (hover) {
      ctx.fillStyle = '#1f2d3d';
      ctx.font = 12 / view.k + 'px system-ui, sans-serif';
      ctx.fillText('#' + hover.id + ' ' + hover.label, hover.x + 9 / view.k, hover.y - 6 / view.k);
    }
    ctx.restore();
    frame++;
    if (frame === 1) canvas.dataset.firstDrawMs = (performance.now() - started).toFixed(1);
    canvas.dataset.nodesDrawn = String(nodes.length);
    canvas.dataset.edgesDrawn = String(edges.length);
  }

  function loop() {
    if (stopped) return;
    if (ticks < 240) {
      const t = performance.now();
      while (performance.now() - t < 8 && ticks < 240) { tick(nodes, edges, 1 - ticks / 240); ticks++; }
      if (ticks >= 240) canvas.dataset.settledMs = (performance.now() - started).toFixed(1);
      draw();
    }
    requestAnimationFrame(loop);
  }

  let hover = null;
  const toWorld = (px, py) => [(px - view.x) / view.k, (py - view.y) / view.k];
  function nearest(wx, wy, within) {
    let best = null, bd = within * within;
    for (const n of nodes) {
      const d = (n.x - wx) ** 2 + (n.y - wy) ** 2;
      if (d < bd) { bd = d; best = n; }
    }
    return best;
  }
  let drag = null;
  canvas.addEventListener('pointerdown', (ev) => { drag = { x: ev.clientX, y: ev.clientY, moved: false }; });
  canvas.addEventListener('pointermove', (ev) => {
    const r = canvas.getBoundingClientRect();
    if (drag && ev.buttons) {
      const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 2) drag.moved = true;
      view.x += dx; view.y += dy; drag.x = ev.clientX; drag.y = ev.clientY;
    }
    const [wx, wy] = toWorld(ev.clientX - r.left, ev.clientY - r.top);
    hover = nearest(wx, wy, 10 / view.k);
    canvas.style.cursor = hover ? 'pointer' : 'grab';
    draw();
  });
  canvas.addEventListener('pointerup', (ev) => {
    const r = canvas.getBoundingClientRect();
    if (drag && !drag.moved) {
      const [wx, wy] = toWorld(ev.clientX - r.left, ev.clientY - r.top);
      const n = nearest(wx, wy, 10 / view.k);
      if (n) onOpen(n.id);
    }
    drag = null;
  });
  canvas.addEventListener('wheel', (ev) => {
    ev.preventDefault();
    const r = canvas.getBoundingClientRect();
    zoom(ev.deltaY < 0 ? 1.15 : 1 / 1.15, ev.clientX - r.left, ev.clientY - r.top);
  }, { passive: false });
  canvas.addEventListener('keydown', (ev) => {
    const k = ev.key;
    if (k === 'ArrowLeft') view.x += 40; else if (k === 'ArrowRight') view.x -= 40;
    else if (k === 'ArrowUp') view.y += 40; else if (k === 'ArrowDown') view.y -= 40;
    else if (k === '+' || k === '=') zoom(1.2, box.width / 2, box.height / 2);
    else if (k === '-') zoom(1 / 1.2, box.width / 2, box.height / 2);
    else if (k === '0') fit();
    else if (k === 'Enter') {
      const [wx, wy] = toWorld(box.width / 2, box.height / 2);
      const n = nearest(wx, wy, Infinity);
      if (n) onOpen(n.id);
      return;
    } else return;
    ev.preventDefault();
    const [wx, wy] = toWorld(box.width / 2, box.height / 2);
    hover = nearest(wx, wy, Infinity);
    draw();
  });
  function zoom(f, cx, cy) {
    view.x = cx - (cx - view.x) * f;
    view.y = cy - (cy - view.y) * f;
    view.k *= f;
    draw();
  }
  const onResize = () => { box = size(); draw(); };
  window.addEventListener('resize', onResize);
  draw();
  requestAnimationFrame(loop);
  return { stop() { stopped = true; window.removeEventListener('resize', onResize); } };
}

/** Rooms on a circle, each room's nodes on a sunflower spiral around its centre. */
function seed(nodes) {
  const rooms = [...new Set(nodes.map((n) => n.room))].sort();
  const count = new Map();
  const R = 60 * Math.sqrt(nodes.length);
  rooms.forEach((room, i) => count.set(room, { i, k: 0 }));
  for (const n of nodes) {
    const c = count.get(n.room);
    const a = 2 * Math.PI * c.i / rooms.length;
    const cx = rooms.length > 1 ? R * Math.cos(a) : 0, cy = rooms.length > 1 ? R * Math.sin(a) : 0;
    const r = 14 * Math.sqrt(c.k + 1), t = c.k * 2.39996;
    n.x = cx + r * Math.cos(t);
    n.y = cy + r * Math.sin(t);
    c.k++;
  }
}

/** One relaxation step: springs along links, repulsion within neighbouring grid cells. */
function tick(nodes, edges, alpha) {
  const CELL = 40, grid = new Map();
  for (const n of nodes) {
    const key = Math.floor(n.x / CELL) + ',' + Math.floor(n.y / CELL);
    (grid.get(key) || grid.set(key, []).get(key)).push(n);
  }
  for (const n of nodes) {
    const gx = Math.floor(n.x / CELL), gy = Math.floor(n.y / CELL);
    for (let dx = -1; dx <= 1; dx++) for (let dy = -1; dy <= 1; dy++) {
      const cell = grid.get((gx + dx) + ',' + (gy + dy));
      if (!cell) continue;
      for (const m of cell) {
        if (m === n) continue;
        const ex = n.x - m.x || 0.01, ey = n.y - m.y || 0.01;
        const d2 = ex * ex + ey * ey;
        if (d2 > CELL * CELL) continue;
        const f = 30 / d2;
        n.vx += ex * f; n.vy += ey * f;
      }
    }
  }
  for (const e of edges) {
    const dx = e.b.x - e.a.x, dy = e.b.y - e.a.y;
    const d = Math.sqrt(dx * dx + dy * dy) || 1;
    const f = 0.02 * (d - 30) / d;
    e.a.vx += dx * f; e.a.vy += dy * f;
    e.b.vx -= dx * f; e.b.vy -= dy * f;
  }
  for (const n of nodes) {
    n.x += n.vx * alpha; n.y += n.vy * alpha;
    n.vx *= 0.5; n.vy *= 0.5;
  }
}
