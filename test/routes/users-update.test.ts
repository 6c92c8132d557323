// PUT /users (Update User): the token user's description, changed through the one write path; the
// answer is the user as GET /users shows it to the same token (email only with user:read:email);
// a change records one user.update in the same transaction. Each refusal is a 4xx with the Helix
// error body naming the parameter, and changes nothing: the export before and after is the same.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { exportOf } from '../support/cli.ts';
import type { StoreKind } from '../support/stores.ts';

const EDIT = 'user:edit';

forEachStore('PUT /helix/users', (kind: StoreKind) => {
  let t: TestApp;
  let demo: number;
  /** PUT /users?<q> with `token` and the demo client's Client-Id (`prefix`: /helix or /mock) */
  const put = async (q: string, token: string, prefix = '/helix') =>
    t.inject({
      method: 'PUT',
      url: `${prefix}/users${q ? `?${q}` : ''}`,
      headers: { ...bearer(token), 'client-id': t.seed?.demoClientId as string },
    } satisfies InjectOptions);
  const descriptionOf = async (id: number) =>
    (
      await t.store.db
        .selectFrom('users')
        .select('description')
        .where('id', '=', id)
        .executeTakeFirstOrThrow()
    ).description;
  /** the user.update events recorded for user `id`, oldest first */
  const updates = async (id: number) =>
    (
      await t.store.db
        .selectFrom('events')
        .select('payload')
        .where('type', '=', 'user.update')
        .where('match_key', '=', `user.update:${id}`)
        .orderBy('id')
        .execute()
    ).map((e) => JSON.parse(e.payload));
  const exported = () => exportOf(t.storeOptions);

  before(async () => {
    t = await startTestApp(kind, { users: 50 });
    demo = t.seed?.demoUserId as number;
  });
  after(() => t.close());

  it("changes the token user's description; answers the user exactly as GET /users shows it to that token", async () => {
    for (const scopes of [[EDIT], [EDIT, 'user:read:email']]) {
      const token = await t.userToken(scopes);
      const text = `Now streaming with ${scopes.join(' and ')}`;
      const res = await put(`description=${encodeURIComponent(text)}`, token);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(await descriptionOf(demo), text);
      const read = await t.get('/helix/users', bearer(token));
      assert.equal(res.body, read.body, 'the same bytes as GET /users');
      const [user] = res.json().data;
      assert.equal(user.id, String(demo));
      assert.equal(user.description, text);
      assert.equal('email' in user, scopes.includes('user:read:email'), 'email only with user:read:email');
    }
  });

  it('records one user.update per change, with the new description; none when it stays the same', async () => {
    const token = await t.userToken([EDIT]);
    const before = (await updates(demo)).length;
    assert.equal((await put('description=First', token)).statusCode, 200);
    assert.equal((await put('description=First', token)).statusCode, 200);
    assert.equal((await put('', token)).statusCode, 200);
    const after = await updates(demo);
    assert.equal(after.length, before + 1);
    const row = await t.store.db
      .selectFrom('users')
      .selectAll()
      .where('id', '=', demo)
      .executeTakeFirstOrThrow();
    assert.deepEqual(after.at(-1), {
      user_id: String(demo),
      user_login: row.login,
      user_name: row.display_name,
      email: row.email,
      email_verified: row.email !== '',
      description: 'First',
    });
  });

  it('an empty description removes it; a description left out changes nothing', async () => {
    const token = await t.userToken([EDIT]);
    assert.equal((await put('description=Something', token)).statusCode, 200);
    const unchanged = await put('', token);
    assert.equal(unchanged.statusCode, 200);
    assert.equal(unchanged.json().data[0].description, 'Something');
    const removed = await put('description=', token);
    assert.equal(removed.statusCode, 200);
    assert.equal(removed.json().data[0].description, '');
    assert.equal(await descriptionOf(demo), '');
  });

  it('takes up to 300 characters, counted as characters, not bytes', async () => {
    const token = await t.userToken([EDIT]);
    for (const text of ['x'.repeat(300), 'é'.repeat(300), '\u{1f3ae}'.repeat(300)]) {
      const res = await put(`description=${encodeURIComponent(text)}`, token);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(await descriptionOf(demo), text);
    }
  });

  it('changes only the token user: every other user stays as it was', async () => {
    const other = (
      await t.store.db
        .selectFrom('users')
        .select('id')
        .where('id', '!=', demo)
        .orderBy('id')
        .executeTakeFirstOrThrow()
    ).id;
    const before = await t.store.db
      .selectFrom('users')
      .selectAll()
      .where('id', '!=', other)
      .orderBy('id')
      .execute();
    const res = await put('description=Mine', await t.userToken([EDIT], other));
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().data[0].id, String(other));
    assert.equal(await descriptionOf(other), 'Mine');
    assert.deepEqual(
      await t.store.db.selectFrom('users').selectAll().where('id', '!=', other).orderBy('id').execute(),
      before,
    );
  });

  it('is served at /mock too, the same operation', async () => {
    const token = await t.userToken([EDIT]);
    const res = await put('description=From%20mock', token, '/mock');
    assert.equal(res.statusCode, 200);
    assert.equal(await descriptionOf(demo), 'From mock');
  });

  it('refuses, changing nothing: too long, given twice, text no store holds, an app token, no user:edit', async () => {
    const token = await t.userToken([EDIT]);
    assert.equal((await put('description=Kept', token)).statusCode, 200);
    const snapshot = await exported();
    const events = (await updates(demo)).length;
    const cases: [string, string, number, string][] = [
      [
        `description=${'x'.repeat(301)}`,
        token,
        400,
        'The string in the "description" query parameter is too long: at most 300 characters',
      ],
      ['description=a&description=b', token, 400, 'The parameter "description" may be given only once'],
      [
        'description=a%00b',
        token,
        400,
        'The parameter "description" was malformed: the value must not contain a NUL character (U+0000)',
      ],
      [
        'description=App',
        await t.appToken(),
        401,
        'This operation requires a user access token; an app access token was given',
      ],
      ['description=Nope', await t.userToken(['user:read:email']), 401, 'Missing scope: user:edit'],
    ];
    for (const [q, tok, status, message] of cases) {
      const res = await put(q, tok);
      assert.equal(res.statusCode, status, `${q.slice(0, 40)}: ${res.body}`);
      assert.deepEqual(res.json(), {
        error: status === 400 ? 'Bad Request' : 'Unauthorized',
        status,
        message,
      });
    }
    const none = await t.inject({ method: 'PUT', url: '/helix/users?description=x' });
    assert.equal(none.statusCode, 401);
    assert.equal(await exported(), snapshot);
    assert.equal((await updates(demo)).length, events, 'no event recorded');
  });

  it('passes a body over: the query string is the request', async () => {
    const token = await t.userToken([EDIT]);
    for (const [type, payload] of [
      ['application/json', '{"description":'],
      ['text/plain', 'description=Body'],
      ['application/xml', '<x/>'],
    ]) {
      const res = await t.inject({
        method: 'PUT',
        url: '/helix/users?description=Query',
        headers: { ...bearer(token), 'client-id': t.seed?.demoClientId as string, 'content-type': type },
        payload,
      });
      assert.equal(res.statusCode, 200, `${type}: ${res.body}`);
      assert.equal(await descriptionOf(demo), 'Query');
    }
  });
});
