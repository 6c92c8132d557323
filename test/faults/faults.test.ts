// Faults on demand (src/faults/injector.ts) through HTTP: each kind by the Helixd-Fault header, the
// 429 shaped as a real rate-limit refusal, the --faults rules replayed by --fault-seed, the routes
// that never fail, /metrics and the log line, and the production profile refusing all of it.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { PassThrough } from 'node:stream';
import { after, before, beforeEach, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { bearer, forEachStore, portOf, startTestApp, type TestApp } from '../support/apps.ts';
import { assertRefusedInProduction, PRODUCTION } from '../support/cli.ts';
import { parse, value } from '../support/prometheus.ts';
import type { StoreKind } from '../support/stores.ts';

const LIMIT = 3;
const ADMIN_TOKEN = 'a'.repeat(32);
const fault = (v: string) => ({ 'helixd-fault': v });

forEachStore('faults on demand', (kind: StoreKind) => {
  let t: TestApp;
  let token: string;
  const logs = new PassThrough();
  let logText = '';
  logs.on('data', (c) => {
    logText += String(c);
  });
  const games = (headers: Record<string, string> = {}, prefix = '/helix') =>
    t.get(`${prefix}/games/top?first=1`, { ...bearer(token), ...headers });
  const faultCount = async (k: string, source = 'header') =>
    value(parse((await t.get('/metrics')).body), 'helixd_faults_injected_total', { kind: k, source });

  before(async () => {
    t = await startTestApp(kind, {
      users: 10,
      logs,
      config: { rateLimit: LIMIT, adminToken: ADMIN_TOKEN },
    });
    token = await t.appToken();
  });
  after(() => t.close());
  // Every bucket is full again: only the 429 test empties one.
  beforeEach(() => t.clock.advance(60_000));

  it('answers status=503 with the Helix body of a dependency that cannot serve, under /helix and /mock', async () => {
    const before = await faultCount('503');
    for (const prefix of ['/helix', '/mock']) {
      const res = await games(fault('status=503'), prefix);
      assert.equal(res.statusCode, 503);
      assert.deepEqual(res.json(), {
        error: 'Service Unavailable',
        status: 503,
        message: 'The service is temporarily unavailable',
      });
    }
    assert.equal(await faultCount('503'), before + 2);
    // Without the header the same request is served.
    assert.equal((await games()).statusCode, 200);
  });

  it('answers status=429 exactly as a real rate-limit refusal: body and Ratelimit-* headers', async () => {
    // A fresh bucket emptied for real, at the same (pinned) instant as the injected one.
    const other = await t.appToken();
    let real = await games({ ...bearer(other) });
    while (real.statusCode === 200) real = await games({ ...bearer(other) });
    assert.equal(real.statusCode, 429);
    const injected = await games(fault('status=429'));
    assert.equal(injected.statusCode, 429);
    assert.equal(injected.body, real.body);
    const limits = (r: typeof real) =>
      ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'content-type'].map((h) => r.headers[h]);
    assert.deepEqual(limits(injected), limits(real));
    assert.deepEqual(limits(injected).slice(0, 2), [String(LIMIT), '0']);
    // Not a refusal of the bucket: the rate limiter's own counter stays where it was.
    const samples = parse((await t.get('/metrics')).body);
    assert.equal(value(samples, 'helixd_rate_limit_refusals_total', { bucket: 'app' }), 1);
  });

  it('status=429 with ratelimit-reset=<duration>: the same refusal, its bucket full again that soon', async () => {
    const real = await games(fault('status=429'));
    assert.equal(real.statusCode, 429);
    const minuteAway = Number(real.headers['ratelimit-reset']);
    assert.equal(minuteAway, Math.ceil((t.clock.now() + 60_000) / 1000), 'a minute from now by default');
    const waits: [string, number][] = [
      ['2s', 2000],
      ['500ms', 500],
      ['0s', 0],
      ['60s', 60_000],
    ];
    for (const [text, ms] of waits) {
      const soon = await games(fault(`status=429, ratelimit-reset=${text}`));
      assert.equal(soon.statusCode, 429, text);
      assert.equal(soon.body, real.body);
      for (const h of ['ratelimit-limit', 'ratelimit-remaining', 'content-type'])
        assert.equal(soon.headers[h], real.headers[h], h);
      assert.equal(Number(soon.headers['ratelimit-reset']), Math.ceil((t.clock.now() + ms) / 1000), text);
    }
    // The order of the items does not matter, and a latency goes with it.
    const both = await games(fault('ratelimit-reset=1s, latency=1ms, status=429'));
    assert.equal(both.statusCode, 429);
    assert.equal(Number(both.headers['ratelimit-reset']), Math.ceil((t.clock.now() + 1000) / 1000));
  });

  it('answers status=500 with the Helix body of an unexpected failure', async () => {
    const res = await games(fault('status=500'));
    assert.equal(res.statusCode, 500);
    assert.deepEqual(res.json(), {
      error: 'Internal Server Error',
      status: 500,
      message: 'Internal Server Error',
    });
  });

  it('fails the token service with its own error body', async () => {
    const res = await t.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { ...fault('status=503'), 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'grant_type=client_credentials&client_id=x&client_secret=y',
    });
    assert.equal(res.statusCode, 503);
    assert.deepEqual(res.json(), { status: 503, message: 'The service is temporarily unavailable' });
  });

  it('delays latency=300ms by at least that long, then serves the request', async () => {
    const before = await faultCount('latency');
    const start = performance.now();
    const res = await games(fault('latency=300ms'));
    assert.ok(performance.now() - start >= 300, 'answered before the latency had passed');
    assert.equal(res.statusCode, 200);
    const both = await games(fault('latency=50ms, status=503'));
    assert.equal(both.statusCode, 503);
    assert.equal(await faultCount('latency'), before + 2);
  });

  it('drops the connection on reset: the client gets a socket error, no answer', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const before = await faultCount('reset');
    const err = await new Promise<NodeJS.ErrnoException>((resolve, reject) => {
      const req = request(
        {
          port: portOf(t.app),
          host: '127.0.0.1',
          path: '/helix/games/top',
          headers: { ...bearer(token), 'client-id': t.seed?.demoClientId, ...fault('reset') },
        },
        (res) => reject(new Error(`answered ${res.statusCode}`)),
      );
      req.on('error', resolve);
      req.end();
    });
    assert.ok(
      ['ECONNRESET', 'EPIPE'].includes(err.code as string) || /socket hang up/.test(err.message),
      err.message,
    );
    assert.equal(await faultCount('reset'), before + 1);
    assert.match(
      logText,
      /"route":"\/helix\/games\/top","url":"\/helix\/games\/top","injectedFault":"reset","faultSource":"header","msg":"connection reset \(injected fault\)"/,
    );
  });

  it('answers a malformed header with a 400 naming the header and the rule', async () => {
    const cases: [string, RegExp][] = [
      ['status=404', /"404" is not a status it can inject \(429, 500, 503\)/],
      ['latency=fast', /latency "fast" must be a duration from 1ms to 30s/],
      ['latency=31s', /latency "31s" must be a duration/],
      ['status=503, reset', /at most one latency, and one status or reset/],
      [
        'status=503;latency=1s',
        /is not a fault: each is status=<429\|500\|503>, latency=<duration>, reset or \(with status=429, once\) ratelimit-reset=<duration>, separated by commas/,
      ],
      ['status=429, ratelimit-reset=61s', /ratelimit-reset "61s" must be a duration from 0s to 60s/],
      ['status=429, ratelimit-reset=1m', /ratelimit-reset "1m" must be a duration from 0s to 60s/],
      ['status=503, ratelimit-reset=1s', /"ratelimit-reset=1s" goes with status=429 only/],
      ['ratelimit-reset=1s', /"ratelimit-reset=1s" goes with status=429 only/],
      ['status=429, ratelimit-reset=1s, ratelimit-reset=2s', /"ratelimit-reset=2s" is not a fault/],
      ['status=503,,reset', /an empty item/],
      ['', /an empty item/],
    ];
    for (const [header, rule] of cases) {
      const res = await games(fault(header));
      assert.equal(res.statusCode, 400, header);
      const body = res.json();
      assert.equal(body.error, 'Bad Request');
      assert.match(body.message, /^The header "Helixd-Fault" was malformed: /, header);
      assert.match(body.message, rule, header);
    }
  });

  it('never fails /healthz, /readyz, /metrics or the admin API', async () => {
    const headers = fault('status=503');
    assert.equal((await t.get('/healthz', headers)).statusCode, 200);
    assert.equal((await t.get('/readyz', headers)).statusCode, 200);
    assert.equal((await t.get('/metrics', headers)).statusCode, 200);
    const admin = await t.get('/admin/users?first=1', { ...headers, authorization: `Bearer ${ADMIN_TOKEN}` });
    assert.equal(admin.statusCode, 200);
  });

  it('names an injected fault in the request log line', async () => {
    logText = '';
    await games(fault('status=503'));
    const line = logText
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((l) => l.msg === 'request completed' || l.msg === 'request errored');
    assert.equal(line?.statusCode, 503);
    assert.equal(line?.injectedFault, 'status=503');
    assert.equal(line?.faultSource, 'header');
  });

  it('--faults with --fault-seed: the same seed and requests give the same faults', async () => {
    const statuses = async (seed: number) => {
      const app = await startTestApp(kind, {
        users: 10,
        config: { faults: '503:30%, 429:20%, 500:5%', faultSeed: seed },
      });
      try {
        const tok = await app.appToken();
        const out: number[] = [];
        for (let i = 0; i < 40; i++)
          out.push((await app.get('/helix/games/top?first=1', bearer(tok))).statusCode);
        const samples = parse((await app.get('/metrics')).body);
        const counted = ['503', '429', '500'].map((k) =>
          value(samples, 'helixd_faults_injected_total', { kind: k, source: 'rules' }),
        );
        assert.deepEqual(
          counted,
          [503, 429, 500].map((s) => out.filter((x) => x === s).length),
          'every injected fault is counted',
        );
        return out;
      } finally {
        await app.close();
      }
    };
    const first = await statuses(7);
    assert.deepEqual(await statuses(7), first);
    for (const s of [200, 503, 429]) assert.ok(first.includes(s), `${s} in ${first}`);
    assert.notDeepEqual(await statuses(8), first, 'another seed, other faults');
  });

  it('the admin API reads, sets (replayable by its seed) and removes the rules at run time', async () => {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const put = (payload: unknown) =>
      t.inject({ method: 'PUT', url: '/admin/faults', headers: admin, payload: payload as object });
    assert.deepEqual((await t.get('/admin/faults', admin)).json(), { faults: '', seed: null });
    try {
      const set = await put({ faults: '503:50%, latency:1ms:10%@someclient', seed: 9 });
      assert.equal(set.statusCode, 200);
      assert.deepEqual(set.json(), { faults: '503:50%, latency:1ms:10%@someclient', seed: 9 });
      assert.deepEqual((await t.get('/admin/faults', admin)).json(), set.json());
      const run = async () => {
        const out: number[] = [];
        for (let i = 0; i < 12; i++) {
          t.clock.advance(60_000); // a full bucket: only the faults may refuse
          out.push((await games()).statusCode);
        }
        return out;
      };
      const before = await faultCount('503', 'rules');
      const first = await run();
      assert.ok(first.includes(503) && first.includes(200), String(first));
      assert.equal(await faultCount('503', 'rules'), before + first.filter((x) => x === 503).length);
      assert.equal((await put({ faults: '503:50%, latency:1ms:10%@someclient', seed: 9 })).statusCode, 200);
      assert.deepEqual(await run(), first, 'the same seed replays the same faults');
      const bad: [unknown, RegExp][] = [
        [{ faults: '503:2' }, /^faults: "503:2": the share "2" must be a percentage/],
        [
          { faults: '429:ratelimit-reset=90s:5%' },
          /^faults: ratelimit-reset "90s" must be a duration from 0s to 60s/,
        ],
        [{ faults: '503:ratelimit-reset=1s:5%' }, /^faults: "503:ratelimit-reset=1s:5%" is not a rule/],
        [{ faults: 503 }, /^faults: must be a string of rules/],
        [{ faults: '503:2%', seed: -1 }, /^seed: must be a whole number from 0 to 2147483647/],
        [{ faults: '503:2%', extra: 1 }, /^body: "extra" is not a field \(faults, seed\)/],
      ];
      for (const [payload, rule] of bad) {
        const res = await put(payload);
        assert.equal(res.statusCode, 400, JSON.stringify(payload));
        assert.match(res.json().message, rule);
      }
    } finally {
      const removed = await t.inject({ method: 'DELETE', url: '/admin/faults', headers: admin });
      assert.equal(removed.statusCode, 204);
    }
    assert.deepEqual((await t.get('/admin/faults', admin)).json(), { faults: '', seed: null });
    for (let i = 0; i < LIMIT; i++) assert.equal((await games()).statusCode, 200);
  });

  // The "Retry on 429" recipe (examples/retry-on-429.mjs, docs/recipes.md): fetch sends the admin headers, Content-Type included, on
  // the DELETE too, with no body; a refusal there would leave the rules on for every later run.
  it('DELETE /admin/faults as fetch sends it (Content-Type: application/json, no body) removes the rules', async () => {
    if (!t.app.server.listening) await t.app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${portOf(t.app)}/admin/faults`;
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
    const set = await fetch(url, {
      method: 'PUT',
      headers: admin,
      body: JSON.stringify({ faults: '503:100%' }),
    });
    assert.equal(set.status, 200, await set.text());
    try {
      const removed = await fetch(url, { method: 'DELETE', headers: admin });
      assert.equal(removed.status, 204, await removed.text());
      assert.deepEqual(await (await fetch(url, { headers: admin })).json(), { faults: '', seed: null });
      assert.equal((await games()).statusCode, 200);
    } finally {
      await t.inject({
        method: 'DELETE',
        url: '/admin/faults',
        headers: { authorization: admin.authorization },
      });
    }
  });

  it('a 429 rule with ratelimit-reset=<duration> names that wait in every refusal it draws', async () => {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const set = await t.inject({
      method: 'PUT',
      url: '/admin/faults',
      headers: admin,
      payload: { faults: '429:ratelimit-reset=1s:100%, 503:100%', seed: 3 },
    });
    try {
      assert.equal(set.statusCode, 200, set.body);
      // Read back in --faults syntax, which PUT takes again.
      assert.equal(set.json().faults, '429:ratelimit-reset=1000ms:100%, 503:100%');
      for (let i = 0; i < 3; i++) {
        const res = await games();
        assert.equal(res.statusCode, 429, 'the first status drawn wins');
        assert.equal(res.headers['ratelimit-remaining'], '0');
        assert.equal(Number(res.headers['ratelimit-reset']), Math.ceil((t.clock.now() + 1000) / 1000));
      }
      logText = '';
      await games();
      assert.match(logText, /"injectedFault":"status=429, ratelimit-reset=1000ms","faultSource":"rules"/);
    } finally {
      await t.inject({ method: 'DELETE', url: '/admin/faults', headers: admin });
    }
  });

  it('--faults rules scoped @<client id> fail only that client, named by Client-Id or client_id', async () => {
    const app = await startTestApp(kind, {
      users: 10,
      config: { faults: '429:100%@faultyclient, 503:100%@nobody', faultSeed: 1 },
    });
    try {
      const op = (clientId: string) =>
        app.get('/helix/games/top', { authorization: 'Bearer nosuchtoken000', 'client-id': clientId });
      const refused = await op('faultyclient');
      assert.equal(refused.statusCode, 429);
      assert.equal(refused.headers['ratelimit-remaining'], '0');
      assert.equal((await op('anotherclient')).statusCode, 401, 'not a fault: the unknown token');
      const token = (clientId: string) =>
        app.inject({
          method: 'POST',
          url: `/oauth2/token?client_id=${clientId}&client_secret=x&grant_type=client_credentials`,
        });
      assert.equal((await token('faultyclient')).statusCode, 429);
      assert.notEqual((await token('anotherclient')).statusCode, 429);
    } finally {
      await app.close();
    }
  });
});

forEachStore('faults in the production profile', (kind: StoreKind) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(kind, {
      users: 10,
      config: { profile: 'production', publicUrl: 'https://api.example.com', adminToken: ADMIN_TOKEN },
    });
  });
  after(() => t.close());

  it('ignores the Helixd-Fault header, as production ignores headers it does not know', async () => {
    const token = await t.appToken();
    for (const header of ['status=503', 'reset', 'not a fault']) {
      const res = await t.get('/helix/games/top?first=1', { ...bearer(token), ...fault(header) });
      assert.equal(res.statusCode, 200, header);
    }
    const samples = parse((await t.get('/metrics')).body);
    assert.equal(samples.filter((s) => s.name === 'helixd_faults_injected_total' && s.value > 0).length, 0);
  });

  it('has no fault rules in its admin API', async () => {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    assert.equal((await t.get('/admin/users?first=1', admin)).statusCode, 200);
    assert.equal((await t.get('/admin/faults', admin)).statusCode, 404);
    const put = await t.inject({
      method: 'PUT',
      url: '/admin/faults',
      headers: admin,
      payload: { faults: '503:2%' },
    });
    assert.equal(put.statusCode, 404);
  });
});

describe('faults configured at start', () => {
  it('production refuses to start with --faults or --fault-seed, and says why', async () => {
    assert.throws(
      () => loadConfig({ ...PRODUCTION, faults: '503:2%' }, {}),
      /the production profile never injects faults: remove HELIXD_FAULTS \/ --faults$/,
    );
    assert.throws(
      () => loadConfig(PRODUCTION, { HELIXD_FAULTS: '503:2%', HELIXD_FAULT_SEED: '3' }),
      /remove HELIXD_FAULTS \/ --faults and HELIXD_FAULT_SEED \/ --fault-seed/,
    );
    await assertRefusedInProduction(
      ['--faults', '503:2%'],
      /the production profile never injects faults: remove HELIXD_FAULTS \/ --faults/,
    );
  });

  it('reads the rules, and refuses a malformed one naming the option and the rule', () => {
    assert.deepEqual(loadConfig({ faults: '503:2%, latency:300ms:10%, 429:0.5%, reset:1%' }, {}).faults, [
      { fault: { status: 503 }, percent: 2 },
      { fault: { latencyMs: 300 }, percent: 10 },
      { fault: { status: 429 }, percent: 0.5 },
      { fault: { reset: true }, percent: 1 },
    ]);
    assert.deepEqual(
      loadConfig({ faults: '429:ratelimit-reset=2s:5%, 429 : ratelimit-reset = 0ms : 1%' }, {}).faults,
      [
        { fault: { status: 429, resetAfterMs: 2000 }, percent: 5 },
        { fault: { status: 429, resetAfterMs: 0 }, percent: 1 },
      ],
    );
    assert.deepEqual(loadConfig({ faults: 'latency:2s:5% @ abc_1' }, {}).faults, [
      { fault: { latencyMs: 2000 }, percent: 5, clientId: 'abc_1' },
    ]);
    const cases: [string, RegExp][] = [
      ['503:2%@a@b', /after @ comes one client id/],
      ['503:2%@', /after @ comes one client id/],
      ['404:2%', /"404" is not a status it can inject/],
      ['503:2', /the share "2" must be a percentage above 0 and at most 100/],
      ['503:101%', /the share "101%"/],
      ['latency:2%', /"latency:2%" is not a rule/],
      ['429:ratelimit-reset=61s:5%', /ratelimit-reset "61s" must be a duration from 0s to 60s/],
      ['429:ratelimit-reset:5%', /"429:ratelimit-reset:5%" is not a rule/],
      [
        '500:ratelimit-reset=1s:5%',
        /is not a rule: .*, 429:ratelimit-reset=<duration>:<p>%, drop-delivery:<p>%, delay-delivery:<duration>:<p>% or dup-delivery:<p>%/,
      ],
      ['delay-delivery:45s:5%', /latency "45s" must be a duration from 1ms to 30s/],
      ['delay-delivery:5%', /"delay-delivery:5%" is not a rule/],
      ['dup-delivery:2', /the share "2" must be a percentage/],
      ['drop-delivery:1s:2%', /"drop-delivery:1s:2%" is not a rule/],
      ['503:2%,', /an empty item/],
    ];
    for (const [text, rule] of cases) {
      assert.throws(
        () => loadConfig({ faults: text }, {}),
        (e: Error) =>
          e instanceof ConfigError && /^HELIXD_FAULTS \/ --faults: /.test(e.message) && rule.test(e.message),
        text,
      );
    }
    assert.throws(() => loadConfig({ faultSeed: '-1' }, {}), /HELIXD_FAULT_SEED \/ --fault-seed/);
  });
});
