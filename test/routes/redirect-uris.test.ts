// A client's redirect URIs, on both stores: one rule (src/records/kinds.ts, redirectUriRule) refuses
// the same URIs with the same message naming the field, whichever way a client is written (the
// admin API, `helixd import`, a `--fixtures` file, `helixd client create`), and changes nothing;
// the URIs it accepts are kept as registered and redirected to byte for byte; and a URI a store
// holds from before the rule is never redirected to.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { sha256 } from '../../src/auth/tokens.ts';
import { loadConfig } from '../../src/config.ts';
import { startServer } from '../../src/server.ts';
import { forEachStore, postForm, startTestApp, TEST_NOW, type TestApp } from '../support/apps.ts';
import { helixd } from '../support/cli.ts';
import { cliDb, type StoreKind, tempStore } from '../support/stores.ts';

const ADMIN_TOKEN = 'redirect-uris-admin-token-0123456789';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
const MISMATCH = 'Parameter redirect_uri does not match registered URI';

const SCHEME = 'must be an http or https URL';
const USERINFO = 'must not hold a user name or password (user:password@)';
const FRAGMENT = 'must not have a fragment (#...)';
const CONTROL = 'must not contain control characters (U+0000 to U+001F, U+007F to U+009F)';
const HTTPS = 'must use https, or http with a loopback host (localhost, 127.x.x.x or [::1])';
const written = (href: string) => `must be written as a URL parser writes it: ${JSON.stringify(href)}`;

/** [a URI no client may register, the rule it breaks] */
const BAD: [string, string][] = [
  ['javascript:alert(1)', SCHEME],
  ['data:text/html,<script>alert(1)</script>', SCHEME],
  ['ftp://app.example.com/cb', SCHEME],
  ['myapp://callback', SCHEME],
  ['localhost:3000/cb', SCHEME],
  ['/auth/callback', 'must be an absolute URL'],
  ['', 'must not be empty'],
  ['http://user:pw@localhost:3000/cb', USERINFO],
  ['https://user@app.example.com/cb', USERINFO],
  ['https://app.example.com/cb#frag', FRAGMENT],
  ['https://app.example.com/cb#', FRAGMENT],
  ['http://localhost:3000/cb\r\nSet-Cookie: a=b', CONTROL],
  ['http://localhost:3000/c\tb', CONTROL],
  ['https://app.example.com/cb\u0007', CONTROL],
  ['https://app.example.com/cb\u007f', CONTROL],
  ['https://app.example.com/cb\u0085', CONTROL],
  ['http://app.example.com/cb', HTTPS],
  ['http://192.168.1.20:3000/cb', HTTPS],
  ['http://localhost.app.example.com/cb', HTTPS],
  ['HTTPS://app.example.com/cb', written('https://app.example.com/cb')],
  ['https://app.example.com:443/cb', written('https://app.example.com/cb')],
  ['https://app.example.com/a/../cb', written('https://app.example.com/cb')],
  ['https://app.example.com/a b', written('https://app.example.com/a%20b')],
  [' https://app.example.com/cb', written('https://app.example.com/cb')],
  ['https://例え.jp/cb', written('https://xn--r8jz45g.jp/cb')],
  ['http://127.1/cb', written('http://127.0.0.1/cb')],
  ['http://@localhost/cb', written('http://localhost/cb')],
  [`https://app.example.com/${'x'.repeat(2025)}`, 'must be at most 2048 characters'],
];

/** URIs a client may register, each redirected to exactly as written. */
const GOOD = [
  'https://app.example.com:8443/auth/cb?next=/home&x=a%20b',
  'https://app.example.com/cb?',
  'https://app.example.com',
  'http://localhost:3000/cb',
  'http://localhost:3000',
  'http://127.0.0.1/cb',
  'http://[::1]:8080/cb',
  `https://app.example.com/${'x'.repeat(2024)}`,
];

const escaped = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const clientRecord = (id: string, uris: readonly string[]) => ({
  id,
  name: `App ${id}`,
  redirect_uris: uris,
  created_at: '2024-01-01T00:00:00Z',
  secret: 'a secret long enough',
});

