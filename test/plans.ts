// Reading query plans in tests: the SQL a store function runs, and the plan each store makes of it.
import { CompiledQuery, type Kysely, type KyselyPlugin, type RootOperationNode } from 'kysely';
import type { Database } from '../src/store/schema.ts';
import type { StoreKind } from './helpers.ts';

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
