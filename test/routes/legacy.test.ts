import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { sql } from 'kysely';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { assertGolden } from '../support/golden.ts';
import type { StoreKind } from '../support/stores.ts';

interface Follow {
  from_id: string;
  from_login: string;
  from_name: string;
  to_id: string;
  to_login: string;
  to_name: string;
  followed_at: string;
}

interface Tag {
  tag_id: string;
  is_auto: boolean;
  localization_names: Record<string, string>;
  localization_descriptions: Record<string, string>;
}

const FOLLOW_FIELDS = ['followed_at', 'from_id', 'from_login', 'from_name', 'to_id', 'to_login', 'to_name'];
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const iso = (s: number) => new Date(s * 1000).toISOString().replace('.000Z', 'Z');
/** Code-unit order, the order both stores must agree on for tag ids. */
const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

// One 1,500-user data set per store: about 21,000 follows, with more than 1,000 of them to user 0
// (the demo broadcaster), so a walk over one user's followers crosses more than ten full pages.
forEachStore('legacy mode (--legacy): GET /helix/users/follows', (kind: StoreKind) => {
  let t: TestApp;
  let token: string;
  let demo: number;
  before(async () => {
    t = await startTestApp(kind, { users: 1500, config: { legacy: true } });
    token = await t.appToken();
    demo = t.seed?.demoUserId as number;
  });
  after(() => t.close());

  const get = (q: string, tok = token) => t.get(`/helix/users/follows${q}`, bearer(tok));

  /** Every follow of the selector straight from the store, in the documented order. */
  async function expected(sel: { from?: number; to?: number }): Promise<Follow[]> {
    let q = t.store.db
      .selectFrom('follows')
      .innerJoin('users as fu', 'fu.id', 'follows.from_id')
      .innerJoin('users as tu', 'tu.id', 'follows.to_id')
      .select([
        'follows.from_id',
        'follows.to_id',
        'follows.followed_at',
        'fu.login as from_login',
        'fu.display_name as from_name',
        'tu.login as to_login',
        'tu.display_name as to_name',
      ]);
    if (sel.from !== undefined) q = q.where('follows.from_id', '=', sel.from);
    if (sel.to !== undefined) q = q.where('follows.to_id', '=', sel.to);
    const rows = await q.execute();
    const other = (r: (typeof rows)[number]) => (sel.from !== undefined ? r.to_id : r.from_id);
    rows.sort((a, b) => b.followed_at - a.followed_at || other(b) - other(a));
    return rows.map((r) => ({
      from_id: String(r.from_id),
      from_login: r.from_login,
      from_name: r.from_name,
      to_id: String(r.to_id),
      to_login: r.to_login,
      to_name: r.to_name,
      followed_at: iso(r.followed_at),
    }));
  }

  async function count(sel: { from?: number; to?: number }): Promise<number> {
    let q = t.store.db.selectFrom('follows').select(sql<number>`count(*)`.as('n'));
    if (sel.from !== undefined) q = q.where('from_id', '=', sel.from);
    if (sel.to !== undefined) q = q.where('to_id', '=', sel.to);
    return Number((await q.executeTakeFirstOrThrow()).n);
  }

  /** Walks forward with `after` to the end; asserts every page's shape and `total`. */
  async function walk(q: string, first: number, total: number): Promise<Follow[]> {
    const all: Follow[] = [];
    let cursor: string | undefined;
    do {
      const res = await get(`${q}&first=${first}${cursor ? `&after=${cursor}` : ''}`);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.total, total);
      cursor = body.pagination.cursor;
      assert.equal(body.data.length, cursor ? first : body.data.length);
      if (!cursor) assert.deepEqual(body.pagination, {});
      all.push(...body.data);
    } while (cursor);
    return all;
  }

  it('with to_id only: walks forward over more than 1,000 followers, each once, most recent first', async () => {
    const want = await expected({ to: demo });
    const total = await count({ to: demo });
    assert.ok(total > 1000, `the demo broadcaster has ${total} followers`);
    assert.equal(want.length, total);
    const got = await walk(`?to_id=${demo}`, 100, total);
    assert.equal(got.length, total);
    assert.equal(new Set(got.map((f) => f.from_id)).size, total);
    assert.deepEqual(got, want);
  });

  it('with from_id only: lists whom the user follows, most recent first, total = how many it follows', async () => {
    const from = (await t.store.db
      .selectFrom('follows')
      .select('from_id')
      .groupBy('from_id')
      .orderBy(sql`count(*)`, 'desc')
      .orderBy('from_id')
      .limit(1)
      .executeTakeFirstOrThrow()) as { from_id: number };
    const want = await expected({ from: from.from_id });
    const total = await count({ from: from.from_id });
    assert.ok(total > 3);
    assert.deepEqual(await walk(`?from_id=${from.from_id}`, 3, total), want);
  });

  it('returns 20 follows by default with the Helix fields, names from the users table', async () => {
    const res = await get(`?to_id=${demo}`);
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(Object.keys(body), ['total', 'data', 'pagination']);
    assert.equal(body.data.length, 20);
    assert.equal(typeof body.pagination.cursor, 'string');
    const f = body.data[0] as Follow;
    assert.deepEqual(Object.keys(f).sort(), FOLLOW_FIELDS);
    assert.match(f.followed_at, RFC3339);
    assert.equal(f.to_id, String(demo));
    const u = await t.store.db
      .selectFrom('users')
      .selectAll()
      .where('id', '=', Number(f.from_id))
      .executeTakeFirstOrThrow();
    assert.equal(f.from_login, u.login);
    assert.equal(f.from_name, u.display_name);
    assert.equal(f.to_login, t.seed?.demoLogin);
  });

  it('with from_id and to_id: the one follow and total 1, or nothing and total 0', async () => {
    const pair = await t.store.db
      .selectFrom('follows')
      .selectAll()
      .where('to_id', '=', demo)
      .orderBy('from_id')
      .limit(1)
      .executeTakeFirstOrThrow();
    const yes = (await get(`?from_id=${pair.from_id}&to_id=${pair.to_id}`)).json();
    assert.equal(yes.total, 1);
    assert.deepEqual(yes.pagination, {});
    assert.deepEqual(yes.data, await expected({ from: pair.from_id, to: pair.to_id }));
    assert.equal(yes.data[0].followed_at, iso(pair.followed_at));
    // the reverse direction: the demo broadcaster does not follow that user back
    const back = await count({ from: pair.to_id, to: pair.from_id });
    const no = (await get(`?from_id=${pair.to_id}&to_id=${pair.from_id}`)).json();
    assert.equal(no.total, back);
    if (back === 0) assert.deepEqual(no, { total: 0, data: [], pagination: {} });
  });

  it('orders follows of the same second by the other user id, higher first, and pages through the ties', async () => {
    const users = (
      await t.store.db.selectFrom('users').select('id').orderBy('id', 'desc').limit(8).execute()
    ).map((u) => u.id);
    const [target, ...others] = users as [number, ...number[]];
    await t.store.db.deleteFrom('follows').where('to_id', '=', target).execute();
    await t.store.db.deleteFrom('follows').where('from_id', '=', target).execute();
    const at = 1_700_000_000;
    // followers of `target`: three at `at`, two at `at + 60`; `target` follows two users at `at`
    const rows = others
      .slice(0, 5)
      .map((from, i) => ({ from_id: from, to_id: target, followed_at: i < 3 ? at : at + 60 }));
    rows.push(...others.slice(5, 7).map((to) => ({ from_id: target, to_id: to, followed_at: at })));
    await t.store.db.insertInto('follows').values(rows).execute();

    const followers = await walk(`?to_id=${target}`, 1, 5);
    const desc = (xs: number[]) => [...xs].sort((a, b) => b - a).map(String);
    assert.deepEqual(
      followers.map((f) => f.from_id),
      [...desc(others.slice(3, 5)), ...desc(others.slice(0, 3))],
    );
    assert.deepEqual(followers, await expected({ to: target }));
    const following = await walk(`?from_id=${target}`, 1, 2);
    assert.deepEqual(
      following.map((f) => f.to_id),
      desc(others.slice(5, 7)),
    );
  });

  it('answers 400 without from_id and to_id (empty values count as not given)', async () => {
    for (const q of ['', '?first=5', '?from_id=&to_id=']) {
      const res = await get(q);
      assert.equal(res.statusCode, 400, q);
      assert.deepEqual(res.json(), {
        error: 'Bad Request',
        status: 400,
        message: 'Missing required parameter "from_id" or "to_id"',
      });
    }
  });

  it('answers 400 for a from_id or to_id that is not a user id, naming the parameter', async () => {
    for (const [q, name] of [
      ['?from_id=abc', 'from_id'],
      [`?to_id=${demo}x`, 'to_id'],
      ['?to_id=-5', 'to_id'],
    ] as const) {
      const res = await get(q);
      assert.equal(res.statusCode, 400, q);
      assert.equal(
        res.json().message,
        `The parameter "${name}" was malformed: the value must be a user ID (digits only)`,
      );
    }
    const twice = await get(`?to_id=${demo}&to_id=${demo}`);
    assert.equal(twice.statusCode, 400);
    assert.equal(twice.json().message, 'The parameter "to_id" may be given only once');
  });

  it('answers an unknown user with total 0 and no data', async () => {
    for (const q of ['?to_id=1', '?from_id=99999999999999999999999', '?from_id=1&to_id=2']) {
      const res = await get(q);
      assert.equal(res.statusCode, 200, q);
      assert.deepEqual(res.json(), { total: 0, data: [], pagination: {} });
    }
  });

  for (const [first, message] of [
    ['101', 'The parameter "first" was malformed: the value must be less than or equal to 100'],
    ['0', 'The parameter "first" was malformed: the value must be greater than or equal to 1'],
    ['x', 'The parameter "first" was malformed: the value must be an integer'],
  ]) {
    it(`rejects first=${first} with 400`, async () => {
      const res = await get(`?to_id=${demo}&first=${first}`);
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().message, message);
    });
  }

  it('accepts first=100 and returns 100 follows', async () => {
    assert.equal((await get(`?to_id=${demo}&first=100`)).json().data.length, 100);
  });

  it('refuses before with 400 (the operation pages forward only)', async () => {
    const c = (await get(`?to_id=${demo}&first=2`)).json().pagination.cursor as string;
    for (const q of [`&before=${c}`, `&after=${c}&before=${c}`]) {
      const res = await get(`?to_id=${demo}${q}`);
      assert.equal(res.statusCode, 400);
      assert.equal(
        res.json().message,
        'The parameter "before" is not supported by this operation; page forward with "after"',
      );
    }
  });

  it('rejects a tampered cursor or one from another query with 400 Invalid cursor.', async () => {
    const c = (await get(`?to_id=${demo}&first=2`)).json().pagination.cursor as string;
    const tampered = `${c.slice(0, 5)}${c[5] === 'A' ? 'B' : 'A'}${c.slice(6)}`;
    for (const q of [
      `?to_id=${demo}&after=${tampered}`,
      `?to_id=${demo}&after=garbage`,
      `?from_id=${demo}&after=${c}`,
    ]) {
      const res = await get(q);
      assert.equal(res.statusCode, 400, q);
      assert.equal(res.json().message, 'Invalid cursor.');
    }
  });

  it('takes app and user tokens, and answers 401 without a valid token before looking at parameters', async () => {
    assert.equal((await get(`?to_id=${demo}`, await t.userToken())).statusCode, 200);
    const missing = await t.get('/helix/users/follows?first=1000');
    assert.equal(missing.statusCode, 401);
    assert.equal(missing.json().message, 'OAuth token is missing');
    assert.equal((await get(`?to_id=${demo}`, 'garbage')).json().message, 'Invalid OAuth token');
    const mismatch = await t.get(`/helix/users/follows?to_id=${demo}`, {
      ...bearer(token),
      'client-id': 'other',
    });
    assert.equal(mismatch.statusCode, 401);
    assert.equal(mismatch.json().message, 'Client ID and OAuth token do not match');
  });

  it('is served at /mock/users/follows too, with Sunset and Link headers naming the successors', async () => {
    const a = await get(`?to_id=${demo}&first=3`);
    const b = await t.get(`/mock/users/follows?to_id=${demo}&first=3`, bearer(token));
    assert.equal(b.statusCode, 200);
    assert.deepEqual(b.json().data, a.json().data);
    assert.equal(a.headers.sunset, 'Tue, 12 Sep 2023 00:00:00 GMT');
    assert.match(String(a.headers.link), /^<\/helix\/channels\/followers>; rel="successor-version"/);
    assert.match(String(b.headers.link), /^<\/mock\/channels\/followers>; rel="successor-version"/);
  });
});

