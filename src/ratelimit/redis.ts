// Rate-limit buckets in Redis, shared by every instance that names the same Redis (--redis-url):
// the same token bucket as MemoryRateLimitStore, computed inside Redis by one Lua script so that a
// take is atomic across instances.
import { createRequire } from 'node:module';
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import { deadlineReason, UNREACHABLE, UnavailableError } from '../store/unavailable.ts';
import { type BucketTake, bucketTake, type RateLimitStore, type TakeRequest } from './limiter.ts';

// KEYS[1] bucket; ARGV cost, capacity, window (ms), now (ms). The level is kept in
// point-milliseconds, as in memory, so refills are whole numbers. A bucket idle for a whole window
// is full again, so it expires then and a missing key means a full bucket.
const TAKE = `
local cost, capacity, window, now = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local full = capacity * window
local level, at = full, now
local v = redis.call('HMGET', KEYS[1], 'level', 'at')
if v[1] then
  level = tonumber(v[1])
  at = tonumber(v[2])
  if now > at then level = math.min(full, level + (now - at) * capacity) end
end
local allowed = 0
if level >= cost * window then
  level = level - cost * window
  allowed = 1
end
if now > at then at = now end
redis.call('HSET', KEYS[1], 'level', string.format('%d', level), 'at', string.format('%d', at))
redis.call('PEXPIRE', KEYS[1], window)
return { allowed, level }
`;

export interface RedisRateLimitOptions {
  /** key prefix, so that several deployments can share one Redis */
  prefix?: string;
  /** deadline of every command, milliseconds (--query-timeout); default 2000 */
  commandTimeout?: number;
}

export class RedisRateLimitStore implements RateLimitStore {
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly commandTimeout: number;
  /** whether the last connection attempt failed: it is logged once, not at every retry */
  private down = false;
  private log: FastifyBaseLogger | undefined;

  constructor(url: string, o: RedisRateLimitOptions = {}) {
    this.prefix = o.prefix ?? 'helixd:ratelimit:';
    this.commandTimeout = o.commandTimeout ?? 2000;
    // While Redis is away a request waits for at most one reconnect attempt, then fails (503)
    // rather than queueing behind reconnects; ioredis keeps reconnecting in the background and
    // requests succeed again as soon as Redis is back. A Redis that does not answer (frozen, a
    // network that drops packets) is not seen by the connection: every command has a deadline,
    // past which it fails (503); a late reply is matched to its command and dropped, so the
    // connection stays usable.
    // Loaded here rather than at start: most servers run without Redis (ioredis is CommonJS).
    const { Redis: RedisClient } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
    this.redis = new RedisClient(url, {
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
      commandTimeout: this.commandTimeout,
      retryStrategy: (times) => Math.min(times * 100, 2000),
    });
    this.redis.on('error', (err) => {
      if (!this.down) this.log?.error({ err }, `redis unavailable: ${UNREACHABLE}`);
      this.down = true;
    });
    this.redis.on('ready', () => {
      if (this.down) this.log?.warn('redis reachable again');
      this.down = false;
    });
    this.redis.defineCommand('helixdTake', { numberOfKeys: 1, lua: TAKE });
  }

  async take(req: TakeRequest): Promise<BucketTake> {
    const { key, cost, capacity, windowMs, nowMs } = req;
    let reply: [number, number];
    try {
      // biome-ignore lint/suspicious/noExplicitAny: commands made by defineCommand are not typed
      reply = await (this.redis as any).helixdTake(this.prefix + key, cost, capacity, windowMs, nowMs);
    } catch (err) {
      // Without its buckets helixd cannot tell who is over the limit: a 503, as for a lost store.
      throw this.unavailable(err);
    }
    const [allowed, level] = reply;
    return bucketTake(allowed === 1, level, req);
  }

  /** Logs the connection's failures (once per outage) from now on. */
  watch(log: FastifyBaseLogger): void {
    this.log = log;
  }

  async ping(): Promise<void> {
    // Readiness says what the connection knows now. While it is down (an attempt failed and none
    // has succeeded since), a ping would wait for the next reconnect attempt, up to 2 s away, and
    // /readyz would give its own deadline as the reason instead of the cause, depending on when in
    // the backoff it asked.
    if (this.down && this.redis.status !== 'ready') throw new UnavailableError('redis', UNREACHABLE);
    try {
      await this.redis.ping();
    } catch (err) {
      throw this.unavailable(err);
    }
  }

  private unavailable(err: unknown): UnavailableError {
    const late = (err as Error).message === 'Command timed out';
    return new UnavailableError('redis', late ? deadlineReason(this.commandTimeout) : UNREACHABLE, {
      cause: err,
    });
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
