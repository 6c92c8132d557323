// A Kysely dialect for better-sqlite3 built for a server that answers many requests at once.
//
// Kysely's own SQLite driver guards its one connection with a mutex whose release wakes every
// waiter (each re-checks and all but one go back to sleep): with 64 requests in flight a query can
// cost up to 64 wake-ups, and a waiter can be passed over again and again. It also prepares every
// statement anew, which costs about as much as running a page query
// (docs/perf/2026-11-22-first-run.md, finding 2).
//
// better-sqlite3 runs a statement synchronously, start to finish, on the calling thread: no other
// query can interleave with it. So a lone query needs no lock at all. Only a transaction holds the
// connection across awaits; while one is open, queries from outside it wait in a FIFO queue and
// run, in order, when it ends. Transactions wait for each other the same way.
//
// Query times are taken here rather than through Kysely's `log` option: Kysely wraps every
// connection's executeQuery in an async function that awaits the logger twice, which cost as much
// per query as the rest of the metrics together (docs/perf/2026-11-22-metrics.md); here a query
// that waits for nothing is timed without a promise of its own.
import { performance } from 'node:perf_hooks';
import type SQLite from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type LogEvent,
  type QueryCompiler,
  type QueryResult,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type TransactionSettings,
} from 'kysely';

// The same SQL text always gets the same prepared statement. Reusing one is safe: a statement runs
// to completion before anything else can use it. Bounded, since `IN` lists make one text per list
// length: cleared when full.
const STATEMENT_CACHE_SIZE = 1000;

/** The most connections kept for reuse (src/store/sqlite-driver.ts `#idle`); more are made and dropped. */
const MAX_IDLE_CONNECTIONS = 256;

/** A prepared statement and, for a reader, how to turn one of its raw rows into an object. */
interface Prepared {
  stmt: SQLite.Statement;
  toObject?: (values: unknown[]) => Record<string, unknown>;
  /** what the statement does to the data when it is no read (writeKind) */
  writes: WriteKind;
}

/**
 * What a statement that is no read does to the data: `rows`, an INSERT, UPDATE, DELETE or REPLACE,
 * changes exactly the rows it reports (its changes, or the rows its RETURNING gives back); `none`,
 * the bounds of a transaction, changes nothing by itself (the statements inside it count); `maybe`,
 * anything else (DDL, a pragma that sets), counted as a change.
 */
type WriteKind = 'rows' | 'none' | 'maybe';

function writeKind(sqlText: string): WriteKind {
  const word = /^\s*([a-z]+)/i.exec(sqlText)?.[1]?.toLowerCase();
  if (word === 'insert' || word === 'update' || word === 'delete' || word === 'replace' || word === 'with')
    return 'rows';
  if (word === 'begin' || word === 'commit' || word === 'end' || word === 'rollback') return 'none';
  if (word === 'savepoint' || word === 'release') return 'none';
  return 'maybe';
}

// better-sqlite3 builds each row object in C++, looking every column name up in V8's string table
// for every row; reading rows as arrays and building the objects with a function made for the
// statement's columns (one object shape, keys as literals) takes less time on a page of rows
// (docs/perf/2026-11-22-second-session.md, change 2). Names come from the statement's own columns,
// quoted by JSON.stringify; as with better-sqlite3, a repeated name keeps its last value.
function objectMaker(columns: readonly string[]): (values: unknown[]) => Record<string, unknown> {
  const fields = columns.map((c, i) => `${JSON.stringify(c)}: v[${i}]`).join(', ');
  return new Function('v', `return { ${fields} };`) as (values: unknown[]) => Record<string, unknown>;
}

const quoteName = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** A connection of this driver, as a bulk load sees it (src/store/bulk.ts `inserter`). */
export interface RowsConnection extends DatabaseConnection {
  runEach(sqlText: string, rows: readonly (readonly unknown[])[]): Promise<void>;
}

class Connection implements RowsConnection {
  constructor(readonly driver: FastSqliteDriver) {}
  /** in the driver's idle list: given back, not to be given back twice */
  idle = false;

  /** A query of Kysely's, timed (the driver's `onQuery`) from here to its result, waits included. */
  executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    return this.driver.execute<R>(this, compiled, true);
  }

  /**
   * Runs the writing statement `sqlText` once per parameter array of `rows`, in this connection's
   * turn: a bulk load's rows (src/store/bulk.ts `inserter`). Heard by `onQuery` as one query.
   */
  runEach(sqlText: string, rows: readonly (readonly unknown[])[]): Promise<void> {
    return this.driver.runEach(this, sqlText, rows);
  }

  // Rows are read in one go and handed out in chunks: an open iterator would keep the connection
  // (and a cached statement) busy across awaits. Nothing in helixd streams from SQLite today.
  async *streamQuery<R>(compiled: CompiledQuery, chunkSize = 100): AsyncIterableIterator<QueryResult<R>> {
    const { rows } = await this.executeQuery<R>(compiled);
    for (let i = 0; i < rows.length; i += chunkSize) yield { rows: rows.slice(i, i + chunkSize) };
  }
}

