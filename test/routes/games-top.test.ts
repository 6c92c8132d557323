// GET /games/top: the games with live streams, most current viewers first (ties by id), paged both
// ways with cursors; its token, parameter and cursor rules; golden answers; a walk over more than
// 1,000 live games; the empty answer.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { assertGolden } from '../support/golden.ts';
import type { StoreKind } from '../support/stores.ts';

interface Game {
  id: string;
  name: string;
  box_art_url: string;
  igdb_id: string;
}

async function walk(t: TestApp, token: string, first: number) {
  const pages: { data: Game[]; cursor?: string }[] = [];
  let cursor: string | undefined;
  do {
    const res = await t.get(
      `/helix/games/top?first=${first}${cursor ? `&after=${cursor}` : ''}`,
      bearer(token),
    );
    assert.equal(res.statusCode, 200);
    const body = res.json();
    pages.push({ data: body.data, cursor: body.pagination.cursor });
    cursor = body.pagination.cursor;
  } while (cursor);
  return pages;
}

forEachStore('GET /helix/games/top', (kind: StoreKind) => {
  let t: TestApp;
  let token: string;
  const get = (q: string, tok = token) => t.get(`/helix/games/top?${q}`, bearer(tok));
  before(async () => {
    t = await startTestApp(kind);
    token = await t.appToken();
  });
  after(() => t.close());

  it('returns 20 games by default, most viewers first, with the Helix fields', async () => {
    const res = await t.get('/helix/games/top', bearer(token));
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.data.length, 20);
    assert.deepEqual(Object.keys(body.data[0]).sort(), ['box_art_url', 'id', 'igdb_id', 'name']);
    assert.match(body.data[0].box_art_url, /\{width\}x\{height\}/);
    assert.equal(typeof body.pagination.cursor, 'string');
    const rows = await t.store.db
      .selectFrom('games')
      .select(['id', 'viewer_count'])
      .where('stream_count', '>', 0)
      .orderBy('viewer_count', 'desc')
      .orderBy('id', 'desc')
      .limit(20)
      .execute();
    assert.deepEqual(
      body.data.map((g: { id: string }) => g.id),
      rows.map((r) => String(r.id)),
    );
  });

  it('lists only games with live streams', async () => {
    const all = [];
    let cursor: string | undefined;
    do {
      const res = await t.get(`/helix/games/top?first=100${cursor ? `&after=${cursor}` : ''}`, bearer(token));
      assert.equal(res.statusCode, 200);
      all.push(...res.json().data);
      cursor = res.json().pagination.cursor;
    } while (cursor);
    const live = await t.store.db.selectFrom('games').select('id').where('stream_count', '>', 0).execute();
    assert.equal(all.length, live.length);
    assert.equal(new Set(all.map((g) => g.id)).size, all.length);
  });

  it('is served at /mock/games/top too', async () => {
    const a = await t.get('/helix/games/top?first=3', bearer(token));
    const b = await t.get('/mock/games/top?first=3', bearer(token));
    assert.equal(b.statusCode, 200);
    assert.deepEqual(b.json().data, a.json().data);
  });

  it('accepts first as a string holding a number', async () => {
    const res = await t.get('/helix/games/top?first=7', bearer(token));
    assert.equal(res.json().data.length, 7);
  });

  for (const [first, message] of [
    ['101', 'The parameter "first" was malformed: the value must be less than or equal to 100'],
    ['0', 'The parameter "first" was malformed: the value must be greater than or equal to 1'],
    ['ten', 'The parameter "first" was malformed: the value must be an integer'],
    ['2.5', 'The parameter "first" was malformed: the value must be an integer'],
  ]) {
    it(`rejects first=${first} with 400`, async () => {
      const res = await t.get(`/helix/games/top?first=${first}`, bearer(token));
      assert.equal(res.statusCode, 400);
      assert.deepEqual(res.json(), { error: 'Bad Request', status: 400, message });
    });
  }

  it('walks forward with after and back with before over the same pages', async () => {
    const pages: { data: { id: string }[]; cursor?: string }[] = [];
    let cursor: string | undefined;
    do {
      const res = await t.get(`/helix/games/top?first=7${cursor ? `&after=${cursor}` : ''}`, bearer(token));
      const body = res.json();
      pages.push({ data: body.data, cursor: body.pagination.cursor });
      cursor = body.pagination.cursor;
    } while (cursor);
    assert.ok(pages.length > 2);
    // page N's cursor with before gives page N-1
    for (let n = pages.length - 2; n >= 1; n--) {
      const res = await t.get(`/helix/games/top?first=7&before=${pages[n]?.cursor}`, bearer(token));
      assert.deepEqual(res.json().data, pages[n - 1]?.data);
    }
    const last = pages[pages.length - 1];
    assert.deepEqual(Object.keys(last ?? {}).includes('cursor') ? last?.cursor : undefined, undefined);
  });

  it('ends with "pagination": {} on the last page', async () => {
    const res = await t.get('/helix/games/top?first=100', bearer(token));
    assert.deepEqual(res.json().pagination, {});
  });

  it('rejects a tampered cursor with 400 Invalid cursor.', async () => {
    const c = (await t.get('/helix/games/top?first=2', bearer(token))).json().pagination.cursor as string;
    const tampered = `${c.slice(0, 5)}${c[5] === 'A' ? 'B' : 'A'}${c.slice(6)}`;
    for (const bad of [tampered, 'garbage', `${c}x`, '.', 'a.b']) {
      const res = await t.get(`/helix/games/top?after=${encodeURIComponent(bad)}`, bearer(token));
      assert.equal(res.statusCode, 400, bad);
      assert.equal(res.json().message, 'Invalid cursor.');
    }
  });

  it('rejects after and before together with 400', async () => {
    const c = (await t.get('/helix/games/top?first=2', bearer(token))).json().pagination.cursor as string;
    const res = await t.get(`/helix/games/top?after=${c}&before=${c}`, bearer(token));
    assert.equal(res.statusCode, 400);
    assert.match(res.json().message, /"after" and "before"/);
  });

  it('answers 401 without a token, before looking at parameters', async () => {
    const res = await t.get('/helix/games/top?first=1000');
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), { error: 'Unauthorized', status: 401, message: 'OAuth token is missing' });
  });

  it('answers 401 for an unknown token', async () => {
    const res = await t.get('/helix/games/top', bearer('notatoken'));
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().message, 'Invalid OAuth token');
  });

  it('orders games by the sum of current viewers of their live streams, most first, ties by id', async () => {
    const streams = await t.store.db.selectFrom('streams').select(['game_id', 'viewer_count']).execute();
    const sums = new Map<number, number>();
    for (const s of streams) sums.set(s.game_id, (sums.get(s.game_id) ?? 0) + s.viewer_count);
    const expected = [...sums].sort((a, b) => b[1] - a[1] || b[0] - a[0]).map(([id]) => String(id));
    const got = (await walk(t, token, 100)).flatMap((p) => p.data.map((g) => g.id));
    assert.deepEqual(got, expected);
  });

  it('returns the Helix Game fields: id, name, box_art_url with {width}x{height}, igdb_id ("" when unknown)', async () => {
    const games = new Map(
      (await t.store.db.selectFrom('games').selectAll().execute()).map((g) => [String(g.id), g]),
    );
    const all = (await walk(t, token, 100)).flatMap((p) => p.data);
    for (const g of all) {
      const row = games.get(g.id);
      assert.ok(row);
      assert.deepEqual(g, {
        id: String(row.id),
        name: row.name,
        box_art_url: `https://streams.example.com/media/box-art/${row.id}-{width}x{height}.jpg`,
        igdb_id: row.igdb_id,
      });
    }
    assert.ok(all.some((g) => g.igdb_id === '') && all.some((g) => g.igdb_id !== ''));
  });

  it('accepts a user access token as well as an app access token', async () => {
    const a = await get('first=5');
    const b = await get('first=5', await t.userToken([]));
    assert.equal(b.statusCode, 200);
    assert.equal(b.body, a.body);
  });

  it('first is a string holding a decimal number: 1e1, 0x10, " 5", 10.0, "" and a repeated first are a 400', async () => {
    assert.equal((await get('first=05')).json().data.length, 5);
    for (const v of ['1e1', '0x10', '%205', '10.0', '', '5&first=6']) {
      const res = await get(`first=${v}`);
      assert.equal(res.statusCode, 400, v);
      assert.equal(res.json().message, 'The parameter "first" was malformed: the value must be an integer');
    }
    assert.equal((await get('first=100')).statusCode, 200);
  });

  it('ignores unknown parameters', async () => {
    const a = await get('first=4');
    const b = await get('first=4&game_id=1&foo=bar&sort=views');
    assert.equal(b.body, a.body);
  });

  it('rejects a cursor of another operation (a /subscriptions cursor) with 400 Invalid cursor.', async () => {
    const demo = t.seed?.demoUserId as number;
    const sub = await t.get(
      `/helix/subscriptions?broadcaster_id=${demo}&first=2`,
      bearer(await t.userToken(['channel:read:subscriptions'])),
    );
    const c = sub.json().pagination.cursor as string;
    for (const p of ['after', 'before']) {
      const res = await get(`${p}=${c}`);
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().message, 'Invalid cursor.');
    }
  });

  it('a cursor issued with one first value serves any other first (first is not part of the query)', async () => {
    const p1 = (await get('first=3')).json();
    const all = (await get('first=10')).json().data;
    const next = (await get(`first=5&after=${p1.pagination.cursor}`)).json().data;
    assert.deepEqual(next, all.slice(3, 8));
  });

  // Golden answers: seed 1, 200 users, TEST_NOW; byte-identical on both stores, cursors included.
  // The files hold the body indented; the wire body must equal their compact form byte for byte.
  // UPDATE_GOLDEN=1 rewrites them (from the SQLite run).
  describe('golden answers', () => {
    const check = async (file: string, q: string) => {
      const res = await get(q);
      assert.equal(res.statusCode, 200);
      assertGolden(kind, file, res.body);
    };
    it('answers games-top-first-page byte for byte as test/golden/games-top-first-page.json', () =>
      check('games-top-first-page.json', 'first=5'));
    it('answers games-top-third-page byte for byte as test/golden/games-top-third-page.json', async () => {
      const p1 = (await get('first=5')).json();
      const p2 = (await get(`first=5&after=${p1.pagination.cursor}`)).json();
      await check('games-top-third-page.json', `first=5&after=${p2.pagination.cursor}`);
    });
    it('answers games-top-last-page byte for byte as test/golden/games-top-last-page.json', async () => {
      const pages = await walk(t, token, 15);
      const cursor = pages[pages.length - 2]?.cursor as string;
      await check('games-top-last-page.json', `first=15&after=${cursor}`);
    });
  });
});

