// Who reaches the admin API: nobody unless an admin token is configured (404, as if it did not
// exist); with one, only a request bearing it (401 without a token, 403 with any other, Helix
// tokens included). The operations stay read-only whatever the token.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { ADMIN_TOKEN, bearer, forEachStore, startTestApp, type TestApp } from '../../support/apps.ts';
import { assertTokenTooShort } from '../../support/cli.ts';
import type { StoreKind } from '../../support/stores.ts';

forEachStore('admin API: off without an admin token', (kind: StoreKind) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(kind, { users: 10 });
  });
  after(() => t.close());

  it('answers 404 on every admin path, whatever the token, and /openapi.json lists none', async () => {
    for (const [method, url] of [
      ['GET', '/admin/users'],
      ['POST', '/admin/users'],
      ['POST', '/admin/batch'],
      ['DELETE', '/admin/users/1'],
    ] as const) {
      const res = await t.inject({ method, url, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      assert.equal(res.statusCode, 404, `${method} ${url}`);
      assert.deepEqual(res.json(), { error: 'Not Found', status: 404, message: 'Not Found' });
    }
    const doc = (await t.inject({ method: 'GET', url: '/openapi.json' })).json();
    assert.ok(!Object.keys(doc.paths).some((p) => p.startsWith('/admin')));
    assert.equal(doc.components.securitySchemes.admin, undefined);
  });
});

forEachStore('admin API: only the admin token opens it', (kind: StoreKind) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(kind, { users: 10, config: { adminToken: ADMIN_TOKEN } });
  });
  after(() => t.close());

  it('without a token: 401; with a Helix app or user token or another text: 403; with the admin token: 200', async () => {
    const get = (headers: Record<string, string>) =>
      t.inject({ method: 'GET', url: '/admin/users', headers });
    assert.equal((await get({})).statusCode, 401);
    const app = await t.appToken();
    const user = await t.userToken(['user:read:email']);
    for (const token of [app, user, `${ADMIN_TOKEN}x`, ADMIN_TOKEN.slice(1)]) {
      const res = await get({ ...bearer(token), 'client-id': t.seed?.demoClientId as string });
      assert.equal(res.statusCode, 403, token);
      assert.deepEqual(res.json(), {
        error: 'Forbidden',
        status: 403,
        message: 'The token is not the admin token',
      });
    }
    assert.equal((await get(bearer(ADMIN_TOKEN))).statusCode, 200);
  });

  it('lists the admin routes in /openapi.json under the admin security scheme', async () => {
    const doc = (await t.inject({ method: 'GET', url: '/openapi.json' })).json();
    assert.equal(doc.components.securitySchemes.admin.scheme, 'bearer');
    for (const path of [
      '/admin/clips',
      '/admin/clips/{id}',
      '/admin/subscriptions/{broadcaster_id}/{user_id}',
      '/admin/batch',
    ])
      assert.ok(doc.paths[path], path);
    assert.deepEqual(doc.paths['/admin/clips'].post.security, [{ admin: [] }]);
  });

  it('keeps the operations read-only: a write method on /helix is still a 405, even with the admin token', async () => {
    const res = await t.inject({ method: 'POST', url: '/helix/users', headers: bearer(ADMIN_TOKEN) });
    assert.equal(res.statusCode, 405);
  });
});

it('an admin token shorter than 32 characters is a configuration error', () =>
  assertTokenTooShort('adminToken'));
