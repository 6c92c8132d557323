// GET /channels/followers and GET /channels/followed: every parameter and access rule, a walk of
// each list, and golden answers, on both stores. Expectations are read straight from the store.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { rfc3339 } from '../../src/wire/datetime.ts';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { assertGolden } from '../support/golden.ts';
import type { StoreKind } from '../support/stores.ts';

const FOLLOWERS_SCOPE = 'moderator:read:followers';
const FOLLOWED_SCOPE = 'user:read:follows';
const BEFORE_REFUSED = 'The parameter "before" is not supported by this operation; page forward with "after"';

interface Follower {
  user_id: string;
  user_login: string;
  user_name: string;
  followed_at: string;
}

interface Followed {
  broadcaster_id: string;
  broadcaster_login: string;
  broadcaster_name: string;
  followed_at: string;
}

forEachStore('GET /channels/followers and GET /channels/followed', (kind: StoreKind) => {
  let t: TestApp;
  let demo: number;
  /** a moderator of the demo channel */
  let moderator: number;
  /** a channel the demo broadcaster moderates, and all of them */
  let moddedChannel: number;
  let moddedChannels: number[];
  /** a user who follows the demo channel, moderates nothing there, and follows more than 20 channels */
  let fan: number;
  /** a user who neither is the demo broadcaster nor moderates its channel */
  let stranger: number;

  before(async () => {
    t = await startTestApp(kind, { users: 1000 });
    demo = t.seed?.demoUserId as number;
    const db = t.store.db;
    const mods = await db.selectFrom('moderators').selectAll().where('broadcaster_id', '=', demo).execute();
    assert.ok(mods.length >= 5, 'the demo broadcaster has several moderators');
    moderator = (mods[0] as { user_id: number }).user_id;
    const modded = await db.selectFrom('moderators').selectAll().where('user_id', '=', demo).execute();
    assert.ok(modded.length >= 2, 'the demo broadcaster moderates other channels');
    moddedChannels = modded.map((m) => m.broadcaster_id);
    moddedChannel = moddedChannels[0] as number;
    const modIds = new Set(mods.map((m) => m.user_id));
    const fans = await db
      .selectFrom('follows as f')
      .innerJoin('follows as g', 'g.from_id', 'f.from_id')
      .select(['f.from_id'])
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('f.to_id', '=', demo)
      .groupBy('f.from_id')
      .orderBy('n', 'desc')
      .orderBy('f.from_id')
      .execute();
    fan = (fans.find((f) => !modIds.has(f.from_id) && Number(f.n) > 20) as { from_id: number }).from_id;
    assert.ok(fan);
    stranger = fan;
  });
  after(() => t.close());

  const followersUrl = (q: string, prefix = '/helix') => `${prefix}/channels/followers${q}`;
  const followedUrl = (q: string, prefix = '/helix') => `${prefix}/channels/followed${q}`;

  /** Every follower of `b` whose user row exists, in the documented order. */
  async function expectedFollowers(b: number): Promise<Follower[]> {
    const rows = await t.store.db
      .selectFrom('follows')
      .innerJoin('users', 'users.id', 'follows.from_id')
      .select(['follows.from_id', 'follows.followed_at', 'users.login', 'users.display_name'])
      .where('follows.to_id', '=', b)
      .orderBy('follows.followed_at', 'desc')
      .orderBy('follows.from_id', 'desc')
      .execute();
    return rows.map((r) => ({
      user_id: String(r.from_id),
      user_login: r.login,
      user_name: r.display_name,
      followed_at: rfc3339(r.followed_at),
    }));
  }

  /** Every channel `u` follows whose user row exists, in the documented order. */
  async function expectedFollowed(u: number): Promise<Followed[]> {
    const rows = await t.store.db
      .selectFrom('follows')
      .innerJoin('users', 'users.id', 'follows.to_id')
      .select(['follows.to_id', 'follows.followed_at', 'users.login', 'users.display_name'])
      .where('follows.from_id', '=', u)
      .orderBy('follows.followed_at', 'desc')
      .orderBy('follows.to_id', 'desc')
      .execute();
    return rows.map((r) => ({
      broadcaster_id: String(r.to_id),
      broadcaster_login: r.login,
      broadcaster_name: r.display_name,
      followed_at: rfc3339(r.followed_at),
    }));
  }

  /** Rows of the follows table, whatever the users table holds. */
  async function countRows(col: 'from_id' | 'to_id', id: number): Promise<number> {
    const r = await t.store.db
      .selectFrom('follows')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where(col, '=', id)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  const broadcasterToken = (scopes = [FOLLOWERS_SCOPE]) => t.userToken(scopes, demo);

  describe('followers: parameters', () => {
    it('answers 401 without a token, before looking at the parameters', async () => {
      const res = await t.get(followersUrl('?broadcaster_id=abc&first=0'));
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().message, 'OAuth token is missing');
    });

    it('requires broadcaster_id: missing or empty is a 400 naming it', async () => {
      const token = await broadcasterToken();
      for (const q of ['', '?broadcaster_id=', '?user_id=1']) {
        const res = await t.get(followersUrl(q), bearer(token));
        assert.equal(res.statusCode, 400, q);
        assert.equal(res.json().message, 'Missing required parameter "broadcaster_id"', q);
      }
    });

    it('refuses a broadcaster_id or user_id that is not a numeric id with a 400 naming it, on both stores', async () => {
      const token = await broadcasterToken();
      for (const bad of ['abc', '12x', '-1', '1.5', '1e3', ' 1', '99999999999999999999', '0x10']) {
        for (const name of ['broadcaster_id', 'user_id']) {
          const q =
            name === 'broadcaster_id'
              ? `?broadcaster_id=${encodeURIComponent(bad)}`
              : `?broadcaster_id=${demo}&user_id=${encodeURIComponent(bad)}`;
          const res = await t.get(followersUrl(q), bearer(token));
          assert.equal(res.statusCode, 400, `${name}=${bad}`);
          assert.match(res.json().message, new RegExp(`"${name}" was malformed`), `${name}=${bad}`);
        }
      }
    });

    it('takes broadcaster_id and user_id once: a repeated one is a 400', async () => {
      const token = await broadcasterToken();
      for (const q of [
        `?broadcaster_id=${demo}&broadcaster_id=${demo}`,
        `?broadcaster_id=${demo}&user_id=1&user_id=2`,
      ]) {
        const res = await t.get(followersUrl(q), bearer(token));
        assert.equal(res.statusCode, 400, q);
      }
    });

    it('takes first 1..100, default 20; anything else is a 400 naming first', async () => {
      const token = await broadcasterToken();
      assert.equal(
        (await t.get(followersUrl(`?broadcaster_id=${demo}`), bearer(token))).json().data.length,
        20,
      );
      assert.equal(
        (await t.get(followersUrl(`?broadcaster_id=${demo}&first=100`), bearer(token))).json().data.length,
        100,
      );
      assert.equal(
        (await t.get(followersUrl(`?broadcaster_id=${demo}&first=1`), bearer(token))).json().data.length,
        1,
      );
      for (const f of ['0', '101', 'x', '', '1.5']) {
        const res = await t.get(followersUrl(`?broadcaster_id=${demo}&first=${f}`), bearer(token));
        assert.equal(res.statusCode, 400, f);
        assert.match(res.json().message, /"first"/, f);
      }
    });

    it('refuses before with a 400: the operation pages forward only', async () => {
      const token = await broadcasterToken();
      const cursor = (await t.get(followersUrl(`?broadcaster_id=${demo}&first=2`), bearer(token))).json()
        .pagination.cursor as string;
      for (const q of [`&before=${cursor}`, '&before=x', '&before=', `&after=${cursor}&before=${cursor}`]) {
        const res = await t.get(followersUrl(`?broadcaster_id=${demo}${q}`), bearer(token));
        assert.equal(res.statusCode, 400, q);
        assert.equal(res.json().message, BEFORE_REFUSED, q);
      }
    });

    it('refuses a cursor of another broadcaster, of /channels/followed, or tampered with, as Invalid cursor.', async () => {
      const token = await broadcasterToken();
      const own = (await t.get(followersUrl(`?broadcaster_id=${demo}&first=2`), bearer(token))).json()
        .pagination.cursor as string;
      const other = await t.get(
        followersUrl(`?broadcaster_id=${moddedChannel}&first=2&after=${own}`),
        bearer(token),
      );
      assert.equal(other.statusCode, 400);
      assert.equal(other.json().message, 'Invalid cursor.');
      const fanToken = await t.userToken([FOLLOWED_SCOPE], fan);
      const followedCursor = (await t.get(followedUrl(`?user_id=${fan}&first=2`), bearer(fanToken))).json()
        .pagination.cursor as string;
      const foreign = await t.get(
        followersUrl(`?broadcaster_id=${demo}&after=${followedCursor}`),
        bearer(token),
      );
      assert.equal(foreign.json().message, 'Invalid cursor.');
      const tampered = `${own.slice(0, 5)}${own[5] === 'A' ? 'B' : 'A'}${own.slice(6)}`;
      const bad = await t.get(followersUrl(`?broadcaster_id=${demo}&after=${tampered}`), bearer(token));
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.json().message, 'Invalid cursor.');
    });
  });

  describe('followers: who gets the list', () => {
    const first = (id: number) => followersUrl(`?broadcaster_id=${id}&first=20`);

    async function full(res: Awaited<ReturnType<TestApp['get']>>, b: number): Promise<void> {
      assert.equal(res.statusCode, 200, res.body);
      const all = await expectedFollowers(b);
      const body = res.json();
      assert.deepEqual(Object.keys(body), ['total', 'data', 'pagination']);
      assert.equal(body.total, await countRows('to_id', b));
      assert.deepEqual(body.data, all.slice(0, 20));
      assert.equal(typeof body.pagination.cursor, all.length > 20 ? 'string' : 'undefined');
    }

    async function totalOnly(res: Awaited<ReturnType<TestApp['get']>>, b: number): Promise<void> {
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(
        res.body,
        JSON.stringify({ total: await countRows('to_id', b), data: [], pagination: {} }),
      );
    }

    it('the broadcaster with moderator:read:followers gets the list, most recent follow first', async () => {
      await full(await t.get(first(demo), bearer(await broadcasterToken())), demo);
    });

    it('the broadcaster without moderator:read:followers gets only total', async () => {
      await totalOnly(await t.get(first(demo), bearer(await broadcasterToken(['user:read:follows']))), demo);
    });

    it('a moderator of the channel with moderator:read:followers gets the list', async () => {
      await full(await t.get(first(demo), bearer(await t.userToken([FOLLOWERS_SCOPE], moderator))), demo);
    });

    it('a moderator of the channel without moderator:read:followers gets only total', async () => {
      await totalOnly(await t.get(first(demo), bearer(await t.userToken([], moderator))), demo);
    });

    it("the demo broadcaster, as a moderator of another channel, gets that channel's list", async () => {
      await full(await t.get(first(moddedChannel), bearer(await broadcasterToken())), moddedChannel);
    });

    it('another user, even with moderator:read:followers, gets only total', async () => {
      await totalOnly(await t.get(first(demo), bearer(await t.userToken([FOLLOWERS_SCOPE], stranger))), demo);
    });

    it('a moderator of one channel gets only total for a channel it does not moderate', async () => {
      const own = new Set(
        (
          await t.store.db
            .selectFrom('moderators')
            .select('broadcaster_id')
            .where('user_id', '=', moderator)
            .execute()
        ).map((o) => o.broadcaster_id),
      );
      const channel = moddedChannels.find((c) => !own.has(c) && c !== moderator) as number;
      assert.ok(channel, 'a channel the moderator does not moderate');
      await totalOnly(
        await t.get(first(channel), bearer(await t.userToken([FOLLOWERS_SCOPE], moderator))),
        channel,
      );
    });

    it('an app token gets only total', async () => {
      await totalOnly(await t.get(first(demo), bearer(await t.appToken())), demo);
    });

    it('with user_id, the broadcaster gets that follower alone, total still every follower', async () => {
      const token = await broadcasterToken();
      const all = await expectedFollowers(demo);
      const pick = all[7] as Follower;
      const res = await t.get(followersUrl(`?broadcaster_id=${demo}&user_id=${pick.user_id}`), bearer(token));
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), { total: await countRows('to_id', demo), data: [pick], pagination: {} });
      const mod = await t.get(
        followersUrl(`?broadcaster_id=${demo}&user_id=${pick.user_id}`),
        bearer(await t.userToken([FOLLOWERS_SCOPE], moderator)),
      );
      assert.deepEqual(mod.json().data, [pick]);
    });

    it('with user_id of a user who does not follow, data is empty and total unchanged', async () => {
      const token = await broadcasterToken();
      const res = await t.get(followersUrl(`?broadcaster_id=${demo}&user_id=${demo}`), bearer(token));
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), { total: await countRows('to_id', demo), data: [], pagination: {} });
      const unknown = await t.get(followersUrl(`?broadcaster_id=${demo}&user_id=12345`), bearer(token));
      assert.deepEqual(unknown.json().data, []);
    });

    it('with user_id, a caller without the right to the list gets a 401 (app token, other user, no scope)', async () => {
      const q = followersUrl(`?broadcaster_id=${demo}&user_id=${fan}`);
      for (const token of [
        await t.appToken(),
        await t.userToken([FOLLOWERS_SCOPE], stranger),
        await broadcasterToken([]),
        await t.userToken([], moderator),
      ]) {
        const res = await t.get(q, bearer(token));
        assert.equal(res.statusCode, 401);
        assert.match(
          res.json().message,
          /"user_id" requires a user access token with the moderator:read:followers scope/,
        );
      }
    });

    it('an unknown broadcaster has total 0 and no followers', async () => {
      const res = await t.get(
        followersUrl('?broadcaster_id=123'),
        bearer(await t.userToken([FOLLOWERS_SCOPE], 123)),
      );
      assert.equal(res.body, '{"total":0,"data":[],"pagination":{}}');
    });

    it('is served at /mock/channels/followers too, and other methods are a 405', async () => {
      const token = await broadcasterToken();
      const a = await t.get(followersUrl(`?broadcaster_id=${demo}&first=3`), bearer(token));
      const b = await t.get(followersUrl(`?broadcaster_id=${demo}&first=3`, '/mock'), bearer(token));
      assert.equal(b.statusCode, 200);
      assert.deepEqual(b.json().data, a.json().data);
      const post = await t.inject({
        method: 'POST',
        url: followersUrl(`?broadcaster_id=${demo}`),
        headers: { ...bearer(token), 'client-id': t.seed?.demoClientId as string },
      });
      assert.equal(post.statusCode, 405);
    });
  });

  describe('followed: parameters and access', () => {
    const fanToken = () => t.userToken([FOLLOWED_SCOPE], fan);

    it('answers 401 to an app token: a user token is required', async () => {
      const res = await t.get(followedUrl(`?user_id=${fan}`), bearer(await t.appToken()));
      assert.equal(res.statusCode, 401);
    });

    it('answers 401 to a user token without user:read:follows', async () => {
      const res = await t.get(
        followedUrl(`?user_id=${fan}`),
        bearer(await t.userToken([FOLLOWERS_SCOPE], fan)),
      );
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().message, 'Missing scope: user:read:follows');
    });

    it('requires user_id: missing or empty is a 400 naming it', async () => {
      for (const q of ['', '?user_id=', `?broadcaster_id=${demo}`]) {
        const res = await t.get(followedUrl(q), bearer(await fanToken()));
        assert.equal(res.statusCode, 400, q);
        assert.equal(res.json().message, 'Missing required parameter "user_id"');
      }
    });

    it('refuses a user_id or broadcaster_id that is not a numeric id with a 400 naming it', async () => {
      for (const [name, q] of [
        ['user_id', '?user_id=abc'],
        ['user_id', '?user_id=1e3'],
        ['broadcaster_id', `?user_id=${fan}&broadcaster_id=x1`],
        ['broadcaster_id', `?user_id=${fan}&broadcaster_id=99999999999999999999`],
      ] as const) {
        const res = await t.get(followedUrl(q), bearer(await fanToken()));
        assert.equal(res.statusCode, 400, q);
        assert.match(res.json().message, new RegExp(`"${name}" was malformed`), q);
      }
    });

    it("answers 401 when user_id is another user's id", async () => {
      const res = await t.get(followedUrl(`?user_id=${demo}`), bearer(await fanToken()));
      assert.equal(res.statusCode, 401);
      assert.equal(
        res.json().message,
        "The ID in user_id must match the user ID found in the request's OAuth token.",
      );
    });

    it('lists the channels the user follows, most recent first, with total', async () => {
      const res = await t.get(followedUrl(`?user_id=${fan}`), bearer(await fanToken()));
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.deepEqual(Object.keys(body), ['total', 'data', 'pagination']);
      assert.equal(body.total, await countRows('from_id', fan));
      assert.deepEqual(body.data, (await expectedFollowed(fan)).slice(0, 20));
      assert.equal(typeof body.pagination.cursor, 'string');
    });

    it('with broadcaster_id, answers that channel alone when followed, nothing when not; total unchanged', async () => {
      const all = await expectedFollowed(fan);
      const pick = all[3] as Followed;
      const total = await countRows('from_id', fan);
      const yes = await t.get(
        followedUrl(`?user_id=${fan}&broadcaster_id=${pick.broadcaster_id}`),
        bearer(await fanToken()),
      );
      assert.deepEqual(yes.json(), { total, data: [pick], pagination: {} });
      const no = await t.get(followedUrl(`?user_id=${fan}&broadcaster_id=${fan}`), bearer(await fanToken()));
      assert.deepEqual(no.json(), { total, data: [], pagination: {} });
    });

    it('takes first 1..100 and refuses before with a 400', async () => {
      const ok = await t.get(followedUrl(`?user_id=${fan}&first=3`), bearer(await fanToken()));
      assert.equal(ok.json().data.length, 3);
      for (const q of ['&first=0', '&first=101', '&before=abc']) {
        const res = await t.get(followedUrl(`?user_id=${fan}${q}`), bearer(await fanToken()));
        assert.equal(res.statusCode, 400, q);
        if (q.startsWith('&before')) assert.equal(res.json().message, BEFORE_REFUSED);
      }
    });

    it('is served at /mock/channels/followed too', async () => {
      const res = await t.get(followedUrl(`?user_id=${fan}&first=2`, '/mock'), bearer(await fanToken()));
      assert.deepEqual(res.json().data, (await expectedFollowed(fan)).slice(0, 2));
    });
  });

  describe('walks', () => {
    it('walking the followers of the demo channel with after gives every follower once, in order, with a steady total', async () => {
      const token = await broadcasterToken();
      const all = await expectedFollowers(demo);
      assert.ok(all.length > 300, `${all.length} followers: the walk crosses several pages`);
      const seen: Follower[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const res = await t.get(
          followersUrl(`?broadcaster_id=${demo}&first=100${cursor ? `&after=${cursor}` : ''}`),
          bearer(token),
        );
        assert.equal(res.statusCode, 200);
        const body = res.json();
        assert.equal(body.total, all.length);
        seen.push(...body.data);
        cursor = body.pagination.cursor;
        pages++;
      } while (cursor);
      assert.equal(pages, Math.ceil(all.length / 100));
      assert.deepEqual(seen, all);
      assert.equal(new Set(seen.map((f) => f.user_id)).size, seen.length);
    });

    it('walking the channels a user follows with after gives every channel once, in order, with a steady total', async () => {
      const token = await t.userToken([FOLLOWED_SCOPE], fan);
      const all = await expectedFollowed(fan);
      const seen: Followed[] = [];
      let cursor: string | undefined;
      do {
        const res = await t.get(
          followedUrl(`?user_id=${fan}&first=7${cursor ? `&after=${cursor}` : ''}`),
          bearer(token),
        );
        const body = res.json();
        assert.equal(body.total, all.length);
        assert.ok(body.data.length <= 7);
        seen.push(...body.data);
        cursor = body.pagination.cursor;
      } while (cursor);
      assert.ok(all.length > 20);
      assert.deepEqual(seen, all);
      assert.equal(new Set(seen.map((f) => f.broadcaster_id)).size, seen.length);
    });
  });

  describe('golden answers', () => {
    // The same seed (1, 1,000 users, TEST_NOW) gives byte-identical bodies on both stores,
    // cursors included. UPDATE_GOLDEN=1 rewrites the files from the SQLite run.
    it('answers channels-followers-first-page byte for byte', async () => {
      const res = await t.get(
        followersUrl(`?broadcaster_id=${demo}&first=4`),
        bearer(await broadcasterToken()),
      );
      assertGolden(kind, 'channels-followers-first-page.json', res.body);
    });

    it('answers channels-followers-second-page byte for byte', async () => {
      const token = await broadcasterToken();
      const c = (await t.get(followersUrl(`?broadcaster_id=${demo}&first=4`), bearer(token))).json()
        .pagination.cursor as string;
      const res = await t.get(followersUrl(`?broadcaster_id=${demo}&first=4&after=${c}`), bearer(token));
      assertGolden(kind, 'channels-followers-second-page.json', res.body);
    });

    it('answers channels-followers-total-only (app token) byte for byte', async () => {
      const res = await t.get(followersUrl(`?broadcaster_id=${demo}`), bearer(await t.appToken()));
      assertGolden(kind, 'channels-followers-total-only.json', res.body);
    });

    it('answers channels-followed byte for byte', async () => {
      const res = await t.get(
        followedUrl(`?user_id=${fan}&first=4`),
        bearer(await t.userToken([FOLLOWED_SCOPE], fan)),
      );
      assertGolden(kind, 'channels-followed.json', res.body);
    });
  });

  describe('users missing from the users table', () => {
    const ghost = 99_000_001;
    before(async () => {
      // A follower and a followed channel without a user row, most recent of all.
      await t.store.db
        .insertInto('follows')
        .values([
          { from_id: ghost, to_id: demo, followed_at: Math.floor(t.clock.now() / 1000) - 5 },
          { from_id: fan, to_id: ghost, followed_at: Math.floor(t.clock.now() / 1000) - 5 },
        ])
        .execute();
    });
    after(async () => {
      await t.store.db.deleteFrom('follows').where('from_id', '=', ghost).execute();
      await t.store.db.deleteFrom('follows').where('to_id', '=', ghost).execute();
    });

    it('a follower without a user row is counted in total but not listed', async () => {
      const res = await t.get(
        followersUrl(`?broadcaster_id=${demo}&first=5`),
        bearer(await broadcasterToken()),
      );
      const body = res.json();
      assert.equal(body.total, (await expectedFollowers(demo)).length + 1);
      assert.ok(!body.data.some((f: Follower) => f.user_id === String(ghost)));
      assert.deepEqual(body.data, (await expectedFollowers(demo)).slice(0, 5));
      const probe = await t.get(
        followersUrl(`?broadcaster_id=${demo}&user_id=${ghost}`),
        bearer(await broadcasterToken()),
      );
      assert.deepEqual(probe.json().data, []);
    });

    it('a followed channel without a user row is counted in total but not listed', async () => {
      const token = await t.userToken([FOLLOWED_SCOPE], fan);
      const body = (await t.get(followedUrl(`?user_id=${fan}&first=5`), bearer(token))).json();
      assert.equal(body.total, (await expectedFollowed(fan)).length + 1);
      assert.deepEqual(body.data, (await expectedFollowed(fan)).slice(0, 5));
    });
  });
});