// More than 1,000 games with live streams, many of them tied on viewers: the demo data has at most
// 2,000 games and one per 50 users, so the extra games are written straight into the store.
forEachStore('GET /helix/games/top walk', (kind: StoreKind) => {
  let t: TestApp;
  let token: string;
  before(async () => {
    t = await startTestApp(kind, { users: 100 });
    token = await t.appToken();
    const extra = Array.from({ length: 1200 }, (_, i) => ({
      id: 900_000 + i,
      name: `Extra game ${i}`,
      igdb_id: '',
      owner_id: null,
      // runs of equal viewer counts, so that the id decides many places
      viewer_count: Math.floor(i / 7) * 3,
      stream_count: i % 10 === 0 ? 0 : 1,
    }));
    for (let i = 0; i < extra.length; i += 200)
      await t.store.db
        .insertInto('games')
        .values(extra.slice(i, i + 200))
        .execute();
  });
  after(() => t.close());

  it('walks every live game once, most viewers first with ties by id, and back with before', async () => {
    const rows = await t.store.db
      .selectFrom('games')
      .select('id')
      .where('stream_count', '>', 0)
      .orderBy('viewer_count', 'desc')
      .orderBy('id', 'desc')
      .execute();
    assert.ok(rows.length > 1000, `only ${rows.length} games`);
    const pages = await walk(t, token, 17);
    assert.deepEqual(
      pages.flatMap((p) => p.data.map((g) => g.id)),
      rows.map((r) => String(r.id)),
    );
    // page N's cursor with before gives page N-1 (the last page carries no cursor of its own)
    for (let n = pages.length - 2; n >= 1; n--) {
      const body = (
        await t.get(`/helix/games/top?first=17&before=${pages[n]?.cursor}`, bearer(token))
      ).json();
      assert.deepEqual(body.data, pages[n - 1]?.data, `page ${n - 1}`);
      assert.equal(body.pagination.cursor === undefined, n === 1);
    }
  });
});

// Shared rule: an empty result is {"data": [], "pagination": {}}.
forEachStore('GET /helix/games/top with nothing live', (kind: StoreKind) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(kind, { users: 20 });
    await t.store.db.updateTable('games').set({ stream_count: 0, viewer_count: 0 }).execute();
  });
  after(() => t.close());

  it('answers {"data": [], "pagination": {}} when no game has a live stream', async () => {
    const res = await t.get('/helix/games/top', bearer(await t.appToken()));
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '{"data":[],"pagination":{}}');
  });
});
