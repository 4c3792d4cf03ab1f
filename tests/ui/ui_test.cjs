// Drives engram's web UI in headless Chromium (Debian's /usr/bin/chromium through
// playwright-core). Run by crates/engram/tests/ui_browser.rs against a built `engram ui`
// serving a temporary store: node ui_test.cjs URL SCREENSHOT_DIR FIXTURE_JSON
// The fixture names the memories the Rust side created. Prints one line per check and
// "N passed, M failed" last; exits 1 on any failure.
'use strict';
const http = require('http');
const path = require('path');
const fs = require('fs');
const { chromium } = require(process.env.ENGRAM_TEST_PLAYWRIGHT || 'playwright-core');

const [url, shots, fixtureRaw] = process.argv.slice(2);
const fx = JSON.parse(fixtureRaw);
const base = url.replace(/\/ui\/?$/, '');
const DEADLINE = 60000;
let passed = 0, failed = 0;
const consoleErrors = [];

function check(name, ok, detail) {
  if (ok) { passed++; console.log('ok   ' + name); } else { failed++; console.log('FAIL ' + name + (detail ? ': ' + detail : '')); }
}

async function open(page, hash, pageName) {
  await page.goto(base + '/ui/' + hash);
  await page.waitForSelector(`main[data-ready="true"][data-page="${pageName}"]`, { timeout: DEADLINE });
}

function watch(page, label) {
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(label + ': ' + m.text()); });
  page.on('pageerror', (e) => consoleErrors.push(label + ': ' + e.message));
}

async function shot(page, name) {
  await page.screenshot({ path: path.join(shots, name + '.png'), fullPage: true });
}

