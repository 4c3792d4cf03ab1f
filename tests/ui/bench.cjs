// Measures the web UI in headless Chromium (a benchmark, never a test): page load of the
// overview, search-to-results, and the graph's first draw and settled layout.
// node bench.cjs URL RUNS QUERY...  → one JSON object on stdout (milliseconds, medians).
'use strict';
const { chromium } = require(process.env.ENGRAM_TEST_PLAYWRIGHT || 'playwright-core');

const [url, runsRaw, ...queries] = process.argv.slice(2);
const runs = Number(runsRaw) || 5;
const base = url.replace(/\/ui\/?$/, '');
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };

(async () => {
  const browser = await chromium.launch({
    executablePath: process.env.ENGRAM_TEST_CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run',
      '--disable-component-update', '--disable-sync'],
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const load = [], search = [], first = [], settled = [];
  let nodes = 0;
  for (let i = 0; i < runs; i++) {
    await page.goto('about:blank');
    const t = Date.now();
    await page.goto(base + '/ui/#/overview');
    await page.waitForSelector('main[data-ready="true"][data-page="overview"]', { timeout: 120000 });
    load.push(Date.now() - t);
  }
  for (let i = 0; i < runs; i++) {
    for (const q of queries) {
      await page.goto(base + '/ui/#/search');
      await page.waitForSelector('main[data-ready="true"][data-page="search"]');
      await page.fill('#q', q);
      const t = Date.now();
      await page.press('#q', 'Enter');
      await page.waitForSelector('#results p.muted', { timeout: 120000 });
      search.push(Date.now() - t);
    }
  }
  for (let i = 0; i < runs; i++) {
    await page.goto('about:blank');
    const t = Date.now();
    await page.goto(base + '/ui/#/graph');
    await page.waitForFunction(() => { const c = document.querySelector('#graph'); return c && c.dataset.firstDrawMs; }, null, { timeout: 120000 });
    const shown = Date.now() - t;
    await page.waitForFunction(() => document.querySelector('#graph').dataset.settledMs, null, { timeout: 120000 });
    const d = await page.evaluate(() => ({ ...document.querySelector('#graph').dataset }));
    first.push(shown);
    settled.push(Number(d.settledMs));
    nodes = Number(d.nodesDrawn);
  }
  console.log(JSON.stringify({
    runs,
    overview_load_ms: median(load),
    search_to_results_ms: median(search),
    graph_nodes: nodes,
    graph_first_draw_from_navigation_ms: median(first),
    graph_layout_settled_ms: median(settled),
  }));
  await browser.close();
})().catch((e) => { console.error(e); process.exit(1); });
