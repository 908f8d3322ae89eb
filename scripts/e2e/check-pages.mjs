// Opens docs pages in headless Chromium and checks their DOM: every byte is
// one grid cell, hovering a byte selects the deepest tree node covering it and
// marks that node's bytes, hovering a node marks its bytes (nodes of
// decompressed data mark none: their offsets index other bytes), the legend
// names exactly the regions the grids use, every link into a page lands on an
// element, a tree line leads to its field's row; then the search page finds
// fields and leads to them, and the search box of a page's bar reaches it; no
// console errors and no network requests anywhere.
// Usage: node check-pages.mjs SITE_DIR PAGE...
//   SHOTS      folder for element screenshots (optional)
//   DEFS_SITE  a site built with --defs from Kafka 4.0's definitions (optional)
import { chromium } from 'playwright-core';

const [siteDir, ...pages] = process.argv.slice(2);
const shots = process.env.SHOTS;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
});
const failures = [];
const fail = (msg) => failures.push(msg);

const open = async (url, label) => {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.on('console', (m) => { if (m.type() === 'error') fail(`${label}: console error: ${m.text()}`); });
  page.on('pageerror', (e) => fail(`${label}: page error: ${e}`));
  page.on('request', (r) => { if (!r.url().startsWith('file:')) fail(`${label}: network request ${r.url()}`); });
  await page.goto(url);
  return page;
};

const shot = async (locator, name) => {
  if (!shots) return;
  await locator.screenshot({ path: `${shots}/${name}.png` });
  console.log(`screenshot: ${shots}/${name}.png`);
};

