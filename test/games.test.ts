import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { bearer, forEachStore, type StoreKind, startTestApp, type TestApp } from './helpers.ts';

forEachStore('GET /helix/games/top', (kind: StoreKind) => {
  let t: TestApp;
  let token: string;
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
});
