// The two profiles, through the real command line and startServer, on both stores. Production
// refuses to start without --secret and --public-url and says which is missing; on an empty store it
// starts empty (no demo data, no demo client, no token printed), serves no /units/*, none of
// development's ways to a token without proof (the consent page, its authorization_code grant,
// POST /auth/authorize) and describes none of them in /openapi.json, while the grants it keeps work.
// Development, the default, still serves all of it.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { type Running, startServer } from '../../src/server.ts';
import { forEachStore } from '../support/apps.ts';
import { helixd } from '../support/cli.ts';
import { cliDb, type StoreKind, type TempStore, tempStore } from '../support/stores.ts';

const SECRET = 'production-secret-0123456789';
const PUBLIC_URL = 'https://api.example.com';
const REDIRECT = 'http://localhost:3000/cb';

describe('--profile and HELIXD_PROFILE', () => {
  const dir = mkdtempSync(join(tmpdir(), 'helixd-profiles-'));
  const db = join(dir, 'never.db');
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('production without --secret or --public-url stops at once, naming what is missing', async () => {
    const neither = await helixd(['serve', '--profile', 'production', '--db', db]);
    assert.equal(neither.code, 1);
    assert.match(
      neither.stderr,
      /^helixd: the production profile needs HELIXD_SECRET \/ --secret .* and HELIXD_PUBLIC_URL \/ --public-url /,
    );
    const noUrl = await helixd(['serve', '--profile', 'production', '--db', db, '--secret', SECRET]);
    assert.equal(noUrl.code, 1);
    assert.match(
      noUrl.stderr,
      /needs HELIXD_PUBLIC_URL \/ --public-url \(this server's base URL as callers reach it\)\n$/,
    );
    const noSecret = await helixd([
      'serve',
      '--profile',
      'production',
      '--db',
      db,
      '--public-url',
      PUBLIC_URL,
    ]);
    assert.equal(noSecret.code, 1);
    assert.match(
      noSecret.stderr,
      /needs HELIXD_SECRET \/ --secret \(the signing secret every instance shares\)\n$/,
    );
    assert.equal(existsSync(db), false, 'no store was opened');
  });

  it('an unknown profile is a configuration error naming the option and the profiles', async () => {
    const r = await helixd(['serve', '--profile', 'staging', '--db', db]);
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      'helixd: HELIXD_PROFILE / --profile: "staging" is not a profile (development or production)\n',
    );
    assert.throws(() => loadConfig({}, { HELIXD_PROFILE: 'Production' }), ConfigError);
  });

  it('is read from the environment like every other option; the flag wins', () => {
    const env = { HELIXD_PROFILE: 'production', HELIXD_SECRET: SECRET, HELIXD_PUBLIC_URL: PUBLIC_URL };
    const production = loadConfig({}, env);
    assert.equal(production.profile, 'production');
    assert.equal(production.devShortcuts, false);
    assert.equal(production.skipSeed, true, 'production never seeds demo data');
    assert.throws(() => loadConfig({}, { HELIXD_PROFILE: 'production' }), /HELIXD_SECRET/);
    const development = loadConfig({ profile: 'development' }, env);
    assert.equal(development.devShortcuts, true);
    assert.equal(loadConfig({}, {}).profile, 'development', 'the default');
  });
});

/** A server of `profile` on a fresh, empty store of `kind`, with what it printed. */
async function serve(kind: StoreKind, flags: Record<string, string | number>) {
  const temp = await tempStore(kind);
  const db = cliDb({ url: temp.url, ...(temp.schema ? { schema: temp.schema } : {}) });
  const printed: string[] = [];
  const running = await startServer(
    loadConfig({ db, port: 0, logLevel: 'silent', rateLimit: 0, ...flags }, {}),
    (l) => printed.push(l),
  );
  return { temp, db, running, printed };
}

type Served = Awaited<ReturnType<typeof serve>>;

const post = (r: Running, url: string, form: Record<string, string> = {}) =>
  r.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(form).toString(),
  });

