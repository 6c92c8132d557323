// /docs in a real browser: Debian's headless Chromium, driven by puppeteer-core, opens the page and
// finds every operation of /openapi.json listed, with no request leaving the server (no CDN).
// Without Chromium the test is skipped with a line that says so; under CI=true it fails instead.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, test } from 'node:test';
import puppeteer, { type Browser } from 'puppeteer-core';
import { forEachStore, portOf, startTestApp, type TestApp } from '../support/apps.ts';

const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'];
const chromium = CANDIDATES.find((p): p is string => p !== undefined && p !== '' && existsSync(p));
if (!chromium) {
  if (process.env.CI === 'true')
    throw new Error('Chromium is required under CI=true (apt-get install chromium), but none was found');
  process.stdout.write(
    '# Chromium not found (apt-get install chromium): the /docs browser test is skipped\n',
  );
}

forEachStore('GET /docs in headless Chromium', (kind) => {
  let t: TestApp;
  let browser: Browser;
  before(async () => {
    if (!chromium) return;
    t = await startTestApp(kind, {
      users: 20,
      config: { adminToken: 'docs-admin-token-0123456789-0123456789' },
    });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await puppeteer.launch({
      executablePath: chromium,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    });
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test('lists every operation of /openapi.json, served with no request to another host', {
    skip: !chromium && 'Chromium not found',
  }, async () => {
    const origin = `http://127.0.0.1:${portOf(t.app)}`;
    const doc = JSON.parse((await t.get('/openapi.json')).body) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const expected = Object.entries(doc.paths)
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    assert.ok(expected.includes('GET /helix/clips') && expected.includes('POST /oauth2/token'));

    const page = await browser.newPage();
    const elsewhere: string[] = [];
    await page.setRequestInterception(true);
    page.on('request', (r) => {
      if (r.url().startsWith(`${origin}/`) || r.url().startsWith('data:')) return void r.continue();
      elsewhere.push(r.url());
      void r.abort();
    });
    await page.goto(`${origin}/docs`, { waitUntil: 'networkidle0' });
    await page.waitForSelector('.opblock', { timeout: 20_000 });
    const listed = await page.$$eval('.opblock', (blocks) =>
      blocks.map(
        (b) =>
          `${b.querySelector('.opblock-summary-method')?.textContent?.trim()} ${b.querySelector('[data-path]')?.getAttribute('data-path')}`,
      ),
    );
    assert.deepEqual([...new Set(listed)].sort(), expected);
    // helixd's page: its title and name, and the operations before the token service, the admin
    // API and the probes.
    assert.equal(await page.title(), 'helixd API');
    const logo = await page.$eval('.topbar-wrapper img', (img) => img.getAttribute('src') ?? '');
    assert.match(Buffer.from(logo.split(',')[1] ?? '', 'base64').toString(), />helixd</);
    assert.match(listed[0] ?? '', /^GET \/helix\//, `the first listed: ${listed[0]}`);
    const first = (re: RegExp) => listed.findIndex((l) => re.test(l));
    assert.ok(first(/ \/oauth2\//) > first(/ \/helix\//), 'the token service after the operations');
    assert.ok(first(/ \/(readyz|healthz|metrics)/) > first(/ \/admin\//), 'the probes last');
    assert.deepEqual(elsewhere, [], 'the page asked for something outside the server');
    await page.close();
  });
});