forEachStore('legacy mode (--legacy): GET /helix/tags/streams', (kind: StoreKind) => {
  let t: TestApp;
  let token: string;
  let ids: string[];
  before(async () => {
    t = await startTestApp(kind, { config: { legacy: true } });
    token = await t.appToken();
    ids = (await t.store.db.selectFrom('tags').select('id').execute()).map((r) => r.id).sort(byCodeUnits);
  });
  after(() => t.close());

  const get = (q: string, tok = token) => t.get(`/helix/tags/streams${q}`, bearer(tok));
  const tagIds = (res: { json(): { data: Tag[] } }) => res.json().data.map((x) => x.tag_id);

  it('walks forward over all platform tags in id order, each once', async () => {
    assert.ok(ids.length > 200);
    const got: string[] = [];
    let cursor: string | undefined;
    do {
      const res = await get(`?first=100${cursor ? `&after=${cursor}` : ''}`);
      assert.equal(res.statusCode, 200);
      got.push(...tagIds(res));
      cursor = res.json().pagination.cursor;
    } while (cursor);
    assert.deepEqual(got, ids);
  });

  it('returns 20 tags by default, is_auto a boolean, names and descriptions as locale objects', async () => {
    const res = await get('');
    const body = res.json();
    assert.deepEqual(Object.keys(body), ['data', 'pagination']);
    assert.equal(body.data.length, 20);
    assert.deepEqual(tagIds(res), ids.slice(0, 20));
    const rows = await t.store.db
      .selectFrom('tags')
      .selectAll()
      .where('id', 'in', ids.slice(0, 20))
      .execute();
    for (const tag of body.data as Tag[]) {
      const row = rows.find((r) => r.id === tag.tag_id);
      assert.ok(row);
      assert.deepEqual(Object.keys(tag).sort(), [
        'is_auto',
        'localization_descriptions',
        'localization_names',
        'tag_id',
      ]);
      assert.equal(tag.is_auto, row.is_auto === 1);
      assert.deepEqual(tag.localization_names, JSON.parse(row.localization_names));
      assert.deepEqual(tag.localization_descriptions, JSON.parse(row.localization_descriptions));
      assert.equal(typeof tag.localization_names['en-us'], 'string');
    }
    const autos = await t.store.db
      .selectFrom('tags')
      .select('id')
      .where('is_auto', '=', 1)
      .limit(1)
      .execute();
    const auto = await get(`?tag_id=${autos[0]?.id}`);
    assert.equal(auto.json().data[0].is_auto, true);
  });

  it('with tag_id: only those tags, in the order given, duplicates and unknown ids dropped, no cursor', async () => {
    const pick = [ids[250], ids[3], ids[120]] as string[];
    const unknown = '00000000-0000-4000-8000-000000000000';
    const q = [...pick, pick[0], unknown].map((id) => `tag_id=${id}`).join('&');
    const res = await get(`?${q}`);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(tagIds(res), pick);
    assert.deepEqual(res.json().pagination, {});
  });

  it('with tag_id: first does not cut the list (at most 100 ids, one page)', async () => {
    const some = ids.slice(10, 110);
    const res = await get(`?first=5&${some.map((id) => `tag_id=${id}`).join('&')}`);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(tagIds(res), some);
  });

  it('with tag_id: accepts upper-case UUIDs (UUIDs are case-insensitive)', async () => {
    const res = await get(`?tag_id=${ids[7]?.toUpperCase()}`);
    assert.deepEqual(tagIds(res), [ids[7]]);
  });

  it('rejects a malformed tag_id with 400 naming the value', async () => {
    for (const bad of [
      'nope',
      '',
      '621fb5bf-5498-4d8f-b4ac-db4d40d401b',
      '621fb5bf54984d8fb4acdb4d40d401bf',
    ]) {
      const res = await get(`?tag_id=${ids[0]}&tag_id=${bad}`);
      assert.equal(res.statusCode, 400, bad);
      assert.equal(
        res.json().message,
        `The parameter "tag_id" was malformed: ${JSON.stringify(bad)} is not a UUID`,
      );
    }
  });

  it('rejects more than 100 tag_id values with 400', async () => {
    const res = await get(
      `?${ids
        .slice(0, 101)
        .map((id) => `tag_id=${id}`)
        .join('&')}`,
    );
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().message, 'The parameter "tag_id" may be given at most 100 times');
  });

  it('rejects after together with tag_id, and before always, with 400', async () => {
    const c = (await get('?first=2')).json().pagination.cursor as string;
    const withId = await get(`?tag_id=${ids[0]}&after=${c}`);
    assert.equal(withId.statusCode, 400);
    assert.equal(withId.json().message, 'The parameter "after" cannot be used with "tag_id"');
    const back = await get(`?before=${c}`);
    assert.equal(back.statusCode, 400);
    assert.match(back.json().message, /"before" is not supported/);
  });

  it('rejects a tampered cursor and bad first with 400', async () => {
    const c = (await get('?first=2')).json().pagination.cursor as string;
    const tampered = `${c.slice(0, 5)}${c[5] === 'A' ? 'B' : 'A'}${c.slice(6)}`;
    assert.equal((await get(`?after=${tampered}`)).json().message, 'Invalid cursor.');
    assert.equal((await get('?first=101')).statusCode, 400);
  });

  it('takes app and user tokens, answers 401 without one, and is served at /mock too', async () => {
    assert.equal((await get('?first=1', await t.userToken())).statusCode, 200);
    const missing = await t.get('/helix/tags/streams?tag_id=nope');
    assert.equal(missing.statusCode, 401);
    assert.equal(missing.json().message, 'OAuth token is missing');
    const mock = await t.get('/mock/tags/streams?first=4', bearer(token));
    assert.deepEqual(tagIds(mock), ids.slice(0, 4));
    assert.equal(mock.headers.sunset, 'Thu, 13 Jul 2023 00:00:00 GMT');
    assert.equal(
      mock.headers.link,
      '</mock/channels>; rel="successor-version"; title="Get Channel Information (free-form tags)"',
    );
  });

  // Golden answers: the same seed (1, 200 users, TEST_NOW) gives byte-identical bodies on both
  // stores, cursors included. The files hold the body indented (as Biome formats JSON); the wire
  // body must equal their compact form byte for byte. UPDATE_GOLDEN=1 rewrites them.
  for (const [file, q] of [
    ['legacy-follows.json', () => `/helix/users/follows?to_id=${t.seed?.demoUserId}&first=4`],
    ['legacy-tags.json', () => '/helix/tags/streams?first=2'],
  ] as const) {
    it(`answers ${file.replace('.json', '')} byte for byte as test/golden/${file}`, async () => {
      const res = await t.get(q(), bearer(token));
      assert.equal(res.statusCode, 200);
      assertGolden(kind, file, res.body);
    });
  }
});
