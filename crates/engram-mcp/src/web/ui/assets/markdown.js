// A small Markdown renderer that builds DOM nodes and never parses HTML: raw HTML in a
// memory stays visible text, and links keep only safe targets (see dom.js `safeHref`).
// Supported: headings, paragraphs, lists, block quotes, fenced code, inline code,
// **bold**, *italic*, [text](url) and bare http(s) URLs.

import { h, safeHref } from './dom.js';

export function renderMarkdown(text) {
  const out = document.createDocumentFragment();
  const lines = String(text || '').replace(/\r\n?/g, '\n').split('\n');
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (/^\s*```/.test(line)) {
      const body = [];
      i++;
      while (i < lines.length && !/^\s*```/.test(lines[i])) body.push(lines[i++]);
      i++;
      out.append(h('pre', {}, h('code', {}, body.join('\n'))));
      continue;
    }
    const head = /^(#{1,6})\s+(.*)$/.exec(line);
    if (head) {
      out.append(h('h' + Math.min(6, head[1].length + 2), { class: 'md-h' }, inline(head[2])));
      i++;
      continue;
    }
    if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const items = [];
      while (i < lines.length && /^\s*([-*+]|\d+[.)])\s+/.test(lines[i])) {
        items.push(h('li', {}, inline(lines[i].replace(/^\s*([-*+]|\d+[.)])\s+/, ''))));
        i++;
      }
      out.append(h(ordered ? 'ol' : 'ul', {}, items));
      continue;
    }
    if (/^\s*>/.test(line)) {
      const body = [];
      while (i < lines.length && /^\s*>/.test(lines[i])) body.push(lines[i++].replace(/^\s*>\s?/, ''));
      out.append(h('blockquote', {}, renderMarkdown(body.join('\n'))));
      continue;
    }
    if (!line.trim()) {
      i++;
      continue;
    }
    const para = [];
    while (i < lines.length && lines[i].trim() && !/^(#{1,6}\s|\s*```|\s*>|\s*([-*+]|\d+[.)])\s)/.test(lines[i])) {
      para.push(lines[i++]);
    }
    const p = h('p', {});
    para.forEach((l, n) => {
      if (n) p.append(h('br', {}));
      p.append(inline(l));
    });
    out.append(p);
  }
  return out;
}

const INLINE = /(`[^`]+`)|(\*\*[^*]+\*\*)|(\*[^*\s][^*]*\*)|(\[[^\]]*\]\([^)\s]*\))|(https?:\/\/[^\s<>()]+)/;

/** Inline spans as nodes; anything not recognised is text. */
export function inline(s) {
  const frag = document.createDocumentFragment();
  let rest = String(s);
  while (rest) {
    const m = INLINE.exec(rest);
    if (!m) {
      frag.append(document.createTextNode(rest));
      break;
    }
    if (m.index) frag.append(document.createTextNode(rest.slice(0, m.index)));
    const tok = m[0];
    if (m[1]) frag.append(h('code', {}, tok.slice(1, -1)));
    else if (m[2]) frag.append(h('strong', {}, inline(tok.slice(2, -2))));
    else if (m[3]) frag.append(h('em', {}, inline(tok.slice(1, -1))));
    else if (m[4]) {
      const [, label, url] = /^\[([^\]]*)\]\(([^)\s]*)\)$/.exec(tok);
      frag.append(link(label, url, tok));
    } else frag.append(link(tok, tok, tok));
    rest = rest.slice(m.index + tok.length);
  }
  return frag;
}

function link(label, url, raw) {
  const href = safeHref(url);
  if (!href || href.startsWith('#') || href.startsWith('/')) return document.createTextNode(raw);
  return h('a', { href, rel: 'noopener noreferrer nofollow', target: '_blank' }, label || url);
}
