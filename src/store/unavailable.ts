// A dependency that cannot serve a request right now: the store (SQLite or PostgreSQL) or Redis.
// Such a request is a 503, logged, and the next request tries again; /readyz names the dependency
// and why. This file is the one place that decides which failures mean "unavailable" (and not a
// bug, which stays a 500): errors helixd raises itself (a deadline passed, a SQLite file that
// vanished) and the drivers' own codes.

/**
 * Which dependency failed: as /readyz names it in its `checks`. `primary`: under `--workers`, the
 * process that sums every worker's metrics (src/metrics/registry.ts) and moves every worker's clock
 * (src/cluster/clock.ts); /readyz does not check it.
 */
export type Dependency = 'store' | 'redis' | 'primary';

export class UnavailableError extends Error {
  constructor(
    readonly dependency: Dependency,
    /** why, as a phrase after the dependency's name: "did not answer within 2000 ms" */
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(`${dependency} ${reason}`, options);
  }
}

/** The reason of a deadline that passed. */
export const deadlineReason = (ms: number) => `did not answer within ${ms} ms`;

export const UNREACHABLE = 'cannot be reached';

// PostgreSQL's SQLSTATE classes and codes that mean the server cannot serve, not that the query is
// wrong: 08 connection exceptions, 53 insufficient resources (53100 disk full), 57P01-57P03
// shutting down or starting, 58 system errors (I/O), 25006 a read-only server (a standby).
const PG_REASONS: [RegExp, string][] = [
  [/^08/, UNREACHABLE],
  [/^53100$/, 'disk is full'],
  [/^53/, 'is out of resources'],
  [/^57P0[1-3]$/, 'is shutting down or starting'],
  [/^57014$/, 'took too long (statement timeout)'],
  [/^58/, 'I/O error'],
  [/^25006$/, 'is read-only'],
];

// SQLite's primary result codes (better-sqlite3 gives the extended one: SQLITE_IOERR_WRITE) that
// mean the file cannot be used, or not now.
const SQLITE_REASONS: [string, string][] = [
  ['SQLITE_BUSY', 'is locked by another process'],
  ['SQLITE_LOCKED', 'is locked by another process'],
  ['SQLITE_READONLY', 'is read-only'],
  ['SQLITE_FULL', 'disk is full'],
  ['SQLITE_IOERR', 'I/O error'],
  ['SQLITE_CANTOPEN', 'file cannot be opened'],
];

// The network errors of a connection, and pg's own errors for a connection that died (they have no
// code): a store or Redis that went away.
const NETWORK_CODES = ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND'];
const PG_CONNECTION_MESSAGES =
  /^Connection terminated|not queryable|^timeout exceeded when trying to connect/;

/**
 * Why `err` means a dependency is unavailable, or undefined for any other error. A driver's error
 * (SQLite, pg) names the store; Redis's are wrapped where they are raised (ratelimit-redis.ts).
 */
export function unavailability(err: unknown): { dependency: Dependency; reason: string } | undefined {
  if (err instanceof UnavailableError) return { dependency: err.dependency, reason: err.reason };
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    if (NETWORK_CODES.includes(code)) return { dependency: 'store', reason: UNREACHABLE };
    if (code.startsWith('SQLITE_')) {
      const hit = SQLITE_REASONS.find(([c]) => code === c || code.startsWith(`${c}_`));
      return hit ? { dependency: 'store', reason: hit[1] } : undefined;
    }
    const hit = PG_REASONS.find(([c]) => c.test(code));
    return hit ? { dependency: 'store', reason: hit[1] } : undefined;
  }
  if (err instanceof Error && PG_CONNECTION_MESSAGES.test(err.message))
    return { dependency: 'store', reason: UNREACHABLE };
  return undefined;
}
