// The one place that picks the SQL dialect. Everything else speaks Kysely to `Store.db`.
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, type SqliteDatabase, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.ts';

export type Dialect = 'sqlite' | 'postgres';

export interface Store {
  readonly db: Kysely<Database>;
  readonly dialect: Dialect;
  /** where the data lives, with any password masked; for logs and the start-up banner */
  readonly location: string;
  /** resolves when the store answers a trivial query */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface StoreOptions {
  /** a file path (SQLite) or a postgres:// URL */
  url: string;
  /** PostgreSQL only: the schema to use (tests use one fresh schema each) */
  schema?: string;
  /** PostgreSQL only: pool size */
  poolSize?: number;
}

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

export function openStore(opts: StoreOptions): Store {
  return isPostgresUrl(opts.url) ? openPostgres(opts) : openSqlite(opts.url);
}

function openSqlite(file: string): Store {
  const conn = new SQLite(file);
  // WAL lets readers run while a writer works; NORMAL is durable across process crashes in WAL mode.
  conn.pragma('journal_mode = WAL');
  conn.pragma('synchronous = NORMAL');
  conn.pragma('foreign_keys = ON');
  conn.pragma('busy_timeout = 5000');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: cachingStatements(conn) }) });
  return {
    db,
    dialect: 'sqlite',
    location: file,
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      await db.destroy();
    },
  };
}

// Kysely's SQLite driver prepares every query anew; preparing costs about as much as running a
// page query (bench/README.md). The same SQL text always gets the same prepared statement here.
// Reusing one is safe because Kysely runs one query at a time on its single SQLite connection.
// The map is bounded: `IN` lists make one text per list length, so it is cleared when full.
const STATEMENT_CACHE_SIZE = 1000;

function cachingStatements(conn: SQLite.Database): SqliteDatabase {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => conn.close(),
    prepare(sqlText: string) {
      let stmt = cache.get(sqlText);
      if (!stmt) {
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.clear();
        stmt = conn.prepare(sqlText);
        cache.set(sqlText, stmt);
      }
      return stmt;
    },
  };
}

// int8 (bigint) columns hold ids and Unix seconds, all far below 2^53: read them as numbers, so that
// both stores return the same JS values. Scoped to this pool, not set globally on the driver.
const INT8_OID = 20;
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID && format !== 'binary') return (v: string) => Number(v);
    // biome-ignore lint/suspicious/noExplicitAny: pg's overloads do not accept a union format
    return pg.types.getTypeParser(oid, format as any);
  },
};

// The planner's cost of a random page read on solid-state storage: PostgreSQL's documentation
// suggests 1.1 for SSDs, its default 4 models spinning disks. Under the default, a keyset page
// whose filters leave a few dozen rows is planned as a bitmap scan plus a sort of all of them
// instead of the ordered index range scan that every page is designed for
// (test/plans-clips-videos.test.ts).
const PG_SESSION_SETTINGS = ['-c random_page_cost=1.1'];

function openPostgres(opts: StoreOptions): Store {
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.poolSize ?? 10,
    types: pgTypes,
    options: [...PG_SESSION_SETTINGS, ...(opts.schema ? [`-c search_path=${opts.schema}`] : [])].join(' '),
  });
  // An idle client that loses its connection emits 'error' on the pool; without a listener that
  // would crash the process. The next query gets a fresh connection (or fails with 503).
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    dialect: 'postgres',
    location: maskPassword(opts.url) + (opts.schema ? ` (schema ${opts.schema})` : ''),
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
