// `helixd client create` and `helixd client list` through the real command line, on both stores; a
// created client's credentials then work against the token service of an app on the same store.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { sha256 } from '../src/auth/tokens.ts';
import { forEachStore, PG_URL, type StoreKind, startTestApp, type TestApp } from './helpers.ts';

const BIN = join(import.meta.dirname, '..', 'bin', 'helixd.js');
const run = promisify(execFile);

forEachStore('helixd client (command line)', (kind: StoreKind) => {
  let t: TestApp;
  let db: string;
  const helixd = (...args: string[]) => run(process.execPath, [BIN, ...args, '--db', db]);

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

  it('client create refuses a redirect URI that is not a URL, and a missing --name, with exit code 1', async () => {
    await assert.rejects(
      helixd('client', 'create', '--name', 'Bad', '--redirect-uri', 'not a url'),
      (e: { code: number; stderr: string }) => e.code === 1 && /not a URL: not a url/.test(e.stderr),
    );
    await assert.rejects(
      helixd('client', 'create'),
      (e: { code: number; stderr: string }) => e.code === 1 && /--name/.test(e.stderr),
    );
  });
});
