// PostgreSQL that stops answering, then comes back: helixd answers every request with a 503 within
// its deadline (--query-timeout) instead of hanging, /readyz names the store, and once PostgreSQL
// answers again helixd serves without a restart. The cluster is private to this test (initdb in a
// temporary folder, a free port): it is frozen with SIGSTOP, thawed, stopped and started again.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  assertNotReady,
  assertReady,
  assertUnavailable,
  DEADLINE_MS,
  Helixd,
  POSTGRES_MISSING,
  PrivatePostgres,
  waitFor,
} from './processes.ts';

/** More requests at once than helixd's pool has connections (10), so that some wait for one. */
const AT_ONCE = 16;

describe('PostgreSQL frozen or stopped under a running helixd', { skip: POSTGRES_MISSING ?? false }, () => {
  const cluster = new PrivatePostgres();
  let helixd: Helixd;
  let token: string;
  let pid: number | undefined;

  before(async () => {
    await cluster.init();
    await cluster.start();
    helixd = new Helixd(['--db', cluster.url]);
    await helixd.start();
    pid = helixd.pid;
    token = await helixd.token();
  });
  after(async () => {
    await helixd?.stop();
    await cluster.remove();
  });

  /** Reads, token mints, admin writes and /readyz, all at once: every one a 503 in time. */
  async function allUnavailable(what: string) {
    const answers = await Promise.all([
      ...Array.from({ length: AT_ONCE }, () => helixd.read(token)),
      helixd.mint(),
      helixd.adminWrite(7),
    ]);
    for (const res of answers) assertUnavailable(res, what);
  }

  it('serves while PostgreSQL answers', async () => {
    await assertReady(helixd);
    assert.equal((await helixd.read(token)).status, 200);
  });

  it('answers 503 within the deadline while PostgreSQL is frozen, twice over', async () => {
    cluster.freeze();
    try {
      // The first wave meets the pool's connections hanging on the frozen server; the second finds
      // them gone and new connections that the server never accepts.
      await allUnavailable('frozen, first wave');
      await allUnavailable('frozen, second wave');
      // A new connection to a frozen server fails by pg's connect timeout or by the deadline,
      // whichever fires first (both are the deadline): either reason is the truth.
      await assertNotReady(
        helixd,
        'store',
        new RegExp(`did not answer within ${DEADLINE_MS} ms|cannot be reached`),
      );
    } finally {
      cluster.thaw();
    }
    assert.match(helixd.output(), /"dependency":"store"/);
    assert.match(helixd.output(), /store unavailable: (did not answer within|cannot be reached)/);
  });

  it('serves again once PostgreSQL is thawed, without a restart', async () => {
    await waitFor('/readyz 200 after the thaw', async () => (await helixd.request('/readyz')).status === 200);
    for (let i = 0; i < AT_ONCE; i++) assert.equal((await helixd.read(token)).status, 200);
    assert.equal((await helixd.mint()).status, 200);
    assert.equal((await helixd.adminWrite(8)).status, 200);
    assert.equal(helixd.pid, pid);
  });

  it('answers 503 while PostgreSQL is stopped, and serves once it is started again', async () => {
    await cluster.stop();
    try {
      await allUnavailable('stopped');
      await assertNotReady(helixd, 'store', /cannot be reached/);
    } finally {
      await cluster.start();
    }
    await waitFor(
      '/readyz 200 after the restart',
      async () => (await helixd.request('/readyz')).status === 200,
    );
    assert.equal((await helixd.read(token)).status, 200);
    assert.equal((await helixd.mint()).status, 200);
    assert.equal(helixd.pid, pid);
  });
});
