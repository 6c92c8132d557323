// Rate-limit buckets shared through Redis (--redis-url): two instances over one store and one Redis
// draw from the same bucket, so the limit holds for the deployment, not per process. Redis at
// HELIXD_TEST_REDIS_URL (default redis://127.0.0.1:6379); skipped with a line when unreachable, and
// required under CI=true.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { buildApp } from '../../src/app.ts';
import { ManualClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { RedisRateLimitStore } from '../../src/ratelimit/redis.ts';
import { bearer, startTestApp, TEST_NOW, type TestApp } from '../support/apps.ts';

const REDIS_URL = process.env.HELIXD_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

async function redisProblem(): Promise<string | undefined> {
  const r = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 2000 });
  r.on('error', () => {});
  try {
    await r.connect();
    await r.ping();
    return undefined;
  } catch (err) {
    return (err as Error).message || String(err);
  } finally {
    r.disconnect();
  }
}

const problem = await redisProblem();
if (problem && process.env.CI === 'true')
  throw new Error(`Redis at ${REDIS_URL} is required under CI=true: ${problem}`);

describe('rate limits shared through Redis', {
  skip: problem ? `Redis unreachable: ${problem}` : false,
}, () => {
  const LIMIT = 5;
  const prefix = `helixd-test:${randomBytes(6).toString('hex')}:`;
  let t: TestApp;
  let second: FastifyInstance;
  /** These apps are reached with inject, which adds no header: the demo client's Client-Id. */
  const auth = (token: string) => ({ ...bearer(token), 'client-id': t.seed?.demoClientId as string });

  before(async () => {
    t = await startTestApp('sqlite', { config: { rateLimit: LIMIT } });
    // Each instance has its own connection to Redis, as separate processes would.
    await t.app.close();
    const config = loadConfig({ db: t.config.db, secret: 'test-secret-0123456789', rateLimit: LIMIT }, {});
    const deps = { config, store: t.store, clock: t.clock, secret: 'test-secret-0123456789', logger: false };
    t.app = await buildApp({ ...deps, rateLimitStore: new RedisRateLimitStore(REDIS_URL, { prefix }) });
    second = await buildApp({ ...deps, rateLimitStore: new RedisRateLimitStore(REDIS_URL, { prefix }) });
  });
  after(async () => {
    await second.close();
    await t.app.close(); // the replacement built in before(); t.close() closes the original
    await t.close();
    const r = new Redis(REDIS_URL);
    const keys = await r.keys(`${prefix}*`);
    if (keys.length) await r.del(...keys);
    r.disconnect();
  });

  it('two instances empty one bucket together and both answer 429', async () => {
    const token = await t.appToken();
    const apps = [t.app, second];
    for (let k = 1; k <= LIMIT; k++) {
      const res = await (apps[k % 2] as FastifyInstance).inject({
        url: '/helix/games/top?first=1',
        headers: auth(token),
      });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['ratelimit-remaining'], String(LIMIT - k));
    }
    for (const app of apps) {
      const res = await app.inject({ url: '/helix/games/top?first=1', headers: auth(token) });
      assert.equal(res.statusCode, 429);
      assert.equal(res.json().message, 'Request limit exceeded');
    }
    t.clock.advance(12_000);
    const refilled = await second.inject({ url: '/helix/games/top?first=1', headers: auth(token) });
    assert.equal(refilled.statusCode, 200);
    assert.equal(refilled.headers['ratelimit-remaining'], '0');
  });

  it('keeps separate buckets per client and user', async () => {
    const a = await t.userToken([], t.seed?.demoUserId);
    const users = await t.store.db
      .selectFrom('users')
      .select('id')
      .orderBy('id')
      .limit(2)
      .offset(5)
      .execute();
    const b = await t.userToken([], users[0]?.id);
    t.clock.advance(60_000);
    for (let k = 0; k < LIMIT; k++) await t.app.inject({ url: '/helix/games/top', headers: auth(a) });
    assert.equal((await second.inject({ url: '/helix/games/top', headers: auth(a) })).statusCode, 429);
    assert.equal((await second.inject({ url: '/helix/games/top', headers: auth(b) })).statusCode, 200);
  });

  it('answers 503 with the Helix body while Redis cannot be reached', async () => {
    const config = loadConfig({ db: t.config.db, secret: 'test-secret-0123456789', rateLimit: LIMIT }, {});
    const away = await buildApp({
      config,
      store: t.store,
      clock: t.clock,
      secret: 'test-secret-0123456789',
      logger: false,
      rateLimitStore: new RedisRateLimitStore('redis://127.0.0.1:1', { prefix }),
    });
    try {
      const res = await away.inject({ url: '/helix/games/top', headers: auth(await t.appToken()) });
      assert.equal(res.statusCode, 503);
      assert.equal(res.json().status, 503);
    } finally {
      await away.close();
    }
  });

  it('is what --redis-url selects', async () => {
    const config = loadConfig(
      { db: t.config.db, secret: 'test-secret-0123456789', rateLimit: LIMIT, redisUrl: REDIS_URL },
      {},
    );
    const app = await buildApp({
      config,
      store: t.store,
      clock: new ManualClock(TEST_NOW),
      secret: 'test-secret-0123456789',
      logger: false,
    });
    const r = new Redis(REDIS_URL);
    try {
      const res = await app.inject({ url: '/helix/games/top', headers: auth(await t.appToken()) });
      assert.equal(res.statusCode, 200);
      const key = `helixd:ratelimit:app:${t.seed?.demoClientId}`;
      assert.equal(await r.exists(key), 1);
      await r.del(key);
    } finally {
      r.disconnect();
      await app.close();
    }
  });
});
