// The one place that picks the SQL dialect. The rest of src/store/ speaks Kysely to `Store.db`, and
// nothing outside src/store/ writes SQL.
//
// Where the two dialects still differ, honestly (each place says why in its own comment):
// - Opening a store (below): SQLite's pragmas and its change counter, so that in-process caches
//   (src/store/cache.ts) work there and only there; PostgreSQL's pool, int8 read as numbers and the
//   planner's random_page_cost.
// - Migrations: 003 (clip ids compared bytewise with collate "C"; `trending` a stored generated
//   column on PostgreSQL, a virtual one on SQLite), 004 (statement-level triggers with
//   transition tables on PostgreSQL, row triggers on SQLite), 010 and 011 (the /clips listing
//   indexes covering: trailing key columns on SQLite, INCLUDE on PostgreSQL), 018 (the search keys:
//   `translate` on PostgreSQL for SQLite's ASCII-only lower(), collate "C" for SQLite's byte order,
//   statement-level insert and delete triggers on PostgreSQL); migrate.ts names
//   PostgreSQL's schema for the migration table and retries a migration that collided with another
//   session's DDL.
// - Bulk loading (bulk.ts): a prepared row insert run per row against json_array_elements with casts
//   read from the catalog; a rollback journal during a seed on SQLite; the secondary indexes found
//   in sqlite_master against pg_indexes; ANALYZE on PostgreSQL only.
// - Planner steering, because SQLite plans without row statistics: streams.ts writes an IN list as
//   an expression no index holds (on SQLite always, on PostgreSQL for several values) and
//   videos.ts keeps a period off the time index with a unary plus on SQLite only; search.ts writes
//   its once-per-item check as NOT EXISTS on SQLite and `(select 1 where not exists ...) is not null`
//   on PostgreSQL.
// - Values read back: a count is an int8 that PostgreSQL's driver may give as text (callers wrap it
//   in Number()); an EXISTS is 0/1 on SQLite and a boolean on PostgreSQL (analytics.ts).
// Everything else (the queries of every operation, keyset pages, LIMITs written as literals) is
// one SQL text for both stores.

import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import SQLite from 'better-sqlite3';
import { Kysely, type LogEvent, PostgresDialect, sql } from 'kysely';
import type pg from 'pg';
import { poolWithDeadline } from './pg-deadline.ts';
import type { Database } from './schema.ts';
import { FastSqliteDialect, FastSqliteDriver } from './sqlite-driver.ts';
import { watchFile } from './sqlite-file.ts';
import { UnavailableError } from './unavailable.ts';

export type Dialect = 'sqlite' | 'postgres';

