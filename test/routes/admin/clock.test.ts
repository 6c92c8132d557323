// The driven clock (src/clock.ts, src/routes/admin/clock.ts) through HTTP, on both stores: GET and POST
// /admin/clock read and move the server clock forward (never back), and everything that reads time
// reads the moved clock: a token from the token service expires (401 from /helix, /oauth2/validate
// refuses it), a report URL gives production's expiry answer after 5 minutes, a `period=day`
// window moves on. The production profile has no such route and refuses --clock-speed.
// Under --workers and at --clock-speed: test/cluster/clock.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { ConfigError, loadConfig } from '../../../src/config.ts';
import { forEachStore, postForm, startTestApp, TEST_NOW, type TestApp } from '../../support/apps.ts';
import { assertRefusedInProduction, PRODUCTION } from '../../support/cli.ts';
import type { StoreKind } from '../../support/stores.ts';

const ADMIN_TOKEN = 'clock-admin-token-0123456789-0123456789';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const MINUTE = 60_000;

interface ClockAnswer {
  now: string;
  real_now: string;
  offset_ms: number;
  speed: number;
}

forEachStore('the driven clock: /admin/clock', (kind: StoreKind) => {
  let t: TestApp;
  let client: { id: string; secret: string };

  before(async () => {
    t = await startTestApp(kind, { users: 30, config: { adminToken: ADMIN_TOKEN } });
    const units = (await t.get('/units/clients')).json();
    client = { id: units.data[0].ID, secret: units.data[0].Secret };
  });
  after(() => t.close());

  const read = async (): Promise<ClockAnswer> => {
    const res = await t.get('/admin/clock', ADMIN);
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };
  const nowMs = async () => Date.parse((await read()).now);
  const move = (body: unknown) =>
    t.inject({
      method: 'POST',
      url: '/admin/clock',
      headers: { ...ADMIN, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
  const moved = async (body: unknown): Promise<ClockAnswer> => {
    const res = await move(body);
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };
  const form = (url: string, params: Record<string, string>) => postForm(t, url, params);
  /** A user token of the demo broadcaster from the token service (POST /auth/authorize). */
  const userToken = async (scope = '') => {
    const res = await form('/auth/authorize', {
      client_id: client.id,
      client_secret: client.secret,
      grant_type: 'user_token',
      user_id: String(t.seed?.demoUserId),
      scope,
    });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as { access_token: string; refresh_token: string; expires_in: number };
  };
  const auth = (token: string) => ({ authorization: `Bearer ${token}`, 'client-id': client.id });
  const validate = (token: string) =>
    t.inject({ method: 'GET', url: '/oauth2/validate', headers: { authorization: `OAuth ${token}` } });

  it('reads the server clock beside the system clock', async () => {
    const c = await read();
    assert.equal(c.now, new Date(TEST_NOW).toISOString());
    assert.equal(c.speed, 0, 'the tests’ clock stands still');
    assert.equal(c.offset_ms, Date.parse(c.now) - Date.parse(c.real_now));
  });

  it('moves forward by a duration or to an instant, and answers what GET then reads', async () => {
    const start = await nowMs();
    const a = await moved({ advance: '10m' });
    assert.equal(Date.parse(a.now), start + 10 * MINUTE);
    assert.deepEqual((await read()).now, a.now);
    const to = new Date(start + 3 * 86_400_000).toISOString().replace('.000Z', 'Z');
    const b = await moved({ to });
    assert.equal(b.now, new Date(Date.parse(to)).toISOString());
    assert.equal((await read()).now, b.now);
    // To its own now: allowed, nothing moves.
    assert.equal((await moved({ to })).now, b.now);
  });

  it('never moves back, and says why; the clock stays where it was', async () => {
    const before = (await read()).now;
    const res = await move({ to: '2020-01-01T00:00:00Z' });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), {
      error: 'Bad Request',
      status: 400,
      message: `to: 2020-01-01T00:00:00.000Z is before the server clock (${before}): the clock only moves forward, so that nothing already issued (tokens, report URLs, cursors) goes back in time`,
    });
    assert.equal((await read()).now, before);
  });

  it('refuses a body that is not a move with a 400 naming the field and the rule', async () => {
    const before = (await read()).now;
    const cases: [unknown, string][] = [
      [[], 'body: must be a JSON object, {"advance": "10m"} or {"to": "2026-06-01T00:00:00Z"}'],
      [null, 'body: must be a JSON object, {"advance": "10m"} or {"to": "2026-06-01T00:00:00Z"}'],
      // Content-Type: application/json and no body at all: no body, which the route asks for.
      [undefined, 'body: must be a JSON object, {"advance": "10m"} or {"to": "2026-06-01T00:00:00Z"}'],
      [{}, 'body: must give one of advance and to: {"advance": "10m"} or {"to": "2026-06-01T00:00:00Z"}'],
      [
        { advance: '1h', to: '2030-01-01T00:00:00Z' },
        'body: must give one of advance and to: {"advance": "10m"} or {"to": "2026-06-01T00:00:00Z"}',
      ],
      [{ when: '1h' }, 'body: "when" is not a field (advance, to)'],
      [{ advance: 'ten minutes' }, 'advance: "ten minutes" is not a duration (examples: 90s, 15m, 4h, 60d)'],
      [{ advance: '0s' }, 'advance: must be longer than 0'],
      [{ advance: 600 }, 'advance: must be a duration in a string (examples: 90s, 15m, 4h, 60d)'],
      [{ advance: '-5m' }, 'advance: "-5m" is not a duration (examples: 90s, 15m, 4h, 60d)'],
      [
        { advance: '3000000d' },
        "advance: would move the clock past 9999-12-31T23:59:59.000Z, the last instant the wire's dates can carry",
      ],
      [{ to: 'tomorrow' }, 'to: must be an RFC 3339 date-time such as 2026-06-01T00:00:00Z'],
      [{ to: '2030-02-30T00:00:00Z' }, 'to: must be an RFC 3339 date-time such as 2026-06-01T00:00:00Z'],
    ];
    for (const [body, message] of cases) {
      const res = await move(body);
      assert.equal(res.statusCode, 400, JSON.stringify(body));
      assert.equal(res.json().message, message, JSON.stringify(body));
    }
    assert.equal((await read()).now, before, 'no refused move moved the clock');
  });

  it('is the admin token’s alone', async () => {
    assert.equal((await t.get('/admin/clock')).statusCode, 401);
    const token = (await userToken()).access_token;
    assert.equal((await t.get('/admin/clock', auth(token))).statusCode, 403);
    const res = await t.inject({
      method: 'POST',
      url: '/admin/clock',
      headers: { ...auth(token), 'content-type': 'application/json' },
      payload: { advance: '1d' },
    });
    assert.equal(res.statusCode, 403);
  });

  it('expires a token: a 401 from /helix, /oauth2/validate refuses it; its refresh token still works', async () => {
    const minted = await userToken();
    const users = (token: string) => t.get('/helix/users', auth(token));
    assert.equal((await users(minted.access_token)).statusCode, 200);
    assert.equal((await validate(minted.access_token)).json().expires_in, minted.expires_in);

    await moved({ advance: `${minted.expires_in - 1}s` });
    assert.equal((await users(minted.access_token)).statusCode, 200, 'one second left');
    assert.equal((await validate(minted.access_token)).json().expires_in, 1);

    await moved({ advance: '1s' });
    const expired = await users(minted.access_token);
    assert.equal(expired.statusCode, 401, expired.body);
    assert.deepEqual(expired.json(), { error: 'Unauthorized', status: 401, message: 'Invalid OAuth token' });
    const refused = await validate(minted.access_token);
    assert.equal(refused.statusCode, 401);
    assert.deepEqual(refused.json(), { status: 401, message: 'invalid access token' });

    const refreshed = await form('/oauth2/token', {
      client_id: client.id,
      client_secret: client.secret,
      grant_type: 'refresh_token',
      refresh_token: minted.refresh_token,
    });
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    assert.equal((await users(refreshed.json().access_token)).statusCode, 200);
  });

  it('expires a report URL after 5 minutes of server time, with production’s answer', async () => {
    const token = (await userToken('analytics:read:games')).access_token;
    const reports = await t.get('/helix/analytics/games?first=1', auth(token));
    assert.equal(reports.statusCode, 200, reports.body);
    const url = new URL(reports.json().data[0].URL);
    const download = () => t.get(url.pathname + url.search);
    const expires = Number(url.searchParams.get('expires'));
    assert.equal(expires * 1000, (await nowMs()) + 5 * MINUTE);

    assert.equal((await download()).statusCode, 200);
    await moved({ advance: '299s' });
    assert.equal((await download()).statusCode, 200, 'one second left');
    await moved({ advance: '1s' });
    const expired: LightMyRequestResponse = await download();
    assert.equal(expired.statusCode, 403);
    assert.deepEqual(expired.json(), {
      error: 'Forbidden',
      status: 403,
      message: `The report URL expired at ${new Date(expires * 1000).toISOString().replace('.000Z', 'Z')} (report URLs are valid for 5 minutes). Request a new URL from the analytics operation.`,
    });
  });

  it('moves the period=day window: a video of 12 hours ago leaves it a day later', async () => {
    const someVideo = (await t.get('/admin/videos?first=1', ADMIN)).json().data[0];
    const created = new Date((await nowMs()) - 12 * 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const video = { ...someVideo, id: '99000001', created_at: created, published_at: created };
    for (const k of ['user_login', 'user_name', 'url', 'thumbnail_url', 'viewable']) delete video[k];
    const posted = await t.inject({ method: 'POST', url: '/admin/videos', headers: ADMIN, payload: video });
    assert.equal(posted.statusCode, 201, posted.body);
    // An app token: it lives 60 days, past the day the clock moves (a user token lives 4 hours).
    const app = await form('/oauth2/token', {
      client_id: client.id,
      client_secret: client.secret,
      grant_type: 'client_credentials',
    });
    const token = app.json().access_token;
    const ids = async () => {
      const res = await t.get(`/helix/videos?user_id=${video.user_id}&period=day&first=100`, auth(token));
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data.map((v: { id: string }) => v.id);
    };
    assert.ok((await ids()).includes('99000001'));
    await moved({ advance: '1d' });
    assert.ok(!(await ids()).includes('99000001'));
  });

  it('is in /openapi.json under the admin tag', async () => {
    const doc = (await t.get('/openapi.json')).json();
    assert.deepEqual(Object.keys(doc.paths['/admin/clock']).sort(), ['get', 'post']);
    assert.deepEqual(doc.paths['/admin/clock'].post.tags, ['admin']);
  });
});

forEachStore('the driven clock in the production profile', (kind: StoreKind) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(kind, {
      users: 10,
      config: { profile: 'production', publicUrl: 'https://api.example.com', adminToken: ADMIN_TOKEN },
    });
  });
  after(() => t.close());

  it("has no /admin/clock: production's clock runs at real speed", async () => {
    assert.equal((await t.get('/admin/users?first=1', ADMIN)).statusCode, 200);
    assert.equal((await t.get('/admin/clock', ADMIN)).statusCode, 404);
    const post = await t.inject({
      method: 'POST',
      url: '/admin/clock',
      headers: ADMIN,
      payload: { advance: '1h' },
    });
    assert.equal(post.statusCode, 404);
    assert.equal((await t.get('/openapi.json')).json().paths['/admin/clock'], undefined);
  });
});