export class FastSqliteDriver implements Driver {
  readonly #db: SQLite.Database;
  readonly #statements = new Map<string, Prepared>();
  /** the connection whose transaction is open, if any */
  #holder: Connection | undefined;
  /** callers waiting for the open transaction to end, first come first served */
  #waiting: (() => void)[] = [];
  #writes = 0;
  readonly #beforeWrite: (() => void) | undefined;
  /**
   * Connections given back, handed out again. A connection is only a name for whoever holds it (a
   * transaction, or one query), but Kysely wraps each new one it sees (its query log, kept in a
   * WeakSet): a new object per query cost that wrapping, and the weak entry's garbage, every time.
   */
  readonly #idle: Connection[] = [];

  readonly #onQuery: ((event: LogEvent) => void) | undefined;

  /**
   * `beforeWrite` runs before every statement that may write, and may refuse it by throwing.
   * `onQuery` hears every query Kysely runs, with its time, as Kysely's `log` option would.
   */
  constructor(
    db: SQLite.Database,
    o: { beforeWrite?: (() => void) | undefined; onQuery?: (event: LogEvent) => void } = {},
  ) {
    this.#db = db;
    this.#beforeWrite = o.beforeWrite;
    this.#onQuery = o.onQuery;
  }

  async init(): Promise<void> {}

  /**
   * How many statements this driver has run that changed data (or may have: see WriteKind): with
   * `PRAGMA data_version` (which sees only other connections' commits) it tells caches that the
   * data may have changed. A write that changes no row does not count: EventSub's housekeeping
   * runs such deletes every 10 s in every serving process, and each emptied the in-memory copies.
   */
  get writes(): number {
    return this.#writes;
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = this.#idle.pop() ?? new Connection(this);
    connection.idle = false;
    return connection;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    while (this.#holder !== undefined) await this.#turn();
    this.#holder = connection as Connection;
    try {
      // IMMEDIATE: the write lock is taken here, where the busy timeout waits for another process
      // (a worker of --workers, another instance) to commit. A deferred transaction that reads and
      // then writes would ask for it at its first write, and when another process had committed
      // since its read began, SQLite answers SQLITE_BUSY at once, without waiting: a 503 for a write
      // that only had to wait its turn. A transaction declared read only needs no lock: deferred.
      this.#run(CompiledQuery.raw(settings.accessMode === 'read only' ? 'begin' : 'begin immediate'));
    } catch (e) {
      this.#end();
      throw e;
    }
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await this.#finish(connection, 'commit');
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await this.#finish(connection, 'rollback');
  }

  async savepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await this.execute(connection as Connection, CompiledQuery.raw(`savepoint ${quoteName(name)}`), false);
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await this.execute(connection as Connection, CompiledQuery.raw(`rollback to ${quoteName(name)}`), false);
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await this.execute(connection as Connection, CompiledQuery.raw(`release ${quoteName(name)}`), false);
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    // Kysely ends every transaction before it releases the connection; this covers a caller that
    // let go of a connection with its transaction open, which would otherwise block everyone.
    if (this.#holder === connection) {
      if (this.#db.inTransaction) this.#db.exec('rollback');
      this.#end();
    }
    // As many as were ever held at once are kept: requests in flight, each between two awaits.
    const given = connection as Connection;
    if (!given.idle && this.#idle.length < MAX_IDLE_CONNECTIONS) {
      given.idle = true;
      this.#idle.push(given);
    }
  }

  async destroy(): Promise<void> {
    this.#statements.clear();
    this.#db.close();
  }

  /**
   * Runs `compiled` once no other connection's transaction is open; `timed`: heard by `onQuery`
   * (Kysely's queries; not the savepoints, as with Kysely's log).
   */
  execute<R>(connection: Connection, compiled: CompiledQuery, timed: boolean): Promise<QueryResult<R>> {
    const started = timed && this.#onQuery ? performance.now() : undefined;
    if (this.#holder !== undefined && this.#holder !== connection)
      return this.#afterTurn(connection, compiled, started);
    // Nothing to wait for: run now, with no async function between the caller and the result.
    try {
      const result = this.#run<R>(compiled);
      if (started !== undefined) this.#heard('query', compiled, started);
      return Promise.resolve(result);
    } catch (error) {
      if (started !== undefined) this.#heard('error', compiled, started, error);
      return Promise.reject(error);
    }
  }

  /** `Connection.runEach`: one statement, prepared once, run for each row as one write. */
  async runEach(
    connection: Connection,
    sqlText: string,
    rows: readonly (readonly unknown[])[],
  ): Promise<void> {
    const started = this.#onQuery ? performance.now() : undefined;
    while (this.#holder !== undefined && this.#holder !== connection) await this.#turn();
    const compiled = CompiledQuery.raw(sqlText);
    try {
      const { stmt } = this.#prepare(sqlText);
      this.#beforeWrite?.();
      this.#writes++;
      // The values as arguments: better-sqlite3 reads an array argument's elements more slowly
      // (docs/perf/2026-11-23-seed-second-writer.md, change 3).
      for (let i = 0; i < rows.length; i++) stmt.run(...(rows[i] as unknown[]));
      if (started !== undefined) this.#heard('query', compiled, started);
    } catch (error) {
      if (started !== undefined) this.#heard('error', compiled, started, error);
      throw error;
    }
  }

  async #afterTurn<R>(
    connection: Connection,
    compiled: CompiledQuery,
    started: number | undefined,
  ): Promise<QueryResult<R>> {
    while (this.#holder !== undefined && this.#holder !== connection) await this.#turn();
    try {
      const result = this.#run<R>(compiled);
      if (started !== undefined) this.#heard('query', compiled, started);
      return result;
    } catch (error) {
      if (started !== undefined) this.#heard('error', compiled, started, error);
      throw error;
    }
  }

  #heard(level: 'query' | 'error', query: CompiledQuery, started: number, error?: unknown): void {
    const queryDurationMillis = performance.now() - started;
    (this.#onQuery as (event: LogEvent) => void)(
      level === 'query'
        ? { level, isStream: false, query, queryDurationMillis }
        : { level, error, query, queryDurationMillis },
    );
  }

  #run<R>(compiled: CompiledQuery): QueryResult<R> {
    const { stmt, toObject, writes } = this.#prepare(compiled.sql);
    if (stmt.readonly) return this.#runPrepared(stmt, toObject, compiled);
    this.#beforeWrite?.();
    try {
      return this.#runPrepared(stmt, toObject, compiled, writes);
    } catch (error) {
      // Counted as a change all the same: a statement whose conflict clause is FAIL keeps the rows
      // it wrote before failing.
      this.#writes++;
      throw error;
    }
  }

  /**
   * Runs a prepared statement; a write is counted once it has run (nothing else runs meanwhile on
   * this thread) when it changed data (WriteKind). `writes`: undefined for a read.
   */
  #runPrepared<R>(
    stmt: SQLite.Statement,
    toObject: Prepared['toObject'],
    compiled: CompiledQuery,
    writes?: WriteKind,
  ): QueryResult<R> {
    if (toObject !== undefined) {
      const rows = stmt.all(compiled.parameters) as unknown[];
      if (writes === 'maybe' || (writes === 'rows' && rows.length > 0)) this.#writes++;
      for (let i = 0; i < rows.length; i++) rows[i] = toObject(rows[i] as unknown[]);
      return { rows: rows as R[] };
    }
    const { changes, lastInsertRowid } = stmt.run(compiled.parameters);
    if (writes === 'maybe' || (writes === 'rows' && changes > 0)) this.#writes++;
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  }