export interface Store {
  readonly db: Kysely<Database>;
  readonly dialect: Dialect;
  /** where the data lives, with any password masked; for logs and the start-up banner */
  readonly location: string;
  /**
   * A number that moves whenever the store's data may have changed, so that in-process caches know
   * to forget (src/store/cache.ts): at once for this process's own writes, and within
   * CHANGE_CHECK_MS of another process's commit (on SQLite). Undefined where no such number
   * exists, and nothing may be cached.
   */
  changeEpoch(): number | undefined;
  /**
   * Calls `listener` after every query the store runs, with its duration (Kysely's log event);
   * returns what stops it. Metrics read query times this way (src/metrics/registry.ts).
   */
  onQuery(listener: QueryListener): () => void;
  /**
   * resolves when the store can serve: it answers a trivial query within the deadline, and a
   * SQLite file is still the one opened and can take writes; else throws an UnavailableError
   */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export type QueryListener = (event: LogEvent) => void;

/**
 * The `log` option of a store's Kysely instance, which times every query, and the subscription to
 * it. The instance is built before any app that reads its times (the store outlives apps in tests
 * and is opened before the app in server.ts), so listeners come and go.
 */
function queryLog() {
  const listeners = new Set<QueryListener>();
  return {
    log(event: LogEvent) {
      for (const l of listeners) l(event);
    },
    onQuery(listener: QueryListener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
  };
}

export interface StoreOptions {
  /** a file path (SQLite) or a postgres:// URL */
  url: string;
  /** PostgreSQL only: the schema to use (tests use one fresh schema each) */
  schema?: string;
  /** PostgreSQL only: pool size */
  poolSize?: number;
  /**
   * The deadline of every query, in milliseconds (a serving store: --query-timeout); past it the
   * query fails with an UnavailableError. PostgreSQL: from asking for a connection to the answer
   * (src/store/pg-deadline.ts). SQLite runs each statement in this thread, start to finish, so the
   * deadline is how long a statement waits for a lock another process holds (busy_timeout).
   * Unset (the command-line tools): no deadline, and SQLite waits 5 s for a lock.
   */
  queryTimeout?: number;
}

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

export function openStore(opts: StoreOptions): Store {
  return isPostgresUrl(opts.url) ? openPostgres(opts) : openSqlite(opts.url, opts.queryTimeout);
}

/**
 * SQLite's page cache of a store's connection, in KiB (SQLite's default is 2 MiB; a seed or an
 * import raises it while it loads: src/store/bulk.ts). A lookup of 100 clips by id is 100 descents
 * of the key's B-tree and the table's, at random places: with 2 MiB nearly every page comes back
 * from the file through a system call. 64 MiB keeps the upper levels of every index and the pages a
 * working set reads: `/clips` by 100 ids answers more requests a second at 64 connections on the
 * bench store (docs/perf/2026-11-23-per-request.md, change 4). The cache grows only as pages are
 * read (the bench's peak RSS with it: bench/README.md, "Latest figures").
 */
const SERVE_CACHE_KIB = 64 * 1024;

/**
 * How long a commit by another process (a worker of --workers, another instance on the same file)
 * may go unseen by this process's in-memory copies (tokens, user names): `PRAGMA data_version` is
 * read at most this often. Reading it takes SQLite's read lock on the file, 2-3 µs, and every
 * request used to read it three or four times, 9% of a page's CPU (docs/perf/2026-11-27-per-request.md).
 * This process's own writes are counted as they run, never late. The rule is docs/auth.md's.
 */
export const CHANGE_CHECK_MS = 2;

function openSqlite(file: string, queryTimeout = 5000): Store {
  const conn = new SQLite(file);
  // WAL lets readers run while a writer works; NORMAL is durable across process crashes in WAL mode.
  conn.pragma('journal_mode = WAL');
  conn.pragma('synchronous = NORMAL');
  conn.pragma('foreign_keys = ON');
  conn.pragma(`busy_timeout = ${Math.ceil(queryTimeout)}`);
  conn.pragma(`cache_size = -${SERVE_CACHE_KIB}`);
  // A file deleted or replaced under the server refuses writes; /readyz also reports a file that
  // cannot take them (src/store/sqlite-file.ts).
  const watch = watchFile(file);
  const refuse = (problem: string | undefined) => {
    if (problem) throw new UnavailableError('store', problem);
  };
  const queries = queryLog();
  // The driver times the queries itself (cheaper than Kysely's `log`: src/store/sqlite-driver.ts).
  const driver = new FastSqliteDriver(conn, {
    beforeWrite: watch && (() => refuse(watch.moved())),
    onQuery: queries.log,
  });
  const db = new Kysely<Database>({ dialect: new FastSqliteDialect(driver) });
  // data_version moves when another connection commits to the file, never for this connection's
  // own writes, which the driver counts. The sum of the two counters moves when either does. The
  // other connections' commits are looked for at most every CHANGE_CHECK_MS: a commit made at
  // time c is seen by every call from c + CHANGE_CHECK_MS on (the last look before it is that old).
  const dataVersion = conn.prepare('pragma data_version').pluck();
  let seenVersion = dataVersion.get();
  let lookedAt = performance.now();
  let otherCommits = 0;
  return {
    db,
    dialect: 'sqlite',
    location: file,
    changeEpoch() {
      const now = performance.now();
      if (now - lookedAt >= CHANGE_CHECK_MS) {
        lookedAt = now;
        const v = dataVersion.get();
        if (v !== seenVersion) {
          seenVersion = v;
          otherCommits++;
        }
      }
      return otherCommits + driver.writes;
    },
    onQuery: queries.onQuery,
    async ping() {
      await sql`select 1`.execute(db);
      refuse(watch?.problem());
    },
    async close() {
      await db.destroy();
    },
  };
}

// pg is loaded when a PostgreSQL store is opened, not at start: an SQLite server never needs it, and
// loading it is a part of helixd's start-up (docs/perf/2026-11-22-second-session.md, change 6). pg
// is a CommonJS package. The type parser below asks for it for every field of every result:
// required once, then kept.
let pgModule: typeof pg | undefined;
const requirePg = (): typeof pg => {
  pgModule ??= createRequire(import.meta.url)('pg') as typeof pg;
  return pgModule;
};

// int8 (bigint) columns hold ids and Unix seconds, all far below 2^53: read them as numbers, so that
// both stores return the same JS values. Scoped to this pool, not set globally on the driver.
const INT8_OID = 20;
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID && format !== 'binary') return (v: string) => Number(v);
    // biome-ignore lint/suspicious/noExplicitAny: pg's overloads do not accept a union format
    return requirePg().types.getTypeParser(oid, format as any);
  },
};