describe('--clock-speed', () => {
  it('is a number greater than 0, default 1; the error names the option and the rule', () => {
    assert.equal(loadConfig({}, {}).clockSpeed, 1);
    assert.equal(loadConfig({ clockSpeed: '60' }, {}).clockSpeed, 60);
    assert.equal(loadConfig({}, { HELIXD_CLOCK_SPEED: '0.5' }).clockSpeed, 0.5);
    assert.equal(loadConfig({ clockSpeed: '1000000' }, {}).clockSpeed, 1_000_000);
    for (const bad of ['0', '-1', 'fast', '1e3', '0x10', '1000001', '.5']) {
      assert.throws(
        () => loadConfig({ clockSpeed: bad }, {}),
        (e: Error) =>
          e instanceof ConfigError &&
          e.message ===
            `HELIXD_CLOCK_SPEED / --clock-speed: "${bad}" must be a number greater than 0 and at most 1000000 (60: the clock runs 60 times faster than real time)`,
        bad,
      );
    }
  });

  it('is refused by the production profile, whose clock runs at real speed', async () => {
    assert.throws(
      () => loadConfig({ ...PRODUCTION, clockSpeed: '60' }, {}),
      /the production profile runs its clock at real speed: remove HELIXD_CLOCK_SPEED \/ --clock-speed$/,
    );
    assert.throws(
      () => loadConfig(PRODUCTION, { HELIXD_CLOCK_SPEED: '1' }),
      /remove HELIXD_CLOCK_SPEED \/ --clock-speed/,
    );
    await assertRefusedInProduction(
      ['--clock-speed', '60'],
      /the production profile runs its clock at real speed: remove HELIXD_CLOCK_SPEED \/ --clock-speed/,
    );
  });
});
