// Rate limits: a token bucket per client (app tokens) and per client and user (user tokens), as
// Helix does. A bucket holds `points` and refills continuously at `points` per
// minute; every operation request takes one point. The buckets live behind RateLimitStore, so that
// several instances can share them (Redis) instead of each keeping its own (memory).
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.ts';
import type { Principal } from '../http/access.ts';
import { HelixError } from '../http/errors.ts';

/** Production's window: the bucket refills completely in one minute. */
export const RATE_LIMIT_WINDOW_MS = 60_000;

export interface BucketTake {
  /** the point was taken; false: the bucket is empty */
  allowed: boolean;
  /** whole points left after this request */
  remaining: number;
  /** when the bucket will be full again, Unix milliseconds */
  fullAt: number;
}

/** One draw on a bucket: `cost` points from bucket `key`, as of `nowMs`. */
export interface TakeRequest {
  key: string;
  cost: number;
  /** the bucket's size in points; it refills evenly from empty to full over `windowMs` */
  capacity: number;
  windowMs: number;
  nowMs: number;
}

export interface RateLimitStore {
  /** Takes the points of `req` from its bucket. A bucket never seen is full. Must be atomic per key. */
  take(req: TakeRequest): Promise<BucketTake>;
  close?(): Promise<void>;
  /** a store in another process (Redis): resolves while it answers, else throws an UnavailableError */
  ping?(): Promise<void>;
  /** a store in another process: logs its outages */
  watch?(log: FastifyBaseLogger): void;
}

/** What a take reports, from the bucket's level after it (in point-milliseconds). */
export function bucketTake(
  allowed: boolean,
  level: number,
  { capacity, windowMs, nowMs }: TakeRequest,
): BucketTake {
  return {
    allowed,
    remaining: Math.floor(level / windowMs),
    fullAt: nowMs + Math.ceil((capacity * windowMs - level) / capacity),
  };
}

interface Bucket {
  /** the level in point-milliseconds (points × windowMs): refills are exact integers */
  level: number;
  at: number;
}

/** Buckets in this process's memory: right for one instance. */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly buckets = new Map<string, Bucket>();
  private takes = 0;

  async take(req: TakeRequest): Promise<BucketTake> {
    const { key, cost, capacity, windowMs, nowMs } = req;
    const full = capacity * windowMs;
    const b = this.buckets.get(key);
    // A clock set back (tests, --now) refills nothing rather than draining.
    let level = b ? Math.min(full, b.level + Math.max(0, nowMs - b.at) * capacity) : full;
    const allowed = level >= cost * windowMs;
    if (allowed) level -= cost * windowMs;
    this.buckets.set(key, { level, at: Math.max(nowMs, b?.at ?? nowMs) });
    if (++this.takes % 1024 === 0) this.sweep(nowMs, windowMs);
    return bucketTake(allowed, level, req);
  }

  /** Drops buckets that have had time to refill completely: they equal a bucket never seen. */
  private sweep(nowMs: number, windowMs: number): void {
    for (const [key, b] of this.buckets) if (nowMs - b.at >= windowMs) this.buckets.delete(key);
  }
}

/** The bucket a request draws from. */
export function bucketKey(p: Principal): string {
  return p.kind === 'app' ? `app:${p.clientId}` : `user:${p.clientId}:${p.userId}`;
}

/** The Ratelimit-* headers of an answer: the bucket's size, what is left, when it is full (Unix ms). */
export function rateLimitHeaders(
  points: number,
  remaining: number,
  fullAtMs: number,
): Record<string, string> {
  return {
    'ratelimit-limit': String(points),
    'ratelimit-remaining': String(remaining),
    'ratelimit-reset': String(Math.ceil(fullAtMs / 1000)),
  };
}

/** The bucket size the headers show while limits are off (`--rate-limit 0`): the default's. */
export const UNLIMITED_POINTS = 800;

/** Production's refusal of a request whose bucket is empty (injected faults answer the same). */
export const rateLimitRefusal = (headers: Record<string, string>) =>
  new HelixError(429, 'Request limit exceeded', { headers });

export class RateLimiter {
  constructor(
    private readonly store: RateLimitStore,
    /** points per minute; 0 switches rate limiting off */
    private readonly points: number,
    private readonly clock: Clock,
    /** hears every refusal (metrics) */
    private readonly onRefusal?: (principal: Principal) => void,
  ) {}

  get enabled(): boolean {
    return this.points > 0;
  }

  /**
   * Charges one point to the caller's bucket and returns the Ratelimit-* headers for the response;
   * throws 429 (with the same headers) when the bucket is empty. When limits are off, the headers of
   * a full bucket that nothing spends (UNLIMITED_POINTS, full now): clients pace themselves by these
   * headers, and one that gets none may stop (Twurple's queue sends no more requests at a time than
   * Ratelimit-Remaining allows: zero, when the header is missing).
   */
  async charge(principal: Principal): Promise<Record<string, string>> {
    if (!this.enabled) return rateLimitHeaders(UNLIMITED_POINTS, UNLIMITED_POINTS, this.clock.now());
    const t = await this.store.take({
      key: bucketKey(principal),
      cost: 1,
      capacity: this.points,
      windowMs: RATE_LIMIT_WINDOW_MS,
      nowMs: this.clock.now(),
    });
    const headers = rateLimitHeaders(this.points, t.remaining, t.fullAt);
    if (!t.allowed) {
      this.onRefusal?.(principal);
      throw rateLimitRefusal(headers);
    }
    return headers;
  }

  async close(): Promise<void> {
    await this.store.close?.();
  }

  /**
   * Checks the buckets' store when requests depend on another process for it (Redis, with limits
   * on): resolves while it answers, else rejects with an UnavailableError; undefined otherwise.
   */
  ping(): Promise<void> | undefined {
    return this.enabled ? this.store.ping?.() : undefined;
  }

  watch(log: FastifyBaseLogger): void {
    this.store.watch?.(log);
  }
}