// The planner's cost of a random page read on solid-state storage: PostgreSQL's documentation
// suggests 1.1 for SSDs, its default 4 models spinning disks. Under the default, a keyset page
// whose filters leave a few dozen rows is planned as a bitmap scan plus a sort of all of them
// instead of the ordered index range scan that every page is designed for
// (test/store/plans-clips-videos.test.ts).
const PG_SESSION_SETTINGS = ['-c random_page_cost=1.1'];

/**
 * What a postgres:// URL says about the session: its `options` (`-c name=value ...`, given to the
 * server at connection) and `statement_timeout` (pg sends it as a parameter of its own, applied
 * after `options`), and the URL without them. pg lets the URL's values replace the ones it is given
 * beside it, so they are taken out of the URL and combined with helixd's.
 */
function sessionOfUrl(url: string): { url: string; options: string; statementTimeout: string | undefined } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { url, options: '', statementTimeout: undefined };
  }
  const params = parsed.searchParams;
  const options = params.get('options') ?? '';
  const statementTimeout = params.get('statement_timeout') ?? undefined;
  if (!params.has('options') && !params.has('statement_timeout')) return { url, options, statementTimeout };
  params.delete('options');
  params.delete('statement_timeout');
  return { url: parsed.toString(), options, statementTimeout };
}

/**
 * The statement_timeout a postgres:// URL sets (its `statement_timeout` parameter, or `-c
 * statement_timeout=` in its `options`), or undefined: under a query deadline (--query-timeout)
 * helixd's own applies instead, and the server says so at start.
 */
export function urlStatementTimeout(url: string): string | undefined {
  if (!isPostgresUrl(url)) return undefined;
  const session = sessionOfUrl(url);
  const inOptions = /(?:^|\s)(?:-c\s*|--)statement[_-]timeout=(\S*)/.exec(session.options)?.[1];
  return session.statementTimeout ?? inOptions;
}

function openPostgres(opts: StoreOptions): Store {
  const ms = opts.queryTimeout === undefined ? undefined : Math.ceil(opts.queryTimeout);
  const session = sessionOfUrl(opts.url);
  const pool = new (requirePg().Pool)({
    connectionString: session.url,
    max: opts.poolSize ?? 10,
    types: pgTypes,
    // In order, the last setting of a name winning: helixd's tuning (which the URL may change), the
    // URL's, then what helixd needs: the schema asked for, and the deadline of a serving store,
    // which no URL may lift (the server would otherwise run on with a query helixd gave up on).
    options: [
      ...PG_SESSION_SETTINGS,
      ...(session.options ? [session.options] : []),
      ...(opts.schema ? [`-c search_path=${opts.schema}`] : []),
      ...(ms ? [`-c statement_timeout=${ms}`] : []),
    ].join(' '),
    ...(ms || session.statementTimeout === undefined
      ? {}
      : { statement_timeout: Number.parseInt(session.statementTimeout, 10) }),
    ...(ms ? { connectionTimeoutMillis: ms } : {}),
  });
  // An idle client that loses its connection emits 'error' on the pool; without a listener that
  // would crash the process. The next query gets a fresh connection (or fails with 503).
  pool.on('error', () => {});
  const queries = queryLog();
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: ms ? poolWithDeadline(pool, ms) : pool }),
    log: queries.log,
  });
  return {
    db,
    dialect: 'postgres',
    location: maskPassword(opts.url) + (opts.schema ? ` (schema ${opts.schema})` : ''),
    // Instances share no memory, and a NOTIFY would reach them a moment after a change commits:
    // nothing is cached, every request reads the store.
    changeEpoch: () => undefined,
    onQuery: queries.onQuery,
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      await db.destroy();
    },
  };
}

export function maskPassword(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}
