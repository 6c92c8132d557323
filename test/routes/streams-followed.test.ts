// GET /streams/followed: the live streams of the channels the token's user follows, most viewers
// first, each exactly as GET /streams serves it; production's parameters, default page of 100,
// token and scope rules, forward-only cursors; on both stores. Expectations come from the store's
// rows and from GET /streams itself.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { assertGolden } from '../support/golden.ts';
import type { StoreKind } from '../support/stores.ts';

const SCOPE = 'user:read:follows';
const BEFORE_REFUSED = 'The parameter "before" is not supported by this operation; page forward with "after"';
const NOT_THE_TOKEN_USER = "The ID in user_id must match the user ID found in the request's OAuth token.";

interface Stream {
  id: string;
  user_id: string;
  viewer_count: number;
}

forEachStore('GET /streams/followed', (kind: StoreKind) => {
  let t: TestApp;
  /** the demo broadcaster: follows a few live channels as seeded */
  let demo: number;
  /** a user whose follows are replaced below by 90 live channels and 30 offline ones */
  let walker: number;
  /** the channels `walker` follows that are live */
  let walkerLive: number[];

  const url = (q: string, prefix = '/helix') => `${prefix}/streams/followed${q}`;
  const tokenOf = (user: number, scopes = [SCOPE]) => t.userToken(scopes, user);

  /** The ids of the live streams of the channels `u` follows, in /streams order, from the store. */
  async function expectedIds(u: number): Promise<string[]> {
    const rows = await t.store.db
      .selectFrom('streams')
      .innerJoin('follows', 'follows.to_id', 'streams.user_id')
      .select(['streams.id', 'streams.viewer_count'])
      .where('follows.from_id', '=', u)
      .execute();
    return rows.sort((a, b) => b.viewer_count - a.viewer_count || b.id - a.id).map((r) => String(r.id));
  }

  /** GET /streams's answer for these channels: the same streams, objects and order (at most 100). */
  async function viaStreams(channels: number[]): Promise<Stream[]> {
    if (channels.length === 0) return [];
    const q = channels.map((c) => `user_id=${c}`).join('&');
    const res = await t.get(`/helix/streams?${q}&first=100`, bearer(await t.appToken()));
    assert.equal(res.statusCode, 200, res.body);
    return res.json().data;
  }

  before(async () => {
    t = await startTestApp(kind, { users: 1000 });
    demo = t.seed?.demoUserId as number;
    const db = t.store.db;
    const users = (await db.selectFrom('users').select('id').orderBy('id').execute()).map((u) => u.id);
    const live = (await db.selectFrom('streams').select('user_id').orderBy('user_id').execute()).map(
      (s) => s.user_id,
    );
    const liveSet = new Set(live);
    // The last user who is not live: its own follows are replaced by the ones below.
    walker = users.filter((u) => !liveSet.has(u) && u !== demo).at(-1) as number;
    await db.deleteFrom('follows').where('from_id', '=', walker).execute();
    assert.ok(live.length > 100, `${live.length} live channels`);
    walkerLive = live.filter((c) => c !== walker).slice(0, 90);
    const offline = users.filter((u) => !liveSet.has(u) && u !== walker).slice(0, 30);
    await db
      .insertInto('follows')
      .values(
        [...walkerLive, ...offline].map((to, i) => ({
          from_id: walker,
          to_id: to,
          followed_at: 1_750_000_000 + i,
        })),
      )
      .execute();
  });
  after(() => t.close());

  describe('access and parameters', () => {
    it('answers 401 without a token, before looking at the parameters', async () => {
      const res = await t.get(url('?user_id=abc&first=0'));
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().message, 'OAuth token is missing');
    });

    it('answers 401 to an app token: a user token is required', async () => {
      const res = await t.get(url(`?user_id=${demo}`), bearer(await t.appToken()));
      assert.equal(res.statusCode, 401);
      assert.equal(
        res.json().message,
        'This operation requires a user access token; an app access token was given',
      );
    });

    it('answers 401 to a user token without user:read:follows', async () => {
      const res = await t.get(
        url(`?user_id=${demo}`),
        bearer(await tokenOf(demo, ['moderator:read:followers'])),
      );
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().message, 'Missing scope: user:read:follows');
    });

    it('requires user_id: missing or empty is a 400 naming it', async () => {
      const token = await tokenOf(demo);
      for (const q of ['', '?user_id=', '?first=5']) {
        const res = await t.get(url(q), bearer(token));
        assert.equal(res.statusCode, 400, q);
        assert.equal(res.json().message, 'Missing required parameter "user_id"', q);
      }
    });

    it('refuses a user_id that is not a numeric id, or given twice, with a 400 naming it', async () => {
      const token = await tokenOf(demo);
      for (const bad of ['abc', '-1', '1.5', '1e3', '0123', '99999999999999999999']) {
        const res = await t.get(url(`?user_id=${encodeURIComponent(bad)}`), bearer(token));
        assert.equal(res.statusCode, 400, bad);
        assert.equal(
          res.json().message,
          'The parameter "user_id" was malformed: the value must be a numeric ID',
        );
      }
      const twice = await t.get(url(`?user_id=${demo}&user_id=${demo}`), bearer(token));
      assert.equal(twice.statusCode, 400);
      assert.equal(twice.json().message, 'The parameter "user_id" may be given only once');
    });

    it("answers 401 when user_id is another user's id", async () => {
      const res = await t.get(url(`?user_id=${walker}`), bearer(await tokenOf(demo)));
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().message, NOT_THE_TOKEN_USER);
    });

    it("takes first 1..100, default 100 (production's default here, not 20); anything else is a 400 naming first", async () => {
      const token = await tokenOf(walker);
      assert.equal((await t.get(url(`?user_id=${walker}`), bearer(token))).json().data.length, 90);
      assert.equal((await t.get(url(`?user_id=${walker}&first=1`), bearer(token))).json().data.length, 1);
      assert.equal((await t.get(url(`?user_id=${walker}&first=100`), bearer(token))).json().data.length, 90);
      for (const f of ['0', '101', 'x', '', '1.5']) {
        const res = await t.get(url(`?user_id=${walker}&first=${f}`), bearer(token));
        assert.equal(res.statusCode, 400, f);
        assert.match(res.json().message, /"first"/, f);
      }
    });

    it('refuses before with a 400: the operation pages forward only', async () => {
      const token = await tokenOf(walker);
      const cursor = (await t.get(url(`?user_id=${walker}&first=2`), bearer(token))).json().pagination
        .cursor as string;
      for (const q of [`&before=${cursor}`, '&before=x', `&after=${cursor}&before=${cursor}`]) {
        const res = await t.get(url(`?user_id=${walker}${q}`), bearer(token));
        assert.equal(res.statusCode, 400, q);
        assert.equal(res.json().message, BEFORE_REFUSED, q);
      }
    });

    it("refuses a cursor of GET /streams, of another user's followed streams, or tampered with, as Invalid cursor.", async () => {
      const token = await tokenOf(walker);
      const own = (await t.get(url(`?user_id=${walker}&first=2`), bearer(token))).json().pagination
        .cursor as string;
      const streamsCursor = (await t.get('/helix/streams?first=2', bearer(await t.appToken()))).json()
        .pagination.cursor as string;
      const demoToken = await tokenOf(demo);
      const tampered = `${own.slice(0, 5)}${own[5] === 'A' ? 'B' : 'A'}${own.slice(6)}`;
      for (const [tok, user, cursor] of [
        [token, walker, streamsCursor],
        [demoToken, demo, own],
        [token, walker, tampered],
      ] as const) {
        const res = await t.get(url(`?user_id=${user}&after=${cursor}`), bearer(tok));
        assert.equal(res.statusCode, 400);
        assert.equal(res.json().message, 'Invalid cursor.');
      }
    });

    it('is served at /mock/streams/followed too, and other methods are a 405', async () => {
      const token = await tokenOf(walker);
      const a = await t.get(url(`?user_id=${walker}&first=5`), bearer(token));
      const b = await t.get(url(`?user_id=${walker}&first=5`, '/mock'), bearer(token));
      assert.equal(b.statusCode, 200);
      assert.equal(b.body, a.body);
      const post = await t.inject({
        method: 'POST',
        url: url(`?user_id=${walker}`),
        headers: { ...bearer(token), 'client-id': t.seed?.demoClientId as string },
      });
      assert.equal(post.statusCode, 405);
      assert.equal(post.headers.allow, 'GET, HEAD');
    });
  });

  describe('what it lists', () => {
    it('lists the live streams of the followed channels alone, most viewers first, ties by id, higher first', async () => {
      const res = await t.get(url(`?user_id=${walker}`), bearer(await tokenOf(walker)));
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.deepEqual(Object.keys(body), ['data', 'pagination']);
      assert.deepEqual(
        body.data.map((s: Stream) => s.id),
        await expectedIds(walker),
      );
      assert.deepEqual(body.pagination, {});
      // The followed channels that are offline are not listed; every listed stream is followed.
      const live = new Set(walkerLive.map(String));
      assert.ok(body.data.every((s: Stream) => live.has(s.user_id)));
      // Equal viewer counts exist among them, so the tie-break is exercised.
      const counts = body.data.map((s: Stream) => s.viewer_count);
      assert.ok(new Set(counts).size < counts.length, 'ties among the followed streams');
    });

    it('answers each stream exactly as GET /streams serves it: same fields, same order, same bytes', async () => {
      const res = await t.get(url(`?user_id=${walker}`), bearer(await tokenOf(walker)));
      const streams = await viaStreams(walkerLive);
      assert.equal(JSON.stringify(res.json().data), JSON.stringify(streams));
    });

    it('a user who follows no live channel gets {"data":[],"pagination":{}}', async () => {
      const db = t.store.db;
      const live = new Set(
        (await db.selectFrom('streams').select('user_id').execute()).map((s) => s.user_id),
      );
      const follows = await db.selectFrom('follows').select(['from_id', 'to_id']).execute();
      const withLive = new Set(follows.filter((f) => live.has(f.to_id)).map((f) => f.from_id));
      const idle = follows.find((f) => !withLive.has(f.from_id))?.from_id as number;
      assert.ok(idle, 'a user whose followed channels are all offline');
      const res = await t.get(url(`?user_id=${idle}`), bearer(await tokenOf(idle)));
      assert.equal(res.body, '{"data":[],"pagination":{}}');
    });

    it('follows in the store count at once: a channel followed or unfollowed changes the next answer', async () => {
      const token = await tokenOf(demo);
      const before = await t.get(url(`?user_id=${demo}`), bearer(token));
      const ids = before.json().data.map((s: Stream) => s.id);
      assert.deepEqual(ids, await expectedIds(demo));
      assert.ok(ids.length > 0, 'the demo broadcaster follows live channels');
      const extra = walkerLive.find((c) => c !== demo) as number;
      const followed = await t.store.db
        .selectFrom('follows')
        .select('to_id')
        .where('from_id', '=', demo)
        .where('to_id', '=', extra)
        .executeTakeFirst();
      assert.equal(followed, undefined, 'a live channel the demo broadcaster does not follow');
      await t.store.db
        .insertInto('follows')
        .values({ from_id: demo, to_id: extra, followed_at: 1 })
        .execute();
      try {
        const now = await t.get(url(`?user_id=${demo}`), bearer(token));
        assert.deepEqual(
          now.json().data.map((s: Stream) => s.id),
          await expectedIds(demo),
        );
        assert.equal(now.json().data.length, ids.length + 1);
      } finally {
        await t.store.db
          .deleteFrom('follows')
          .where('from_id', '=', demo)
          .where('to_id', '=', extra)
          .execute();
      }
      const again = await t.get(url(`?user_id=${demo}`), bearer(token));
      assert.equal(again.body, before.body);
    });
  });

  describe('walks', () => {
    for (const first of [1, 7, 89]) {
      it(`walking with after and first=${first} lists every followed live stream once, in order`, async () => {
        const token = await tokenOf(walker);
        const all = await expectedIds(walker);
        const seen: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const res = await t.get(
            url(`?user_id=${walker}&first=${first}${cursor ? `&after=${cursor}` : ''}`),
            bearer(token),
          );
          assert.equal(res.statusCode, 200, res.body);
          const body = res.json();
          assert.ok(body.data.length <= first);
          seen.push(...body.data.map((s: Stream) => s.id));
          cursor = body.pagination.cursor;
          pages++;
        } while (cursor);
        assert.deepEqual(seen, all);
        assert.equal(pages, Math.ceil(all.length / first));
      });
    }
  });

  describe('golden answers', () => {
    // The seed (1, 1,000 users, TEST_NOW) and the follows added above give byte-identical bodies on
    // both stores, cursors included. UPDATE_GOLDEN=1 rewrites the files from the SQLite run.
    it('answers streams-followed-first-page byte for byte', async () => {
      const res = await t.get(url(`?user_id=${walker}&first=3`), bearer(await tokenOf(walker)));
      assertGolden(kind, 'streams-followed-first-page.json', res.body);
    });

    it('answers streams-followed-second-page byte for byte', async () => {
      const token = await tokenOf(walker);
      const c = (await t.get(url(`?user_id=${walker}&first=3`), bearer(token))).json().pagination
        .cursor as string;
      const res = await t.get(url(`?user_id=${walker}&first=3&after=${c}`), bearer(token));
      assertGolden(kind, 'streams-followed-second-page.json', res.body);
    });
  });
});
