// pyTwitchAPI (Teekeks/pyTwitchAPI) replayed byte for byte: the request lines and headers it puts on
// the wire through aiohttp, sent over TCP to a listening app, on both stores. What it sends:
// - headers {"Client-ID": <app id>, "Authorization": "Bearer <token>"}; aiohttp puts Host first and
//   adds Accept, Accept-Encoding and User-Agent after the caller's headers;
// - the query built from a dict in the library's order, None values dropped, lists repeated, each
//   value str()-ed (Python's True is "True") and quoted with urllib.parse.quote, which yarl (under
//   aiohttp) requotes: %3A becomes ":" again, %2B stays;
// - get_users: id..., login...; without arguments no query string at all (the token's user);
// - get_clips: broadcaster_id, game_id, id, after, before, first (default 20), ended_at,
//   started_at, is_featured;
// - get_videos: id..., user_id, game_id, after, before, first (default 20), language, period
//   (default all), sort (default time), type (default all): an id lookup always carries
//   first=20&period=all&sort=time&type=all;
// - get_game_analytics: after, ended_at, first (default 20), game_id, started_at, type; dates as
//   datetime.astimezone().isoformat(), which for UTC is 2019-03-01T00:00:00+00:00.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { SeedInfo } from '../../src/seed/index.ts';
import { bearer, forEachStore, portOf, startTestApp, type TestApp } from '../support/apps.ts';
import { type RawResponse, rawRequest } from '../support/http.ts';
import type { StoreKind } from '../support/stores.ts';
import { aiohttpBytes } from './aiohttp.ts';

/** One GET as aiohttp writes it for pyTwitchAPI, with its two headers in its order. */
const aiohttpGet = (port: number, target: string, token: string, clientId: string): string =>
  aiohttpBytes(port, 'GET', target, [
    ['Client-ID', clientId],
    ['Authorization', `Bearer ${token}`],
  ]);

forEachStore('pyTwitchAPI replayed byte for byte', (kind: StoreKind) => {
  let t: TestApp;
  let seed: SeedInfo;
  let port: number;
  before(async () => {
    t = await startTestApp(kind);
    seed = t.seed as SeedInfo;
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = portOf(t.app);
  });
  after(() => t.close());

  const replay = async (target: string, token: string): Promise<RawResponse> =>
    rawRequest(port, aiohttpGet(port, target, token, seed.demoClientId));

  it("get_users(): the tutorial's first call, GET /helix/users with no query, answers the token's user", async () => {
    const res = await replay('/helix/users', await t.userToken(['user:read:email']));
    assert.equal(res.status, 200, res.body);
    const [me, ...rest] = JSON.parse(res.body).data;
    assert.equal(rest.length, 0);
    assert.equal(me.id, String(seed.demoUserId));
    assert.match(me.email, /@/);
  });

  it('get_users(logins=[..]): login=a&login=b, each login once, the users in the order asked', async () => {
    const users = await t.store.db
      .selectFrom('users')
      .select(['id', 'login'])
      .orderBy('id')
      .limit(2)
      .execute();
    const [a, b] = users as [(typeof users)[0], (typeof users)[0]];
    const res = await replay(`/helix/users?login=${b.login}&login=${a.login}`, await t.appToken());
    assert.equal(res.status, 200, res.body);
    assert.deepEqual(
      JSON.parse(res.body).data.map((u: { id: string }) => u.id),
      [String(b.id), String(a.id)],
    );
  });

  it('get_clips(game_id=.., is_featured=True): is_featured=True reads as true', async () => {
    const clip = await t.store.db
      .selectFrom('clips')
      .select('game_id')
      .where('is_featured', '=', 1)
      .orderBy('id')
      .limit(1)
      .executeTakeFirstOrThrow();
    const token = await t.appToken();
    const res = await replay(`/helix/clips?game_id=${clip.game_id}&first=20&is_featured=True`, token);
    assert.equal(res.status, 200, res.body);
    const body = JSON.parse(res.body);
    assert.ok(body.data.length > 0);
    for (const c of body.data) assert.equal(c.is_featured, true);
    const lower = await t.get(
      `/helix/clips?game_id=${clip.game_id}&first=20&is_featured=true`,
      bearer(token),
    );
    assert.equal(res.body, lower.body);
  });

  it('get_videos(ids=[..]): the id lookup with first=20&period=all&sort=time&type=all', async () => {
    const videos = await t.store.db.selectFrom('videos').select('id').orderBy('id').limit(2).execute();
    const [a, b] = videos.map((v) => String(v.id)) as [string, string];
    const token = await t.appToken();
    const res = await replay(`/helix/videos?id=${b}&id=${a}&first=20&period=all&sort=time&type=all`, token);
    assert.equal(res.status, 200, res.body);
    const body = JSON.parse(res.body);
    assert.deepEqual(
      body.data.map((v: { id: string }) => v.id),
      [b, a],
    );
    assert.deepEqual(body.pagination, {});
    assert.equal(res.body, (await t.get(`/helix/videos?id=${b}&id=${a}`, bearer(token))).body);
  });

  it('get_videos(ids=[..]) of videos that do not exist: 404, as production', async () => {
    const res = await replay(
      '/helix/videos?id=9000000001&first=20&period=all&sort=time&type=all',
      await t.appToken(),
    );
    assert.equal(res.status, 404, res.body);
    assert.equal(JSON.parse(res.body).message, 'The ID in the id query parameter was not found');
  });

  it('get_game_analytics(game_id, started_at, ended_at): dates written 2019-03-01T00:00:00+00:00', async () => {
    const game = await t.store.db
      .selectFrom('games')
      .select('id')
      .where('owner_id', '=', seed.demoUserId)
      .orderBy('id')
      .limit(1)
      .executeTakeFirstOrThrow();
    const token = await t.userToken(['analytics:read:games']);
    const expected = { started_at: '2019-03-01T00:00:00Z', ended_at: '2019-03-31T00:00:00Z' };
    const zulu = await t.get(
      `/helix/analytics/games?game_id=${game.id}&started_at=2019-03-01T00:00:00Z&ended_at=2019-03-31T00:00:00Z`,
      bearer(token),
    );
    assert.equal(zulu.statusCode, 200, zulu.body);
    // As yarl sends it (":" requoted back, "+" kept as %2B), and as urllib.parse.quote left it.
    for (const [start, end] of [
      ['2019-03-01T00:00:00%2B00:00', '2019-03-31T00:00:00%2B00:00'],
      ['2019-03-01T00%3A00%3A00%2B00%3A00', '2019-03-31T00%3A00%3A00%2B00%3A00'],
    ]) {
      const res = await replay(
        `/helix/analytics/games?ended_at=${end}&first=20&game_id=${game.id}&started_at=${start}`,
        token,
      );
      assert.equal(res.status, 200, res.body);
      const body = JSON.parse(res.body);
      assert.deepEqual(body.data[0].date_range, expected);
      assert.equal(res.body, zulu.body);
    }
  });

  it('without its Client-ID header the same request is a 401 "Client ID is missing"', async () => {
    const token = await t.appToken();
    const bytes = aiohttpGet(port, '/helix/videos?user_id=1', token, seed.demoClientId).replace(
      /Client-ID: .*\r\n/,
      '',
    );
    const res = await rawRequest(port, bytes);
    assert.equal(res.status, 401);
    assert.deepEqual(JSON.parse(res.body), {
      error: 'Unauthorized',
      status: 401,
      message: 'Client ID is missing',
    });
  });
});
