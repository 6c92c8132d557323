// Stores for tests: a fresh, migrated store per test, on a real SQLite file or on a fresh schema of
// a real PostgreSQL (HELIXD_TEST_PG_URL, default postgres://postgres@127.0.0.1:5432/test). Without a
// reachable PostgreSQL its runs are skipped with a line that says so; under CI=true an unreachable
// PostgreSQL fails the run.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { CHANGE_CHECK_MS, openStore, type Store, type StoreOptions } from '../../src/store/db.ts';
import { migrateOrThrow } from '../../src/store/migrate.ts';
import type { Database } from '../../src/store/schema.ts';

export type StoreKind = 'sqlite' | 'postgres';

export const PG_URL = process.env.HELIXD_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function postgresReachable(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (err) {
    return (err as Error).message || String(err);
  } finally {
    await client.end().catch(() => {});
  }
}

const pgProblem = await postgresReachable();
if (pgProblem) {
  if (process.env.CI === 'true') {
    throw new Error(`PostgreSQL at ${PG_URL} is required under CI=true but unreachable: ${pgProblem}`);
  }
  process.stdout.write(`# PostgreSQL at ${PG_URL} unreachable (${pgProblem}): PostgreSQL runs skipped\n`);
}

export const STORE_KINDS: { kind: StoreKind; skip: string | false }[] = [
  { kind: 'sqlite', skip: false },
  { kind: 'postgres', skip: pgProblem ? `PostgreSQL unreachable: ${pgProblem}` : false },
];

/**
 * Waits until every process on a store has seen a commit made before the call: on SQLite another
 * process's commit reaches this one's in-memory copies (tokens, user names) within CHANGE_CHECK_MS
 * (src/store/db.ts, docs/auth.md). Timed on the monotonic clock: a timer may fire early by the
 * event loop's cached time.
 */
export async function changeSeen(): Promise<void> {
  const until = performance.now() + CHANGE_CHECK_MS;
  while (performance.now() < until) await new Promise((r) => setTimeout(r, 1));
}

export interface TempStore {
  store: Store;
  /** the SQLite path or the PostgreSQL URL; the schema for PostgreSQL */
  url: string;
  schema?: string;
  drop(): Promise<void>;
}

/** A fresh, migrated, empty store of the given kind. */
export async function tempStore(kind: StoreKind): Promise<TempStore> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'helixd-test-'));
    const url = join(dir, 'helixd.db');
    const store = openStore({ url });
    await migrateOrThrow(store);
    return {
      store,
      url,
      async drop() {
        await store.close().catch(() => {});
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const schema = `helixd_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const store = openStore({ url: PG_URL, schema, poolSize: 4 });
  await migrateOrThrow(store);
  return {
    store,
    url: PG_URL,
    schema,
    async drop() {
      await store.close().catch(() => {});
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`drop schema if exists ${schema} cascade`);
      await c.end();
    },
  };
}

/** The `--db` value that opens the same store from the command line (PostgreSQL: its schema too). */
export function cliDb(options: StoreOptions): string {
  if (!options.schema) return options.url;
  return `${options.url}?options=${encodeURIComponent(`-c search_path=${options.schema}`)}`;
}

/**
 * The names of the store's tables, indexes and other objects that start with `prefix`, sorted: what
 * a migration test sees a migration add and remove (SQLite's catalogue, or PostgreSQL's in the
 * store's schema).
 */
export async function schemaObjects(
  kind: StoreKind,
  db: Kysely<Database>,
  prefix: string,
): Promise<string[]> {
  const like = `${prefix}%`;
  const q =
    kind === 'sqlite'
      ? sql<{ name: string }>`select name from sqlite_master where name like ${like} order by name`
      : sql<{ name: string }>`
          select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
          where n.nspname = current_schema() and c.relname like ${like} order by 1`;
  return (await q.execute(db)).rows.map((r) => r.name);
}