forEachStore('the production profile', (kind) => {
  let s: Served;
  let temp: TempStore;
  before(async () => {
    s = await serve(kind, { profile: 'production', secret: SECRET, publicUrl: PUBLIC_URL });
    temp = s.temp;
  });
  after(async () => {
    await s?.running.stop();
    await temp?.drop();
  });

  it('starts an empty store empty: no demo data, no demo client, no token printed', async () => {
    assert.deepEqual(s.printed, [
      `helixd: serving ${PUBLIC_URL}, listening on http://127.0.0.1:${(s.running.app.server.address() as AddressInfo).port} (production profile, store ${s.running.store.location}, no demo data)`,
    ]);
    const exported = await helixd(['export', '--db', s.db]);
    assert.equal(exported.code, 0, exported.stderr);
    assert.equal(exported.stdout, '', 'the store holds no record');
  });

  it('serves no /units/*, and /openapi.json describes only what it serves', async () => {
    for (const url of ['/units/clients', '/units/users'])
      assert.equal((await s.running.app.inject({ method: 'GET', url })).statusCode, 404, url);
    const doc = (await s.running.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const paths = Object.keys(doc.paths);
    assert.deepEqual(
      paths.filter((p) => /^\/(units|auth)\/|^\/oauth2\/authorize/.test(p)),
      [],
      'no mock unit, consent page or user_token shortcut is described',
    );
    assert.deepEqual(
      doc.paths['/oauth2/token'].post.requestBody.content['application/x-www-form-urlencoded'].schema
        .properties.grant_type.enum,
      ['client_credentials', 'refresh_token'],
    );
    assert.ok(paths.includes('/helix/games/top') && paths.includes('/oauth2/validate'));
  });

  it("refuses development's token shortcuts with production's answers; the grants it keeps work", async () => {
    const created = await helixd([
      'client',
      'create',
      '--db',
      s.db,
      '--name',
      'App',
      '--redirect-uri',
      REDIRECT,
    ]);
    assert.equal(created.code, 0, created.stderr);
    const id = /client_id +(\w+)/.exec(created.stdout)?.[1] as string;
    const secret = /client_secret +(\w+)/.exec(created.stdout)?.[1] as string;
    const user = {
      kind: 'user',
      data: {
        id: '900001',
        login: 'ada',
        display_name: 'Ada',
        broadcaster_type: '',
        description: '',
        created_at: '2024-01-01T00:00:00Z',
      },
    };
    const imported = await helixd(['import', '-', '--db', s.db], `${JSON.stringify(user)}\n`);
    assert.equal(imported.code, 0, imported.stderr);
    const client = { client_id: id, client_secret: secret };

    const grants: Record<string, string>[] = [
      { grant_type: 'user_token', user_id: '900001', scope: 'user:read:email' },
      { grant_type: 'authorization_code', code: 'x'.repeat(30), redirect_uri: REDIRECT },
    ];
    for (const grant of grants) {
      const res = await post(s.running, '/oauth2/token', { ...client, ...grant });
      assert.equal(res.statusCode, 400, grant.grant_type);
      assert.deepEqual(res.json(), { status: 400, message: 'unsupported grant type' });
    }
    const shortcut = await post(s.running, '/auth/authorize', {
      ...client,
      grant_type: 'user_token',
      user_id: '900001',
      scope: 'user:read:email',
    });
    assert.equal(shortcut.statusCode, 404);
    const authorize = { client_id: id, redirect_uri: REDIRECT, response_type: 'token', scope: '' };
    const page = await s.running.app.inject({
      method: 'GET',
      url: `/oauth2/authorize?${new URLSearchParams(authorize)}`,
    });
    assert.equal(page.statusCode, 404, 'no consent page');
    const consent = await post(s.running, '/oauth2/authorize', {
      ...authorize,
      decision: 'allow',
      login: 'ada',
    });
    assert.equal(consent.statusCode, 404);

    const app = await post(s.running, '/oauth2/token', { ...client, grant_type: 'client_credentials' });
    assert.equal(app.statusCode, 200, app.body);
    // A user token comes from the operator, and renews itself with its refresh token.
    const minted = await helixd(['token', '--db', s.db, '--client', id, '--user', 'ada', '--json']);
    assert.equal(minted.code, 0, minted.stderr);
    const refreshed = await post(s.running, '/oauth2/token', {
      ...client,
      grant_type: 'refresh_token',
      refresh_token: JSON.parse(minted.stdout).refresh_token,
    });
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    const me = await s.running.app.inject({
      method: 'GET',
      url: '/helix/users',
      headers: { authorization: `Bearer ${refreshed.json().access_token}`, 'client-id': id },
    });
    assert.equal(me.json().data[0].login, 'ada');
  });
});

forEachStore('the development profile (the default)', (kind) => {
  let s: Served;
  before(async () => {
    s = await serve(kind, { users: 10 });
  });
  after(async () => {
    await s?.running.stop();
    await s?.temp.drop();
  });

  it('seeds demo data, prints its client and tokens, and serves the mock-server shortcuts', async () => {
    assert.match(
      s.printed.join('\n'),
      /seeding demo data[\s\S]*demo client secret +\w{30}[\s\S]*user token +\w{30}/,
    );
    const units = await s.running.app.inject({ method: 'GET', url: '/units/clients' });
    assert.equal(units.statusCode, 200);
    const [demo] = units.json().data;
    const users = (await s.running.app.inject({ method: 'GET', url: '/units/users?first=1' })).json();
    const minted = await post(s.running, '/auth/authorize', {
      client_id: demo.ID,
      client_secret: demo.Secret,
      grant_type: 'user_token',
      user_id: users.data[0].id,
      scope: 'user:read:email',
    });
    assert.equal(minted.statusCode, 200, minted.body);
    const page = await s.running.app.inject({
      method: 'GET',
      url: `/oauth2/authorize?client_id=${demo.ID}&redirect_uri=${encodeURIComponent('http://localhost:3000')}&response_type=code&scope=`,
    });
    assert.equal(page.statusCode, 200);
    const doc = (await s.running.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    assert.ok(doc.paths['/units/clients'] && doc.paths['/oauth2/authorize'] && doc.paths['/auth/authorize']);
    assert.deepEqual(
      doc.paths['/oauth2/token'].post.requestBody.content['application/x-www-form-urlencoded'].schema
        .properties.grant_type.enum,
      ['client_credentials', 'authorization_code', 'refresh_token'],
    );
  });
});

/** Runs `fn` with `vars` set in this process's environment (the in-process command line reads it). */
async function withEnv<T>(vars: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(before))
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
  }
}

