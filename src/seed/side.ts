// The second writer of a seed into an SQLite file. The tables that no other table's generation reads
// (SIDE_TABLES: subscriptions, follows and the analytics days, most of the rows and of the writing
// thread's time with their indexes: docs/perf/2026-11-23-seed-second-writer.md) are generated,
// inserted and indexed in a worker thread of their own, each into a side file beside the store's,
// while the seeding thread writes the other tables. The seeding thread then copies each in, as soon
// as it is written and its own tables are, with `insert into t select * from side.t`: into an empty
// table with the same columns and indexes and no trigger, SQLite copies the rows and the index
// entries as they are, in order (its transfer optimization), rowids kept. The rows are those that
// inserting them in the seeding thread gives. The side files are removed after, whatever happened;
// the seed stays one transaction of the store, which a failure rolls back.
//
// Main thread: `startSideWriter(trx, options)` once the seeding transaction is open, before the
// secondary indexes are dropped (it copies their definitions); `copyInto(trx)` once the other
// tables are written and indexed, with the subscriptions' triggers dropped; `close(db)` once the
// transaction has ended. Worker thread: `writeSideFiles`, started by src/seed/worker.ts.
import { rmSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import { type Kysely, sql, type Transaction } from 'kysely';
import {
  bindWholeAsIntegers,
  IMPORT_CACHE_KIB,
  nonIntegerIndexes,
  runDdl,
  sqliteRowInsert,
} from '../store/bulk.ts';
import type { Database } from '../store/schema.ts';
import { generate, type SeedOptions, type SeedSummary, SIDE_TABLES } from './generate.ts';

/** What the worker writes: where, and each side table's CREATE TABLE and CREATE INDEX statements. */
export interface SideFiles {
  /** each table's file is this path, "-", the table's name */
  base: string;
  schema: { table: string; create: string; indexes: string[] }[];
}

const fileOf = (side: SideFiles, table: string) => `${side.base}-${table}`;

/** What the worker posts: a table written (its file closed), then the counts of all of them. */
export type FromSideWriter =
  | { kind: 'table'; table: string }
  | { kind: 'done'; counts: SeedSummary['counts'] };

let started = 0;

/** A promise and what settles it. */
function settleable<T>() {
  let resolve: (v: T) => void = () => {};
  let reject: (e: unknown) => void = () => {};
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

export interface SideWriter {
  /** The CREATE INDEX statements of the indexes this writer builds (the side tables' secondary indexes). */
  readonly indexes: ReadonlySet<string>;
  /**
   * Copies each side table into the store's (empty) one as soon as the worker has written it, its
   * secondary indexes with it; `onTable` hears each with its rows. The side tables' counts.
   */
  copyInto(
    trx: Transaction<Database>,
    onTable?: (table: keyof Database, rows: number) => void,
  ): Promise<SeedSummary['counts']>;
  /** Detaches and removes the side files, stopping the worker if it still runs. */
  close(db: Kysely<Database>): Promise<void>;
}

/**
 * Starts writing the side tables of `options` into new files beside the store's file, in a worker
 * thread; undefined for a store that is not a file (nothing to put the files beside).
 */
export async function startSideWriter(
  trx: Transaction<Database>,
  options: SeedOptions,
): Promise<SideWriter | undefined> {
  const main = (
    await sql<{ file: string }>`select file from pragma_database_list where name = 'main'`.execute(trx)
  ).rows[0]?.file;
  if (!main) return undefined;
  const ddl = await sql<{ type: string; table: string; ddl: string }>`
    select type, tbl_name as "table", sql as ddl from sqlite_master
    where type in ('table', 'index') and sql is not null and tbl_name in (${sql.join([...SIDE_TABLES])})
    order by name`.execute(trx);
  const side: SideFiles = {
    base: `${main}-seed-${process.pid}-${++started}`,
    schema: SIDE_TABLES.map((table) => {
      const of = ddl.rows.filter((r) => r.table === table);
      return {
        table,
        create: of.find((r) => r.type === 'table')?.ddl as string,
        indexes: of.filter((r) => r.type === 'index').map((r) => r.ddl),
      };
    }),
  };
  const remove = () => {
    for (const table of SIDE_TABLES)
      for (const f of [fileOf(side, table), `${fileOf(side, table)}-journal`]) rmSync(f, { force: true });
  };
  remove();
  // No execArgv: the worker's entry registers tsx itself, whatever flags the main thread had.
  const worker = new Worker(new URL('./worker-thread.js', import.meta.url), {
    workerData: { helixdSeedSide: { options, side } },
    execArgv: [],
  });
  // Each table's file is ready (true), or there is none (false: a table without rows).
  const ready = new Map(SIDE_TABLES.map((t) => [t as string, settleable<boolean>()]));
  const done = settleable<SeedSummary['counts']>();
  const fail = (e: unknown) => {
    for (const r of ready.values()) r.reject(e);
    done.reject(e);
  };
  worker.on('message', (m: FromSideWriter) => {
    if (m.kind === 'table') ready.get(m.table)?.resolve(true);
    else {
      for (const r of ready.values()) r.resolve(false);
      done.resolve(m.counts);
    }
  });
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`the seed's side writer exited with code ${code}`)));
  // Awaited by copyInto; a seed that fails before it does not leave the rejections unhandled.
  for (const p of [...[...ready.values()].map((r) => r.promise), done.promise]) p.catch(() => {});
  const attached: string[] = [];
  return {
    indexes: new Set(side.schema.flatMap((t) => t.indexes)),
    async copyInto(trx, onTable) {
      for (const { table, indexes } of side.schema) {
        if (!(await ready.get(table)?.promise)) continue;
        const name = `helixd_seed_${table}`;
        await sql`attach database ${fileOf(side, table)} as ${sql.raw(name)}`.execute(trx);
        attached.push(name);
        // The indexes first, on the empty table: the copy fills them from the side file's own.
        await runDdl(trx, indexes);
        await sql`insert into ${sql.table(table)} select * from ${sql.table(`${name}.${table}`)}`.execute(
          trx,
        );
      }
      const counts = await done.promise;
      for (const { table } of side.schema)
        onTable?.(table as keyof Database, counts[table as keyof Database] ?? 0);
      return counts;
    },
    async close(db) {
      // Only once the seeding transaction has ended: it reads the files until then. A file that
      // cannot be detached is still removed (unlinked, it goes when the connection closes); the
      // seed's own error, if any, is the one to report.
      for (const name of attached) await sql`detach database ${sql.raw(name)}`.execute(db).catch(() => {});
      await worker.terminate();
      remove();
    },
  };
}

