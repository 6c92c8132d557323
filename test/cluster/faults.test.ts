// Faults on demand under `helixd serve --workers 2`, through the real program, on both stores: the
// rules (and their seed) are one across the workers. A PUT through one worker holds in both by the
// time it answers, as GET /admin/faults and the faults injected show on every following request; a
// DELETE clears them in both; a worker started later (a replacement) gets them. Each worker draws
// from its own generator, started from the seed: two connections served by the two workers draw
// the same sequence.
import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import { after, before, it } from 'node:test';
import { forEachStore } from '../support/apps.ts';
import { type Answer, request } from '../support/http.ts';
import type { StoreKind } from '../support/stores.ts';
import { type Served, serveOnTempStore, spread } from './served.ts';

const ADMIN_TOKEN = 'faults-admin-token-0123456789-0123456789';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };

const json = (a: Answer) => {
  assert.equal(a.status, 200, a.body);
  return JSON.parse(a.body);
};

/** The pid that served the request of id `reqId`, from its log line (waits for it). */
async function pidOf(s: Served, reqId: string): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const line = s.logs().find((l) => l.reqId === reqId && /^request (completed|errored)$/.test(l.msg));
    if (line) return line.pid;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no log line for ${reqId}`);
}

forEachStore('fault rules under serve --workers 2', (kind: StoreKind) => {
  let s: Awaited<ReturnType<typeof serveOnTempStore>>;

  before(async () => {
    s = await serveOnTempStore(
      kind,
      // Rules at start without a seed: the primary chooses it, once for both workers.
      ['--workers', '2', '--drain', '0s', '--admin-token', ADMIN_TOKEN, '--faults', '503:1%@nobody'],
      2,
    );
  });
  after(() => s?.stop());

  const put = async (body: unknown) =>
    json(
      await request(s.port, '/admin/faults', {
        method: 'PUT',
        headers: { ...ADMIN, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
    );
  /** GET /admin/faults on fresh connections until both workers have answered: their one answer. */
  async function rulesOfBoth(): Promise<unknown> {
    const { answers, pids } = await spread(s, '/admin/faults', { headers: ADMIN });
    assert.equal(pids.size, 2, 'both workers answered');
    const read = answers.map(json);
    for (const r of read) assert.deepEqual(r, read[0]);
    return read[0];
  }
  /** An operation on fresh connections, from both workers: their answers. */
  async function gamesOfBoth(tag: string): Promise<Answer[]> {
    const headers = { authorization: `Bearer ${s.appToken}`, 'client-id': s.clientId };
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        request(s.port, '/helix/games/top?first=1', {
          headers: { ...headers, 'x-request-id': `${tag}-${i}` },
        }),
      ),
    );
    const pids = new Set(await Promise.all(answers.map((_, i) => pidOf(s, `${tag}-${i}`))));
    assert.equal(pids.size, 2, 'both workers answered');
    return answers;
  }

  it('the rules given at start, and the seed the primary chose for them, are the same in both workers', async () => {
    const start = (await rulesOfBoth()) as { faults: string; seed: number | null };
    assert.equal(start.faults, '503:1%@nobody');
    assert.equal(typeof start.seed, 'number');
  });

  it('a PUT through one worker holds in both when it answers; a DELETE clears both', async () => {
    const set = await put({ faults: '503:100%', seed: 11 });
    assert.deepEqual(set, { faults: '503:100%', seed: 11 });
    for (let round = 0; round < 3; round++) {
      assert.deepEqual(await rulesOfBoth(), set);
      for (const a of await gamesOfBoth(`put-${round}`)) assert.equal(a.status, 503, a.body);
    }
    const removed = await request(s.port, '/admin/faults', { method: 'DELETE', headers: ADMIN });
    assert.equal(removed.status, 204);
    for (let round = 0; round < 3; round++) {
      assert.deepEqual(await rulesOfBoth(), { faults: '', seed: null });
      for (const a of await gamesOfBoth(`deleted-${round}`)) assert.equal(a.status, 200, a.body);
    }
  });

  it('each worker draws from its own generator, started from the seed', async () => {
    await put({ faults: '503:50%', seed: 9 });
    // One keep-alive connection on each worker, found by /healthz (which draws nothing).
    const onWorker = new Map<number, Agent>();
    const spare: Agent[] = [];
    for (let i = 0; onWorker.size < 2 && i < 20; i++) {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      await request(s.port, '/healthz', { agent, headers: { 'x-request-id': `probe-${i}` } });
      const pid = await pidOf(s, `probe-${i}`);
      if (onWorker.has(pid)) spare.push(agent);
      else onWorker.set(pid, agent);
    }
    try {
      assert.equal(onWorker.size, 2, 'a connection on each worker');
      const statuses = async (agent: Agent) => {
        const out: number[] = [];
        for (let i = 0; i < 16; i++)
          out.push(
            (
              await request(s.port, '/helix/games/top?first=1', {
                agent,
                headers: { authorization: `Bearer ${s.appToken}`, 'client-id': s.clientId },
              })
            ).status,
          );
        return out;
      };
      const [a, b] = [...onWorker.values()] as [Agent, Agent];
      const first = await statuses(a);
      assert.ok(first.includes(503) && first.includes(200), String(first));
      assert.deepEqual(await statuses(b), first, 'the other worker draws the same sequence');
      // Set again, the draws start again from the seed, in both.
      await put({ faults: '503:50%', seed: 9 });
      assert.deepEqual(await statuses(a), first);
      assert.deepEqual(await statuses(b), first);
    } finally {
      for (const agent of [...onWorker.values(), ...spare]) agent.destroy();
      await request(s.port, '/admin/faults', { method: 'DELETE', headers: ADMIN });
    }
  });

  it('a worker started later (a replacement) gets the rules, and a 429 rule its ratelimit-reset', async () => {
    const set = await put({ faults: '429:ratelimit-reset=1s:100%', seed: 4 });
    assert.deepEqual(set, { faults: '429:ratelimit-reset=1000ms:100%', seed: 4 });
    const victim = s.workerPids[0] as number;
    process.kill(victim, 'SIGKILL');
    await s.waitFor(new RegExp(`worker (\\d+) serving, in place of ${victim}`));
    const { pids } = await spread(s, '/admin/faults', { headers: ADMIN });
    assert.ok(!pids.has(victim));
    assert.deepEqual(await rulesOfBoth(), set);
    for (const a of await gamesOfBoth('replaced')) {
      assert.equal(a.status, 429, a.body);
      assert.equal(a.headers['ratelimit-remaining'], '0');
      // Read by the server before this answer came: at most a second (rounded up) after now.
      assert.ok(
        Number(a.headers['ratelimit-reset']) * 1000 <= Date.now() + 2000,
        String(a.headers['ratelimit-reset']),
      );
    }
  });
});
