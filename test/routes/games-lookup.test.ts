// GET /games: games by id, exact name and IGDB id (repeatable, 100 together), with the wire shape
// of GET /games/top's games and no pagination.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { GameRow } from '../../src/store/schema.ts';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { assertGolden } from '../support/golden.ts';
import type { StoreKind } from '../support/stores.ts';

const SITE = 'https://streams.example.com';

const expected = (row: GameRow) => ({
  id: String(row.id),
  name: row.name,
  box_art_url: `${SITE}/media/box-art/${row.id}-{width}x{height}.jpg`,
  igdb_id: row.igdb_id,
});

forEachStore('GET /helix/games', (kind: StoreKind) => {
  let t: TestApp;
  let app: string;
  let rows: GameRow[];
  /** games with an IGDB id, and one without */
  let withIgdb: GameRow[];
  let noIgdb: GameRow;
  const get = (q: string, tok = app) => t.get(`/helix/games${q ? `?${q}` : ''}`, bearer(tok));
  const ids = (res: { json(): { data: { id: string }[] } }) => res.json().data.map((g) => g.id);
  const name = (g: GameRow) => `name=${encodeURIComponent(g.name)}`;

  before(async () => {
    t = await startTestApp(kind);
    app = await t.appToken();
    rows = await t.store.db.selectFrom('games').selectAll().orderBy('id').execute();
    withIgdb = rows.filter((g) => g.igdb_id !== '');
    noIgdb = rows.find((g) => g.igdb_id === '') as GameRow;
    assert.ok(withIgdb.length > 20 && noIgdb);
  });
  after(() => t.close());

  const row = (i: number) => rows[i] as GameRow;

  it('returns the Helix Game fields by id: id, name, box_art_url with {width}x{height}, igdb_id ("" when unknown)', async () => {
    const res = await get(`id=${withIgdb[0]?.id}&id=${noIgdb.id}`);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { data: [expected(withIgdb[0] as GameRow), expected(noIgdb)] });
  });

  it('answers with data only: no pagination key', async () => {
    assert.deepEqual(Object.keys((await get(`id=${row(0).id}`)).json()), ['data']);
    assert.deepEqual(Object.keys((await get('name=nothing')).json()), ['data']);
  });

  it('finds a game by its exact name (spaces and punctuation included)', async () => {
    const g = rows.find((r) => /[^A-Za-z0-9 ]/.test(r.name) && r.name.includes(' ')) as GameRow;
    assert.ok(g);
    assert.deepEqual((await get(name(g))).json().data, [expected(g)]);
  });

  it('name must match exactly: another case, a prefix or extra spaces match nothing', async () => {
    const g = row(4);
    for (const v of [
      g.name.toUpperCase(),
      g.name.toLowerCase(),
      g.name.slice(0, -1),
      ` ${g.name}`,
      `${g.name} `,
    ])
      assert.deepEqual((await get(`name=${encodeURIComponent(v)}`)).json().data, [], v);
  });

  it('finds games by IGDB id', async () => {
    const [a, b] = withIgdb.slice(3, 5) as [GameRow, GameRow];
    assert.deepEqual((await get(`igdb_id=${b.igdb_id}&igdb_id=${a.igdb_id}`)).json().data, [
      expected(b),
      expected(a),
    ]);
  });

  it('orders data as asked: ids in the order given, then names, then IGDB ids; each game once', async () => {
    const [a, b, c, d] = withIgdb.slice(5, 9) as [GameRow, GameRow, GameRow, GameRow];
    const q = [`igdb_id=${d.igdb_id}`, name(c), `id=${b.id}`, `igdb_id=${a.igdb_id}`, `id=${a.id}`, name(b)];
    assert.deepEqual(
      ids(await get(q.join('&'))),
      [b, a, c, d].map((g) => String(g.id)),
    );
    assert.deepEqual(ids(await get(`id=${a.id}&id=${a.id}&${name(a)}&igdb_id=${a.igdb_id}`)), [String(a.id)]);
  });

  it('every game of a name or IGDB id shared by several games, by id', async () => {
    const g = row(10);
    const twins = [
      { ...g, id: 5_000_001, owner_id: null, viewer_count: 0, stream_count: 0 },
      { ...g, id: 5_000_000, owner_id: null, viewer_count: 0, stream_count: 0 },
    ];
    await t.store.db.insertInto('games').values(twins).execute();
    try {
      const want = [g.id, 5_000_000, 5_000_001].map(String);
      assert.deepEqual(ids(await get(name(g))), want);
      if (g.igdb_id !== '') assert.deepEqual(ids(await get(`igdb_id=${g.igdb_id}`)), want);
    } finally {
      await t.store.db.deleteFrom('games').where('id', 'in', [5_000_000, 5_000_001]).execute();
    }
  });

  it('ignores ids and IGDB ids that are not numeric IDs (as production does), and unknown ones: 200', async () => {
    for (const v of ['abc', '-1', '1.5', '', '%20', '99999999999999999999', "1' or '1'='1"]) {
      const res = await get(`id=${encodeURIComponent(v)}&igdb_id=${encodeURIComponent(v)}&id=${row(0).id}`);
      assert.equal(res.statusCode, 200, v);
      assert.deepEqual(ids(res), [String(row(0).id)], v);
    }
    assert.deepEqual((await get('id=1&igdb_id=1&name=No%20such%20game')).json(), { data: [] });
  });

  it('igdb_id= (empty) does not match the games whose IGDB id is unknown', async () => {
    assert.deepEqual((await get('igdb_id=')).json(), { data: [] });
  });

  it('accepts up to 100 ids, names and IGDB ids together; 101 together is a 400 naming the three and the limit', async () => {
    // The demo data has 40 games: every id, then the names and IGDB ids of games already named.
    assert.ok(rows.length === 40 && withIgdb.length >= 25);
    const parts = [
      ...rows.map((g) => `id=${g.id}`),
      ...rows.slice(0, 35).map(name),
      ...withIgdb.slice(0, 25).map((g) => `igdb_id=${g.igdb_id}`),
    ];
    const ok = await get(parts.join('&'));
    assert.equal(ok.statusCode, 200);
    assert.deepEqual(
      ids(ok),
      rows.map((g) => String(g.id)),
    );
    const res = await get([...parts, `id=${row(0).id}`].join('&'));
    assert.equal(res.statusCode, 400);
    assert.equal(
      res.json().message,
      'The parameters "id", "name" and "igdb_id" may be given at most 100 times together: 101 values were given',
    );
  });

  it('any one parameter given 101 times is a 400 naming it and the limit', async () => {
    for (const p of ['id', 'name', 'igdb_id']) {
      const res = await get(Array.from({ length: 101 }, (_, i) => `${p}=${i + 1}`).join('&'));
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().message, `The parameter "${p}" may be given at most 100 times`);
    }
  });

  it('none of id, name and igdb_id: 400 naming the three', async () => {
    const res = await get('');
    assert.equal(res.statusCode, 400);
    assert.equal(
      res.json().message,
      'Missing required parameter: at least one of "id", "name", "igdb_id" must be given',
    );
  });

  it('accepts a user access token as well as an app access token, with the same answer', async () => {
    const q = `id=${row(1).id}&${name(row(2))}`;
    const a = await get(q);
    const b = await get(q, await t.userToken([]));
    assert.equal(b.statusCode, 200);
    assert.equal(b.body, a.body);
  });

  it('is served at /mock/games too, with the same answer', async () => {
    const a = await t.get(`/helix/games?id=${row(3).id}`, bearer(app));
    const b = await t.get(`/mock/games?id=${row(3).id}`, bearer(app));
    assert.equal(b.statusCode, 200);
    assert.equal(b.body, a.body);
  });

  it('without a token: 401 before the parameters are looked at', async () => {
    const res = await t.get('/helix/games');
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().message, 'OAuth token is missing');
  });

  // Golden answers: seed 1, 200 users; byte-identical on both stores. UPDATE_GOLDEN=1 rewrites them
  // (from the SQLite run).
  describe('golden answers', () => {
    it('answers ids, names and IGDB ids byte for byte as test/golden/games-by-ids-names-igdb.json', async () => {
      const named = rows.find((g) => g.id !== noIgdb.id && g.id > (withIgdb[20] as GameRow).id) as GameRow;
      const q = [`id=${row(12).id}`, `id=${noIgdb.id}`, name(named), `igdb_id=${withIgdb[20]?.igdb_id}`];
      const res = await get(q.join('&'));
      assert.equal(res.statusCode, 200);
      assertGolden(kind, 'games-by-ids-names-igdb.json', res.body);
    });
  });
});
