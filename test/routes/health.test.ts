import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../src/app.ts';
import { ManualClock } from '../../src/clock.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { openStore } from '../../src/store/db.ts';
import { bearer, forEachStore, startTestApp, TEST_NOW, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';

forEachStore('probes and unknown paths', (kind: StoreKind) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(kind, { empty: true });
  });
  after(() => t.close());

  it('GET /healthz answers 200 while the process is up', async () => {
    const res = await t.get('/healthz');
    assert.equal(res.statusCode, 200);
  });

  it('GET /readyz answers 200 while the store answers, and says what it checked', async () => {
    const res = await t.get('/readyz');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { status: 'ok', checks: { store: 'ok' } });
  });

  it('answers an unknown path with 404 and the Helix body', async () => {
    for (const path of ['/helix/nope', '/mock/nope', '/', '/helix/games/top/extra']) {
      const res = await t.get(path);
      assert.equal(res.statusCode, 404, path);
      assert.deepEqual(res.json(), { error: 'Not Found', status: 404, message: 'Not Found' });
      assert.match(String(res.headers['content-type']), /^application\/json/);
    }
  });
});

describe('a store that cannot be reached', () => {
  it('makes /readyz and the operations answer 503 with the Helix body, not 500', async () => {
    const config = loadConfig({ secret: 'test-secret-0123456789', rateLimit: 0 }, {});
    // Nothing listens on port 1: every connection is refused.
    const store = openStore({ url: 'postgres://postgres@127.0.0.1:1/none', poolSize: 1 });
    const app = await buildApp({
      config,
      store,
      clock: new ManualClock(TEST_NOW),
      secret: 'x'.repeat(16),
      logger: false,
    });
    try {
      const ready = await app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(ready.statusCode, 503);
      assert.equal(ready.json().status, 503);
      const op = await app.inject({
        method: 'GET',
        url: '/helix/games/top',
        headers: { ...bearer('sometoken'), 'client-id': 'someclient' },
      });
      assert.equal(op.statusCode, 503);
      assert.deepEqual(Object.keys(op.json()).sort(), ['error', 'message', 'status']);
      assert.doesNotMatch(op.body, /ECONNREFUSED|127\.0\.0\.1/);
      const health = await app.inject({ method: 'GET', url: '/healthz' });
      assert.equal(health.statusCode, 200);
    } finally {
      await app.close();
      await store.close();
    }
  });
});

describe('a SQLite file deleted under the server', () => {
  const ADMIN = 'health-test-admin-token-0123456789abcdef';
  it('makes /readyz a 503 naming the store and why, and writes a 503', async () => {
    // startTestApp checks these answers against /openapi.json.
    const t = await startTestApp('sqlite', { users: 10, config: { adminToken: ADMIN } });
    try {
      for (const f of ['', '-wal', '-shm']) rmSync(t.storeOptions.url + f, { force: true });
      const res = await t.get('/readyz');
      assert.equal(res.statusCode, 503);
      assert.deepEqual(res.json(), {
        error: 'Service Unavailable',
        status: 503,
        message: 'Not ready: store file was deleted',
        checks: { store: 'file was deleted' },
      });
      const write = await t.inject({
        method: 'POST',
        url: '/admin/batch',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        payload: [{ kind: 'game', data: { id: '990001', name: 'Admin Quest' } }],
      });
      assert.equal(write.statusCode, 503);
      assert.equal(write.json().message, 'The service is temporarily unavailable');
    } finally {
      await t.close();
    }
  });
});

describe('configuration', () => {
  it('rejects bad values with a message naming the flag and the variable', () => {
    assert.throws(
      () => loadConfig({ port: 'eighty' }, {}),
      (e: Error) => e instanceof ConfigError && /HELIXD_PORT \/ --port/.test(e.message),
    );
    assert.throws(() => loadConfig({}, { HELIXD_USER_TOKEN_TTL: '4 hours' }), /is not a duration/);
    assert.throws(() => loadConfig({}, { HELIXD_SECRET: 'short' }), /at least 16 characters/);
    assert.throws(() => loadConfig({}, { HELIXD_NOW: 'yesterday' }), /ISO 8601/);
    assert.throws(() => loadConfig({}, { HELIXD_SITE_URL: 'ftp://x' }), /http\(s\) URL/);
  });

  it('takes flags over HELIXD_* over DATABASE_URL over defaults', () => {
    assert.equal(loadConfig({}, {}).db, './helixd.db');
    assert.equal(loadConfig({}, { DATABASE_URL: 'postgres://a/b' }).db, 'postgres://a/b');
    assert.equal(loadConfig({}, { DATABASE_URL: 'postgres://a/b', HELIXD_DB: 'x.db' }).db, 'x.db');
    assert.equal(loadConfig({ db: 'y.db' }, { HELIXD_DB: 'x.db' }).db, 'y.db');
    assert.equal(loadConfig({}, {}).port, 8080);
    assert.equal(loadConfig({}, { HELIXD_USER_TOKEN_TTL: '15m' }).userTokenTtl, 900);
  });

  it('reads the query deadline in milliseconds or as a duration, default 2 s', () => {
    assert.equal(loadConfig({}, {}).queryTimeout, 2000);
    assert.equal(loadConfig({ queryTimeout: '500ms' }, {}).queryTimeout, 500);
    assert.equal(loadConfig({}, { HELIXD_QUERY_TIMEOUT: '3s' }).queryTimeout, 3000);
    assert.throws(
      () => loadConfig({ queryTimeout: '0ms' }, {}),
      /HELIXD_QUERY_TIMEOUT \/ --query-timeout: must be longer than 0/,
    );
    assert.throws(() => loadConfig({ queryTimeout: 'soon' }, {}), /is not a duration/);
  });
});
