// /metrics under `helixd serve --workers 2`, through the real program, on both stores: whichever
// worker answers, it reports the sum over both (its primary gathers every worker's figures), behind
// --metrics-token as with one process; a primary that cannot answer makes it a 503, never a hang.
import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import { after, before, it } from 'node:test';
import { forEachStore } from '../support/apps.ts';
import { request } from '../support/http.ts';
import { find, parse, type Sample, value } from '../support/prometheus.ts';
import type { StoreKind } from '../support/stores.ts';
import { pidsOf, serveOnTempStore } from './served.ts';

const METRICS_TOKEN = 'metrics-token-0123456789-0123456789';
const AUTH = { authorization: `Bearer ${METRICS_TOKEN}` };
/** Requests counted, each on a connection of its own: the primary hands each to the next worker. */
const K = 10;
/** Scrapes, each on a connection of its own, so that both workers answer some. */
const SCRAPES = 4;

const sum = (samples: Sample[], name: string, labels: Record<string, string>) =>
  find(samples, name, labels).reduce((total, s) => total + s.value, 0);

forEachStore('/metrics under serve --workers 2', (kind: StoreKind) => {
  let s: Awaited<ReturnType<typeof serveOnTempStore>>;

  before(async () => {
    s = await serveOnTempStore(
      kind,
      ['--workers', '2', '--drain', '0s', '--metrics-token', METRICS_TOKEN, '--query-timeout', '2s'],
      2,
    );
  });
  after(() => s?.stop());

  it('reports the requests of both workers, summed, whichever worker answers', async () => {
    const answers = await Promise.all(
      Array.from({ length: K }, (_, i) =>
        request(s.port, '/healthz', { headers: { 'x-request-id': `k${i}` } }),
      ),
    );
    for (const a of answers) assert.equal(a.status, 200);
    const counted = await pidsOf(s, /^k\d+$/, K);
    assert.equal(new Set(counted.values()).size, 2, 'both workers answered some of the requests');

    for (let i = 0; i < SCRAPES; i++) {
      const a = await request(s.port, '/metrics', { headers: { ...AUTH, 'x-request-id': `scrape${i}` } });
      assert.equal(a.status, 200, a.body);
      assert.match(String(a.headers['content-type']), /^text\/plain; version=0\.0\.4/);
      const samples = parse(a.body);
      const healthz = { method: 'GET', operation: '/healthz', status: '200' };
      assert.equal(value(samples, 'helixd_http_requests_total', healthz), K, `scrape ${i}`);
      assert.equal(
        value(samples, 'helixd_http_request_duration_seconds_count', { operation: '/healthz' }),
        K,
      );
      // The scrapes before this one, by both workers, are counted too.
      assert.equal(sum(samples, 'helixd_http_requests_total', { operation: '/metrics', status: '200' }), i);
      // The process's figures, one sample each under prom-client's rule (summed, averaged, ...).
      assert.equal(find(samples, 'process_resident_memory_bytes').length, 1);
      assert.ok(value(samples, 'process_resident_memory_bytes') > 0);
      assert.equal(find(samples, 'nodejs_version_info').length, 1);
    }
    const scrapers = await pidsOf(s, /^scrape\d+$/, SCRAPES);
    assert.deepEqual([...new Set(scrapers.values())].sort(), [...s.workerPids].sort());
  });

  it('asks for the metrics token on every worker', async () => {
    for (let i = 0; i < 2; i++) {
      const a = await request(s.port, '/metrics');
      assert.equal(a.status, 401, a.body);
      assert.deepEqual(JSON.parse(a.body), {
        error: 'Unauthorized',
        status: 401,
        message: 'OAuth token is missing',
      });
    }
  });

  it('documents the 503 of a primary that does not answer in /openapi.json', async () => {
    const doc = JSON.parse((await request(s.port, '/openapi.json')).body);
    assert.deepEqual(Object.keys(doc.paths['/metrics'].get.responses), ['200', '401', '503']);
  });

  it('answers 503 with the Helix body, not a hang, when the primary does not answer in time', async () => {
    // One connection, already handed to a worker: it keeps serving while the primary is stopped.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      assert.equal((await request(s.port, '/healthz', { agent })).status, 200);
      s.child.kill('SIGSTOP');
      let stalled: Awaited<ReturnType<typeof request>>;
      try {
        stalled = await request(s.port, '/metrics', {
          agent,
          headers: { ...AUTH, 'x-request-id': 'stalled' },
        });
      } finally {
        s.child.kill('SIGCONT');
      }
      assert.equal(stalled.status, 503, stalled.body);
      assert.deepEqual(JSON.parse(stalled.body), {
        error: 'Service Unavailable',
        status: 503,
        message: 'The service is temporarily unavailable',
      });
      await s.waitFor(/primary unavailable: did not answer within 2000 ms/, 10_000);
      // The primary answers again once it runs.
      const again = await request(s.port, '/metrics', { agent, headers: AUTH });
      assert.equal(again.status, 200, again.body);
    } finally {
      agent.destroy();
    }
  });
});