forEachStore("the server's environment and the other commands", (kind) => {
  let from: TempStore;
  let into: TempStore;
  const dbOf = (t: TempStore) => cliDb({ url: t.url, ...(t.schema ? { schema: t.schema } : {}) });
  before(async () => {
    from = await tempStore(kind);
    into = await tempStore(kind);
  });
  after(async () => {
    await from?.drop();
    await into?.drop();
  });

  // A host that sets HELIXD_PROFILE=production (and more) for the server runs the other commands
  // in that same environment.
  const SERVER_ENV = { HELIXD_PROFILE: 'production', HELIXD_PORT: 'not-a-port', HELIXD_LEGACY: 'maybe' };

  it('production binds serve only: the other commands ask for what they use, not --secret or --public-url', async () => {
    const db = dbOf(from);
    const ok = async (args: string[], stdin = '') => {
      const r = await helixd(args, stdin);
      assert.equal(r.code, 0, `helixd ${args.join(' ')}: ${r.stderr}`);
      return r;
    };
    await withEnv(SERVER_ENV, async () => {
      await ok(['migrate', '--db', db]);
      await ok(['seed', '--db', db, '--users', '10']);
      assert.match((await ok(['token', '--db', db, '--app'])).stdout, /^\w{30}\n$/);
      const created = JSON.parse(
        (await ok(['client', 'create', '--db', db, '--name', 'x', '--json'])).stdout,
      );
      assert.match((await ok(['client', 'list', '--db', db])).stdout, new RegExp(created.client_id));
      const exported = await ok(['export', '--db', db, '--kind', 'user', 'game']);
      assert.ok(exported.stdout.split('\n').length > 10, 'users and games exported');
      assert.match((await ok(['import', '-', '--db', dbOf(into)], exported.stdout)).stdout, /^imported /);

      const serve = await helixd(['serve', '--db', db]);
      assert.equal(serve.code, 1);
      assert.match(
        serve.stderr,
        /the production profile needs HELIXD_SECRET \/ --secret .* and HELIXD_PUBLIC_URL/,
      );
    });
  });

  it('a command still checks the options it uses, from the environment too', async () => {
    const r = await withEnv({ ...SERVER_ENV, HELIXD_APP_TOKEN_TTL: 'forever' }, () =>
      helixd(['token', '--db', dbOf(from), '--app']),
    );
    assert.equal(r.code, 1);
    assert.match(r.stderr, /HELIXD_APP_TOKEN_TTL \/ --app-token-ttl: "forever" is not a duration/);
  });
});