  #prepare(sqlText: string): Prepared {
    let prepared = this.#statements.get(sqlText);
    if (prepared === undefined) {
      if (this.#statements.size >= STATEMENT_CACHE_SIZE) this.#statements.clear();
      const stmt = this.#db.prepare(sqlText);
      const writes = writeKind(sqlText);
      prepared = stmt.reader
        ? { stmt: stmt.raw(true), toObject: objectMaker(stmt.columns().map((c) => c.name)), writes }
        : { stmt, writes };
      this.#statements.set(sqlText, prepared);
    }
    return prepared;
  }

  async #finish(connection: DatabaseConnection, command: 'commit' | 'rollback'): Promise<void> {
    if (this.#holder !== connection) {
      // Kysely rolls back after a failed commit, which has already ended the transaction here.
      if (command === 'rollback') return;
      throw new Error('commit without an open transaction');
    }
    try {
      this.#run(CompiledQuery.raw(command));
    } finally {
      // A failed commit leaves SQLite's transaction open: roll it back so the connection is usable.
      if (this.#db.inTransaction) this.#db.exec('rollback');
      this.#end();
    }
  }

  #turn(): Promise<void> {
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** The transaction is over: everyone who waited runs, in arrival order (microtasks are FIFO). */
  #end(): void {
    this.#holder = undefined;
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const wake of waiting) wake();
  }
}

export class FastSqliteDialect implements Dialect {
  constructor(readonly driver: FastSqliteDriver) {}

  createAdapter() {
    return new SqliteAdapter();
  }

  createDriver(): Driver {
    return this.driver;
  }

  createQueryCompiler(): QueryCompiler {
    return new SqliteQueryCompiler();
  }

  // biome-ignore lint/suspicious/noExplicitAny: Kysely's introspector takes any database
  createIntrospector(db: Kysely<any>) {
    return new SqliteIntrospector(db);
  }
}
