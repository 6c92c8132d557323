// Query-plan checks shared by the plan tests: the SQL a store function runs (recorded by a Kysely
// plugin and compiled by the store's own dialect), its plan on SQLite (EXPLAIN QUERY PLAN) or
// PostgreSQL (plain EXPLAIN), and the assertion that an index serves a table as a range or a probe.
import assert from 'node:assert/strict';
import {
  CompiledQuery,
  type Insertable,
  type Kysely,
  type KyselyPlugin,
  type RootOperationNode,
} from 'kysely';
import type { Key, Page, PageQuery } from '../../src/store/page.ts';
import type { Database } from '../../src/store/schema.ts';
import type { TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';

/**
 * The SQL `run` executes through `db`, compiled by `db`'s dialect. Each query comes last in the
 * list after the subqueries built apart from it (the selects of a UNION are recorded as they are
 * joined in), so a function's one statement is the last item.
 */
export async function capturedQueries(
  db: Kysely<Database>,
  run: (db: Kysely<Database>) => Promise<unknown>,
): Promise<CompiledQuery[]> {
  const nodes: {
    node: RootOperationNode;
    queryId: Parameters<KyselyPlugin['transformQuery']>[0]['queryId'];
  }[] = [];
  const recorder: KyselyPlugin = {
    transformQuery(args) {
      nodes.push({ node: args.node, queryId: args.queryId });
      return args.node;
    },
    async transformResult(args) {
      return args.result;
    },
  };
  await run(db.withPlugin(recorder));
  return nodes.map(({ node, queryId }) => db.getExecutor().compileQuery(node, queryId));
}

/** The plan's lines: SQLite's EXPLAIN QUERY PLAN `detail` column, PostgreSQL's EXPLAIN text. */
export async function explain(kind: StoreKind, db: Kysely<Database>, q: CompiledQuery): Promise<string[]> {
  const prefix = kind === 'sqlite' ? 'explain query plan ' : 'explain ';
  const r = await db.executeQuery<Record<string, string>>(
    CompiledQuery.raw(prefix + q.sql, [...q.parameters]),
  );
  return r.rows.map((row) => (kind === 'sqlite' ? (row.detail as string) : (row['QUERY PLAN'] as string)));
}

/** The plan tools for the store of `kind`; `app` is called when a tool runs (after `before`). */
export function queryPlans(kind: StoreKind, app: () => TestApp) {
  const captured = (run: (db: Kysely<Database>) => Promise<unknown>) => capturedQueries(app().store.db, run);
  const plan = (q: CompiledQuery) => explain(kind, app().store.db, q);

  /**
   * `index` serves `table` (named `alias` in the query) as a search: a range or a probe; no table is
   * read whole; no sort unless allowed. An ordered walk of the index from one end without a range
   * (a first page without an equality prefix) stops after `first` + 1 rows: allowed with `walk`.
   * `covering`: the index holds every column the query reads of the table, which is not read at
   * all (SQLite `USING COVERING INDEX`, PostgreSQL `Index Only Scan`).
   */
  function assertIndexed(
    lines: string[],
    table: string,
    index: string,
    o: { alias?: string; sort?: boolean; walk?: boolean; keyed?: boolean; covering?: boolean } = {},
  ): void {
    const text = lines.join('\n');
    const name = o.alias ?? table;
    if (kind === 'sqlite') {
      const sqliteIndex =
        index.endsWith('_pkey') || index.endsWith('_pk') ? `sqlite_autoindex_${table}_1` : index;
      const using = o.covering ? 'COVERING ' : '(COVERING )?';
      // A WITHOUT ROWID table is its primary key: SQLite names no index there.
      const primary = index.endsWith('_pkey') ? `|^SEARCH ${name} USING PRIMARY KEY \\(` : '';
      const search = new RegExp(`^SEARCH ${name} USING ${using}INDEX ${sqliteIndex} \\(${primary}`);
      const walk = new RegExp(`^SCAN ${name} USING ${using}INDEX ${sqliteIndex}$`);
      const walks = (l: string) => o.walk === true && walk.test(l);
      assert.ok(
        lines.some((l) => search.test(l) || walks(l)),
        `expected ${index}:\n${text}`,
      );
      // A list of constants the query gives (`IN (VALUES ...)`) is no table; nor is a subquery run
      // as a co-routine (`CO-ROUTINE p`, then `SCAN p`): its rows are what its own plan reads.
      const coroutines = new Set(lines.flatMap((l) => /^CO-ROUTINE (\w+)$/.exec(l)?.[1] ?? []));
      const constants = (l: string) =>
        /^SCAN \d+-ROW VALUES CLAUSE$/.test(l) || coroutines.has(/^SCAN (\w+)$/.exec(l)?.[1] ?? '');
      assert.ok(
        !lines.some((l) => l.startsWith('SCAN') && !walks(l) && !constants(l)),
        `full scan:\n${text}`,
      );
      // A page after a cursor starts the index range at the cursor's key (a row-value bound in the
      // search), rather than filtering everything the equalities select: the same cost at any depth.
      if (o.keyed)
        assert.ok(
          lines.some((l) => search.test(l) && /\)[<>]\(/.test(l)),
          `the cursor's key does not bound the range:\n${text}`,
        );
      if (!o.sort) assert.ok(!/TEMP B-TREE/.test(text), `sort:\n${text}`);
    } else {
      const on = o.alias ? `${table} ${o.alias}` : table;
      const scan = o.covering ? 'Index Only Scan' : 'Index (Only )?Scan';
      assert.match(text, new RegExp(`${scan} (Backward )?using ${index} on ${on}\\b`), text);
      assert.doesNotMatch(text, /Seq Scan/, `full scan:\n${text}`);
      if (!o.sort) assert.doesNotMatch(text, /Sort|Bitmap/, `sort or unordered scan:\n${text}`);
      if (o.keyed)
        assert.match(text, /Index Cond: .*ROW\(/, `the cursor's key does not bound the range:\n${text}`);
    }
  }

  return { captured, plan, assertIndexed };
}

/**
 * The key of the middle row of everything a paged store function lists, as shapedPage reports it
 * (the last key of a page that ends there), and how many rows there are in all: the plan tests plan
 * a page that starts in the middle of a long walk.
 */
export async function middleKey(
  pageOf: (page: PageQuery) => Promise<Page<unknown>>,
): Promise<{ key: Key; rows: number }> {
  const rows = (await pageOf({ first: 1e6 })).rows.length;
  const half = await pageOf({ first: Math.floor(rows / 2) + 1 });
  assert.ok(half.ends, 'no rows to page through');
  return { key: half.ends.last, rows };
}

/** The game with the most clips: the longest listing by game, and the most clips to count. */
export async function gameWithMostClips(db: Kysely<Database>): Promise<number> {
  const top = await db
    .selectFrom('clips')
    .select((eb) => ['game_id', eb.fn.countAll().as('n')])
    .groupBy('game_id')
    .orderBy('n', 'desc')
    .executeTakeFirstOrThrow();
  return top.game_id;
}

/** Inserts `rows` into `table` 2,000 at a time: a platform's share of rows beside the demo data's. */
export async function insertRows<T extends keyof Database>(
  db: Kysely<Database>,
  table: T,
  rows: readonly Insertable<Database[T]>[],
): Promise<void> {
  for (let i = 0; i < rows.length; i += 2000)
    await db
      .insertInto(table)
      .values(rows.slice(i, i + 2000) as never)
      .execute();
}
