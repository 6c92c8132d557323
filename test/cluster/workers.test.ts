// `helixd serve --workers 2` through the real program, on both stores: two processes serve the
// port (the pid of each request's log line tells which), and they behave as instances of helixd on
// one store: a token minted through one is accepted by the other at once, a token revoked through
// one is refused by both once the change is seen (each had it in its in-memory copy on SQLite,
// which sees another process's commit within CHANGE_CHECK_MS: src/store/db.ts). A killed worker is
// replaced. A worker killed under load leaves no request waiting: each gets its answer, or sees its
// connection closed, within a second of the kill. SIGTERM to the primary stops every worker and the
// primary exits 0.
import assert from 'node:assert/strict';
import { Agent, request as httpRequest } from 'node:http';
import { after, before, it } from 'node:test';
import { forEachStore } from '../support/apps.ts';
import { helixd } from '../support/cli.ts';
import { request } from '../support/http.ts';
import { changeSeen, cliDb, type StoreKind, type TempStore, tempStore } from '../support/stores.ts';
import { pidsOf, type Served, serve, sleep, spread } from './served.ts';

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

/** A request of the load below: when it started, and when its answer ended or its connection closed. */
interface Sent {
  start: number;
  settled?: number;
  /** 'answer', or the error the connection ended with */
  outcome?: string;
  done: Promise<void>;
  abort(): void;
}

function send(port: number, path: string, headers: Record<string, string>, agent: Agent | false): Sent {
  let settled = () => {};
  const sent: Sent = {
    start: Date.now(),
    done: new Promise<void>((resolve) => {
      settled = resolve;
    }),
    abort: () => req.destroy(),
  };
  const settle = (outcome: string) => {
    if (sent.settled !== undefined) return;
    sent.settled = Date.now();
    sent.outcome = outcome;
    settled();
  };
  const req = httpRequest({ host: '127.0.0.1', port, path, headers, agent }, (res) => {
    res.resume();
    res.on('end', () => settle('answer'));
    res.on('error', (e: NodeJS.ErrnoException) => settle(e.code ?? e.message));
  });
  req.on('error', (e: NodeJS.ErrnoException) => settle(e.code ?? e.message));
  req.end();
  return sent;
}

/**
 * Clients on keep-alive connections and clients opening a connection for each request, each sending
 * one request after another until `stop` resolves (a request still waiting then is left as it is).
 */
function load(port: number, headers: Record<string, string>, stop: Promise<void>) {
  const all: Sent[] = [];
  const agents = Array.from({ length: 6 }, () => new Agent({ keepAlive: true, maxSockets: 1 }));
  let going = true;
  const stopped = stop.then(() => {
    going = false;
  });
  const client = async (agent: Agent | false) => {
    while (going) {
      const sent = send(port, '/oauth2/validate', headers, agent);
      all.push(sent);
      await Promise.race([sent.done, stopped]);
    }
  };
  const clients = [...agents, ...agents.map(() => false as const)].map(client);
  return {
    all,
    finished: Promise.all(clients),
    close() {
      for (const r of all) r.abort();
      for (const a of agents) a.destroy();
    },
  };
}

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

  it('a token minted through one worker is accepted by the other at once; revoked, by neither once the change is seen', async () => {
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
    await changeSeen();
    const refused = await spread(s, '/oauth2/validate', { headers: auth });
    for (const a of refused.answers) assert.equal(a.status, 401, a.body);
    assert.equal(refused.pids.size, 2, 'both workers refused it');
  });

  it('a worker killed under load is replaced; every request is answered or its connection closed within a second', async () => {
    const [victim, survivor] = s.workerPids as [number, number];
    let stop = () => {};
    const l = load(s.port, { authorization: `OAuth ${s.appToken}` }, new Promise<void>((r) => (stop = r)));
    await sleep(500);
    // Held first (SIGSTOP, as a worker busy with a long computation), the worker is killed with a
    // new connection handed to it and not yet taken, every time rather than most of the times.
    process.kill(victim, 'SIGSTOP');
    await sleep(200);
    const killed = Date.now();
    process.kill(victim, 'SIGKILL');
    // Connections keep coming while the primary learns of the death.
    await sleep(100);
    stop();
    await l.finished;
    // Generous for a loaded machine: a request left waiting waits for far longer.
    while (l.all.some((r) => r.settled === undefined) && Date.now() < killed + 3000) await sleep(20);
    const late = l.all.filter(
      (r) => (r.settled ?? Number.POSITIVE_INFINITY) > Math.max(r.start, killed) + 1000,
    );
    l.close();
    assert.ok(l.all.some((r) => r.outcome === 'answer'));
    assert.equal(late.length, 0, `${late.length} of ${l.all.length} requests neither answered nor closed`);

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
