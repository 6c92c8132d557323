// The driven clock under `helixd serve --workers 2 --clock-speed 600`, through the real program, on
// both stores. One clock: at speed N a clock reads `now = start + N x (real - real at start)`, so
// `now - N x real` is the same figure in every reading of one clock, whichever worker answers; a
// move through one worker changes it in both by the time the admin call returns, and a worker
// started later (a replacement) reads it too. A token of expires_in X expires after X/N real
// seconds, shown by the server's own readings, not by the test's timers. The rate limiter keeps
// real time.
import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import { after, before, it } from 'node:test';
import { forEachStore } from '../support/apps.ts';
import { type Answer, request } from '../support/http.ts';
import type { StoreKind } from '../support/stores.ts';
import { serveOnTempStore, sleep, spread } from './served.ts';

const ADMIN_TOKEN = 'clock-admin-token-0123456789-0123456789';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const SPEED = 600;
/** A user token's lifetime: at SPEED, 6 real seconds. */
const TTL_SECONDS = 3600;
const LIMIT = 3;

interface ClockAnswer {
  now: string;
  real_now: string;
  offset_ms: number;
  speed: number;
}

/** The figure every reading of one clock shares: its reading at real time 0. */
const origin = (c: ClockAnswer) => Date.parse(c.now) - SPEED * Date.parse(c.real_now);

const json = (a: Answer) => {
  assert.equal(a.status, 200, a.body);
  return JSON.parse(a.body);
};

forEachStore('the driven clock under serve --workers 2 --clock-speed 600', (kind: StoreKind) => {
  let s: Awaited<ReturnType<typeof serveOnTempStore>>;

  before(async () => {
    s = await serveOnTempStore(
      kind,
      [
        '--workers',
        '2',
        '--drain',
        '0s',
        '--admin-token',
        ADMIN_TOKEN,
        '--now',
        '2026-06-15T12:00:00Z',
        '--clock-speed',
        String(SPEED),
        '--user-token-ttl',
        `${TTL_SECONDS}s`,
        '--rate-limit',
        String(LIMIT),
      ],
      2,
    );
  });
  after(() => s?.stop());

  /** GET /admin/clock on fresh connections until both workers have answered. */
  async function readingsOfBoth(): Promise<ClockAnswer[]> {
    const { answers, pids } = await spread(s, '/admin/clock', { headers: ADMIN });
    assert.equal(pids.size, 2, 'both workers answered');
    return answers.map(json);
  }
  const move = async (body: unknown): Promise<ClockAnswer> =>
    json(
      await request(s.port, '/admin/clock', {
        method: 'POST',
        headers: { ...ADMIN, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
    );

  it('every worker reads one clock, running 600 times faster than real time', async () => {
    const readings = await readingsOfBoth();
    for (const c of readings) assert.equal(c.speed, SPEED);
    assert.equal(new Set(readings.map(origin)).size, 1, JSON.stringify(readings));
    // Started at --now when the primary started, a few real seconds ago: hours of server time.
    const first = readings[0] as ClockAnswer;
    assert.ok(Date.parse(first.now) > Date.parse('2026-06-15T12:00:00Z'));
    assert.ok(Date.parse(first.now) < Date.parse('2026-06-20T00:00:00Z'));
  });

  it('a move through one worker is read by both as soon as the admin call returns', async () => {
    const before = origin((await readingsOfBoth())[0] as ClockAnswer);
    const moved = await move({ advance: '30d' });
    assert.equal(origin(moved), before + 30 * 86_400_000);
    for (const c of await readingsOfBoth()) assert.equal(origin(c), origin(moved));
    const back = await request(s.port, '/admin/clock', {
      method: 'POST',
      headers: { ...ADMIN, 'content-type': 'application/json' },
      body: JSON.stringify({ to: '2026-06-16T00:00:00Z' }),
    });
    assert.equal(back.status, 400);
    assert.match(JSON.parse(back.body).message, /^to: .* is before the server clock/);
  });

  it('a worker started later (a replacement) reads the moved clock', async () => {
    const expected = origin((await readingsOfBoth())[0] as ClockAnswer);
    const victim = s.workerPids[0] as number;
    process.kill(victim, 'SIGKILL');
    await s.waitFor(new RegExp(`worker (\\d+) serving, in place of ${victim}`));
    const { answers, pids } = await spread(s, '/admin/clock', { headers: ADMIN });
    assert.ok(!pids.has(victim));
    assert.equal(pids.size, 2, 'both workers answered');
    for (const c of answers.map(json)) assert.equal(origin(c), expected);
  });

  it(`a token of expires_in ${TTL_SECONDS} expires after ${TTL_SECONDS / SPEED} real seconds, on both workers`, async () => {
    const q = new URLSearchParams({
      client_id: s.clientId,
      client_secret: s.clientSecret,
      grant_type: 'user_token',
      // The demo broadcaster, as the banner names it.
      user_id: /\(\w+, id (\d+);/.exec(s.out())?.[1] ?? '',
    });
    const first = json(await request(s.port, '/admin/clock', { headers: ADMIN })) as ClockAnswer;
    const minted = json(await request(s.port, `/auth/authorize?${q}`, { method: 'POST' }));
    assert.equal(minted.expires_in, TTL_SECONDS);
    const validate = () =>
      request(s.port, '/oauth2/validate', { headers: { authorization: `OAuth ${minted.access_token}` } });
    assert.equal((await validate()).status, 200);
    // Until the server clock passes its expiry (at most a minute of real time: never a measurement).
    let status = 200;
    for (let i = 0; i < 300 && status === 200; i++) {
      await sleep(200);
      status = (await validate()).status;
    }
    assert.equal(status, 401);
    const expired = json(await request(s.port, '/admin/clock', { headers: ADMIN })) as ClockAnswer;
    assert.ok(Date.parse(expired.now) - Date.parse(first.now) >= (TTL_SECONDS - 1) * 1000);
    // The same stretch in real time, by the server's readings: X/N seconds at least.
    assert.ok(
      Date.parse(expired.real_now) - Date.parse(first.real_now) >= ((TTL_SECONDS - 1) * 1000) / SPEED,
    );
    const { answers, pids } = await spread(s, '/helix/users', {
      headers: { authorization: `Bearer ${minted.access_token}`, 'client-id': s.clientId },
    });
    assert.equal(pids.size, 2);
    for (const a of answers) assert.equal(a.status, 401, a.body);
  });

  it('the rate limiter keeps real time: moving the clock refills no bucket', async () => {
    // One connection: one worker, one bucket.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const games = () =>
        request(s.port, '/helix/games/top?first=1', {
          agent,
          headers: { authorization: `Bearer ${s.appToken}`, 'client-id': s.clientId },
        });
      for (let i = 0; i < LIMIT; i++) assert.equal((await games()).status, 200);
      const refused = await games();
      assert.equal(refused.status, 429, refused.body);
      // The reset is a minute of real time away, not of the server clock (days ahead of it).
      const reset = Number(refused.headers['ratelimit-reset']);
      assert.ok(Math.abs(reset - Date.now() / 1000) < 3600, String(reset));
      await move({ advance: '1h' });
      assert.equal((await games()).status, 429);
    } finally {
      agent.destroy();
    }
  });
});
