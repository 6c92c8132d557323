// /metrics in Prometheus text format: requests counted by operation (the route pattern, never the
// raw URL) and status, their latency, the store's query times, rate-limit refusals, token-cache
// lookups and the process's own figures; open by default, behind --metrics-token when one is set.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { assertTokenTooShort } from '../support/cli.ts';
import { find, parse, type Sample, value } from '../support/prometheus.ts';
import type { StoreKind } from '../support/stores.ts';

const METRICS_TOKEN = 'metrics-token-0123456789-0123456789';

async function scrape(t: TestApp, headers: Record<string, string> = {}): Promise<Sample[]> {
  const res = await t.get('/metrics', headers);
  assert.equal(res.statusCode, 200, res.body);
  assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  return parse(res.body);
}

const TOP = '/helix/games/top';

forEachStore('/metrics', (kind: StoreKind) => {
  let t: TestApp;
  let samples: Sample[];
  before(async () => {
    // Two points a minute: the third charged request is refused.
    t = await startTestApp(kind, { users: 20, config: { rateLimit: 2 } });
    const token = await t.appToken();
    assert.equal((await t.get(`${TOP}?first=5`, bearer(token))).statusCode, 200);
    assert.equal((await t.get(`${TOP}?first=500`, bearer(token))).statusCode, 400);
    assert.equal((await t.get(`${TOP}?first=5`)).statusCode, 401);
    assert.equal((await t.get(`${TOP}?first=5`, bearer(token))).statusCode, 429);
    assert.equal((await t.get('/no/such/path')).statusCode, 404);
    assert.equal((await t.get('/another/unknown/path?x=1')).statusCode, 404);
    samples = await scrape(t);
  });
  after(() => t.close());

  it('counts requests by method, operation (the route pattern) and status', () => {
    for (const status of ['200', '400', '401', '429'])
      assert.equal(
        value(samples, 'helixd_http_requests_total', { method: 'GET', operation: TOP, status }),
        1,
        `status ${status}`,
      );
    assert.equal(find(samples, 'helixd_http_requests_total', { operation: TOP }).length, 4);
  });

  it('counts requests that match no route under one operation, never their URLs', () => {
    assert.equal(
      value(samples, 'helixd_http_requests_total', { method: 'GET', operation: 'unmatched', status: '404' }),
      2,
    );
    assert.ok(!samples.some((s) => Object.values(s.labels).some((v) => v.includes('unknown/path'))));
  });

  it('has a latency histogram per operation', () => {
    const labels = { method: 'GET', operation: TOP };
    assert.equal(value(samples, 'helixd_http_request_duration_seconds_count', labels), 4);
    assert.equal(value(samples, 'helixd_http_request_duration_seconds_bucket', { ...labels, le: '+Inf' }), 4);
    assert.ok(value(samples, 'helixd_http_request_duration_seconds_sum', labels) > 0);
    assert.ok(find(samples, 'helixd_http_request_duration_seconds_bucket', labels).length > 5);
  });

  it("has the store's query times", () => {
    const labels = { statement: 'select', outcome: 'ok' };
    // At least the page of games and a token lookup.
    assert.ok(value(samples, 'helixd_store_query_duration_seconds_count', labels) >= 2);
    assert.ok(value(samples, 'helixd_store_query_duration_seconds_sum', labels) > 0);
  });

  it('counts rate-limit refusals by bucket kind', () => {
    assert.equal(value(samples, 'helixd_rate_limit_refusals_total', { bucket: 'app' }), 1);
    assert.equal(value(samples, 'helixd_rate_limit_refusals_total', { bucket: 'user' }), 0);
  });

  it('counts token lookups: kept in memory on SQLite, always read from PostgreSQL', () => {
    // Three requests bore the token: the first reads it from the store.
    const hits = value(samples, 'helixd_token_cache_lookups_total', { result: 'hit' });
    const misses = value(samples, 'helixd_token_cache_lookups_total', { result: 'miss' });
    assert.deepEqual({ hits, misses }, kind === 'sqlite' ? { hits: 2, misses: 1 } : { hits: 0, misses: 3 });
  });

  it("has the process's own metrics", () => {
    assert.ok(value(samples, 'process_cpu_user_seconds_total') > 0);
    assert.ok(value(samples, 'process_resident_memory_bytes') > 0);
    assert.ok(find(samples, 'nodejs_eventloop_lag_seconds').length === 1);
    assert.ok(find(samples, 'nodejs_heap_size_used_bytes').length === 1);
  });

  it('counts every answer however many come between two reads', async () => {
    // More than one batch (src/metrics/registry.ts) of answers and of queries.
    for (let i = 0; i < 600; i++) assert.equal((await t.get('/readyz')).statusCode, 200);
    const now = await scrape(t);
    assert.equal(value(now, 'helixd_http_requests_total', { operation: '/readyz', status: '200' }), 600);
    assert.equal(value(now, 'helixd_http_request_duration_seconds_count', { operation: '/readyz' }), 600);
    const selects = (s: Sample[]) =>
      value(s, 'helixd_store_query_duration_seconds_count', { statement: 'select', outcome: 'ok' });
    // Each /readyz's select, and a few of the app's own: the webhook sender's look for due messages
    // (about one a second) and each scrape's count of EventSub subscriptions.
    const more = selects(now) - selects(samples);
    assert.ok(more >= 600 && more <= 620, `${more} selects`);
  });

  it('is open without a metrics token, and in /openapi.json under its own tag as text/plain', async () => {
    const doc = JSON.parse((await t.get('/openapi.json')).body);
    const op = doc.paths['/metrics'].get;
    assert.deepEqual(op.tags, ['Metrics']);
    assert.deepEqual(Object.keys(op.responses), ['200']);
    assert.deepEqual(Object.keys(op.responses['200'].content), ['text/plain']);
    assert.equal(op.security, undefined);
  });
});

forEachStore('/metrics with a metrics token', (kind: StoreKind) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(kind, { users: 20, config: { metricsToken: METRICS_TOKEN } });
  });
  after(() => t.close());

  const refused = async (headers: Record<string, string>, message: string) => {
    const res = await t.get('/metrics', headers);
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), { error: 'Unauthorized', status: 401, message });
  };

  it('refuses a request without the token with a 401 Helix body', async () => {
    await refused({}, 'OAuth token is missing');
    await refused({ authorization: `Basic ${METRICS_TOKEN}` }, 'Invalid OAuth token');
  });

  it('refuses any other token, a Helix token included, with a 401', async () => {
    await refused(bearer(`${METRICS_TOKEN}x`), 'The token is not the metrics token');
    await refused(bearer(await t.appToken()), 'The token is not the metrics token');
  });

  it('answers the metrics token, with counts of this app only', async () => {
    const samples = await scrape(t, bearer(METRICS_TOKEN));
    // The other describe's app shares this process, not its counters.
    assert.equal(find(samples, 'helixd_http_requests_total', { operation: TOP }).length, 0);
    assert.equal(
      value(samples, 'helixd_http_requests_total', { method: 'GET', operation: '/metrics', status: '401' }),
      4,
    );
  });

  it('is described with its bearer scheme in /openapi.json', async () => {
    const doc = JSON.parse((await t.get('/openapi.json')).body);
    const op = doc.paths['/metrics'].get;
    assert.deepEqual(op.security, [{ metrics: [] }]);
    assert.deepEqual(Object.keys(op.responses), ['200', '401']);
    assert.equal(doc.components.securitySchemes.metrics.scheme, 'bearer');
  });
});

it('a metrics token shorter than 32 characters is a configuration error', () =>
  assertTokenTooShort('metricsToken'));
