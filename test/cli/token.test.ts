// `helixd client create`, `helixd client list` and `helixd token` through the real command line, on
// both stores; what they print then works against the token service and the operations of an app
// on the same store.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, it } from 'node:test';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { sha256 } from '../../src/auth/tokens.ts';
import { bearer, forEachStore, startTestApp, TEST_NOW, type TestApp } from '../support/apps.ts';
import { HELIXD_DEV_BIN } from '../support/process.ts';
import { PG_URL, type StoreKind } from '../support/stores.ts';

const run = promisify(execFile);

forEachStore('helixd client and helixd token (command line)', (kind: StoreKind) => {
  let t: TestApp;
  let db: string;
  const helixd = (...args: string[]) => run(process.execPath, [HELIXD_DEV_BIN, ...args, '--db', db]);

  before(async () => {
    t = await startTestApp(kind, { users: 20 });
    if (kind === 'sqlite') db = t.config.db;
    else {
      // The test's own schema, passed to the command line through the URL's options.
      const { rows } = await sql<{ s: string }>`select current_schema() as s`.execute(t.store.db);
      db = `${PG_URL}?options=${encodeURIComponent(`-c search_path=${rows[0]?.s}`)}`;
    }
  });
  after(() => t.close());

  it('client create prints an id and a secret that the token service accepts, and keeps only its hash', async () => {
    const { stdout } = await helixd(
      'client',
      'create',
      '--name',
      'My App',
      '--redirect-uri',
      'http://localhost:9999/cb',
      '--json',
    );
    const created = JSON.parse(stdout);
    assert.match(created.client_id, /^[a-z0-9]{30}$/);
    assert.match(created.client_secret, /^[a-z0-9]{30}$/);
    assert.deepEqual(created.redirect_uris, ['http://localhost:9999/cb']);

    const row = await t.store.db
      .selectFrom('clients')
      .selectAll()
      .where('id', '=', created.client_id)
      .executeTakeFirstOrThrow();
    assert.equal(row.secret_hash, sha256(created.client_secret));
    assert.equal(row.demo_secret, null);

    const q = new URLSearchParams({
      client_id: created.client_id,
      client_secret: created.client_secret,
      grant_type: 'client_credentials',
    });
    const token = await t.inject({ method: 'POST', url: `/oauth2/token?${q}` });
    assert.equal(token.statusCode, 200, token.body);
    const page = await t.get(
      `/oauth2/authorize?${new URLSearchParams({ client_id: created.client_id, redirect_uri: 'http://localhost:9999/cb', response_type: 'code' })}`,
    );
    assert.equal(page.statusCode, 200, 'its redirect URI is registered');
    const units = (await t.get('/units/clients')).json();
    assert.ok(
      units.data.every((c: { ID: string }) => c.ID !== created.client_id),
      'not listed: no known secret',
    );
  });

  it('client create prints the id and secret on two labelled lines without --json', async () => {
    const { stdout } = await helixd('client', 'create', '--name', 'Plain');
    assert.match(stdout, /^client_id {6}[a-z0-9]{30}\nclient_secret {2}[a-z0-9]{30}\n$/);
  });

  it('client list shows every client with its redirect URIs, oldest first', async () => {
    const { stdout } = await helixd('client', 'list', '--json');
    const list = JSON.parse(stdout) as { client_id: string; name: string; redirect_uris: string[] }[];
    const rows = await t.store.db
      .selectFrom('clients')
      .select(['id', 'name'])
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    assert.deepEqual(
      list.map((c) => c.client_id),
      rows.map((r) => r.id),
    );
    assert.ok(
      list.some((c) => c.name === 'helixd demo app' && c.redirect_uris.includes('http://localhost:3000')),
    );
    const text = (await helixd('client', 'list')).stdout.trim().split('\n');
    assert.equal(text.length, rows.length);
    assert.ok(
      text.some((l) => l.startsWith(`${t.seed?.demoClientId}  helixd demo app  http://localhost:3000`)),
    );
  });

  /** POST /oauth2/token grant_type=refresh_token with the demo client's credentials. */
  async function refresh(refreshToken: string) {
    const demo = (await t.get('/units/clients')).json().data[0];
    return t.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        client_id: demo.ID,
        client_secret: demo.Secret,
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
      }).toString(),
    });
  }

  it('token --user --json carries the refresh token, client_id, user_id and login; both tokens work', async () => {
    const { stdout } = await helixd(
      'token',
      '--user',
      t.seed?.demoLogin as string,
      '--scope',
      'channel:read:subscriptions',
      '--json',
    );
    const reply = JSON.parse(stdout);
    assert.deepEqual(Object.keys(reply), [
      'access_token',
      'refresh_token',
      'expires_in',
      'scope',
      'token_type',
      'client_id',
      'user_id',
      'login',
    ]);
    assert.match(reply.access_token, /^[a-z0-9]{30}$/);
    assert.match(reply.refresh_token, /^[a-z0-9]{50}$/);
    assert.equal(reply.expires_in, 4 * 3600);
    assert.deepEqual(reply.scope, ['channel:read:subscriptions']);
    assert.equal(reply.token_type, 'bearer');
    assert.equal(reply.client_id, t.seed?.demoClientId);
    assert.equal(reply.user_id, String(t.seed?.demoUserId));
    assert.equal(reply.login, t.seed?.demoLogin);

    const subs = (token: string) =>
      t.get(`/helix/subscriptions?broadcaster_id=${t.seed?.demoUserId}`, bearer(token));
    assert.equal((await subs(reply.access_token)).statusCode, 200);
    const refreshed = await refresh(reply.refresh_token);
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    const next = refreshed.json();
    assert.deepEqual(next.scope, ['channel:read:subscriptions']);
    assert.notEqual(next.refresh_token, reply.refresh_token);
    assert.equal((await subs(next.access_token)).statusCode, 200);
    assert.equal((await refresh(reply.refresh_token)).statusCode, 400, 'a refresh token is spent once');
  });

  it('token --user prints the access token and the refresh token on two labelled lines; the refresh token works', async () => {
    const { stdout } = await helixd('token', '--user', String(t.seed?.demoUserId));
    const m = /^access_token {3}([a-z0-9]{30})\nrefresh_token {2}([a-z0-9]{50})\n$/.exec(stdout);
    assert.ok(m, stdout);
    const info = (await t.get('/oauth2/validate', bearer(m[1] as string))).json();
    assert.equal(info.user_id, String(t.seed?.demoUserId));
    const refreshed = await refresh(m[2] as string);
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    assert.equal((await t.get('/oauth2/validate', bearer(refreshed.json().access_token))).statusCode, 200);
  });

  it('token --app prints one bare token, and with --json carries client_id and no refresh token', async () => {
    const { stdout } = await helixd('token', '--app');
    assert.match(stdout, /^[a-z0-9]{30}\n$/);
    const reply = JSON.parse((await helixd('token', '--app', '--json')).stdout);
    assert.deepEqual(Object.keys(reply), ['access_token', 'expires_in', 'scope', 'token_type', 'client_id']);
    assert.equal(reply.client_id, t.seed?.demoClientId);
    assert.deepEqual(reply.scope, []);
    assert.equal((await t.get('/helix/games/top?first=1', bearer(reply.access_token))).statusCode, 200);
    assert.equal((await refresh(reply.access_token)).statusCode, 400, 'an app token cannot be refreshed');
  });

  it('token and client create take --now, as HELIXD_NOW: the instant the token or the client is issued at', async () => {
    // The app's clock is at TEST_NOW: a token issued half an hour before it for an hour has half an
    // hour left; one issued by the system clock (today) would have months.
    const halfHourAgo = new Date(TEST_NOW - 30 * 60_000).toISOString();
    const { stdout } = await helixd('token', '--app', '--now', halfHourAgo, '--expires', '1h', '--json');
    const info = (await t.get('/oauth2/validate', bearer(JSON.parse(stdout).access_token))).json();
    assert.equal(info.expires_in, 30 * 60);
    const created = JSON.parse(
      (await helixd('client', 'create', '--name', 'Dated', '--now', '2020-02-02T00:00:00Z', '--json')).stdout,
    );
    const row = await t.store.db
      .selectFrom('clients')
      .select('created_at')
      .where('id', '=', created.client_id)
      .executeTakeFirstOrThrow();
    assert.equal(Number(row.created_at), Date.UTC(2020, 1, 2) / 1000);
    await assert.rejects(
      helixd('token', '--app', '--now', 'yesterday'),
      (e: { code: number; stderr: string }) => e.code === 1 && /--now/.test(e.stderr),
    );
  });

  it('client create refuses a redirect URI that is not a URL, and a missing --name, with exit code 1', async () => {
    await assert.rejects(
      helixd('client', 'create', '--name', 'Bad', '--redirect-uri', 'not a url'),
      (e: { code: number; stderr: string }) =>
        e.code === 1 && /--redirect-uri: client redirect_uris\[0\]: must be an absolute URL/.test(e.stderr),
    );
    await assert.rejects(
      helixd('client', 'create'),
      (e: { code: number; stderr: string }) => e.code === 1 && /--name/.test(e.stderr),
    );
  });
});
