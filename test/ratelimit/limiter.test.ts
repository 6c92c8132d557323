// Rate limits through HTTP: a 5-point bucket (config rateLimit 5) is emptied, answers 429 with the
// Helix body and the Ratelimit-* headers, and refills as the (manual) clock advances.
import assert from 'node:assert/strict';
import { after, before, beforeEach, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { liveWithoutArchive } from '../support/archive.ts';
import type { StoreKind } from '../support/stores.ts';

const LIMIT = 5;
/** 60 s / 5 points: one point comes back every 12 s. */
const POINT_MS = 12_000;

function limits(res: LightMyRequestResponse) {
  return {
    limit: Number(res.headers['ratelimit-limit']),
    remaining: Number(res.headers['ratelimit-remaining']),
    reset: Number(res.headers['ratelimit-reset']),
  };
}

forEachStore('rate limits', (kind: StoreKind) => {
  let t: TestApp;
  const nowS = () => Math.floor(t.clock.now() / 1000);
  const games = (token: string, prefix = '/helix') => t.get(`${prefix}/games/top?first=1`, bearer(token));

  before(async () => {
    t = await startTestApp(kind, { config: { rateLimit: LIMIT } });
  });
  after(() => t.close());
  // Every bucket is full again after a minute.
  beforeEach(() => t.clock.advance(60_000));

  it('counts down a 5-point bucket, then answers 429 Request limit exceeded with the headers', async () => {
    const token = await t.appToken();
    const start = nowS();
    for (let k = 1; k <= LIMIT; k++) {
      const res = await games(token);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(limits(res), {
        limit: LIMIT,
        remaining: LIMIT - k,
        reset: start + (k * POINT_MS) / 1000,
      });
    }
    const refused = await games(token);
    assert.equal(refused.statusCode, 429);
    assert.deepEqual(refused.json(), {
      error: 'Too Many Requests',
      status: 429,
      message: 'Request limit exceeded',
    });
    assert.match(String(refused.headers['content-type']), /^application\/json/);
    assert.deepEqual(limits(refused), { limit: LIMIT, remaining: 0, reset: start + 60 });
  });

  it('refills one point every 12 s and completely in a minute', async () => {
    const token = await t.appToken(86_400);
    for (let k = 0; k < LIMIT; k++) assert.equal((await games(token)).statusCode, 200);
    assert.equal((await games(token)).statusCode, 429);
    t.clock.advance(POINT_MS - 1);
    assert.equal((await games(token)).statusCode, 429, 'not yet: a point is 12 s');
    t.clock.advance(1);
    const one = await games(token);
    assert.equal(one.statusCode, 200);
    assert.equal(limits(one).remaining, 0);
    assert.equal((await games(token)).statusCode, 429);
    t.clock.advance(60_000);
    const full = await games(token);
    assert.equal(full.statusCode, 200);
    assert.equal(limits(full).remaining, LIMIT - 1);
    // The bucket never holds more than its size, however long it rests.
    t.clock.advance(3_600_000);
    assert.equal(limits(await games(token)).remaining, LIMIT - 1);
  });

  it('keeps one bucket per client for app tokens and one per client and user for user tokens', async () => {
    const [app1, app2] = [await t.appToken(), await t.appToken()];
    const [mine1, mine2] = [await t.userToken([]), await t.userToken([])];
    const other = (
      await t.store.db.selectFrom('users').select('id').orderBy('id', 'desc').limit(1).execute()
    )[0];
    const theirs = await t.userToken([], other?.id);
    for (let k = 0; k < LIMIT; k++) assert.equal((await games(k % 2 ? app1 : app2)).statusCode, 200);
    assert.equal((await games(app1)).statusCode, 429, 'both app tokens of the client drew from one bucket');
    assert.equal((await games(app2)).statusCode, 429);
    for (let k = 0; k < LIMIT; k++) assert.equal((await games(k % 2 ? mine1 : mine2)).statusCode, 200);
    assert.equal((await games(mine2)).statusCode, 429, "one user's tokens share a bucket");
    const res = await games(theirs);
    assert.equal(res.statusCode, 200, "another user's bucket is untouched");
    assert.equal(limits(res).remaining, LIMIT - 1);
  });

  it('shares the bucket between /helix and /mock and charges a rejected parameter too', async () => {
    const token = await t.appToken();
    assert.equal(limits(await games(token, '/helix')).remaining, 4);
    assert.equal(limits(await games(token, '/mock')).remaining, 3);
    const bad = await t.get('/helix/games/top?first=1000', bearer(token));
    assert.equal(bad.statusCode, 400);
    assert.equal(limits(bad).remaining, 2, 'a 400 after the token check carries the headers');
  });

  it("charges the user-token reads one point each, from the user's one bucket: a 404 and a 401 of the handler too", async () => {
    const demo = t.seed?.demoUserId as number;
    const token = await t.userToken(['user:read:follows', 'user:read:subscriptions', 'moderation:read']);
    const answers = [
      [`/helix/streams/followed?user_id=${demo}`, 200],
      // The demo broadcaster does not subscribe to its own channel: production's 404.
      [`/helix/subscriptions/user?broadcaster_id=${demo}&user_id=${demo}`, 404],
      [`/mock/moderation/moderators?broadcaster_id=${demo}`, 200],
      // Another channel's moderators: the handler's 401 comes after the charge.
      [`/helix/moderation/moderators?broadcaster_id=${demo + 1}`, 401],
      [`/helix/streams/followed?user_id=${demo}&first=1`, 200],
    ] as const;
    for (const [i, [url, status]] of answers.entries()) {
      const res = await t.get(url, bearer(token));
      assert.equal(res.statusCode, status, url);
      assert.equal(limits(res).remaining, LIMIT - 1 - i, url);
    }
    const refused = await t.get(`/helix/streams/followed?user_id=${demo}`, bearer(token));
    assert.equal(refused.statusCode, 429);
  });

  it("charges the writes one point each, from the user's one bucket, a refused one too; a write refused for the limit changes nothing", async () => {
    const demo = t.seed?.demoUserId as number;
    const token = await t.userToken([
      'user:edit',
      'channel:manage:videos',
      'channel:manage:broadcast',
      'clips:edit',
    ]);
    const video = (
      await t.store.db
        .selectFrom('videos')
        .select('id')
        .where('user_id', '=', demo)
        .orderBy('id')
        .executeTakeFirstOrThrow()
    ).id;
    // A live channel whose stream records no archive video (one in ten of the demo data's).
    const noVod = await liveWithoutArchive(t);
    const write = (method: 'PUT' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
      t.inject({
        method,
        url,
        headers: {
          ...bearer(token),
          'client-id': t.seed?.demoClientId as string,
          ...(payload ? { 'content-type': 'application/json' } : {}),
        },
        ...(payload ? { payload: JSON.stringify(payload) } : {}),
      });
    const answers = [
      [() => write('PUT', '/helix/users?description=One'), 200],
      [() => write('DELETE', `/mock/videos?id=${video}`), 200],
      // No archive video of the live stream: production's 404 comes after the charge.
      [() => write('POST', '/helix/streams/markers', { user_id: String(noVod) }), 404],
      // A refused body: the handler's 400 comes after the charge.
      [() => write('PATCH', `/helix/channels?broadcaster_id=${demo}`, {}), 400],
      [() => write('POST', `/helix/clips?broadcaster_id=${demo}`), 202],
    ] as const;
    for (const [i, [send, status]] of answers.entries()) {
      const res = await send();
      assert.equal(res.statusCode, status, res.body);
      assert.equal(limits(res).remaining, LIMIT - 1 - i);
    }
    const refused = await write('PUT', '/helix/users?description=Six');
    assert.equal(refused.statusCode, 429);
    const row = await t.store.db
      .selectFrom('users')
      .select('description')
      .where('id', '=', demo)
      .executeTakeFirstOrThrow();
    assert.equal(row.description, 'One', 'the write refused for the limit did not happen');
  });

  it("charges the searches one point each, an empty answer and a refused parameter too, from the token's bucket", async () => {
    const app = await t.appToken();
    const answers = [
      ['/helix/search/categories?query=a', 200],
      ['/mock/search/channels?query=a&live_only=true', 200],
      // Nothing found is still an answer.
      ['/helix/search/channels?query=zzzzqqq', 200],
      // A missing query is the handler's 400, after the charge.
      ['/helix/search/categories', 400],
      ['/helix/search/channels?query=a&first=1', 200],
    ] as const;
    for (const [i, [url, status]] of answers.entries()) {
      const res = await t.get(url, bearer(app));
      assert.equal(res.statusCode, status, url);
      assert.equal(limits(res).remaining, LIMIT - 1 - i, url);
    }
    const refused = await t.get('/helix/search/channels?query=a', bearer(app));
    assert.equal(refused.statusCode, 429);
  });

  it('charges nothing and sends no headers when the token is refused', async () => {
    const token = await t.appToken();
    const refused = await t.get('/helix/games/top', bearer('not-a-token'));
    assert.equal(refused.statusCode, 401);
    assert.equal(refused.headers['ratelimit-limit'], undefined);
    assert.equal(limits(await games(token)).remaining, LIMIT - 1);
  });
});

forEachStore('rate limits switched off (rateLimit 0)', (kind: StoreKind) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(kind, { users: 20, config: { rateLimit: 0 } });
  });
  after(() => t.close());

  it('never answers 429, and every answer shows a full bucket of 800 that nothing spends', async () => {
    const token = await t.appToken();
    for (let k = 0; k < 50; k++) {
      const res = await t.get('/helix/games/top?first=1', bearer(token));
      assert.equal(res.statusCode, 200);
      // Clients pace themselves by these (Twurple sends nothing more without them).
      assert.equal(res.headers['ratelimit-limit'], '800');
      assert.equal(res.headers['ratelimit-remaining'], '800');
      assert.equal(res.headers['ratelimit-reset'], String(Math.ceil(t.clock.now() / 1000)));
    }
  });
});