/**
 * The worker's part: each side table of `options` into a new file of its own, its secondary indexes
 * built there; `onTable` hears each table once its file is closed. Their counts.
 */
export async function writeSideFiles(
  options: SeedOptions,
  side: SideFiles,
  onTable: (table: string) => void,
): Promise<SeedSummary['counts']> {
  let current:
    | { table: string; db: SQLite.Database; stmt: SQLite.Statement; columns: string[]; asText: number[] }
    | undefined;
  const schemaOf = (table: string) => side.schema.find((t) => t.table === table);
  const open = (table: string, columns: string[]) => {
    const db = new SQLite(fileOf(side, table));
    // A scratch file, removed after the copy: no journal, no syncs.
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.pragma(`cache_size = -${IMPORT_CACHE_KIB}`);
    db.exec(schemaOf(table)?.create as string);
    db.exec('begin');
    const declared = db.prepare('select name, type from pragma_table_info(?)').all(table) as {
      name: string;
      type: string;
    }[];
    const stmt = db.prepare(sqliteRowInsert(table, columns));
    return { table, db, stmt, columns, asText: nonIntegerIndexes(declared, columns) };
  };
  const finish = () => {
    if (current === undefined) return;
    const { table, db } = current;
    for (const index of schemaOf(table)?.indexes ?? []) db.exec(index);
    db.exec('commit');
    db.close();
    current = undefined;
    onTable(table);
  };
  try {
    const { counts } = await generate(
      options,
      async (table, rows) => {
        if (current?.table !== table) {
          finish();
          current = open(table, Object.keys(rows[0] as object));
        }
        const { stmt, columns, asText } = current;
        for (const row of rows) {
          const values = columns.map((c) => (row as unknown as Record<string, unknown>)[c]);
          if (asText.length > 0) bindWholeAsIntegers(values, asText);
          stmt.run(...values);
        }
      },
      'side',
    );
    finish();
    return counts;
  } finally {
    current?.db.close();
  }
}
