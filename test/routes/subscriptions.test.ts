import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TIER_POINTS } from '../../src/store/subscriptions.ts';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { assertGolden } from '../support/golden.ts';
import type { StoreKind } from '../support/stores.ts';

const SCOPE = 'channel:read:subscriptions';

interface Sub {
  user_id: string;
  [k: string]: unknown;
}

/** The broadcaster's subscriptions straight from the store, in the documented order. */
async function storeOrder(t: TestApp, broadcasterId: number) {
  return t.store.db
    .selectFrom('subscriptions')
    .selectAll()
    .where('broadcaster_id', '=', broadcasterId)
    .orderBy('created_at', 'desc')
    .orderBy('user_id', 'desc')
    .execute();
}

forEachStore('GET /helix/subscriptions', (kind: StoreKind) => {
  let t: TestApp;
  let token: string;
  let demo: number;
  const get = (q: string, tok = token) => t.get(`/helix/subscriptions?${q}`, bearer(tok));
  before(async () => {
    t = await startTestApp(kind);
    token = await t.userToken([SCOPE]);
    demo = t.seed?.demoUserId as number;
  });
  after(() => t.close());

  it('returns the Helix Subscription fields, with total and points at the top level', async () => {
    const res = await get(`broadcaster_id=${demo}`);
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(Object.keys(body), ['data', 'pagination', 'total', 'points']);
    assert.equal(body.data.length, 20);
    assert.deepEqual(Object.keys(body.data[0]), [
      'broadcaster_id',
      'broadcaster_login',
      'broadcaster_name',
      'gifter_id',
      'gifter_login',
      'gifter_name',
      'is_gift',
      'plan_name',
      'tier',
      'user_id',
      'user_name',
      'user_login',
    ]);
    const rows = await storeOrder(t, demo);
    const users = new Map(
      (await t.store.db.selectFrom('users').selectAll().execute()).map((u) => [String(u.id), u]),
    );
    const b = users.get(String(demo));
    for (const [i, s] of body.data.entries()) {
      const r = rows[i];
      assert.ok(r);
      assert.equal(s.user_id, String(r.user_id));
      assert.equal(s.broadcaster_id, String(demo));
      assert.equal(s.broadcaster_login, b?.login);
      assert.equal(s.broadcaster_name, b?.display_name);
      assert.equal(s.user_login, users.get(s.user_id)?.login);
      assert.equal(s.user_name, users.get(s.user_id)?.display_name);
      assert.equal(s.tier, r.tier);
      assert.equal(s.plan_name, r.plan_name);
      assert.equal(s.is_gift, r.is_gift === 1);
    }
  });

  it('total counts all subscribers of the broadcaster and points weighs Tier 1/2/3 as 1/2/6', async () => {
    const rows = await storeOrder(t, demo);
    const byTier = { '1000': 0, '2000': 0, '3000': 0 };
    for (const r of rows) byTier[r.tier]++;
    // every tier is present, so a wrong weight shows
    assert.ok(byTier['1000'] > 0 && byTier['2000'] > 0 && byTier['3000'] > 0);
    const body = (await get(`broadcaster_id=${demo}&first=1`)).json();
    assert.equal(body.total, rows.length);
    assert.equal(body.points, byTier['1000'] * 1 + byTier['2000'] * 2 + byTier['3000'] * 6);
    assert.deepEqual(TIER_POINTS, { '1000': 1, '2000': 2, '3000': 6 });
  });

  it('total and points follow writes to the subscriptions table (kept by triggers)', async () => {
    const other = (
      await t.store.db.selectFrom('users').select('id').orderBy('id', 'desc').limit(3).execute()
    ).map((u) => u.id);
    const b = other[0] as number;
    const tok = await t.userToken([SCOPE], b);
    const before = (await get(`broadcaster_id=${b}&first=1`, tok)).json();
    await t.store.db.deleteFrom('subscriptions').where('broadcaster_id', '=', b).execute();
    await t.store.db
      .insertInto('subscriptions')
      .values([
        {
          broadcaster_id: b,
          user_id: other[1] as number,
          tier: '3000',
          plan_name: 'p',
          is_gift: 0,
          gifter_id: null,
          created_at: 1,
        },
        {
          broadcaster_id: b,
          user_id: other[2] as number,
          tier: '2000',
          plan_name: 'p',
          is_gift: 0,
          gifter_id: null,
          created_at: 2,
        },
      ])
      .execute();
    let body = (await get(`broadcaster_id=${b}`, tok)).json();
    assert.deepEqual([body.total, body.points], [2, 8], JSON.stringify(before));
    await t.store.db
      .updateTable('subscriptions')
      .set({ tier: '1000' })
      .where('broadcaster_id', '=', b)
      .execute();
    body = (await get(`broadcaster_id=${b}`, tok)).json();
    assert.deepEqual([body.total, body.points], [2, 2]);
    await t.store.db
      .deleteFrom('subscriptions')
      .where('user_id', '=', other[1] as number)
      .where('broadcaster_id', '=', b)
      .execute();
    body = (await get(`broadcaster_id=${b}`, tok)).json();
    assert.deepEqual([body.total, body.points, body.data.length], [1, 1, 1]);
  });

  it('gifter fields are "" when the subscription is not a gift, and name the gifter when it is', async () => {
    const rows = await storeOrder(t, demo);
    const gifted = rows.filter((r) => r.is_gift === 1);
    assert.ok(gifted.length > 0 && gifted.length < rows.length);
    const all: Record<string, unknown>[] = (await get(`broadcaster_id=${demo}&first=100`)).json().data;
    for (const s of all) {
      if (s.is_gift) {
        const r = gifted.find((g) => String(g.user_id) === s.user_id);
        assert.equal(s.gifter_id, String(r?.gifter_id));
        assert.ok((s.gifter_login as string).length > 0 && (s.gifter_name as string).length > 0);
      } else {
        assert.deepEqual([s.gifter_id, s.gifter_login, s.gifter_name], ['', '', '']);
      }
    }
    assert.ok(all.some((s) => s.is_gift) && all.some((s) => !s.is_gift));
  });

  it('orders by subscription time, most recent first, ties by user id (higher first)', async () => {
    const rows = await storeOrder(t, demo);
    const all: Sub[] = (await get(`broadcaster_id=${demo}&first=100`)).json().data;
    assert.deepEqual(
      all.map((s) => s.user_id),
      rows.slice(0, 100).map((r) => String(r.user_id)),
    );
  });

  it('requires broadcaster_id: 400 Missing required parameter "broadcaster_id"', async () => {
    for (const q of ['', 'broadcaster_id=', 'first=5']) {
      const res = await get(q);
      assert.equal(res.statusCode, 400, q);
      assert.deepEqual(res.json(), {
        error: 'Bad Request',
        status: 400,
        message: 'Missing required parameter "broadcaster_id"',
      });
    }
  });

  it("broadcaster_id must equal the token's user: 401 with the Helix message", async () => {
    const someoneElse = (await storeOrder(t, demo))[0]?.user_id as number;
    const res = await get(`broadcaster_id=${someoneElse}`);
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), {
      error: 'Unauthorized',
      status: 401,
      message: "The ID in broadcaster_id must match the user ID found in the request's OAuth token.",
    });
  });

  it('broadcaster_id is given once and is a numeric id (400 naming it otherwise)', async () => {
    for (const q of [`broadcaster_id=${demo}&broadcaster_id=${demo}`, 'broadcaster_id=abc']) {
      const res = await get(q);
      assert.equal(res.statusCode, 400, q);
      assert.match(res.json().message, /"broadcaster_id"/);
    }
  });

  it('needs a user access token: an app token is a 401', async () => {
    const res = await get(`broadcaster_id=${demo}`, await t.appToken());
    assert.equal(res.statusCode, 401);
    assert.match(res.json().message, /user access token/);
  });

  it('needs the scope channel:read:subscriptions: 401 Missing scope', async () => {
    const res = await get(`broadcaster_id=${demo}`, await t.userToken(['user:read:broadcast']));
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().message, 'Missing scope: channel:read:subscriptions');
  });

  it('answers 401 without a token, before looking at parameters', async () => {
    const res = await t.get('/helix/subscriptions?first=500');
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().message, 'OAuth token is missing');
  });

  it('user_id checks the given users (repeatable): their subscriptions only, no cursor', async () => {
    const rows = await storeOrder(t, demo);
    const pick = [rows[40], rows[3], rows[17]].map((r) => String(r?.user_id));
    const notSub = String(demo); // the broadcaster does not subscribe to itself
    const res = await get(
      `broadcaster_id=${demo}&${[...pick, notSub, pick[0]].map((u) => `user_id=${u}`).join('&')}`,
    );
    assert.equal(res.statusCode, 200);
    const body = res.json();
    // documented order (most recent first), duplicates and non-subscribers left out
    assert.deepEqual(
      body.data.map((s: Sub) => s.user_id),
      [rows[3], rows[17], rows[40]].map((r) => String(r?.user_id)),
    );
    assert.deepEqual(body.pagination, {});
    assert.equal(body.total, rows.length);
  });

  it('user_id takes at most 100 values: 101 is a 400', async () => {
    const ids = Array.from({ length: 101 }, (_, i) => `user_id=${41_000_000 + i}`).join('&');
    const res = await get(`broadcaster_id=${demo}&${ids}`);
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().message, 'The parameter "user_id" may be given at most 100 times');
    const ok = await get(`broadcaster_id=${demo}&${ids.replace(/&user_id=41000100$/, '')}`);
    assert.equal(ok.statusCode, 200);
  });

  it('user_id with after or before is a 400 (a check of given users has no pages)', async () => {
    const c = (await get(`broadcaster_id=${demo}&first=2`)).json().pagination.cursor;
    const res = await get(`broadcaster_id=${demo}&user_id=${demo}&after=${c}`);
    assert.equal(res.statusCode, 400);
    assert.match(res.json().message, /"after" cannot be used with "user_id"/);
  });

  it('first: default 20, at most 100; 0, 101 and non-numbers are a 400 naming "first"', async () => {
    assert.equal((await get(`broadcaster_id=${demo}`)).json().data.length, 20);
    assert.equal((await get(`broadcaster_id=${demo}&first=100`)).json().data.length, 100);
    for (const [v, m] of [
      ['101', 'must be less than or equal to 100'],
      ['0', 'must be greater than or equal to 1'],
      ['x', 'must be an integer'],
    ]) {
      const res = await get(`broadcaster_id=${demo}&first=${v}`);
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().message, `The parameter "first" was malformed: the value ${m}`);
    }
  });

  it('after is the forward cursor and before the backward one: before on page N gives page N-1', async () => {
    const p1 = (await get(`broadcaster_id=${demo}&first=5`)).json();
    const p2 = (await get(`broadcaster_id=${demo}&first=5&after=${p1.pagination.cursor}`)).json();
    const p3 = (await get(`broadcaster_id=${demo}&first=5&after=${p2.pagination.cursor}`)).json();
    assert.deepEqual((await get(`broadcaster_id=${demo}&first=5&before=${p3.pagination.cursor}`)).json(), p2);
    const back1 = (await get(`broadcaster_id=${demo}&first=5&before=${p2.pagination.cursor}`)).json();
    assert.deepEqual(back1.data, p1.data);
    // page 1 reached walking back: nothing lies before it
    assert.deepEqual(back1.pagination, {});
  });

  it('the last page has "pagination": {}', async () => {
    let body = (await get(`broadcaster_id=${demo}&first=100`)).json();
    while (body.pagination.cursor)
      body = (await get(`broadcaster_id=${demo}&first=100&after=${body.pagination.cursor}`)).json();
    assert.deepEqual(body.pagination, {});
    assert.ok(body.data.length > 0);
  });

  it('rejects malformed, tampered and foreign cursors and after with before: 400', async () => {
    const c = (await get(`broadcaster_id=${demo}&first=2`)).json().pagination.cursor as string;
    const games = (await t.get('/helix/games/top?first=2', bearer(token))).json().pagination.cursor as string;
    const tampered = `${c.slice(0, 3)}${c[3] === 'A' ? 'B' : 'A'}${c.slice(4)}`;
    for (const bad of ['garbage', tampered, games]) {
      const res = await get(`broadcaster_id=${demo}&after=${encodeURIComponent(bad)}`);
      assert.equal(res.statusCode, 400, bad);
      assert.equal(res.json().message, 'Invalid cursor.');
    }
    const both = await get(`broadcaster_id=${demo}&after=${c}&before=${c}`);
    assert.equal(both.statusCode, 400);
  });

  it('a broadcaster without subscribers gets {"data": [], "pagination": {}} with total 0 and points 0', async () => {
    const subscribed = new Set(
      (await t.store.db.selectFrom('subscriptions').select('broadcaster_id').distinct().execute()).map(
        (r) => r.broadcaster_id,
      ),
    );
    const users = await t.store.db.selectFrom('users').select('id').execute();
    const lonely = users.find((u) => !subscribed.has(u.id))?.id as number;
    const res = await get(`broadcaster_id=${lonely}`, await t.userToken([SCOPE], lonely));
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '{"data":[],"pagination":{},"total":0,"points":0}');
  });

  it('ignores unknown parameters and is served at /mock/subscriptions too', async () => {
    const a = await get(`broadcaster_id=${demo}&first=3`);
    const b = await t.get(`/mock/subscriptions?broadcaster_id=${demo}&first=3&color=blue`, bearer(token));
    assert.equal(b.statusCode, 200);
    assert.equal(b.body, a.body);
  });

  // Golden answers: seed 1, 200 users, TEST_NOW; byte-identical on both stores, cursors included.
  // The files hold the body indented; the wire body must equal their compact form byte for byte.
  // UPDATE_GOLDEN=1 rewrites them (from the SQLite run).
  describe('golden answers', () => {
    for (const [file, q] of [
      ['subscriptions-first-page.json', () => `broadcaster_id=${demo}&first=4`],
      [
        'subscriptions-user-ids.json',
        () => `broadcaster_id=${demo}&user_id=41001946&user_id=41006114&user_id=1`,
      ],
    ] as const) {
      it(`answers ${file.replace('.json', '')} byte for byte as test/golden/${file}`, async () => {
        const res = await get(q());
        assert.equal(res.statusCode, 200);
        assert.ok(res.json().data.length > 0);
        assertGolden(kind, file, res.body);
      });
    }
    it('answers subscriptions-second-page byte for byte as test/golden/subscriptions-second-page.json', async () => {
      const c = (await get(`broadcaster_id=${demo}&first=4`)).json().pagination.cursor;
      const res = await get(`broadcaster_id=${demo}&first=4&after=${c}`);
      assertGolden(kind, 'subscriptions-second-page.json', res.body);
    });
  });
});

