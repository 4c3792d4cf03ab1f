// The overview, search, graph and sessions-and-work pages. Each takes the main element
// and the route's parameters, fetches from /ui/api/ and builds its content from nodes.

import { h, clear, getJSON, fmtNum, fmtTime, labelOf, memLink, badge, table, section } from './dom.js';
import { barList, activityChart } from './charts.js';
import { drawGraph, KIND_COLORS, LINK_COLORS } from './graph.js';
import { renderMarkdown } from './markdown.js';

const KINDS = Object.keys(KIND_COLORS);

function memoryList(items, extra) {
  if (!items.length) return h('p', { class: 'muted' }, 'none');
  return h('ul', { class: 'list' }, items.map((m) => h('li', {},
    memLink(m.id), ' ', badge(m.kind, 'k-' + m.kind), ' ', labelOf(m), extra ? extra(m) : '')));
}

export async function overview(main) {
  const o = await getJSON('overview');
  const s = o.stats;
  const emb = s.embeddings || {};
  const vs = o.vector_search;
  const maint = o.last_maintenance;
  clear(main,
    h('h1', {}, 'Overview'),
    h('p', { class: 'lead' }, s.total_memories + ' memories, ' + s.event_count + ' events, ' +
      Object.values(s.links_by_kind).reduce((a, b) => a + b, 0) + ' links. Search: ' + s.search +
      '; dynamics: ' + s.dynamics + '.'),
    h('div', { class: 'grid' },
      section('By kind', barList(s.by_kind, 'Memories by kind')),
      section('By tier', barList(s.by_tier, 'Memories by tier')),
      section('By room', barList(s.by_room, 'Memories by room')),
      section('Added and recalled, last 30 days', activityChart(o.activity)),
      section('Strongest', memoryList(o.strongest, (m) => h('span', { class: 'num' }, ' ' + fmtNum(m.activation, 3)))),
      section('Fading', memoryList(o.fading, (m) => h('span', { class: 'num' }, ' ' + fmtNum(m.activation, 3)))),
      section('Pending judgments', o.pending_judgments.length
        ? h('ul', { class: 'list' }, o.pending_judgments.map((j) => h('li', {},
          memLink(j.src), ' ↔ ', memLink(j.dst), ' ', h('span', { class: 'muted' }, j.judgment_id))))
        : h('p', { class: 'muted' }, 'none')),
      section('Reviews due', o.reviews_due.length
        ? h('ul', { class: 'list' }, o.reviews_due.map((r) => h('li', {}, memLink(r.id), ' ', badge(r.kind), ' ', r.excerpt)))
        : h('p', { class: 'muted' }, 'none')),
      section('Model and index', h('dl', {},
        h('dt', {}, 'Model'), h('dd', {}, emb.model || 'none loaded (lexical search)'),
        h('dt', {}, 'Embedded'), h('dd', {}, emb.embedded != null ? String(emb.embedded) : '–'),
        h('dt', {}, 'Vector search'), h('dd', {}, vs ? vs.vectors + ' vectors, ' + vs.index : 'not loaded yet'),
        h('dt', {}, 'Database'), h('dd', {}, s.db_path + ' (' + (s.db_bytes / 1048576).toFixed(1) + ' MiB, schema ' + s.schema_version + ')'))),
      section('Last maintenance', maint
        ? h('dl', {}, h('dt', {}, 'When'), h('dd', {}, fmtTime(o.last_maintenance_at)),
          h('dt', {}, 'Report'), h('dd', {}, h('pre', { class: 'small' }, JSON.stringify(maint, null, 1).slice(0, 1500))))
        : h('p', { class: 'muted' }, 'never run'))));
}

function select(name, label, options, value) {
  return h('label', { class: 'field' }, label, ' ', h('select', { name, id: 'f-' + name },
    options.map(([v, text]) => h('option', { value: v, selected: v === value }, text))));
}

export async function search(main, params) {
  const q = params.get('q') || '';
  const rooms = await getJSON('rooms');
  const form = h('form', { class: 'search', role: 'search' },
    h('label', { for: 'q', class: 'sr' }, 'Search memories'),
    h('input', { id: 'q', name: 'q', type: 'search', value: q, placeholder: 'What do you want to remember?', autocomplete: 'off' }),
    h('button', { type: 'submit' }, 'Search'),
    h('div', { class: 'filters' },
      select('mode', 'Mode', [['fast', 'fast'], ['deep', 'deep'], ['exhaustive', 'exhaustive']], params.get('mode') || 'fast'),
      select('room', 'Room', [['*', 'all rooms'], ...rooms.map((r) => [r.name, r.name])], params.get('room') || '*'),
      select('kind', 'Kind', [['', 'any kind'], ...KINDS.map((k) => [k, k])], params.get('kind') || ''),
      select('tier', 'Tier', [['current', 'current'], ['all', 'superseded too']], params.get('tier') || 'current'),
      h('label', { class: 'field' }, 'As of ', h('input', { name: 'as_of', id: 'f-as_of', type: 'text', placeholder: 'YYYY-MM-DD', value: params.get('as_of') || '' }))));
  const results = h('div', { id: 'results', 'aria-live': 'polite' });
  clear(main, h('h1', {}, 'Search'), form, results);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const p = new URLSearchParams();
    for (const [k, v] of new FormData(form)) if (v) p.set(k, v);
    location.hash = '#/search?' + p;
  });
  if (!q.trim()) {
    form.querySelector('#q').focus();
    return;
  }
  const started = performance.now();
  const r = await getJSON('search', { q, mode: params.get('mode'), room: params.get('room'), kind: params.get('kind'), tier: params.get('tier'), as_of: params.get('as_of') });
  results.dataset.ms = (performance.now() - started).toFixed(1);
  clear(results,
    h('p', { class: 'muted' }, r.hits.length + ' hits (' + r.mode + (r.auto_deepened ? ', deepened automatically' : '') + ', ' + r.candidates + ' candidates' + (r.match && r.match !== 'good' ? ', ' + r.match + ' match' : '') + ')'),
    r.hits.length ? h('ol', { class: 'hits' }, r.hits.map(hit)) : h('p', {}, 'Nothing found. Try deep or exhaustive mode, or all rooms.'));
}

