// `helixd serve --fixtures <file>` and HELIXD_FIXTURES, on both stores: the server starts from
// exactly the world of fixtures/example-world.json (this broadcaster has exactly these three
// subscribers), a restart of the same command serves the same store, and a store that holds
// anything else, or a fixture that is refused, stops the start with a message that says why.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { OPERATION_SCOPES } from '../../src/auth/scopes.ts';
import { loadConfig } from '../../src/config.ts';
import { type Running, startServer } from '../../src/server.ts';
import { forEachStore, TEST_NOW } from '../support/apps.ts';
import { helixd } from '../support/cli.ts';
import { type HelixdProcess, serveHelixd } from '../support/process.ts';
import { cliDb, type StoreKind, type TempStore, tempStore } from '../support/stores.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const EXAMPLE = join(ROOT, 'fixtures', 'example-world.json');
const WORLD = JSON.parse(readFileSync(EXAMPLE, 'utf8'));
const CLIENT = WORLD.clients[0] as { id: string; secret: string };
const ALICE = '1001';

type Json = Record<string, unknown>;

/** The client's app token and alice's user token with every operation scope, as a test gets them. */
async function tokensFor(url: string, db: string) {
  const q = new URLSearchParams({
    client_id: CLIENT.id,
    client_secret: CLIENT.secret,
    grant_type: 'client_credentials',
  });
  const app = await fetch(`${url}/oauth2/token?${q}`, { method: 'POST' });
  assert.equal(app.status, 200, 'the fixture client and its secret work at the token service');
  const r = await helixd([
    'token',
    '--db',
    db,
    '--client',
    CLIENT.id,
    '--user',
    'alice',
    '--scope',
    OPERATION_SCOPES.join(' '),
    '--json',
  ]);
  assert.equal(r.code, 0, r.stderr);
  const headers = (token: string) => ({ authorization: `Bearer ${token}`, 'client-id': CLIENT.id });
  return {
    app: headers(((await app.json()) as Json).access_token as string),
    alice: headers(JSON.parse(r.stdout).access_token),
  };
}

async function getJson(
  url: string,
  headers: Record<string, string>,
): Promise<{ data: Json[]; total?: number; points?: number }> {
  const res = await fetch(url, { headers });
  assert.equal(res.status, 200, `${url}: ${await res.clone().text()}`);
  return res.json() as Promise<{ data: Json[]; total?: number; points?: number }>;
}