for (const path of pages) {
  const page = await open(`file://${siteDir}/${path}`, path);

  const figures = await page.$$eval('figure', (figs) => figs.map((f) => ({
    id: f.id,
    declared: Number((f.querySelector('table.grid caption')?.textContent.match(/\((\d+) bytes/) || [])[1]),
    cells: [...f.querySelectorAll('td[data-offset]')].map((c) => Number(c.dataset.offset)),
  })));
  if (figures.length === 0) fail(`${path}: no figures`);
  let hovers = 0;
  for (const fig of figures) {
    if (fig.cells.length !== fig.declared) fail(`${path} #${fig.id}: ${fig.cells.length} cells for ${fig.declared} bytes`);
    if (fig.cells.some((o, i) => o !== i)) fail(`${path} #${fig.id}: cells out of order`);
    for (const offset of fig.cells) {
      await page.hover(`#${fig.id} td[data-offset="${offset}"]`);
      hovers++;
      // The deepest node covering the byte is the last covering one in pre-order.
      const r = await page.evaluate(({ id, offset }) => {
        const fig = document.getElementById(id);
        const nodes = [...fig.querySelectorAll('.tree .n')].filter((n) => !('d' in n.dataset));
        const covering = nodes.filter((n) => +n.dataset.offset <= offset && offset < +n.dataset.offset + +n.dataset.len);
        const sel = [...document.querySelectorAll('.tree .n.sel')];
        const marked = [...fig.querySelectorAll('td.hi')].map((c) => +c.dataset.offset);
        return { expected: covering.at(-1)?.id, selected: sel.map((n) => n.id), len: sel[0] ? +sel[0].dataset.len : -1, marked: marked.length };
      }, { id: fig.id, offset });
      if (r.selected.length !== 1 || r.selected[0] !== r.expected) {
        fail(`${path} #${fig.id} byte ${offset}: selected ${r.selected} instead of ${r.expected}`);
      } else if (r.marked !== r.len) {
        fail(`${path} #${fig.id} byte ${offset}: ${r.marked} bytes marked for a ${r.len}-byte node`);
      }
    }
    // The reverse: hovering each tree line marks exactly its bytes; a line of
    // decompressed data marks none, as its offsets are not this grid's.
    const lines = await page.$$eval(`#${fig.id} .tree .n`, (ns) => ns.map((n) => ({ id: n.id, offset: +n.dataset.offset, len: +n.dataset.len, d: 'd' in n.dataset })));
    for (const line of lines) {
      await page.hover(`#${line.id}`);
      const marked = await page.$$eval(`#${fig.id} td.hi`, (cs) => cs.map((c) => +c.dataset.offset));
      const want = line.d ? [] : fig.cells.filter((o) => o >= line.offset && o < line.offset + line.len);
      if (marked.join() !== want.join()) fail(`${path} #${line.id}: marked [${marked}] instead of [${want}]`);
    }
  }

  // The legend names the regions whose colours the grids use, in order.
  const legend = await page.evaluate(() => {
    const shown = [...document.querySelectorAll('ul.legend li')].map((l) => l.className);
    const used = new Set([...document.querySelectorAll('table.grid td[class]')].map((c) => c.className.split(' ')[0]));
    return { shown, used: [...used].sort() };
  });
  if ([...legend.shown].sort().join() !== legend.used.join()) fail(`${path}: legend ${legend.shown} for regions ${legend.used}`);

  // Every link to a place on this page lands on an element.
  const dangling = await page.$$eval('a[href^="#"]', (as) => as.map((a) => a.getAttribute('href').slice(1)).filter((id) => !document.getElementById(id)));
  if (dangling.length) fail(`${path}: links to missing ids ${dangling.slice(0, 5)}`);

  // A field's tree line leads to its row of the field table.
  const fieldLink = page.locator('.tree .n a[href^="#req-"], .tree .n a[href^="#resp-"]').first();
  if (await fieldLink.count()) {
    const target = (await fieldLink.getAttribute('href')).slice(1);
    await fieldLink.click();
    const landed = await page.evaluate((id) => {
      const row = document.getElementById(id);
      const box = row?.getBoundingClientRect();
      return { hash: location.hash.slice(1), target: document.querySelector(':target')?.id, visible: !!box && box.bottom > 0 && box.top < innerHeight, top: box?.top, tag: row?.tagName };
    }, target);
    if (landed.hash !== target || landed.target !== target || !landed.visible || landed.tag !== 'TR') fail(`${path}: the tree's link to ${target} landed ${JSON.stringify(landed)}`);
    if (path === 'api/Produce.html') {
      await shot(page.locator(`[id="${target}"]`).locator('xpath=ancestor::table[1]'), 'Produce-field-table');
      await shot(page.locator('figure').nth(1), 'Produce-gzip-figure');
    }
  }
  console.log(`${path}: ${figures.length} figures, ${figures.reduce((n, f) => n + f.cells.length, 0)} cells, ${hovers} bytes hovered`);
  await page.close();
}

// The search page: words in any order and case find the field, and its link leads to the row.
{
  const page = await open(`file://${siteDir}/search.html?q=RECORDS%20produce`, 'search');
  const hits = await page.$$eval('#hits a', (as) => as.map((a) => ({ text: a.textContent, href: a.getAttribute('href') })));
  const want = hits.find((h) => h.text === 'Produce request TopicData.PartitionData.Records');
  if (!want) fail(`search: no Produce Records field among ${hits.map((h) => h.text).slice(0, 10)}`);
  const count = await page.textContent('#count');
  if (!/^\d+ match/.test(count)) fail(`search: count says ${count}`);
  await shot(page.locator('main'), 'search-results');
  if (want) {
    await page.click(`#hits a[href="${want.href}"]`);
    await page.waitForLoadState();
    const at = await page.evaluate(() => ({ url: location.pathname.split('/').slice(-2).join('/') + location.hash, target: document.querySelector(':target')?.tagName }));
    if (at.url !== want.href || at.target !== 'TR') fail(`search: following ${want.href} landed at ${JSON.stringify(at)}`);
    await page.goBack();
  }
  // Typing filters as one types; nothing typed shows nothing.
  await page.fill('#q', 'partitionrecord');
  const first = await page.textContent('#hits li:first-child a');
  if (first !== 'PartitionRecord') fail(`search: typing partitionrecord first shows ${first}`);
  await page.fill('#q', '');
  if (await page.locator('#hits li').count()) fail('search: an empty query shows hits');
  await page.close();
}

// The search box in every page's bar submits to the search page.
{
  const page = await open(`file://${siteDir}/api/Produce.html`, 'bar search');
  await page.fill('nav.top input[name=q]', 'unknown_topic_or');
  await page.press('nav.top input[name=q]', 'Enter');
  await page.waitForURL(/search\.html\?q=unknown_topic_or/);
  await page.waitForSelector('#hits a');
  const first = await page.getAttribute('#hits li:first-child a', 'href');
  if (first !== 'errors.html#error-3') fail(`bar search: unknown_topic_or first links to ${first}`);
  await page.close();
}

// A site built from Kafka 4.0's definitions alone: 4.0's versions, and their descriptions in the field table.
if (process.env.DEFS_SITE) {
  const dir = process.env.DEFS_SITE;
  const page = await open(`file://${dir}/api/Produce.html`, 'defs Produce');
  const versions = await page.$$eval('nav.versions a, nav.versions b', (as) => as.map((a) => a.textContent));
  if (versions.join() !== ['v3', 'v4', 'v5', 'v6', 'v7', 'v8', 'v9', 'v10', 'v11', 'v12'].join()) fail(`defs Produce: versions ${versions}`);
  const table = page.locator('#request table.data').first();
  const head = await table.locator('th').allTextContents();
  if (!head.includes('description')) fail(`defs Produce: table head ${head}`);
  const described = await table.locator('tr[id] td:last-child').allTextContents();
  if (described.filter((d) => d.length > 10).length < 5) fail(`defs Produce: descriptions ${described.slice(0, 5)}`);
  const asks = await page.evaluate(() => document.body.textContent.includes('pass --defs'));
  if (asks) fail('defs Produce: the page asks for --defs');
  await table.scrollIntoViewIfNeeded();
  await shot(table, 'defs-Produce-field-table');
  await page.close();
}

await browser.close();
if (failures.length) {
  console.error(failures.slice(0, 40).join('\n'));
  console.error(`${failures.length} failures`);
  process.exit(1);
}
console.log('DOM checks passed');
