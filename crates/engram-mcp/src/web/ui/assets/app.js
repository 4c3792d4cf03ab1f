// The router: `#/overview`, `#/search?q=…`, `#/memory/42`, `#/graph`, `#/work`. Each page
// renders into <main>; errors from the API show in the banner with the field at fault.

import { clear, h, showError, hideError } from './dom.js';
import { overview, search, graph, leaveGraph, work } from './pages.js';
import { memory } from './memory.js';

async function route() {
  const main = document.getElementById('main');
  const raw = location.hash.replace(/^#\/?/, '') || 'overview';
  const [path, query] = raw.split('?');
  const params = new URLSearchParams(query || '');
  const [page, arg] = path.split('/');
  for (const a of document.querySelectorAll('nav a')) {
    if (a.dataset.page === page) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  if (page !== 'graph') leaveGraph();
  hideError();
  main.dataset.ready = 'false';
  try {
    if (page === 'overview') await overview(main);
    else if (page === 'search') await search(main, params);
    else if (page === 'memory' && arg) await memory(main, decodeURIComponent(arg));
    else if (page === 'graph') await graph(main, params);
    else if (page === 'work') await work(main, params);
    else clear(main, h('h1', {}, 'Not found'), h('p', {}, 'There is no page ' + JSON.stringify(raw) + '.'));
    document.title = 'engram: ' + (page === 'memory' ? '#' + arg : page);
  } catch (e) {
    clear(main, h('h1', {}, 'Could not load this page'), h('p', { class: 'muted' }, 'See the message above.'));
    showError(e);
  }
  main.dataset.ready = 'true';
  main.dataset.page = page;
}

window.addEventListener('hashchange', route);
route();
