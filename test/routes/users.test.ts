// GET /users: users by id and login (repeatable, 100 together), the token's own user without
// either, and the email rule (only the user's own token with user:read:email sees it).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { demoEmail } from '../../src/seed/generate.ts';
import { migrateToLatest } from '../../src/store/migrate.ts';
import type { UserRow } from '../../src/store/schema.ts';
import { rfc3339 } from '../../src/wire/datetime.ts';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { assertGolden } from '../support/golden.ts';
import { type StoreKind, tempStore } from '../support/stores.ts';

const SITE = 'https://streams.example.com';

/** The wire object production gives for `row`, without `email`. */
function expected(row: UserRow) {
  return {
    id: String(row.id),
    login: row.login,
    display_name: row.display_name,
    type: '',
    broadcaster_type: row.broadcaster_type,
    description: row.description,
    profile_image_url: `${SITE}/media/users/${row.id}/profile-300x300.png`,
    offline_image_url: `${SITE}/media/users/${row.id}/offline-1920x1080.png`,
    view_count: 0,
    created_at: rfc3339(row.created_at),
  };
}

forEachStore('GET /helix/users', (kind: StoreKind) => {
  let t: TestApp;
  let app: string;
  let rows: UserRow[];
  let demo: UserRow;
  const get = (q: string, tok = app) => t.get(`/helix/users${q ? `?${q}` : ''}`, bearer(tok));
  const ids = (res: { json(): { data: { id: string }[] } }) => res.json().data.map((u) => u.id);

  before(async () => {
    t = await startTestApp(kind);
    app = await t.appToken();
    rows = await t.store.db.selectFrom('users').selectAll().orderBy('id').execute();
    demo = rows.find((r) => r.id === t.seed?.demoUserId) as UserRow;
  });
  after(() => t.close());

  const row = (i: number) => rows[i] as UserRow;

  it('returns the Helix User fields by id: images from the site URL, type "", view_count 0, no email for an app token', async () => {
    const res = await get(`id=${row(7).id}`);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { data: [expected(row(7))] });
  });

  it('answers with data only: no pagination key', async () => {
    assert.deepEqual(Object.keys((await get(`id=${row(1).id}`)).json()), ['data']);
    assert.deepEqual(Object.keys((await get('login=nosuchuser')).json()), ['data']);
  });

  it('looks logins up ignoring case (logins are stored in lower case)', async () => {
    const upper = row(3).login.toUpperCase();
    assert.notEqual(upper, row(3).login);
    assert.deepEqual((await get(`login=${upper}`)).json().data, [expected(row(3))]);
  });

  it('orders data as asked: the ids in the order given, then the logins in the order given', async () => {
    const q = `login=${row(9).login}&id=${row(4).id}&login=${row(2).login}&id=${row(8).id}`;
    assert.deepEqual(
      ids(await get(q)),
      [row(4), row(8), row(9), row(2)].map((r) => String(r.id)),
    );
  });

  it('collapses duplicates: an id twice, a login in two cases, a user by id and by login are one entry', async () => {
    const u = row(5);
    const q = `id=${u.id}&id=${u.id}&login=${u.login}&login=${u.login.toUpperCase()}&login=${row(6).login}`;
    assert.deepEqual(ids(await get(q)), [String(u.id), String(row(6).id)]);
  });

  it('leaves unknown ids and logins out (200, not 404)', async () => {
    const res = await get(`id=1&login=nosuchuser&id=${row(0).id}&login=`);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(ids(res), [String(row(0).id)]);
    assert.deepEqual((await get('id=1')).json(), { data: [] });
  });

  it('a value of id that is not a numeric ID is a 400 naming "id", on either store', async () => {
    for (const v of ['abc', '-1', '1.5', '0x10', '%201', '', '99999999999999999999', `${row(0).id}x`]) {
      const res = await get(`id=${row(0).id}&id=${v}`);
      assert.equal(res.statusCode, 400, v);
      assert.equal(res.json().message, 'The parameter "id" was malformed: each value must be a numeric ID');
    }
  });

  it('accepts up to 100 ids and logins together; 101 together is a 400 naming both parameters and the limit', async () => {
    const idPart = rows.slice(0, 60).map((r) => `id=${r.id}`);
    const loginPart = rows.slice(60, 100).map((r) => `login=${r.login}`);
    const ok = await get([...idPart, ...loginPart].join('&'));
    assert.equal(ok.statusCode, 200);
    assert.deepEqual(
      ids(ok),
      rows.slice(0, 100).map((r) => String(r.id)),
    );
    const res = await get([...idPart, ...loginPart, `login=${row(100).login}`].join('&'));
    assert.equal(res.statusCode, 400);
    assert.equal(
      res.json().message,
      'The parameters "id" and "login" may be given at most 100 times together: 101 values were given',
    );
    // Repeated values count: the limit is on what the request names, before duplicates collapse.
    const repeated = [
      ...Array.from({ length: 60 }, () => `id=${row(0).id}`),
      ...Array.from({ length: 41 }, () => `login=${row(0).login}`),
    ];
    assert.equal((await get(repeated.join('&'))).statusCode, 400);
    assert.equal((await get(repeated.slice(1).join('&'))).statusCode, 200);
  });

  it('either parameter given 101 times is a 400 naming it and the limit', async () => {
    for (const [p, v] of [
      ['id', String(row(0).id)],
      ['login', row(0).login],
    ]) {
      const res = await get(Array.from({ length: 101 }, () => `${p}=${v}`).join('&'));
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().message, `The parameter "${p}" may be given at most 100 times`);
    }
  });

  it("with a user token and neither id nor login: the token's user", async () => {
    const other = row(11);
    const res = await get('', await t.userToken([], other.id));
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { data: [expected(other)] });
  });

  it('with a user token and ids or logins: only the users named, not the token user besides', async () => {
    assert.deepEqual(ids(await get(`id=${row(12).id}`, await t.userToken([]))), [String(row(12).id)]);
  });

  it('with an app token and neither id nor login: 400 naming both parameters', async () => {
    const res = await get('');
    assert.equal(res.statusCode, 400);
    assert.equal(
      res.json().message,
      'Missing required parameter: "id" or "login" must be given unless the token is a user access token',
    );
  });

  it("email: only in the token user's own entry, with user:read:email; absent (not empty) everywhere else", async () => {
    const other = row(13);
    const q = `id=${demo.id}&id=${other.id}`;
    const own = (await get(q, await t.userToken(['user:read:email']))).json().data;
    assert.deepEqual(own, [{ ...expected(demo), email: demoEmail(demo.login) }, expected(other)]);
    assert.equal(demo.email, demoEmail(demo.login));
    assert.ok(!('email' in (own[1] as object)));
    // Without the scope, with an app token, or a token of another user with the scope: no email.
    for (const tok of [await t.userToken([]), app, await t.userToken(['user:read:email'], other.id)]) {
      const data = (await get(`id=${demo.id}`, tok)).json().data;
      assert.deepEqual(data, [expected(demo)]);
    }
    // The token user found by login or by no parameter at all is the same entry.
    const byLogin = (await get(`login=${demo.login}`, await t.userToken(['user:read:email']))).json().data;
    assert.equal(byLogin[0].email, demo.email);
    const self = (await get('', await t.userToken(['user:read:email']))).json().data;
    assert.equal(self[0].email, demo.email);
  });

  it('is served at /mock/users too, with the same answer', async () => {
    const a = await t.get(`/helix/users?id=${row(3).id}`, bearer(app));
    const b = await t.get(`/mock/users?id=${row(3).id}`, bearer(app));
    assert.equal(b.statusCode, 200);
    assert.equal(b.body, a.body);
  });

  it('without a token: 401 before the parameters are looked at', async () => {
    const res = await t.get('/helix/users?id=abc');
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().message, 'OAuth token is missing');
  });

  it('other methods than GET and PUT (Update User) are a 405 naming both', async () => {
    for (const method of ['POST', 'PATCH', 'DELETE'] as const) {
      const res = await t.inject({
        method,
        url: '/helix/users',
        headers: { ...bearer(app), 'client-id': t.seed?.demoClientId as string },
      });
      assert.equal(res.statusCode, 405, method);
      assert.equal(res.headers.allow, 'GET, HEAD, PUT');
    }
  });

  // Golden answers: seed 1, 200 users; byte-identical on both stores. UPDATE_GOLDEN=1 rewrites them
  // (from the SQLite run).
  describe('golden answers', () => {
    it('answers ids and logins byte for byte as test/golden/users-by-ids-and-logins.json', async () => {
      const res = await get(
        `id=${row(20).id}&id=${row(0).id}&login=${row(31).login.toUpperCase()}&login=nobody`,
      );
      assert.equal(res.statusCode, 200);
      assertGolden(kind, 'users-by-ids-and-logins.json', res.body);
    });
    it('answers the token user with email byte for byte as test/golden/users-token-user-with-email.json', async () => {
      const res = await get('', await t.userToken(['user:read:email']));
      assert.equal(res.statusCode, 200);
      assertGolden(kind, 'users-token-user-with-email.json', res.body);
    });
  });
});

forEachStore('migration 005_users_games_lookup', (kind: StoreKind) => {
  it('adds users.email as "" to the users that exist, leaving their other columns as they were', async () => {
    const temp = await tempStore(kind);
    try {
      const db = temp.store.db;
      const down = await migrateToLatest(temp.store, '004b_games_top_live');
      assert.equal(down.error, undefined);
      const before = { id: 77, login: 'earlybird', display_name: 'EarlyBird' };
      await sql`insert into users (id, login, display_name, broadcaster_type, description, created_at)
        values (${before.id}, ${before.login}, ${before.display_name}, 'affiliate', 'Was here first.', 1500000000)`.execute(
        db,
      );
      const up = await migrateToLatest(temp.store);
      assert.equal(up.error, undefined);
      assert.deepEqual(await db.selectFrom('users').selectAll().execute(), [
        {
          ...before,
          broadcaster_type: 'affiliate',
          description: 'Was here first.',
          created_at: 1_500_000_000,
          email: '',
        },
      ]);
    } finally {
      await temp.drop();
    }
  });
});