// More than 1,000 subscriptions of one broadcaster (the demo broadcaster gets about users/2):
// every row exactly once in the documented order forward, and the same pages in reverse with `before`.
forEachStore('GET /helix/subscriptions walk', (kind: StoreKind) => {
  let t: TestApp;
  let token: string;
  before(async () => {
    t = await startTestApp(kind, { users: 2500 });
    token = await t.userToken([SCOPE]);
  });
  after(() => t.close());

  it('walks every subscription once, most recent first, and back with before over the same pages', async () => {
    const demo = t.seed?.demoUserId as number;
    const rows = await storeOrder(t, demo);
    assert.ok(rows.length > 1000, `only ${rows.length} subscriptions`);
    const url = (extra: string) => `/helix/subscriptions?broadcaster_id=${demo}&first=37${extra}`;
    const pages: { data: Sub[]; cursor?: string }[] = [];
    let cursor: string | undefined;
    do {
      const res = await t.get(url(cursor ? `&after=${cursor}` : ''), bearer(token));
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.equal(body.total, rows.length);
      pages.push({ data: body.data, cursor: body.pagination.cursor });
      cursor = body.pagination.cursor;
    } while (cursor);
    const walked = pages.flatMap((p) => p.data.map((s) => s.user_id));
    assert.deepEqual(
      walked,
      rows.map((r) => String(r.user_id)),
    );
    // page N's cursor with before gives page N-1 (the last page carries no cursor of its own)
    for (let n = pages.length - 2; n >= 1; n--) {
      const body = (await t.get(url(`&before=${pages[n]?.cursor}`), bearer(token))).json();
      assert.deepEqual(body.data, pages[n - 1]?.data, `page ${n - 1}`);
      assert.equal(body.pagination.cursor === undefined, n === 1);
    }
  });
});
