// Opens docs pages in headless Chromium and checks their DOM: every byte is
// one grid cell, hovering a byte selects the deepest tree node covering it and
// marks that node's bytes, hovering a node marks its bytes, no console errors
// and no network requests. Usage: node check-pages.mjs SITE_DIR PAGE...
import { chromium } from 'playwright-core';

const [siteDir, ...pages] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
});
const failures = [];
const fail = (msg) => failures.push(msg);

for (const path of pages) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.on('console', (m) => { if (m.type() === 'error') fail(`${path}: console error: ${m.text()}`); });
  page.on('pageerror', (e) => fail(`${path}: page error: ${e}`));
  page.on('request', (r) => { if (!r.url().startsWith('file:')) fail(`${path}: network request ${r.url()}`); });
  await page.goto(`file://${siteDir}/${path}`);

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
    // The reverse: hovering each tree line marks exactly its bytes.
    const lines = await page.$$eval(`#${fig.id} .tree .n`, (ns) => ns.map((n) => ({ id: n.id, offset: +n.dataset.offset, len: +n.dataset.len })));
    for (const line of lines) {
      await page.hover(`#${line.id}`);
      const marked = await page.$$eval(`#${fig.id} td.hi`, (cs) => cs.map((c) => +c.dataset.offset));
      const want = fig.cells.filter((o) => o >= line.offset && o < line.offset + line.len);
      if (marked.join() !== want.join()) fail(`${path} #${line.id}: marked [${marked}] instead of [${want}]`);
    }
  }
  console.log(`${path}: ${figures.length} figures, ${figures.reduce((n, f) => n + f.cells.length, 0)} cells, ${hovers} bytes hovered`);
  await page.close();
}
await browser.close();
if (failures.length) {
  console.error(failures.slice(0, 40).join('\n'));
  console.error(`${failures.length} failures`);
  process.exit(1);
}
console.log('DOM checks passed');
