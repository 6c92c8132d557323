// GET /moderation/moderators: the moderators of the token user's own channel, by user id, with
// forward cursors; or which of the given users moderate it, in the order given; production's
// parameters, limits, token and scope rules; on both stores, expectations read from the store.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { assertGolden } from '../support/golden.ts';
import type { StoreKind } from '../support/stores.ts';

const READ = 'moderation:read';
const MANAGE = 'channel:manage:moderators';
const BEFORE_REFUSED = 'The parameter "before" is not supported by this operation; page forward with "after"';
const NOT_THE_BROADCASTER =
  "The ID in broadcaster_id must match the user ID found in the request's OAuth token.";

interface Moderator {
  user_id: string;
  user_login: string;
  user_name: string;
}

forEachStore('GET /moderation/moderators', (kind: StoreKind) => {
  let t: TestApp;
  let demo: number;
  /** a channel the demo broadcaster moderates */
  let modded: number;
  /** a user who moderates no channel and has none */
  let nobody: number;

  const url = (q: string, prefix = '/helix') => `${prefix}/moderation/moderators${q}`;
  const tokenOf = (user: number, scopes = [READ]) => t.userToken(scopes, user);

  /** The moderators of `b` whose user row exists, by user id, from the store. */
  async function expected(b: number): Promise<Moderator[]> {
    const rows = await t.store.db
      .selectFrom('moderators')
      .innerJoin('users', 'users.id', 'moderators.user_id')
      .select(['moderators.user_id', 'users.login', 'users.display_name'])
      .where('moderators.broadcaster_id', '=', b)
      .orderBy('moderators.user_id')
      .execute();
    return rows.map((r) => ({ user_id: String(r.user_id), user_login: r.login, user_name: r.display_name }));
  }

  before(async () => {
    t = await startTestApp(kind, { users: 1000 });
    demo = t.seed?.demoUserId as number;
    const db = t.store.db;
    modded = (
      await db
        .selectFrom('moderators')
        .select('broadcaster_id')
        .where('user_id', '=', demo)
        .orderBy('broadcaster_id')
        .executeTakeFirstOrThrow()
    ).broadcaster_id;
    const involved = new Set(
      (await db.selectFrom('moderators').select(['broadcaster_id', 'user_id']).execute()).flatMap((m) => [
        m.broadcaster_id,
        m.user_id,
      ]),
    );
    nobody = (await db.selectFrom('users').select('id').orderBy('id').execute())
      .map((u) => u.id)
      .find((id) => !involved.has(id)) as number;
    assert.ok(nobody);
  });
  after(() => t.close());

  describe('access and parameters', () => {
    it('answers 401 without a token, before looking at the parameters', async () => {
      const res = await t.get(url('?broadcaster_id=abc&first=0'));
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().message, 'OAuth token is missing');
    });

    it('answers 401 to an app token: a user token is required', async () => {
      const res = await t.get(url(`?broadcaster_id=${demo}`), bearer(await t.appToken()));
      assert.equal(res.statusCode, 401);
      assert.equal(
        res.json().message,
        'This operation requires a user access token; an app access token was given',
      );
    });

    it('takes moderation:read or channel:manage:moderators; a token with neither is a 401 naming both', async () => {
      for (const scopes of [[READ], [MANAGE]]) {
        const res = await t.get(url(`?broadcaster_id=${demo}`), bearer(await tokenOf(demo, scopes)));
        assert.equal(res.statusCode, 200, scopes.join());
      }
      const res = await t.get(
        url(`?broadcaster_id=${demo}`),
        bearer(await tokenOf(demo, ['moderator:read:followers'])),
      );
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().message, 'Missing scope: moderation:read or channel:manage:moderators');
    });

    it('requires broadcaster_id: missing or empty is a 400 naming it', async () => {
      const token = await tokenOf(demo);
      for (const q of ['', '?broadcaster_id=', `?user_id=${demo}`]) {
        const res = await t.get(url(q), bearer(token));
        assert.equal(res.statusCode, 400, q);
        assert.equal(res.json().message, 'Missing required parameter "broadcaster_id"', q);
      }
    });

    it('refuses a broadcaster_id that is not a numeric id, or given twice, with a 400 naming it', async () => {
      const token = await tokenOf(demo);
      for (const bad of ['abc', '-1', '1e3', '0123', '99999999999999999999']) {
        const res = await t.get(url(`?broadcaster_id=${encodeURIComponent(bad)}`), bearer(token));
        assert.equal(res.statusCode, 400, bad);
        assert.equal(
          res.json().message,
          'The parameter "broadcaster_id" was malformed: the value must be a numeric ID',
        );
      }
      const twice = await t.get(url(`?broadcaster_id=${demo}&broadcaster_id=${demo}`), bearer(token));
      assert.equal(twice.statusCode, 400);
      assert.equal(twice.json().message, 'The parameter "broadcaster_id" may be given only once');
    });

    it("answers 401 for another broadcaster's channel, even one the token's user moderates", async () => {
      const res = await t.get(url(`?broadcaster_id=${modded}`), bearer(await tokenOf(demo)));
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().message, NOT_THE_BROADCASTER);
    });

    it('takes first 1..100, default 20; anything else is a 400 naming first', async () => {
      const token = await tokenOf(demo);
      const all = await expected(demo);
      assert.equal(all.length, 8, 'the demo channel has 8 moderators');
      assert.equal(
        (await t.get(url(`?broadcaster_id=${demo}&first=1`), bearer(token))).json().data.length,
        1,
      );
      for (const f of ['0', '101', 'x', '', '2.5']) {
        const res = await t.get(url(`?broadcaster_id=${demo}&first=${f}`), bearer(token));
        assert.equal(res.statusCode, 400, f);
        assert.match(res.json().message, /"first"/, f);
      }
    });

    it('refuses before with a 400: the operation pages forward only', async () => {
      const token = await tokenOf(demo);
      const cursor = (await t.get(url(`?broadcaster_id=${demo}&first=2`), bearer(token))).json().pagination
        .cursor as string;
      for (const q of [`&before=${cursor}`, '&before=x', `&after=${cursor}&before=${cursor}`]) {
        const res = await t.get(url(`?broadcaster_id=${demo}${q}`), bearer(token));
        assert.equal(res.statusCode, 400, q);
        assert.equal(res.json().message, BEFORE_REFUSED, q);
      }
    });

    it("refuses a cursor of another channel's list, of another operation, or tampered with, as Invalid cursor.", async () => {
      const own = (await t.get(url(`?broadcaster_id=${demo}&first=2`), bearer(await tokenOf(demo)))).json()
        .pagination.cursor as string;
      const moddedToken = await tokenOf(modded);
      const foreign = await t.get(url(`?broadcaster_id=${modded}&after=${own}`), bearer(moddedToken));
      assert.equal(foreign.statusCode, 400);
      assert.equal(foreign.json().message, 'Invalid cursor.');
      const followersCursor = (
        await t.get(
          `/helix/channels/followers?broadcaster_id=${demo}&first=2`,
          bearer(await tokenOf(demo, ['moderator:read:followers'])),
        )
      ).json().pagination.cursor as string;
      const tampered = `${own.slice(0, 5)}${own[5] === 'A' ? 'B' : 'A'}${own.slice(6)}`;
      for (const cursor of [followersCursor, tampered]) {
        const res = await t.get(url(`?broadcaster_id=${demo}&after=${cursor}`), bearer(await tokenOf(demo)));
        assert.equal(res.statusCode, 400);
        assert.equal(res.json().message, 'Invalid cursor.');
      }
    });

    it('is served at /mock/moderation/moderators too, and other methods are a 405', async () => {
      const token = await tokenOf(demo);
      const a = await t.get(url(`?broadcaster_id=${demo}`), bearer(token));
      const b = await t.get(url(`?broadcaster_id=${demo}`, '/mock'), bearer(token));
      assert.equal(b.statusCode, 200);
      assert.equal(b.body, a.body);
      const post = await t.inject({
        method: 'POST',
        url: url(`?broadcaster_id=${demo}`),
        headers: { ...bearer(token), 'client-id': t.seed?.demoClientId as string },
      });
      assert.equal(post.statusCode, 405);
      assert.equal(post.headers.allow, 'GET, HEAD');
    });
  });

  describe('the list', () => {
    it('lists the moderators by user id, lowest first, with their login and display name', async () => {
      const res = await t.get(url(`?broadcaster_id=${demo}`), bearer(await tokenOf(demo)));
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.deepEqual(Object.keys(body), ['data', 'pagination']);
      assert.deepEqual(Object.keys(body.data[0]), ['user_id', 'user_login', 'user_name']);
      assert.deepEqual(body.data, await expected(demo));
      assert.deepEqual(body.pagination, {});
    });

    for (const first of [1, 3, 7]) {
      it(`walking with after and first=${first} lists every moderator once, in order`, async () => {
        const token = await tokenOf(demo);
        const all = await expected(demo);
        const seen: Moderator[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const res = await t.get(
            url(`?broadcaster_id=${demo}&first=${first}${cursor ? `&after=${cursor}` : ''}`),
            bearer(token),
          );
          assert.equal(res.statusCode, 200, res.body);
          seen.push(...res.json().data);
          cursor = res.json().pagination.cursor;
          pages++;
        } while (cursor);
        assert.deepEqual(seen, all);
        assert.equal(pages, Math.ceil(all.length / first));
      });
    }

    it('a channel without moderators: {"data":[],"pagination":{}}', async () => {
      const res = await t.get(url(`?broadcaster_id=${nobody}`), bearer(await tokenOf(nobody)));
      assert.equal(res.body, '{"data":[],"pagination":{}}');
    });

    it('a moderator without a user row is not listed (the rule of the follows lists)', async () => {
      const ghost = 99_000_001;
      await t.store.db
        .insertInto('moderators')
        .values({ broadcaster_id: demo, user_id: ghost, created_at: 1_750_000_000 })
        .execute();
      try {
        const token = await tokenOf(demo);
        const res = await t.get(url(`?broadcaster_id=${demo}`), bearer(token));
        assert.deepEqual(res.json().data, await expected(demo));
        assert.ok(!res.json().data.some((m: Moderator) => m.user_id === String(ghost)));
        const check = await t.get(url(`?broadcaster_id=${demo}&user_id=${ghost}`), bearer(token));
        assert.deepEqual(check.json().data, []);
      } finally {
        await t.store.db
          .deleteFrom('moderators')
          .where('broadcaster_id', '=', demo)
          .where('user_id', '=', ghost)
          .execute();
      }
    });
  });

  describe('given users (user_id)', () => {
    it('answers those who moderate the channel, in the order given, once each; pagination {}', async () => {
      const all = await expected(demo);
      const [m0, m1, m2] = all as [Moderator, Moderator, Moderator];
      const ids = [m2.user_id, String(nobody), m0.user_id, m2.user_id, m1.user_id, '123456789'];
      const res = await t.get(
        url(`?broadcaster_id=${demo}&${ids.map((i) => `user_id=${i}`).join('&')}`),
        bearer(await tokenOf(demo)),
      );
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), { data: [m2, m0, m1], pagination: {} });
    });

    it('is one answer: first does not cut it, and after with user_id is a 400', async () => {
      const all = await expected(demo);
      const q = all.map((m) => `user_id=${m.user_id}`).join('&');
      const token = await tokenOf(demo);
      const res = await t.get(url(`?broadcaster_id=${demo}&${q}&first=2`), bearer(token));
      assert.deepEqual(res.json().data, all);
      const cursor = (await t.get(url(`?broadcaster_id=${demo}&first=2`), bearer(token))).json().pagination
        .cursor as string;
      const paged = await t.get(url(`?broadcaster_id=${demo}&${q}&after=${cursor}`), bearer(token));
      assert.equal(paged.statusCode, 400);
      assert.equal(paged.json().message, 'The parameter "after" cannot be used with "user_id"');
    });

    it('takes at most 100 user_id values, each a numeric id: else a 400 naming the parameter', async () => {
      const token = await tokenOf(demo);
      const hundred = Array.from({ length: 100 }, (_, i) => `user_id=${i + 1}`).join('&');
      assert.equal((await t.get(url(`?broadcaster_id=${demo}&${hundred}`), bearer(token))).statusCode, 200);
      const many = await t.get(url(`?broadcaster_id=${demo}&${hundred}&user_id=101`), bearer(token));
      assert.equal(many.statusCode, 400);
      assert.equal(many.json().message, 'The parameter "user_id" may be given at most 100 times');
      for (const bad of ['abc', '', '-5']) {
        const res = await t.get(url(`?broadcaster_id=${demo}&user_id=1&user_id=${bad}`), bearer(token));
        assert.equal(res.statusCode, 400, bad);
        assert.equal(
          res.json().message,
          'The parameter "user_id" was malformed: each value must be a numeric ID',
          bad,
        );
      }
    });
  });

  describe('golden answers', () => {
    // The same seed (1, 1,000 users) gives byte-identical bodies on both stores, cursors included.
    // UPDATE_GOLDEN=1 rewrites the files from the SQLite run.
    it('answers moderators-first-page byte for byte', async () => {
      const res = await t.get(url(`?broadcaster_id=${demo}&first=3`), bearer(await tokenOf(demo)));
      assertGolden(kind, 'moderators-first-page.json', res.body);
    });

    it('answers moderators-user-ids byte for byte', async () => {
      const all = await expected(demo);
      const q = [all[5], all[1]].map((m) => `user_id=${m?.user_id}`).join('&');
      const res = await t.get(url(`?broadcaster_id=${demo}&${q}`), bearer(await tokenOf(demo)));
      assertGolden(kind, 'moderators-user-ids.json', res.body);
    });
  });
});