forEachStore('redirect URIs: one rule for every way a client is written', (kind: StoreKind) => {
  let t: TestApp;
  let db: string;
  const dir = mkdtempSync(join(tmpdir(), 'helixd-redirect-'));
  const exported = async () => {
    const r = await helixd(['export', '--db', db]);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout;
  };
  const label = (uri: string) => JSON.stringify(uri).slice(0, 80);

  before(async () => {
    t = await startTestApp(kind, { empty: true, config: { adminToken: ADMIN_TOKEN } });
    db = cliDb(t.storeOptions);
    const res = await t.inject({
      method: 'POST',
      url: '/admin/batch',
      headers: admin,
      payload: JSON.stringify([
        {
          kind: 'user',
          data: {
            id: '1001',
            login: 'alice',
            display_name: 'Alice',
            broadcaster_type: '',
            description: '',
            created_at: '2020-01-01T00:00:00Z',
          },
        },
        { kind: 'client', data: clientRecord('existing', ['http://localhost:3000/cb']) },
      ]),
    });
    assert.equal(res.statusCode, 201, res.body);
  });
  after(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the admin API refuses each bad URI with a 400 naming the field and the rule; the store is unchanged', async () => {
    const snapshot = await exported();
    for (const [uri, rule] of BAD) {
      const created = await t.inject({
        method: 'POST',
        url: '/admin/clients',
        headers: admin,
        payload: JSON.stringify(clientRecord('newclient', [GOOD[0] as string, uri])),
      });
      assert.equal(created.statusCode, 400, `${label(uri)}: ${created.body}`);
      assert.equal(created.json().message, `body: client redirect_uris[1]: ${rule}`, label(uri));
      const patched = await t.inject({
        method: 'PATCH',
        url: '/admin/clients/existing',
        headers: admin,
        payload: JSON.stringify({ redirect_uris: [uri] }),
      });
      assert.equal(patched.statusCode, 400, `${label(uri)}: ${patched.body}`);
      assert.equal(patched.json().message, `body: client redirect_uris[0]: ${rule}`, label(uri));
    }
    assert.equal(await exported(), snapshot);
  });

  it('helixd import refuses each bad URI naming the line, the field and the rule; the store is unchanged', async () => {
    const snapshot = await exported();
    for (const [uri, rule] of BAD) {
      const input = [
        { kind: 'client', data: clientRecord('importgood', GOOD) },
        { kind: 'client', data: clientRecord('importbad', [uri]) },
      ]
        .map((l) => `${JSON.stringify(l)}\n`)
        .join('');
      const r = await helixd(['import', '-', '--db', db], input);
      assert.equal(r.code, 1, label(uri));
      assert.equal(
        r.stderr,
        `helixd: line 2: client redirect_uris[0]: ${rule} (nothing was imported)\n`,
        label(uri),
      );
    }
    assert.equal(await exported(), snapshot);
  });

  it('helixd client create refuses each bad URI with exit code 1 and the same message; the store is unchanged', async () => {
    const snapshot = await exported();
    for (const [uri, rule] of BAD) {
      const r = await helixd([
        'client',
        'create',
        '--name',
        'Bad',
        '--redirect-uri',
        GOOD[0] as string,
        uri,
        '--db',
        db,
      ]);
      assert.equal(r.code, 1, label(uri));
      assert.equal(r.stderr, `helixd: --redirect-uri: client redirect_uris[1]: ${rule}\n`, label(uri));
      assert.equal(r.stdout, '');
    }
    assert.equal(await exported(), snapshot);
  });

  it('a client registers at most 10 URIs, every way it is written; 11 change nothing', async () => {
    const snapshot = await exported();
    const ten = Array.from({ length: 10 }, (_, i) => `https://app.example.com/cb${i}`);
    const eleven = [...ten, 'https://app.example.com/cb10'];
    const rule = 'redirect_uris: must hold at most 10 URIs, not 11';
    const created = await t.inject({
      method: 'POST',
      url: '/admin/clients',
      headers: admin,
      payload: JSON.stringify(clientRecord('toomany', eleven)),
    });
    assert.equal(created.statusCode, 400, created.body);
    assert.equal(created.json().message, `body: client ${rule}`);
    const line = `${JSON.stringify({ kind: 'client', data: clientRecord('toomany', eleven) })}\n`;
    const imported = await helixd(['import', '-', '--db', db], line);
    assert.equal(imported.stderr, `helixd: line 1: client ${rule} (nothing was imported)\n`);
    const made = await helixd([
      'client',
      'create',
      '--name',
      'Many',
      '--redirect-uri',
      ...eleven,
      '--db',
      db,
    ]);
    assert.equal(made.stderr, `helixd: --redirect-uri: client ${rule}\n`);
    assert.equal(await exported(), snapshot);
    const patched = await t.inject({
      method: 'PATCH',
      url: '/admin/clients/existing',
      headers: admin,
      payload: JSON.stringify({ redirect_uris: ten }),
    });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.deepEqual(patched.json().data[0].redirect_uris, ten);
    const restored = await t.inject({
      method: 'PATCH',
      url: '/admin/clients/existing',
      headers: admin,
      payload: JSON.stringify({ redirect_uris: ['http://localhost:3000/cb'] }),
    });
    assert.equal(restored.statusCode, 200, restored.body);
  });

  it('helixd serve --fixtures refuses a fixture with a bad URI naming the entry and the field; the store stays empty', async () => {
    const temp = await tempStore(kind);
    const empty = cliDb({ url: temp.url, ...(temp.schema ? { schema: temp.schema } : {}) });
    try {
      // The URIs of the report (a start costs a store's opening: not every one of BAD).
      const uris = [
        'javascript:alert(1)',
        'data:text/html,<script>alert(1)</script>',
        'http://user:pw@localhost:3000/cb',
      ];
      for (const [i, [uri, rule]] of BAD.filter(([u]) => uris.includes(u) || u.includes('\r\n')).entries()) {
        const file = join(dir, `bad-${i}.json`);
        writeFileSync(
          file,
          JSON.stringify({ clients: [clientRecord('fixturegood', GOOD), clientRecord('fixturebad', [uri])] }),
        );
        const config = loadConfig(
          {
            db: empty,
            fixtures: file,
            port: 0,
            rateLimit: 0,
            logLevel: 'silent',
            now: new Date(TEST_NOW).toISOString(),
          },
          {},
        );
        const started = await startServer(config, () => {}).catch((err: Error) => err);
        // A start that was not refused is stopped before the test fails: it would hold the process.
        if (!(started instanceof Error)) await started.stop();
        assert.ok(started instanceof Error, `${label(uri)}: the start is refused`);
        assert.ok(
          started.message.endsWith(`clients[1]: client redirect_uris[0]: ${rule}`),
          `${label(uri)}: ${started.message}`,
        );
      }
      const r = await helixd(['export', '--db', empty]);
      assert.equal(r.stdout, '', 'nothing was written');
    } finally {
      await temp.drop();
    }
  });

  it('good URIs are accepted every way, kept as registered, and redirected to byte for byte', async () => {
    const viaAdmin = await t.inject({
      method: 'POST',
      url: '/admin/clients',
      headers: admin,
      payload: JSON.stringify(clientRecord('viaadmin', GOOD)),
    });
    assert.equal(viaAdmin.statusCode, 201, viaAdmin.body);
    const imported = await helixd(
      ['import', '-', '--db', db],
      `${JSON.stringify({ kind: 'client', data: clientRecord('viaimport', GOOD) })}\n`,
    );
    assert.equal(imported.code, 0, imported.stderr);
    const created = await helixd([
      'client',
      'create',
      '--name',
      'Via CLI',
      '--redirect-uri',
      ...GOOD,
      '--json',
      '--db',
      db,
    ]);
    assert.equal(created.code, 0, created.stderr);
    const viaCli = JSON.parse(created.stdout).client_id as string;

    for (const id of ['viaadmin', 'viaimport', viaCli]) {
      const record = await t.inject({ method: 'GET', url: `/admin/clients/${id}`, headers: admin });
      assert.deepEqual(record.json().data[0].redirect_uris, GOOD, id);
      for (const uri of GOOD) {
        const q = { client_id: id, redirect_uri: uri, scope: 'user:read:email', state: 's/1 2' };
        const page = await t.get(`/oauth2/authorize?${new URLSearchParams({ ...q, response_type: 'code' })}`);
        assert.equal(page.statusCode, 200, `${id} ${label(uri)}: ${page.body}`);

        const code = await postForm(t, '/oauth2/authorize', {
          ...q,
          response_type: 'code',
          decision: 'allow',
          login: 'alice',
        });
        assert.equal(code.statusCode, 302, code.body);
        const joiner = !uri.includes('?') ? '?' : uri.endsWith('?') ? '' : '&';
        const location = String(code.headers.location);
        const issued = /code=([a-z0-9]{30})&/.exec(location.slice(uri.length))?.[1];
        assert.equal(
          location,
          `${uri}${joiner}code=${issued}&scope=user%3Aread%3Aemail&state=s%2F1+2`,
          `${id} ${label(uri)}`,
        );
        const exchanged = await postForm(t, '/oauth2/token', {
          client_id: id,
          client_secret: id === viaCli ? JSON.parse(created.stdout).client_secret : 'a secret long enough',
          grant_type: 'authorization_code',
          code: issued as string,
          redirect_uri: uri,
        });
        assert.equal(exchanged.statusCode, 200, exchanged.body);

        const implicit = await postForm(t, '/oauth2/authorize', {
          ...q,
          response_type: 'token',
          decision: 'allow',
          login: 'alice',
        });
        assert.equal(implicit.statusCode, 302, implicit.body);
        assert.match(
          String(implicit.headers.location),
          new RegExp(
            `^${escaped(uri)}#access_token=[a-z0-9]{30}&expires_in=\\d+&scope=user%3Aread%3Aemail&token_type=bearer&state=s%2F1\\+2$`,
          ),
        );
      }
    }
    // Compared character for character: the same URL written otherwise is not the registered URI.
    for (const other of [
      'https://app.example.com:8443/auth/cb?next=%2Fhome&x=a+b',
      'https://app.example.com:8443/auth/cb?next=/home&x=a%20B',
      'HTTPS://app.example.com:8443/auth/cb?next=/home&x=a%20b',
      'http://localhost:3000/',
      'http://localhost:3000/cb/',
    ]) {
      const res = await t.get(
        `/oauth2/authorize?${new URLSearchParams({ client_id: 'viaadmin', redirect_uri: other, response_type: 'code' })}`,
      );
      assert.equal(res.statusCode, 400, other);
      assert.deepEqual(res.json(), { status: 400, message: MISMATCH });
    }
  });

  it('a bad URI a store holds from before the rule is never redirected to', async () => {
    // Written as a store written by an earlier helixd holds it, past the rule.
    await t.store.db
      .insertInto('clients')
      .values({
        id: 'oldclient',
        name: 'Old',
        secret_hash: sha256('a secret long enough'),
        demo_secret: null,
        redirect_uris: JSON.stringify(BAD.map(([u]) => u)),
        created_at: 0,
      })
      .execute();
    // (An empty redirect_uri is a missing one, answered before the client's URIs are looked at.)
    for (const [uri] of BAD.filter(([u]) => u !== '')) {
      const q = { client_id: 'oldclient', redirect_uri: uri, scope: '', state: 's' };
      for (const responseType of ['code', 'token']) {
        const page = await t.get(
          `/oauth2/authorize?${new URLSearchParams({ ...q, response_type: responseType })}`,
        );
        assert.equal(page.statusCode, 400, `${label(uri)}: ${page.body}`);
        assert.deepEqual(page.json(), { status: 400, message: MISMATCH });
        const posted = await postForm(t, '/oauth2/authorize', {
          ...q,
          response_type: responseType,
          decision: 'allow',
          login: 'alice',
        });
        assert.equal(posted.statusCode, 400, `${label(uri)}: ${posted.body}`);
        assert.deepEqual(posted.json(), { status: 400, message: MISMATCH });
        assert.equal(posted.headers.location, undefined);
      }
    }
  });
});