function why(x) {
  if (x.via === 'associative') return ['associative, over ', (x.path || []).map((id, i) => [i ? ' → ' : '', memLink(id)])];
  if (x.via === 'exhaustive') return ['exhaustive scan'];
  return ['direct match'];
}

function hit(x) {
  return h('li', { class: 'hit' },
    h('div', { class: 'hit-head' }, memLink(x.id), ' ', badge(x.kind, 'k-' + x.kind), ' ', badge(x.tier), ' ', badge(x.room, 'room'),
      x.title ? h('strong', {}, ' ' + x.title) : ''),
    h('div', { class: 'md' }, renderMarkdown(x.content.length > 600 ? x.content.slice(0, 600) + '…' : x.content)),
    h('div', { class: 'score' },
      h('span', {}, 'score ', h('b', {}, fmtNum(x.score, 3))),
      h('span', {}, 'relevance ', fmtNum(x.relevance, 3)),
      h('span', {}, 'activation ', fmtNum(x.activation, 3)),
      h('span', {}, 'importance ', fmtNum(x.importance, 2)),
      x.cosine != null ? h('span', {}, 'cosine ', fmtNum(x.cosine, 3)) : null,
      h('span', { class: 'why' }, 'why: ', why(x)),
      x.superseded_by ? h('span', { class: 'succ' }, 'superseded by ', memLink(x.superseded_by)) : null));
}

let running = null;

export async function graph(main, params) {
  if (running) running.stop();
  const room = params.get('room') || '';
  const linkKind = params.get('link') || '';
  const rooms = await getJSON('rooms');
  const g = await getJSON('graph', { room, limit: params.get('limit') || 2000 });
  if (linkKind) g.edges = g.edges.filter((e) => e.kind === linkKind);
  const form = h('form', { class: 'filters' },
    select('room', 'Room', [['', 'all rooms'], ...rooms.map((r) => [r.name, r.name])], room),
    select('link', 'Links', [['', 'every kind'], ...Object.keys(LINK_COLORS).map((k) => [k, k])], linkKind),
    h('button', { type: 'submit' }, 'Show'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const p = new URLSearchParams();
    for (const [k, v] of new FormData(form)) if (v) p.set(k, v);
    location.hash = '#/graph?' + p;
  });
  const canvas = h('canvas', { id: 'graph', class: 'graph', tabindex: '0', role: 'img',
    'aria-label': 'Memory graph: ' + g.nodes.length + ' memories and ' + g.edges.length + ' links. Arrow keys pan, plus and minus zoom, 0 fits, Enter opens the memory nearest the centre.' });
  const legend = h('ul', { class: 'legend' }, KINDS.map((k) => {
    const dot = h('span', { class: 'dot' });
    dot.style.background = KIND_COLORS[k];
    return h('li', {}, dot, k);
  }));
  clear(main, h('h1', {}, 'Graph'), form,
    h('p', { class: 'muted', id: 'graph-count' }, g.nodes.length + ' memories, ' + g.edges.length + ' links' +
      (g.omitted ? ' (' + g.omitted + ' older memories left out)' : '') + '. Drag to pan, scroll to zoom, click to open.'),
    canvas, legend);
  running = drawGraph(canvas, g, (id) => { location.hash = '#/memory/' + id; });
}

export function leaveGraph() {
  if (running) running.stop();
  running = null;
}

export async function work(main, params) {
  const room = params.get('room') || '*';
  const [w, rooms] = await Promise.all([getJSON('work', { room }), getJSON('rooms')]);
  const form = h('form', { class: 'filters' },
    select('room', 'Room', [['*', 'all rooms'], ...rooms.map((r) => [r.name, r.name])], room),
    h('button', { type: 'submit' }, 'Show'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    location.hash = '#/work?room=' + encodeURIComponent(new FormData(form).get('room'));
  });
  const e = w.engineering;
  clear(main, h('h1', {}, 'Sessions and work'), form,
    h('div', { class: 'grid' },
      section('Sessions', w.sessions.length ? table(['Session', 'Room', 'Started', 'Ended', 'Outcome', 'Summary'],
        w.sessions.map((s) => [s.id, s.room, fmtTime(s.started_at), fmtTime(s.ended_at), s.outcome || '–', s.summary || '–']))
        : h('p', { class: 'muted' }, 'none recorded')),
      section('Handoffs', memoryList(w.handoffs, (m) => h('span', { class: 'muted' }, ' ' + fmtTime(m.created_at)))),
      section('Failures by component', barList(e.failures_by_component, 'Failures by component'),
        memoryList(w.failures)),
      section('Progress by feature', e.active_features.length ? table(['Feature', 'Status', 'Done', 'Memory'],
        e.active_features.map((f) => [f.feature, f.status, Math.round(f.completion) + '%', memLink(f.memory_id)]))
        : h('p', { class: 'muted' }, 'no feature in progress')),
      section('The briefing a new session gets', h('p', { class: 'muted' }, w.briefing.bytes + ' of ' + w.briefing.max_bytes + ' bytes' + (w.briefing.truncated ? ', shortened' : '')),
        h('div', { class: 'md briefing' }, renderMarkdown(w.briefing.text)))));
}
