// One memory: its content (Markdown, rendered safely), every field, the activation curve,
// events, revisions as word diffs, the supersession chain both ways, links, judgments, and
// the actions (edit, correct, reinforce, pin, forget, restore, judge).

import { h, clear, getJSON, postJSON, fmtNum, fmtTime, memLink, badge, table, section, showError, hideError } from './dom.js';
import { renderMarkdown } from './markdown.js';
import { curveChart } from './charts.js';

const RELATIONS = ['related', 'compatible', 'scoped', 'conflicts_with', 'supersedes', 'not_conflict'];

export async function memory(main, id) {
  const [m, curve] = await Promise.all([getJSON('memory/' + encodeURIComponent(id)), getJSON('memory/' + encodeURIComponent(id) + '/curve')]);
  const d = m.detail, mem = d.memory;
  const name = (i) => {
    const n = m.names[String(i)];
    return n ? [memLink(i), ' ', badge(n.kind, 'k-' + n.kind), ' ', n.label, n.tier !== 'active' ? [' ', badge(n.tier)] : ''] : memLink(i);
  };
  const reload = () => memory(main, mem.id);
  clear(main,
    h('h1', {}, '#' + mem.id + ' ', mem.title || ''),
    h('p', {}, badge(mem.kind, 'k-' + mem.kind), ' ', badge(mem.tier, 'tier'), ' ', badge(mem.room, 'room'), mem.pinned ? [' ', badge('pinned', 'pin')] : '',
      ' ', h('span', { class: 'muted' }, d.tier_reason)),
    d.superseded_by ? h('p', { class: 'succ', id: 'successor' }, 'Superseded by ', name(d.superseded_by)) : null,
    actions(mem, reload),
    h('div', { class: 'grid' },
      section('Content', h('div', { class: 'md', id: 'content' }, renderMarkdown(mem.content))),
      section('Activation', curveChart(curve),
        h('p', {}, 'activation ', h('b', {}, fmtNum(d.activation, 3)), ', strength ', fmtNum(d.strength, 3), ', importance ', fmtNum(mem.importance, 2))),
      section('Fields', h('dl', { class: 'fields' }, Object.entries(mem).filter(([k]) => k !== 'content').flatMap(([k, v]) =>
        [h('dt', {}, k), h('dd', {}, typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v ?? '–'))]),
      h('dt', {}, 'review_after'), h('dd', {}, fmtTime(d.review_after)))),
      section('Supersession chain', chain(m.chain, mem.id, name)),
      section('Revisions', revisions(d.revisions, mem)),
      section('Events', h('p', { class: 'muted' }, Object.entries(d.event_counts).map(([k, n]) => k + ' ' + n).join(', ')),
        table(['When', 'Event', 'Weight', 'Detail'], d.recent_events.map((e) => [fmtTime(e.at), e.kind, fmtNum(e.weight, 2), e.detail || '']))),
      section('Links', d.links.length ? table(['From', 'Kind', 'To', 'Weight'], d.links.map((l) =>
        [l.src === mem.id ? 'this' : name(l.src), l.kind, l.dst === mem.id ? 'this' : name(l.dst), fmtNum(l.weight, 2)])) : h('p', { class: 'muted' }, 'none')),
      section('Judgments', judgments(d.judgments, mem, name, reload))));
}

function chain(c, me, name) {
  if (!c.older.length && !c.newer.length) return h('p', { class: 'muted' }, 'This memory neither replaced nor was replaced by another.');
  const steps = [...c.older.slice().reverse().map((i) => h('li', {}, name(i))), h('li', { class: 'me' }, 'this memory (#' + me + ')'), ...c.newer.map((i) => h('li', {}, name(i)))];
  return h('ol', { class: 'chain', id: 'chain' }, steps);
}

function revisions(revs, mem) {
  if (!revs.length) return h('p', { class: 'muted' }, 'Never revised.');
  const texts = [...revs.map((r) => r.content), mem.content];
  return h('ol', { class: 'revisions', id: 'revisions' }, revs.map((r, i) => h('li', {},
    h('p', { class: 'muted' }, 'Revision ' + r.number + ' → ' + (i + 1 < revs.length ? revs[i + 1].number : 'now') + ': ' + r.reason + ', ' + fmtTime(r.at)),
    h('div', { class: 'diff' }, diff(texts[i], texts[i + 1])))));
}

