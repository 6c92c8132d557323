// GET /subscriptions/user (Check User Subscription): the token user's own subscription to a
// broadcaster, production's fields (the gifter's only for a gift), or production's 404; every
// parameter and access rule; on both stores, expectations read from the store.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { SubscriptionRow } from '../../src/store/schema.ts';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { assertGolden } from '../support/golden.ts';
import type { StoreKind } from '../support/stores.ts';

const SCOPE = 'user:read:subscriptions';
const NOT_THE_TOKEN_USER = "The ID in user_id must match the user ID found in the request's OAuth token.";

forEachStore('GET /subscriptions/user', (kind: StoreKind) => {
  let t: TestApp;
  let demo: number;
  /** a subscription that is not a gift, and one that is */
  let plain: SubscriptionRow;
  let gift: SubscriptionRow;

  const url = (q: string, prefix = '/helix') => `${prefix}/subscriptions/user${q}`;
  const tokenOf = (user: number, scopes = [SCOPE]) => t.userToken(scopes, user);
  const check = async (broadcaster: number | string, user: number, token?: string) =>
    t.get(url(`?broadcaster_id=${broadcaster}&user_id=${user}`), bearer(token ?? (await tokenOf(user))));

  /** The names the users table holds for `id`. */
  async function names(id: number | null): Promise<{ login: string; display_name: string }> {
    const u = await t.store.db
      .selectFrom('users')
      .select(['login', 'display_name'])
      .where('id', '=', id ?? -1)
      .executeTakeFirstOrThrow();
    return u;
  }

  before(async () => {
    t = await startTestApp(kind, { users: 400 });
    demo = t.seed?.demoUserId as number;
    const db = t.store.db;
    // The first subscription of each kind, in (broadcaster, user) order.
    const subs = (await db
      .selectFrom('subscriptions')
      .selectAll()
      .orderBy('broadcaster_id')
      .orderBy('user_id')
      .execute()) as SubscriptionRow[];
    plain = subs.find((s) => s.is_gift === 0) as SubscriptionRow;
    gift = subs.find((s) => s.is_gift === 1 && s.gifter_id !== null) as SubscriptionRow;
    assert.ok(plain && gift, 'the demo data has plain and gifted subscriptions');
  });
  after(() => t.close());

  describe('access and parameters', () => {
    it('answers 401 without a token, before looking at the parameters', async () => {
      const res = await t.get(url('?broadcaster_id=abc'));
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().message, 'OAuth token is missing');
    });

    it('answers 401 to an app token: a user token is required', async () => {
      const res = await t.get(
        url(`?broadcaster_id=${plain.broadcaster_id}&user_id=${plain.user_id}`),
        bearer(await t.appToken()),
      );
      assert.equal(res.statusCode, 401);
      assert.equal(
        res.json().message,
        'This operation requires a user access token; an app access token was given',
      );
    });

    it("answers 401 to a user token without user:read:subscriptions (the broadcaster's scope is another)", async () => {
      const token = await tokenOf(plain.user_id, ['channel:read:subscriptions']);
      const res = await check(plain.broadcaster_id, plain.user_id, token);
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().message, 'Missing scope: user:read:subscriptions');
    });

    it('requires broadcaster_id and user_id: missing or empty is a 400 naming the first missing', async () => {
      const token = await tokenOf(demo);
      for (const [q, name] of [
        ['', 'broadcaster_id'],
        [`?user_id=${demo}`, 'broadcaster_id'],
        [`?broadcaster_id=&user_id=${demo}`, 'broadcaster_id'],
        [`?broadcaster_id=${plain.broadcaster_id}`, 'user_id'],
        [`?broadcaster_id=${plain.broadcaster_id}&user_id=`, 'user_id'],
      ] as const) {
        const res = await t.get(url(q), bearer(token));
        assert.equal(res.statusCode, 400, q);
        assert.equal(res.json().message, `Missing required parameter "${name}"`, q);
      }
    });

    it('refuses an id that is not a numeric id, or one given twice, with a 400 naming it', async () => {
      const token = await tokenOf(demo);
      for (const bad of ['abc', '-1', '1.5', '0x10', '99999999999999999999']) {
        for (const [name, q] of [
          ['broadcaster_id', `?broadcaster_id=${encodeURIComponent(bad)}&user_id=${demo}`],
          ['user_id', `?broadcaster_id=${plain.broadcaster_id}&user_id=${encodeURIComponent(bad)}`],
        ] as const) {
          const res = await t.get(url(q), bearer(token));
          assert.equal(res.statusCode, 400, q);
          assert.equal(
            res.json().message,
            `The parameter "${name}" was malformed: the value must be a numeric ID`,
            q,
          );
        }
      }
      for (const q of [
        `?broadcaster_id=1&broadcaster_id=2&user_id=${demo}`,
        `?broadcaster_id=1&user_id=${demo}&user_id=${demo}`,
      ]) {
        const res = await t.get(url(q), bearer(token));
        assert.equal(res.statusCode, 400, q);
        assert.match(res.json().message, /may be given only once/, q);
      }
    });

    it("answers 401 when user_id is another user's id, even one who subscribes", async () => {
      const res = await check(
        plain.broadcaster_id,
        plain.user_id,
        await tokenOf(demo === plain.user_id ? gift.user_id : demo),
      );
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().message, NOT_THE_TOKEN_USER);
    });

    it('is served at /mock/subscriptions/user too, and other methods are a 405', async () => {
      const token = await tokenOf(plain.user_id);
      const q = `?broadcaster_id=${plain.broadcaster_id}&user_id=${plain.user_id}`;
      const a = await t.get(url(q), bearer(token));
      const b = await t.get(url(q, '/mock'), bearer(token));
      assert.equal(b.statusCode, 200);
      assert.equal(b.body, a.body);
      const del = await t.inject({
        method: 'DELETE',
        url: url(q),
        headers: { ...bearer(token), 'client-id': t.seed?.demoClientId as string },
      });
      assert.equal(del.statusCode, 405);
      assert.equal(del.headers.allow, 'GET, HEAD');
    });
  });

  describe('the answer', () => {
    it('a subscription that is not a gift: the broadcaster, is_gift false and the tier; no gifter fields at all', async () => {
      const res = await check(plain.broadcaster_id, plain.user_id);
      assert.equal(res.statusCode, 200);
      const b = await names(plain.broadcaster_id);
      // The exact body: production's keys in its order, no pagination.
      assert.equal(
        res.body,
        JSON.stringify({
          data: [
            {
              broadcaster_id: String(plain.broadcaster_id),
              broadcaster_login: b.login,
              broadcaster_name: b.display_name,
              is_gift: false,
              tier: plain.tier,
            },
          ],
        }),
      );
    });

    it('a gift: the gifter id, login and name come before is_gift true and the tier', async () => {
      const res = await check(gift.broadcaster_id, gift.user_id);
      assert.equal(res.statusCode, 200);
      const b = await names(gift.broadcaster_id);
      const g = await names(gift.gifter_id);
      assert.equal(
        res.body,
        JSON.stringify({
          data: [
            {
              broadcaster_id: String(gift.broadcaster_id),
              broadcaster_login: b.login,
              broadcaster_name: b.display_name,
              gifter_id: String(gift.gifter_id),
              gifter_login: g.login,
              gifter_name: g.display_name,
              is_gift: true,
              tier: gift.tier,
            },
          ],
        }),
      );
    });

    it("no subscription is production's 404, naming the user and the broadcaster by id", async () => {
      // The user's own channel, a channel it does not subscribe to, and a broadcaster unknown to the store.
      const subscribed = new Set(
        (
          await t.store.db
            .selectFrom('subscriptions')
            .select('broadcaster_id')
            .where('user_id', '=', plain.user_id)
            .execute()
        ).map((s) => s.broadcaster_id),
      );
      const other = (await t.store.db.selectFrom('users').select('id').orderBy('id').execute())
        .map((u) => u.id)
        .find((id) => !subscribed.has(id) && id !== plain.user_id) as number;
      for (const b of [plain.user_id, other, 123456789]) {
        const res = await check(b, plain.user_id);
        assert.equal(res.statusCode, 404, String(b));
        assert.equal(
          res.body,
          JSON.stringify({
            error: 'Not Found',
            status: 404,
            message: `${plain.user_id} does not subscribe to ${b}`,
          }),
        );
      }
    });

    it('a subscription whose broadcaster or gifter has no user row answers "" for their names', async () => {
      const ghost = 99_000_001;
      const ghostGifter = 99_000_002;
      await t.store.db
        .insertInto('subscriptions')
        .values({
          broadcaster_id: ghost,
          user_id: demo,
          tier: '2000',
          plan_name: 'Channel Subscription (ghost)',
          is_gift: 1,
          gifter_id: ghostGifter,
          created_at: 1_750_000_000,
        })
        .execute();
      try {
        const res = await check(ghost, demo);
        assert.equal(res.statusCode, 200);
        assert.deepEqual(res.json().data, [
          {
            broadcaster_id: String(ghost),
            broadcaster_login: '',
            broadcaster_name: '',
            gifter_id: String(ghostGifter),
            gifter_login: '',
            gifter_name: '',
            is_gift: true,
            tier: '2000',
          },
        ]);
      } finally {
        await t.store.db
          .deleteFrom('subscriptions')
          .where('broadcaster_id', '=', ghost)
          .where('user_id', '=', demo)
          .execute();
      }
    });

    it('answers every subscription of the demo broadcaster to other channels from the store', async () => {
      const own = await t.store.db
        .selectFrom('subscriptions')
        .selectAll()
        .where('user_id', '=', demo)
        .execute();
      assert.ok(own.length > 0, 'the demo broadcaster subscribes to other channels');
      const token = await tokenOf(demo);
      for (const s of own) {
        const res = await check(s.broadcaster_id, demo, token);
        assert.equal(res.statusCode, 200);
        const [d] = res.json().data;
        assert.equal(d.broadcaster_id, String(s.broadcaster_id));
        assert.equal(d.tier, s.tier);
        assert.equal(d.is_gift, s.is_gift === 1);
        assert.equal('gifter_id' in d, s.is_gift === 1);
      }
    });
  });

  describe('golden answers', () => {
    // The same seed (1, 400 users) gives byte-identical bodies on both stores.
    // UPDATE_GOLDEN=1 rewrites the files from the SQLite run.
    it('answers subscriptions-check-user-gift byte for byte', async () => {
      assertGolden(
        kind,
        'subscriptions-check-user-gift.json',
        (await check(gift.broadcaster_id, gift.user_id)).body,
      );
    });

    it('answers subscriptions-check-user-plain byte for byte', async () => {
      assertGolden(
        kind,
        'subscriptions-check-user-plain.json',
        (await check(plain.broadcaster_id, plain.user_id)).body,
      );
    });
  });
});
