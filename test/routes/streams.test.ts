// GET /streams: live streams, most viewers first, filtered by users (ids and logins), games and
// languages, with production's parameters, limits, token rules and Stream fields. Every expectation
// is computed from the store's rows.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { StreamRow, UserRow } from '../../src/store/schema.ts';
import { rfc3339 } from '../../src/wire/datetime.ts';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { assertGolden } from '../support/golden.ts';
import type { StoreKind } from '../support/stores.ts';

interface Stream {
  id: string;
  user_id: string;
  user_login: string;
  user_name: string;
  game_id: string;
  game_name: string;
  type: string;
  title: string;
  tags: string[];
  viewer_count: number;
  started_at: string;
  language: string;
  thumbnail_url: string;
  tag_ids: string[];
  is_mature: boolean;
}

interface Page {
  data: Stream[];
  cursor?: string;
}

const SITE = 'https://streams.example.com';
const badRequest = (message: string) => ({ error: 'Bad Request', status: 400, message });

/** Live streams in /streams order: most viewers first, ties by id, higher first. */
const byViewers = (a: StreamRow, b: StreamRow) => b.viewer_count - a.viewer_count || b.id - a.id;

/** Every page of `/helix/streams?<q>` forward with `after`, `first` at a time. */
async function walk(t: TestApp, token: string, q: string, first: number): Promise<Page[]> {
  const pages: Page[] = [];
  let cursor: string | undefined;
  do {
    const res = await t.get(
      `/helix/streams?${q}&first=${first}${cursor ? `&after=${cursor}` : ''}`,
      bearer(token),
    );
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    pages.push({ data: body.data, cursor: body.pagination.cursor });
    cursor = body.pagination.cursor;
  } while (cursor);
  return pages;
}