forEachStore('helixd serve --fixtures', (kind: StoreKind) => {
  const dir = mkdtempSync(join(tmpdir(), 'helixd-fixtures-'));
  const temps: TempStore[] = [];
  const running: Running[] = [];
  const fresh = async () => {
    const s = await tempStore(kind);
    temps.push(s);
    return cliDb({ url: s.url, ...(s.schema ? { schema: s.schema } : {}) });
  };
  const serve = async (flags: Record<string, string>, env: Record<string, string> = {}) => {
    const printed: string[] = [];
    const config = loadConfig(
      { port: 0, rateLimit: 0, logLevel: 'silent', now: new Date(TEST_NOW).toISOString(), ...flags },
      env,
    );
    const r = await startServer(config, (l) => printed.push(l));
    running.push(r);
    return { ...r, printed };
  };
  let db: string;
  let server: Awaited<ReturnType<typeof serve>>;
  let tokens: Awaited<ReturnType<typeof tokensFor>>;

  before(async () => {
    db = await fresh();
    server = await serve({ db, fixtures: EXAMPLE });
    tokens = await tokensFor(server.url, db);
  });
  after(async () => {
    for (const r of running) await r.stop();
    for (const s of temps) await s.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('says it loaded the fixture', () => {
    assert.match(server.printed.join('\n'), /fixture .*example-world\.json: loaded \d+ records/);
  });

  it('GET /subscriptions shows exactly the three subscribers, most recent first, total 3', async () => {
    const body = await getJson(`${server.url}/helix/subscriptions?broadcaster_id=${ALICE}`, tokens.alice);
    assert.deepEqual(
      body.data.map((s) => [s.user_login, s.tier, s.is_gift, s.gifter_login]),
      [
        ['dave', '3000', false, ''],
        ['carol', '2000', true, 'dave'],
        ['bob', '1000', false, ''],
      ],
    );
    assert.equal(body.total, 3);
    assert.equal(body.points, 6 + 2 + 1);
  });

  it('every listing answers the fixture world and nothing else', async () => {
    const users = await getJson(
      `${server.url}/helix/users?${WORLD.users.map((u: Json) => `id=${u.id}`).join('&')}`,
      tokens.app,
    );
    assert.deepEqual(
      users.data.map((u) => u.login),
      WORLD.users.map((u: Json) => u.login),
    );
    const top = await getJson(`${server.url}/helix/games/top`, tokens.app);
    assert.deepEqual(
      top.data.map((g) => g.name),
      ['Speedrun Kitchen', 'Empire Builder'],
      'ordered by the viewers of their live streams',
    );
    const streams = await getJson(`${server.url}/helix/streams`, tokens.app);
    assert.deepEqual(
      streams.data.map((s) => [s.user_login, s.viewer_count]),
      [
        ['alice', 1234],
        ['dave', 56],
      ],
    );
    const clips = await getJson(`${server.url}/helix/clips?broadcaster_id=${ALICE}`, tokens.app);
    assert.deepEqual(
      clips.data.map((c) => [c.id, c.creator_name, c.view_count]),
      [
        ['AliceRecordFinish', 'Bob', 9001],
        ['AliceOvenFire', 'Carol', 310],
      ],
    );
    const videos = await getJson(`${server.url}/helix/videos?user_id=${ALICE}`, tokens.app);
    assert.deepEqual(videos.data.map((v) => v.id).sort(), ['4001', '4002']);
    const markers = await getJson(`${server.url}/helix/streams/markers?user_id=${ALICE}`, tokens.alice);
    const marked = markers.data.flatMap((d) =>
      (d.videos as Json[]).flatMap((v) => (v.markers as Json[]).map((m) => m.id)),
    );
    assert.deepEqual(marked.sort(), ['marker-4002-pb', 'marker-4002-start']);
    const followers = await getJson(
      `${server.url}/helix/channels/followers?broadcaster_id=${ALICE}`,
      tokens.alice,
    );
    assert.deepEqual(
      followers.data.map((f) => f.user_login),
      ['erin', 'carol', 'bob'],
    );
    assert.equal(followers.total, 3);
    const reports = await getJson(`${server.url}/helix/analytics/games`, tokens.alice);
    assert.deepEqual(
      reports.data.map((r) => r.game_id),
      ['2001'],
    );
  });

  it('exports exactly the fixture, byte for byte (the example is written as export writes it)', async () => {
    const r = await helixd(['export', '--db', db, '--format', 'fixture']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, readFileSync(EXAMPLE, 'utf8'));
  });

  it('a restart of the same command serves the same store without loading it again', async () => {
    const again = await serve({ db, fixtures: EXAMPLE });
    assert.match(again.printed.join('\n'), /fixture .*example-world\.json: already loaded/);
    const body = await getJson(`${again.url}/helix/subscriptions?broadcaster_id=${ALICE}`, tokens.alice);
    assert.equal(body.total, 3);
  });

  it('HELIXD_FIXTURES does what --fixtures does', async () => {
    const other = await fresh();
    const s = await serve({ db: other }, { HELIXD_FIXTURES: EXAMPLE });
    assert.match(s.printed.join('\n'), /loaded \d+ records/);
    const users = await getJson(`${s.url}/helix/users?login=erin`, (await tokensFor(s.url, other)).app);
    assert.equal(users.data[0]?.id, '1005');
  });

  it("helixd token takes the fixture's demo client when no --client is given, and names its choice among several", async () => {
    const app = await helixd(['token', '--db', db, '--app', '--json']);
    assert.equal(app.code, 0, app.stderr);
    assert.equal(app.stderr, '');
    const minted = JSON.parse(app.stdout);
    assert.equal(minted.client_id, CLIENT.id);
    const headers = { authorization: `Bearer ${minted.access_token}`, 'client-id': CLIENT.id };
    assert.equal((await getJson(`${server.url}/helix/users?login=erin`, headers)).data[0]?.id, '1005');

    // A second demo client, as an import writes one: the oldest is taken and the choice said.
    const other = await fresh();
    await serve({ db: other, fixtures: EXAMPLE });
    const later = {
      ...WORLD.clients[0],
      id: 'laterdemoclient000000000000001',
      secret: 'later-demo-secret-00000001',
      created_at: '2025-01-01T00:00:00Z',
    };
    const imported = await helixd(
      ['import', '-', '--db', other],
      `${JSON.stringify({ kind: 'client', data: later })}\n`,
    );
    assert.equal(imported.code, 0, imported.stderr);
    const two = await helixd(['token', '--db', other, '--user', 'alice', '--json']);
    assert.equal(two.code, 0, two.stderr);
    assert.equal(JSON.parse(two.stdout).client_id, CLIENT.id);
    assert.equal(
      two.stderr,
      `helixd: 2 demo clients in this store; using ${CLIENT.id} (give --client <id> for another: ${later.id})\n`,
    );
  });

  describe('refusals', () => {
    const refused = async (flags: Record<string, string>, message: RegExp) => {
      await assert.rejects(serve(flags), (err: Error) => {
        assert.match(err.message, message);
        return true;
      });
    };

    it('a store that holds demo data', async () => {
      const other = await fresh();
      const seeded = await helixd(['seed', '--db', other, '--users', '10']);
      assert.equal(seeded.code, 0, seeded.stderr);
      await refused(
        { db: other, fixtures: EXAMPLE },
        /the store already holds data; --fixtures starts from exactly/,
      );
    });

    it('a store started from the fixture before it was edited, or from another fixture', async () => {
      const edited = join(dir, 'example-world.json');
      writeFileSync(edited, JSON.stringify({ ...WORLD, moderators: [] }));
      await refused(
        { db, fixtures: edited },
        /another version of example-world\.json \(the file changed since\)/,
      );
      const another = join(dir, 'another.json');
      writeFileSync(another, JSON.stringify({ users: WORLD.users }));
      await refused(
        { db, fixtures: another },
        /started from the fixture example-world\.json, not another\.json/,
      );
    });

    it('a fixture with a refused record: its entry and field, and the store stays empty', async () => {
      const other = await fresh();
      const bad = join(dir, 'bad.json');
      writeFileSync(
        bad,
        JSON.stringify({
          ...WORLD,
          clips: [...WORLD.clips, { ...WORLD.clips[0], id: 'x', broadcaster_id: '999' }],
        }),
      );
      await refused({ db: other, fixtures: bad }, /clips\[3\]: clip broadcaster_id: /);
      const r = await helixd(['export', '--db', other]);
      assert.equal(r.stdout, '', 'nothing was written');
      await refused({ db: other, fixtures: join(dir, 'missing.json') }, /cannot read .*missing\.json/);
    });

    it('a fixture that is not UTF-8: its line and the byte, and the store stays empty', async () => {
      const other = await fresh();
      const text = readFileSync(EXAMPLE, 'utf8');
      const at = text.indexOf('"display_name":"') + '"display_name":"'.length;
      const line = text.slice(0, at).split('\n').length;
      const offset = Buffer.byteLength(text.slice(text.lastIndexOf('\n', at) + 1, at));
      const bad = join(dir, 'not-utf8.json');
      writeFileSync(
        bad,
        Buffer.concat([
          Buffer.from(text.slice(0, at)),
          Buffer.from([0xff, 0xfe]),
          Buffer.from(text.slice(at)),
        ]),
      );
      await refused(
        { db: other, fixtures: bad },
        new RegExp(
          `fixture .*not-utf8\\.json: line ${line}: not valid UTF-8 \\(byte offset ${offset} in the line\\)`,
        ),
      );
      const r = await helixd(['export', '--db', other]);
      assert.equal(r.stdout, '', 'nothing was written');
    });
  });
});

describe('helixd serve --fixtures (the command as printed)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'helixd-fixtures-cli-'));
  let served: HelixdProcess | undefined;
  after(async () => {
    await served?.stop('SIGINT');
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the example fixture from a fresh SQLite file', async () => {
    const db = join(dir, 'test.db');
    served = await serveHelixd(['--fixtures', EXAMPLE, '--db', db, '--log-level', 'warn'], {
      ready: 'serving',
      timeoutMs: 30_000,
    });
    const url = served.url;
    const tokens = await tokensFor(url, db);
    const body = await getJson(`${url}/helix/subscriptions?broadcaster_id=${ALICE}`, tokens.alice);
    assert.equal(body.total, 3);
  });
});
