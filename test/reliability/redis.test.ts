// Redis (--redis-url, the shared rate-limit buckets) that stops answering, is stopped, or is not
// there at start: every operation is a 503 within the deadline (--query-timeout), logged, /readyz
// names Redis, and once Redis answers helixd serves without a restart. The Redis is private to this
// test (a free port), frozen with SIGSTOP, thawed, stopped and started again.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  assertNotReady,
  assertReady,
  assertUnavailable,
  DEADLINE_MS,
  freePort,
  Helixd,
  PrivateRedis,
  REDIS_MISSING,
  waitFor,
} from './processes.ts';

const AT_ONCE = 16;
const ready = (h: Helixd) => async () => (await h.request('/readyz')).status === 200;

describe('Redis frozen, stopped or missing under a running helixd', { skip: REDIS_MISSING ?? false }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'helixd-redis-'));
  let redis: PrivateRedis;
  let helixd: Helixd;
  let token: string;
  let pid: number | undefined;

  before(async () => {
    redis = new PrivateRedis(await freePort());
    await redis.start();
    helixd = new Helixd(['--db', join(dir, 'helixd.db'), '--redis-url', redis.url]);
    await helixd.start();
    pid = helixd.pid;
    token = await helixd.token();
  });
  after(async () => {
    await helixd?.stop();
    await redis?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  async function allUnavailable(what: string) {
    const answers = await Promise.all(Array.from({ length: AT_ONCE }, () => helixd.read(token)));
    for (const res of answers) assertUnavailable(res, what);
  }

  it('serves while Redis answers, with rate-limit headers from it', async () => {
    await assertReady(helixd);
    const res = await helixd.read(token);
    assert.equal(res.status, 200);
    assert.match((await helixd.request('/readyz')).body, /"redis":"ok"/);
  });

  it('answers 503 within the deadline while Redis is frozen, then serves once it is thawed', async () => {
    redis.freeze();
    try {
      await allUnavailable('frozen, first wave');
      await allUnavailable('frozen, second wave');
      await assertNotReady(helixd, 'redis', new RegExp(`did not answer within ${DEADLINE_MS} ms`));
    } finally {
      redis.thaw();
    }
    assert.match(helixd.output(), /redis unavailable: did not answer within/);
    await waitFor('/readyz 200 after the thaw', ready(helixd));
    for (let i = 0; i < AT_ONCE; i++) assert.equal((await helixd.read(token)).status, 200);
    assert.equal(helixd.pid, pid);
  });

  it('answers 503 while Redis is stopped, and serves once it is started again', async () => {
    await redis.stop();
    try {
      await allUnavailable('stopped');
      await assertNotReady(helixd, 'redis', /cannot be reached/);
    } finally {
      await redis.start();
    }
    await waitFor('/readyz 200 after the restart', ready(helixd));
    assert.equal((await helixd.read(token)).status, 200);
    assert.equal(helixd.pid, pid);
  });

  it('starts without Redis, logs it, is not ready, and serves once Redis is there', async () => {
    const port = await freePort();
    const late = new Helixd(['--db', join(dir, 'late.db'), '--redis-url', `redis://127.0.0.1:${port}`]);
    const lateRedis = new PrivateRedis(port);
    await late.start();
    try {
      await waitFor('the log says Redis cannot be reached', async () =>
        /redis unavailable: cannot be reached/.test(late.output()),
      );
      await assertNotReady(late, 'redis', /cannot be reached/);
      const body = JSON.parse((await late.request('/readyz')).body);
      assert.equal(body.checks.store, 'ok');
      const lateToken = await late.token(); // the store is fine: tokens are minted
      assertUnavailable(await late.read(lateToken), 'an operation without Redis');
      await lateRedis.start();
      await waitFor('/readyz 200 once Redis is there', ready(late));
      assert.equal((await late.read(lateToken)).status, 200);
      assert.match(late.output(), /redis reachable again/);
    } finally {
      await late.stop();
      await lateRedis.kill();
    }
  });
});
