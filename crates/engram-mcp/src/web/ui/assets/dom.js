// DOM helpers. Every piece of memory text reaches the page as a text node: `h` never
// parses HTML, and links pass `safeHref` (http, https, mailto and same-page anchors only).

/** Only these attributes may be set, so no caller can add an event handler or style. */
const ATTRS = new Set(['class', 'id', 'href', 'type', 'value', 'name', 'placeholder', 'for', 'title',
  'role', 'tabindex', 'hidden', 'disabled', 'checked', 'selected', 'min', 'max', 'step', 'rows',
  'width', 'height', 'rel', 'target', 'lang', 'autocomplete', 'maxlength', 'scope']);

/** `h('a', {href: '#/x', class: 'c'}, 'text', child)`; `data-*` and `aria-*` also pass. */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) throw new Error('event handlers are attached with addEventListener');
    if (!(ATTRS.has(k) || k.startsWith('data-') || k.startsWith('aria-'))) throw new Error('attribute ' + k);
    if (k === 'href') {
      const safe = safeHref(String(v));
      if (safe) el.setAttribute('href', safe);
      continue;
    }
    el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** The href when it is safe to follow, else null (javascript:, data:, vbscript:, …). */
export function safeHref(raw) {
  const s = raw.trim();
  if (s.startsWith('#') || s.startsWith('/ui/')) return s;
  try {
    const u = new URL(s);
    if (u.protocol === 'http:' || u.protocol === 'https:' || u.protocol === 'mailto:') return u.href;
  } catch (_) { /* not a URL */ }
  return null;
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** An error the server explained ({error: {field, message}}) or a network failure. */
export class ApiError extends Error {
  constructor(status, field, message) {
    super(message);
    this.status = status;
    this.field = field;
  }
}

async function answer(res) {
  let body = null;
  try { body = await res.json(); } catch (_) { /* not JSON */ }
  if (!res.ok) {
    const e = body && body.error ? body.error : {};
    throw new ApiError(res.status, e.field || null, e.message || ('the server answered ' + res.status));
  }
  return body;
}

export async function getJSON(path, params) {
  const q = params ? '?' + new URLSearchParams(Object.entries(params).filter(([, v]) => v !== '' && v != null)) : '';
  return answer(await fetch('/ui/api/' + path + q, { credentials: 'same-origin' }));
}

/** A state-changing call: JSON body plus the header the server requires of its own page. */
export async function postJSON(path, body) {
  return answer(await fetch('/ui/api/' + path, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', 'X-Engram-UI': '1' },
    body: JSON.stringify(body || {}),
  }));
}

/** Shows an error at the top of the page (and says which field, when the server named it). */
export function showError(e) {
  const box = document.getElementById('error');
  const field = e && e.field ? ' (' + e.field + ')' : '';
  const status = e && e.status ? 'Error ' + e.status + field + ': ' : 'Error: ';
  clear(box, status, e && e.message ? e.message : String(e));
  box.hidden = false;
}

export function hideError() {
  const box = document.getElementById('error');
  box.hidden = true;
  box.replaceChildren();
}

export function fmtNum(x, digits = 2) {
  return typeof x === 'number' ? x.toFixed(digits) : '–';
}

export function fmtTime(s) {
  if (!s) return '–';
  const d = new Date(s);
  return isNaN(d) ? String(s) : d.toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
}

/** A memory's one-line label: its title, else the start of its content. */
export function labelOf(m) {
  const t = (m.title && m.title.trim()) || (m.content || '').split('\n')[0];
  return t.length > 90 ? t.slice(0, 89) + '…' : t;
}

export function memLink(id, text) {
  return h('a', { href: '#/memory/' + id, class: 'mem' }, '#' + id, text ? ' ' + text : '');
}

export function badge(text, cls) {
  return h('span', { class: 'badge ' + (cls || '') }, text);
}

/** A labelled table from rows of cells. */
export function table(headers, rows, caption) {
  return h('table', {},
    caption ? h('caption', {}, caption) : null,
    h('thead', {}, h('tr', {}, headers.map((x) => h('th', { scope: 'col' }, x)))),
    h('tbody', {}, rows.map((r) => h('tr', {}, r.map((c) => h('td', {}, c))))));
}

export function section(title, ...children) {
  return h('section', { class: 'card' }, h('h2', {}, title), ...children);
}