/** A word-level diff (longest common subsequence; whole texts when too long to compare). */
export function diff(a, b) {
  const x = a.split(/(\s+)/), y = b.split(/(\s+)/);
  if (x.length * y.length > 4e6) return [h('del', {}, a), h('ins', {}, b)];
  const n = x.length, m = y.length;
  const L = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) L[i][j] = x[i] === y[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  const out = [];
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) { out.push(document.createTextNode(x[i])); i++; j++; }
    else if (L[i + 1][j] >= L[i][j + 1]) out.push(h('del', {}, x[i++]));
    else out.push(h('ins', {}, y[j++]));
  }
  while (i < n) out.push(h('del', {}, x[i++]));
  while (j < m) out.push(h('ins', {}, y[j++]));
  return out;
}

function judgments(js, mem, name, reload) {
  if (!js.length) return h('p', { class: 'muted' }, 'none');
  return h('ul', { class: 'list' }, js.map((j) => {
    const other = j.src === mem.id ? j.dst : j.src;
    const li = h('li', {}, name(other), ' ', badge(j.status), j.relation ? ' ' + j.relation : '', j.reason ? h('span', { class: 'muted' }, ' ' + j.reason) : '');
    if (j.status === 'pending') {
      const sel = h('select', { 'aria-label': 'Verdict for ' + j.judgment_id }, RELATIONS.map((r) => h('option', { value: r }, r)));
      const btn = h('button', { type: 'button', class: 'judge' }, 'Judge');
      btn.addEventListener('click', () => act(mem.id, 'judge', { judgment_id: j.judgment_id, relation: sel.value }, reload));
      li.append(' ', sel, ' ', btn);
    }
    return li;
  }));
}

async function act(id, action, body, then) {
  try {
    hideError();
    const r = await postJSON('memory/' + id + '/' + action, body);
    await then(r);
  } catch (e) {
    showError(e);
  }
}

function button(text, cls, onClick) {
  const b = h('button', { type: 'button', class: cls }, text);
  b.addEventListener('click', onClick);
  return b;
}

function actions(mem, reload) {
  const panel = h('div', { class: 'panel', id: 'panel' });
  const bar = h('div', { class: 'actions', role: 'toolbar', 'aria-label': 'Actions' },
    button('Edit', 'edit', () => openEdit(panel, mem, reload)),
    button('Correct', 'correct', () => openCorrect(panel, mem)),
    button('Reinforce', 'reinforce', () => act(mem.id, 'reinforce', {}, reload)),
    button(mem.pinned ? 'Unpin' : 'Pin', 'pin', () => act(mem.id, 'pin', { pinned: !mem.pinned }, reload)),
    mem.tier === 'trash' || mem.tier === 'archived'
      ? button('Restore', 'restore', () => act(mem.id, 'restore', {}, reload))
      : button('Forget', 'forget', () => act(mem.id, 'forget', {}, reload)));
  return h('div', {}, bar, panel);
}

function openEdit(panel, mem, reload) {
  const content = h('textarea', { id: 'edit-content', rows: '6' });
  content.value = mem.content;
  const title = h('input', { id: 'edit-title', type: 'text', value: mem.title || '' });
  const importance = h('input', { id: 'edit-importance', type: 'number', min: '0', max: '1', step: '0.05', value: mem.importance });
  const form = h('form', { class: 'edit' },
    h('label', { for: 'edit-content' }, 'Content (the old text is kept as a revision)'), content,
    h('label', { for: 'edit-title' }, 'Title'), title,
    h('label', { for: 'edit-importance' }, 'Importance (0–1)'), importance,
    h('button', { type: 'submit', class: 'save' }, 'Save'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const body = { content: content.value, importance: Number(importance.value) };
    if (title.value !== (mem.title || '')) body.title = title.value;
    act(mem.id, 'edit', body, reload);
  });
  clear(panel, form);
  content.focus();
}

function openCorrect(panel, mem) {
  const content = h('textarea', { id: 'correct-content', rows: '5' });
  content.value = mem.content;
  const reason = h('input', { id: 'correct-reason', type: 'text', placeholder: 'why the old memory was wrong' });
  const form = h('form', { class: 'edit' },
    h('label', { for: 'correct-content' }, 'Corrected content (a new memory; this one is kept as superseded)'), content,
    h('label', { for: 'correct-reason' }, 'Reason'), reason,
    h('button', { type: 'submit', class: 'save' }, 'Correct'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    act(mem.id, 'correct', { content: content.value, reason: reason.value }, (r) => { location.hash = '#/memory/' + r.new_id; });
  });
  clear(panel, form);
  content.focus();
}