/** A page on another origin (a port of its own) whose form posts to the UI's forget. */
function evilServer(target) {
  const html = `<!doctype html><form id="f" method="post" action="${target}"><input name="x" value="1"></form>`;
  const server = http.createServer((req, res) => { res.setHeader('Content-Type', 'text/html'); res.end(html); });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function tier(page, id) {
  return page.evaluate(async (id) => (await (await fetch('/ui/api/memory/' + id)).json()).detail.memory.tier, id);
}

(async () => {
  const browser = await chromium.launch({
    executablePath: process.env.ENGRAM_TEST_CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run',
      '--disable-component-update', '--disable-sync'],
  });
  try {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await ctx.newPage();
    watch(page, 'desktop');

    await open(page, '#/overview', 'overview');
    const lead = await page.textContent('.lead');
    check('overview counts the memories', lead.includes(fx.total + ' memories'), lead);
    check('overview draws the activity chart', (await page.locator('canvas.chart').count()) >= 1);
    await shot(page, 'overview');

    // The server loads the model in the background: wait for that event, then search.
    await page.waitForFunction(async () => (await (await fetch('/ui/api/overview')).json()).stats.search === 'hybrid',
      null, { timeout: 180000, polling: 250 });
    await open(page, '#/search?q=' + encodeURIComponent(fx.meaning_query), 'search');
    await page.waitForSelector('#results li.hit', { timeout: DEADLINE });
    const first = await page.textContent('#results li.hit');
    check('search finds a memory by meaning', first.includes(fx.meaning_hit), first);
    check('each hit shows its score breakdown and why it came',
      /relevance/.test(first) && /activation/.test(first) && /importance/.test(first) && /why: direct/.test(first), first);
    await shot(page, 'search');

    await page.click(`#results li.hit a[href="#/memory/${fx.meaning_id}"]`);
    await page.waitForSelector(`main[data-ready="true"][data-page="memory"]`, { timeout: DEADLINE });
    await page.waitForSelector('[data-testid="curve"]', { timeout: DEADLINE });
    check('a memory shows its activation curve', true);
    await page.click('button.edit');
    await page.fill('#edit-content', fx.edited_content);
    await page.click('form.edit button.save');
    await page.waitForSelector('#revisions ins', { timeout: DEADLINE });
    const diffText = await page.textContent('#revisions');
    check('an edit is kept as a revision shown as a diff', diffText.includes('update') && (await page.textContent('#revisions ins')).length > 0, diffText);
    check('the edited content shows', (await page.textContent('#content')).includes(fx.edited_content));
    await shot(page, 'memory');

    await page.click('button.forget');
    await page.waitForSelector('button.restore', { timeout: DEADLINE });
    check('forget moves the memory to the trash', (await tier(page, fx.meaning_id)) === 'trash');
    await page.click('button.restore');
    await page.waitForSelector('button.forget', { timeout: DEADLINE });
    check('restore brings it back', (await tier(page, fx.meaning_id)) === 'active');

    await page.click('button.pin');
    await page.waitForSelector('.badge.pin', { timeout: DEADLINE });
    check('pin marks the memory pinned', true);
    await page.click('button.reinforce');
    await page.waitForFunction(() => /reinforce \d/.test(document.body.textContent), null, { timeout: DEADLINE });
    check('reinforce adds a reinforce event', true);

    await open(page, '#/memory/' + fx.superseded_id, 'memory');
    const succ = await page.textContent('#successor');
    check('a superseded memory shows its successor', succ.includes('#' + fx.successor_id), succ);
    check('the chain lists both', (await page.textContent('#chain')).includes('#' + fx.successor_id));
    await open(page, '#/memory/' + fx.successor_id, 'memory');
    check('the successor shows what it replaced', (await page.textContent('#chain')).includes('#' + fx.superseded_id));

    await open(page, '#/graph', 'graph');
    await page.waitForFunction((n) => document.querySelector('#graph') && document.querySelector('#graph').dataset.nodesDrawn === String(n),
      fx.graph_nodes, { timeout: DEADLINE });
    check('the graph draws the expected number of nodes', true);
    await page.waitForFunction(() => document.querySelector('#graph').dataset.settledMs, null, { timeout: DEADLINE });
    await shot(page, 'graph');

    await open(page, '#/work', 'work');
    check('sessions and work shows the briefing', (await page.textContent('.briefing')).length > 0);
    await shot(page, 'work');

    // Untrusted text stays text: on its page and in search results.
    await open(page, '#/memory/' + fx.xss_id, 'memory');
    const content = await page.textContent('#content');
    check('<script> in a memory is shown as text', content.includes('<script>'), content);
    check('onerror= stays text (no img element)', (await page.locator('#content img').count()) === 0 && content.includes('onerror='));
    check('javascript: links are not links', (await page.locator('a[href^="javascript"]').count()) === 0);
    check('raw HTML in Markdown is not parsed', (await page.locator('#content b.raw').count()) === 0 && content.includes('<b class="raw">'));
    await open(page, '#/search?q=' + encodeURIComponent(fx.xss_query) + '&mode=deep', 'search');
    await page.waitForSelector('#results li.hit', { timeout: DEADLINE });
    check('no memory text ever ran a script', (await page.evaluate(() => window.__xss)) === undefined);
    await shot(page, 'xss');

    // Keyboard only, from a fresh load: skip link, the nav, the search box.
    await page.goto('about:blank');
    await open(page, '#/overview', 'overview');
    await page.keyboard.press('Tab');
    check('the first Tab reaches the skip link', (await page.evaluate(() => document.activeElement.className)) === 'skip');
    let reached = false;
    for (let i = 0; i < 8 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate(() => document.activeElement.dataset.page === 'search');
    }
    check('Tab reaches the Search link', reached);
    await page.keyboard.press('Enter');
    await page.waitForSelector('main[data-ready="true"][data-page="search"]', { timeout: DEADLINE });
    await page.keyboard.type(fx.meaning_query);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#results li.hit', { timeout: DEADLINE });
    check('search works by keyboard alone', true);
    await open(page, '#/graph', 'graph');
    await page.focus('#graph');
    await page.keyboard.press('Enter');
    await page.waitForSelector('main[data-ready="true"][data-page="memory"]', { timeout: DEADLINE });
    check('the graph opens a memory by keyboard', true);

    // Phone width: no page scrolls sideways.
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const pp = await phone.newPage();
    watch(pp, 'phone');
    for (const [hash, name] of [['#/overview', 'overview'], ['#/search?q=' + encodeURIComponent(fx.meaning_query), 'search'],
      ['#/memory/' + fx.meaning_id, 'memory'], ['#/graph', 'graph'], ['#/work', 'work']]) {
      await open(pp, hash, name);
      const wide = await pp.evaluate(() => document.documentElement.scrollWidth);
      check('phone width: ' + name + ' fits', wide <= 392, 'scrollWidth ' + wide);
      await shot(pp, 'phone-' + name);
    }

    // Bad parameters: a clear message on the page and a 4xx (a page of its own: the
    // browser logs each 4xx as a console error, which is expected here).
    const bad = await ctx.newPage();
    const statuses = [];
    bad.on('response', (r) => { if (r.url().includes('/ui/api/')) statuses.push(r.status()); });
    for (const [hash, pageName, words] of [
      ['#/memory/999999', 'memory', 'no memory'],
      ['#/memory/not-an-id', 'memory', 'id'],
      ['#/search?q=x&as_of=yesterday-ish', 'search', 'as_of'],
      ['#/search?q=' + 'long '.repeat(1000), 'search', 'query'],
    ]) {
      await open(bad, hash, pageName);
      const msg = await bad.textContent('#error');
      check('bad parameter ' + hash.slice(0, 40) + ' is explained', msg.includes(words) && /Error 4\d\d/.test(msg), msg);
    }
    check('bad parameters answer 4xx, never 5xx', statuses.length > 0 && statuses.every((s) => s < 500), String(statuses));

    // Cross-site: a page on another origin posts a form to forget a memory.
    const target = base + '/ui/api/memory/' + fx.meaning_id + '/forget';
    const evil = await evilServer(target);
    const ev = await ctx.newPage();
    await ev.goto('http://127.0.0.1:' + evil.address().port + '/');
    const [resp] = await Promise.all([ev.waitForNavigation({ timeout: DEADLINE }), ev.evaluate(() => document.getElementById('f').submit())]);
    check('a cross-site form cannot forget a memory', resp.status() === 403 && (await tier(page, fx.meaning_id)) === 'active',
      'status ' + resp.status());
    evil.close();

    check('no console errors on any page', consoleErrors.length === 0, consoleErrors.join(' | '));

    // A server with a token: the browser signs in once, then every page works.
    const signed = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const sp = await signed.newPage();
    const signIn = await sp.goto(fx.token_url);
    check('a token-protected UI asks to sign in', signIn.status() === 401 && (await sp.locator('#token').count()) === 1);
    await sp.fill('#token', 'not-the-token');
    await Promise.all([sp.waitForNavigation(), sp.click('button[type=submit]')]);
    check('a wrong token leads back to the sign-in form', (await sp.locator('#token').count()) === 1);
    await sp.fill('#token', fx.token);
    await Promise.all([sp.waitForNavigation(), sp.click('button[type=submit]')]);
    await sp.waitForSelector('main[data-ready="true"][data-page="overview"]', { timeout: DEADLINE });
    check('the right token opens the UI for the session', (await sp.textContent('.lead')).includes(fx.total + ' memories'));
    const bare = await sp.evaluate(async (u) => (await fetch(u, { credentials: 'omit' })).status, fx.token_url.replace(/\/ui\/?$/, '/ui/api/overview'));
    check('the API without the cookie or token is refused', bare === 401, 'status ' + bare);
  } catch (e) {
    check('the scenario ran to the end', false, (e.stack || String(e)) + '\nconsole: ' + consoleErrors.join(' | '));
  } finally {
    await browser.close();
  }
  console.log(passed + ' passed, ' + failed + ' failed');
  process.exit(failed ? 1 : 0);
})();
