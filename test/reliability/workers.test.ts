// `helixd serve --workers 2` through the real program, on both stores: two processes serve the
// port (the pid of each request's log line tells which), and they behave as instances of helixd on
// one store: a token minted through one is accepted by the other at once, a token revoked through
// one is refused by both at once (each had it in its in-memory copy on SQLite). A killed worker is
// replaced; SIGTERM to the primary stops every worker and the primary exits 0.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { cliDb, forEachStore, helixd, type StoreKind, type TempStore, tempStore } from '../helpers.ts';
import { pidsOf, request, type Served, serve, spread } from './serve.ts';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

it('refuses a --workers or --drain it cannot read, naming the option and the rule', async () => {
  for (const [flag, value, rule] of [
    ['--workers', '0', /--workers: "0" must be a whole number from 1 to 256, or auto/],
    ['--workers', 'all', /--workers: "all" must be a whole number from 1 to 256, or auto/],
    ['--drain', '5 min', /--drain: "5 min" is not a duration/],
    ['--drain', '-1s', /--drain: "-1s" is not a duration/],
  ] as const) {
    const r = await helixd(['serve', flag, value]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, rule);
  }
});

forEachStore('helixd serve --workers 2', (kind: StoreKind) => {
  let temp: TempStore;
  let s: Served;

  before(async () => {
    temp = await tempStore(kind);
    const db = cliDb({ url: temp.url, ...(temp.schema ? { schema: temp.schema } : {}) });
    s = await serve(['--db', db, '--workers', '2', '--drain', '1s'], 2);
  });
  after(async () => {
    if (s.child.exitCode === null) s.child.kill('SIGKILL');
    await temp.drop();
  });

  it('prints the banner once and serves from two worker processes', async () => {
    assert.equal(s.out().match(/helixd is serving/g)?.length, 1);
    assert.equal(new Set(s.workerPids).size, 2);
    const { answers, pids } = await spread(s, '/healthz');
    for (const a of answers) assert.equal(a.status, 200);
    assert.deepEqual([...pids].sort(), [...s.workerPids].sort());
  });

  it('a token minted through one worker is accepted by the other at once; revoked, by neither', async () => {
    const id = encodeURIComponent(s.clientId);
    const minted = await request(
      s.port,
      `/oauth2/token?client_id=${id}&client_secret=${encodeURIComponent(s.clientSecret)}&grant_type=client_credentials`,
      { method: 'POST', headers: { 'x-request-id': 'mint' } },
    );
    assert.equal(minted.status, 200, minted.body);
    const token = JSON.parse(minted.body).access_token as string;
    const auth = { authorization: `OAuth ${token}` };
    const used = await spread(s, '/oauth2/validate', { headers: auth });
    for (const a of used.answers) assert.equal(a.status, 200, a.body);
    const minter = (await pidsOf(s, /^mint$/, 1)).get('mint');
    assert.ok(
      [...used.pids].some((p) => p !== minter),
      'the other worker accepted it',
    );
    assert.equal(used.pids.size, 2, 'both workers now hold it');

    const revoked = await request(s.port, `/oauth2/revoke?client_id=${id}&token=${token}`, {
      method: 'POST',
    });
    assert.equal(revoked.status, 200, revoked.body);
    const refused = await spread(s, '/oauth2/validate', { headers: auth });
    for (const a of refused.answers) assert.equal(a.status, 401, a.body);
    assert.equal(refused.pids.size, 2, 'both workers refused it');
  });

  it('a killed worker is replaced', async () => {
    const [victim, survivor] = s.workerPids as [number, number];
    process.kill(victim, 'SIGKILL');
    const replaced = await s.waitFor(new RegExp(`worker (\\d+) serving, in place of ${victim}`));
    const successor = Number(replaced[1]);
    assert.ok(s.out().includes(`worker ${victim} exited (SIGKILL)`));
    const { answers, pids } = await spread(s, '/healthz');
    for (const a of answers) assert.equal(a.status, 200);
    assert.deepEqual([...pids].sort(), [successor, survivor].sort());
    s.workerPids = [successor, survivor];
  });

  it('SIGTERM to the primary stops every worker, and the primary exits 0', async () => {
    s.child.kill('SIGTERM');
    const exit = await s.exited;
    assert.equal(exit.code, 0, s.out().slice(-2000));
    for (const pid of s.workerPids) assert.equal(alive(pid), false, `worker ${pid} still runs`);
  });
});