forEachStore('GET /helix/streams', (kind: StoreKind) => {
  let t: TestApp;
  let token: string;
  let streams: StreamRow[];
  let users: Map<number, UserRow>;
  let gameNames: Map<number, string>;
  const get = (q: string, tok = token) => t.get(`/helix/streams?${q}`, bearer(tok));
  const ids = (body: { data: Stream[] }) => body.data.map((s) => s.id);
  /** the ids of the live streams that `keep` selects, in /streams order */
  const expected = (keep: (s: StreamRow) => boolean) => streams.filter(keep).map((s) => String(s.id));
  /** the game with the most live streams (ties: the lower id) */
  const mostStreamed = () => {
    const counts = new Map<number, number>();
    for (const s of streams) counts.set(s.game_id, (counts.get(s.game_id) ?? 0) + 1);
    return [...counts].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0]?.[0] as number;
  };
  /** every stream of `/helix/streams?<q>`, walked 100 at a time */
  const all = async (q: string) => (await walk(t, token, q, 100)).flatMap((p) => p.data);

  before(async () => {
    t = await startTestApp(kind, { users: 400 });
    token = await t.appToken();
    streams = (await t.store.db.selectFrom('streams').selectAll().execute()).sort(byViewers);
    users = new Map((await t.store.db.selectFrom('users').selectAll().execute()).map((u) => [u.id, u]));
    gameNames = new Map(
      (await t.store.db.selectFrom('games').select(['id', 'name']).execute()).map((g) => [g.id, g.name]),
    );
  });
  after(() => t.close());

  it('lists 20 live streams by default, most viewers first, ties by id, with a cursor', async () => {
    const res = await get('');
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(ids(body), expected(() => true).slice(0, 20));
    assert.equal(typeof body.pagination.cursor, 'string');
  });

  it("answers every stream with production's fields, in production's order, from the store", async () => {
    const got = await all('');
    assert.equal(got.length, streams.length);
    got.forEach((s, i) => {
      const r = streams[i] as StreamRow;
      const u = users.get(r.user_id) as UserRow;
      assert.deepEqual(Object.keys(s), [
        'id',
        'user_id',
        'user_login',
        'user_name',
        'game_id',
        'game_name',
        'type',
        'title',
        'tags',
        'viewer_count',
        'started_at',
        'language',
        'thumbnail_url',
        'tag_ids',
        'is_mature',
      ]);
      assert.deepEqual(s, {
        id: String(r.id),
        user_id: String(r.user_id),
        user_login: u.login,
        user_name: u.display_name,
        game_id: String(r.game_id),
        game_name: gameNames.get(r.game_id),
        type: 'live',
        title: r.title,
        tags: JSON.parse(r.tags),
        viewer_count: r.viewer_count,
        started_at: rfc3339(r.started_at),
        language: r.language,
        thumbnail_url: `${SITE}/media/previews/live_user_${u.login}-{width}x{height}.jpg`,
        tag_ids: [],
        is_mature: r.is_mature === 1,
      });
    });
    // The demo data exercises every shape: tags or none, mature or not.
    assert.ok(got.some((s) => s.tags.length === 0) && got.some((s) => s.tags.length > 1));
    assert.ok(got.some((s) => s.is_mature) && got.some((s) => !s.is_mature));
  });

  it("orders streams consistently with /games/top: each game's place there follows the sum of its streams' viewer_count here", async () => {
    const sums = new Map<string, number>();
    for (const s of await all('')) sums.set(s.game_id, (sums.get(s.game_id) ?? 0) + s.viewer_count);
    const order = [...sums].sort((a, b) => b[1] - a[1] || Number(b[0]) - Number(a[0])).map(([id]) => id);
    const top: string[] = [];
    let cursor: string | undefined;
    do {
      const res = await t.get(`/helix/games/top?first=100${cursor ? `&after=${cursor}` : ''}`, bearer(token));
      top.push(...res.json().data.map((g: { id: string }) => g.id));
      cursor = res.json().pagination.cursor;
    } while (cursor);
    assert.deepEqual(top, order);
  });

  it('is served at /mock/streams as well', async () => {
    const a = await get('first=5');
    const b = await t.get('/mock/streams?first=5', bearer(token));
    assert.equal(b.statusCode, 200);
    assert.deepEqual(b.json().data, a.json().data);
  });

  describe('tokens', () => {
    it('accepts a user access token as well as an app access token, with no scope', async () => {
      const a = await get('first=5');
      const b = await get('first=5', await t.userToken([]));
      assert.equal(b.statusCode, 200);
      assert.equal(b.body, a.body);
    });

    it('answers 401 "OAuth token is missing" without a token, before looking at parameters', async () => {
      const res = await t.get('/helix/streams?first=1000&user_id=abc');
      assert.equal(res.statusCode, 401);
      assert.deepEqual(res.json(), { error: 'Unauthorized', status: 401, message: 'OAuth token is missing' });
    });

    it('answers 401 "Invalid OAuth token" for an unknown or expired token', async () => {
      const expired = await t.appToken(1);
      t.clock.advance(2000);
      for (const tok of ['nope', expired]) {
        const res = await get('first=1', tok);
        assert.equal(res.statusCode, 401);
        assert.equal(res.json().message, 'Invalid OAuth token');
      }
    });

    it("answers 401 when the Client-Id header is not the token's client", async () => {
      const res = await t.inject({
        method: 'GET',
        url: '/helix/streams',
        headers: { ...bearer(token), 'client-id': 'notthetokensclient000000000000' },
      });
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().message, 'Client ID and OAuth token do not match');
    });

    it('answers 405 to other methods', async () => {
      const res = await t.inject({
        method: 'POST',
        url: '/helix/streams',
        headers: { ...bearer(token), 'client-id': t.seed?.demoClientId as string },
      });
      assert.equal(res.statusCode, 405);
    });
  });

  describe('first, after, before', () => {
    it('first takes 1..100 (default 20): 0, 101, ten and 2.5 are a 400 naming first', async () => {
      assert.equal((await get('first=1')).json().data.length, 1);
      assert.equal((await get('first=100')).json().data.length, Math.min(100, streams.length));
      for (const [v, message] of [
        ['0', 'The parameter "first" was malformed: the value must be greater than or equal to 1'],
        ['101', 'The parameter "first" was malformed: the value must be less than or equal to 100'],
        ['ten', 'The parameter "first" was malformed: the value must be an integer'],
        ['2.5', 'The parameter "first" was malformed: the value must be an integer'],
      ] as const) {
        const res = await get(`first=${v}`);
        assert.equal(res.statusCode, 400, v);
        assert.deepEqual(res.json(), badRequest(message));
      }
    });

    it('after and before together are a 400', async () => {
      const c = (await get('first=2')).json().pagination.cursor as string;
      const res = await get(`after=${c}&before=${c}`);
      assert.equal(res.statusCode, 400);
      assert.deepEqual(res.json(), badRequest('The parameters "after" and "before" cannot be used together'));
    });

    it('a tampered or malformed cursor is a 400 Invalid cursor.', async () => {
      const c = (await get('first=2')).json().pagination.cursor as string;
      const tampered = `${c.slice(0, 5)}${c[5] === 'A' ? 'B' : 'A'}${c.slice(6)}`;
      for (const bad of [tampered, 'garbage', `${c}x`, 'a.b']) {
        const res = await get(`after=${encodeURIComponent(bad)}`);
        assert.equal(res.statusCode, 400, bad);
        assert.deepEqual(res.json(), badRequest('Invalid cursor.'));
      }
    });

    it('a cursor is bound to the filters: one from another filter set is a 400 Invalid cursor.', async () => {
      const game = streams[0]?.game_id as number;
      const c = (await get(`first=1&game_id=${game}`)).json().pagination.cursor as string;
      for (const q of [
        `after=${c}`,
        `before=${c}`,
        `after=${c}&game_id=${game}&language=en`,
        `after=${c}&type=live`,
      ]) {
        const res = await get(q);
        assert.equal(res.statusCode, 400, q);
        assert.deepEqual(res.json(), badRequest('Invalid cursor.'));
      }
    });

    it('a cursor does not depend on the order or repetition of the filter values, nor on first', async () => {
      const [a, b] = [...new Set(streams.map((s) => s.language))];
      const p1 = (await get(`first=2&language=${a}&language=${b}`)).json();
      const rest = (await get(`first=10&language=${a}&language=${b}`)).json().data;
      const next = await get(
        `first=3&language=${b}&language=${a}&language=${b}&after=${p1.pagination.cursor}`,
      );
      assert.equal(next.statusCode, 200);
      assert.deepEqual(next.json().data, rest.slice(2, 5));
    });
  });

  describe('user_id and user_login', () => {
    it('user_id lists the streams of those users that are live, most viewers first; unknown and offline users are left out', async () => {
      const live = [streams[7], streams[2], streams[11]].map((s) => s?.user_id as number);
      const offline = [...users.keys()].find((id) => !streams.some((s) => s.user_id === id)) as number;
      const q = [...live, offline, 999_999_999, live[0]].map((id) => `user_id=${id}`).join('&');
      const body = (await get(q)).json();
      assert.deepEqual(
        ids(body),
        expected((s) => live.includes(s.user_id)),
      );
      assert.deepEqual(body.pagination, {});
    });

    it('user_login lists the live streams of those logins, in any letter case; unknown and offline logins are left out', async () => {
      const live = [streams[3], streams[0]].map((s) => users.get(s?.user_id as number) as UserRow);
      const offline = [...users.values()].find((u) => !streams.some((s) => s.user_id === u.id)) as UserRow;
      const q = [live[0]?.login.toUpperCase(), live[1]?.login, offline.login, 'nosuchlogin_x']
        .map((l) => `user_login=${l}`)
        .join('&');
      assert.deepEqual(
        ids((await get(q)).json()),
        expected((s) => live.some((u) => u.id === s.user_id)),
      );
    });

    it('user_id and user_login together list the streams of the users named either way', async () => {
      const a = streams[4] as StreamRow;
      const b = streams[9] as StreamRow;
      const login = users.get(b.user_id)?.login;
      const body = (await get(`user_id=${a.user_id}&user_login=${login}`)).json();
      assert.deepEqual(
        ids(body),
        expected((s) => s === a || s === b),
      );
    });

    it('only users who are not live, or logins that name no user: {"data": [], "pagination": {}}', async () => {
      const offline = [...users.keys()].find((id) => !streams.some((s) => s.user_id === id)) as number;
      for (const q of [`user_id=${offline}`, 'user_id=1', 'user_login=nosuchlogin_x']) {
        const res = await get(q);
        assert.equal(res.statusCode, 200);
        assert.equal(res.body, '{"data":[],"pagination":{}}', q);
      }
    });

    it('user_id takes numeric ids only: anything else is a 400 naming it, before the store is asked', async () => {
      for (const v of ['abc', '12x', '-5', '1.5', '', '99999999999999999999']) {
        const res = await get(`user_id=${streams[0]?.user_id}&user_id=${encodeURIComponent(v)}`);
        assert.equal(res.statusCode, 400, v);
        assert.deepEqual(
          res.json(),
          badRequest('The parameter "user_id" was malformed: each value must be a numeric ID'),
        );
      }
    });

    it('user_login must not be empty nor a comma-joined list', async () => {
      assert.deepEqual(
        (await get('user_login=')).json(),
        badRequest('The parameter "user_login" was malformed: a value must not be empty'),
      );
      assert.deepEqual(
        (await get('user_login=a,b')).json(),
        badRequest(
          'The parameter "user_login" was malformed: give each value as its own "user_login" parameter',
        ),
      );
    });

    for (const p of ['user_id', 'user_login']) {
      it(`${p} may be given up to 100 times; 101 is a 400`, async () => {
        const values = (n: number) =>
          Array.from({ length: n }, (_, i) => `${p}=${p === 'user_id' ? 1000 + i : `login${i}`}`).join('&');
        assert.equal((await get(values(100))).statusCode, 200);
        const res = await get(values(101));
        assert.equal(res.statusCode, 400);
        assert.deepEqual(res.json(), badRequest(`The parameter "${p}" may be given at most 100 times`));
      });
    }

    it('100 user ids and 100 logins together are accepted (each parameter has its own limit)', async () => {
      const q = [
        ...streams.slice(0, 100).map((s) => `user_id=${s.user_id}`),
        ...streams.slice(0, 100).map((s) => `user_login=${users.get(s.user_id)?.login}`),
      ].join('&');
      const got = await all(q);
      assert.deepEqual(
        got.map((s) => s.id),
        streams.slice(0, 100).map((s) => String(s.id)),
      );
    });
  });

  describe('game_id', () => {
    it('one game: its live streams, most viewers first', async () => {
      const game = mostStreamed();
      assert.deepEqual(
        (await all(`game_id=${game}`)).map((s) => s.id),
        expected((s) => s.game_id === game),
      );
    });

    it('several games: the live streams of any of them, in one ordering', async () => {
      const games = [...new Set(streams.map((s) => s.game_id))].slice(0, 3);
      const got = await all(games.map((g) => `game_id=${g}`).join('&'));
      assert.deepEqual(
        got.map((s) => s.id),
        expected((s) => games.includes(s.game_id)),
      );
    });

    it('a game nobody streams, or an unknown game: {"data": [], "pagination": {}}', async () => {
      const res = await get('game_id=1');
      assert.equal(res.body, '{"data":[],"pagination":{}}');
    });

    it('game_id takes numeric ids only (400 naming it) and at most 100 values', async () => {
      assert.deepEqual(
        (await get('game_id=abc')).json(),
        badRequest('The parameter "game_id" was malformed: each value must be a numeric ID'),
      );
      const values = (n: number) => Array.from({ length: n }, (_, i) => `game_id=${i + 1}`).join('&');
      assert.equal((await get(values(100))).statusCode, 200);
      assert.deepEqual(
        (await get(values(101))).json(),
        badRequest('The parameter "game_id" may be given at most 100 times'),
      );
    });
  });

  describe('language', () => {
    it('one language: the live streams broadcast in it, most viewers first', async () => {
      const lang = streams[1]?.language as string;
      assert.deepEqual(
        (await all(`language=${lang}`)).map((s) => s.id),
        expected((s) => s.language === lang),
      );
    });

    it('several languages, repeated: the live streams in any of them', async () => {
      const langs = [...new Set(streams.map((s) => s.language))].slice(0, 3);
      assert.ok(langs.length === 3);
      assert.deepEqual(
        (await all(langs.map((l) => `language=${l}`).join('&'))).map((s) => s.id),
        expected((s) => langs.includes(s.language)),
      );
    });

    it('is compared exactly: a language no stream uses lists nothing', async () => {
      assert.equal((await get('language=EN')).body, '{"data":[],"pagination":{}}');
    });

    it('must not be empty nor comma-joined, and may be given up to 100 times', async () => {
      assert.deepEqual(
        (await get('language=')).json(),
        badRequest('The parameter "language" was malformed: a value must not be empty'),
      );
      assert.deepEqual(
        (await get('language=en,de')).json(),
        badRequest('The parameter "language" was malformed: give each value as its own "language" parameter'),
      );
      const values = (n: number) => Array.from({ length: n }, (_, i) => `language=l${i}`).join('&');
      assert.equal((await get(values(100))).statusCode, 200);
      assert.deepEqual(
        (await get(values(101))).json(),
        badRequest('The parameter "language" may be given at most 100 times'),
      );
    });
  });

  describe('type', () => {
    it('all (the default) and live list the same streams: every stream listed is live', async () => {
      const a = await all('');
      assert.deepEqual(await all('type=all'), a);
      assert.deepEqual(await all('type=live'), a);
      assert.ok(a.every((s) => s.type === 'live'));
    });

    it('any other value, or type given twice, is a 400', async () => {
      assert.deepEqual(
        (await get('type=vodcast')).json(),
        badRequest('The parameter "type" was malformed: the value must be one of all, live'),
      );
      assert.deepEqual(
        (await get('type=all&type=live')).json(),
        badRequest('The parameter "type" may be given only once'),
      );
    });
  });

  it('filters of different kinds combine with AND', async () => {
    const s0 = streams[0] as StreamRow;
    const langs = [...new Set(streams.map((s) => s.language))];
    const games = [...new Set(streams.map((s) => s.game_id))].slice(0, 10);
    const q = [...games.map((g) => `game_id=${g}`), ...langs.slice(0, 2).map((l) => `language=${l}`)].join(
      '&',
    );
    assert.deepEqual(
      (await all(q)).map((s) => s.id),
      expected((s) => games.includes(s.game_id) && langs.slice(0, 2).includes(s.language)),
    );
    const other = langs.find((l) => l !== s0.language) as string;
    assert.equal((await get(`user_id=${s0.user_id}&language=${other}`)).body, '{"data":[],"pagination":{}}');
    assert.deepEqual(ids((await get(`user_id=${s0.user_id}&game_id=${s0.game_id}`)).json()), [String(s0.id)]);
  });

  it('ignores unknown parameters', async () => {
    assert.equal((await get('first=4&foo=bar&sort=views')).body, (await get('first=4')).body);
  });

  // Forward with `after`, then back with `before` from every page: exactly the previous pages.
  for (const [name, q] of [
    ['no filter', () => ''],
    ['the game with the most streams', () => `game_id=${mostStreamed()}`],
    [
      'several games',
      () =>
        [...new Set(streams.map((s) => s.game_id))]
          .slice(0, 8)
          .map((g) => `game_id=${g}`)
          .join('&'),
    ],
    ['several languages', () => ['en', 'es', 'de'].map((l) => `language=${l}`).join('&')],
    ['one language', () => 'language=en'],
    [
      'many users',
      () =>
        streams
          .filter((_, i) => i % 3 === 0)
          .slice(0, 100)
          .map((s) => `user_id=${s.user_id}`)
          .join('&'),
    ],
  ] as const) {
    it(`walk, ${name}: every matching stream exactly once in order, and back with before page by page`, async () => {
      const query = q();
      const want = (await all(query)).map((s) => s.id);
      assert.ok(want.length >= 3, `${name}: only ${want.length} streams`);
      // at least three pages
      const first = Math.min(4, Math.floor(want.length / 3));
      const pages = await walk(t, token, query, first);
      assert.deepEqual(
        pages.flatMap((p) => p.data.map((s) => s.id)),
        want,
      );
      assert.equal(new Set(want).size, want.length);
      for (let n = pages.length - 2; n >= 1; n--) {
        const body = (await get(`${query}&first=${first}&before=${pages[n]?.cursor}`)).json();
        assert.deepEqual(body.data, pages[n - 1]?.data, `page ${n - 1}`);
        // the first page has nothing before it
        assert.equal(body.pagination.cursor === undefined, n === 1);
      }
    });
  }
});

// Golden answers: seed 1, 200 users, TEST_NOW; byte-identical on both stores, cursors included.
// UPDATE_GOLDEN=1 rewrites them from the SQLite run.
forEachStore('GET /helix/streams golden answers', (kind: StoreKind) => {
  let t: TestApp;
  let token: string;
  const get = (q: string) => t.get(`/helix/streams?${q}`, bearer(token));
  before(async () => {
    t = await startTestApp(kind);
    token = await t.appToken();
  });
  after(() => t.close());

  const check = async (file: string, q: string) => {
    const res = await get(q);
    assert.equal(res.statusCode, 200);
    assertGolden(kind, file, res.body);
  };
  it('answers streams-first-page byte for byte as test/golden/streams-first-page.json', () =>
    check('streams-first-page.json', 'first=5'));
  it('answers streams-second-page byte for byte as test/golden/streams-second-page.json', async () => {
    const p1 = (await get('first=5')).json();
    await check('streams-second-page.json', `first=5&after=${p1.pagination.cursor}`);
  });
  it('answers streams-by-languages byte for byte as test/golden/streams-by-languages.json', () =>
    check('streams-by-languages.json', 'language=de&language=es&first=4'));
});
