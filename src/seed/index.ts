import {
  analyzeDataTables,
  dropSecondaryIndexes,
  dropTriggers,
  emptyDataTables,
  inserter,
  isEmpty,
  runDdl,
  withBulkLoad,
} from '../store/bulk.ts';
import type { Store } from '../store/db.ts';
import { recountLiveGames } from '../store/games.ts';
import type { Database } from '../store/schema.ts';
import { getSetting, setSetting } from '../store/settings.ts';
import { recountTotals } from '../store/subscriptions.ts';
import { mergeCounts, type SeedOptions, type SeedSummary } from './generate.ts';
import { type SideWriter, startSideWriter } from './side.ts';
import { generateChunks } from './worker.ts';

export class StoreNotEmptyError extends Error {}

/** What the store records about the demo data it was seeded with. */
export interface SeedInfo extends SeedOptions {
  demoUserId: number;
  demoLogin: string;
  demoClientId: string;
}

export async function readSeedInfo(store: Store): Promise<SeedInfo | undefined> {
  const v = await getSetting(store.db, 'seed');
  return v ? (JSON.parse(v) as SeedInfo) : undefined;
}

export interface SeedRun {
  force?: boolean;
  onProgress?: (table: keyof Database, rows: number) => void;
  /**
   * 2: rows are generated in a worker thread while this one writes (src/seed/worker.ts), and into an
   * SQLite file the side tables are written by another (src/seed/side.ts); default 2 from 10,000 users
   */
  threads?: 1 | 2;
}

/**
 * Writes the demo data set into `store` in one transaction: all or nothing. A store that already
 * holds users or clients is refused unless `force`, which first empties every data table.
 *
 * Speed: the secondary indexes of the data tables are dropped inside the transaction and built
 * again, from their own definitions, once the rows are in. Building an index from loaded rows is a
 * sort; keeping it up to date row by row is a random B-tree insert per row, which for a million
 * clips in random key order is most of the time. So are the subscriptions' triggers, which would
 * upsert a broadcaster's totals once per row (SQLite) or per chunk (PostgreSQL): the totals are
 * counted once, with one grouped statement, after the rows are in (`recountTotals`).
 *
 * With 2 threads into an SQLite file, the side tables are written by a third thread into a side
 * file and copied in once the other tables are written (src/seed/side.ts).
 */
export async function seedStore(store: Store, o: SeedOptions, run: SeedRun = {}): Promise<SeedSummary> {
  if (!(await isEmpty(store))) {
    if (!run.force) throw new StoreNotEmptyError('the store already holds data; use --force to replace it');
  }
  const threads = run.threads ?? (o.users >= 10_000 ? 2 : 1);
  let side: SideWriter | undefined;
  try {
    return await withBulkLoad(store, () =>
      store.db.transaction().execute(async (trx) => {
        const triggers = await dropTriggers(trx, store.dialect, 'subscriptions');
        if (run.force) await emptyDataTables(trx);
        if (threads === 2 && store.dialect === 'sqlite') side = await startSideWriter(trx, o);
        const deferred = await dropSecondaryIndexes(trx, store.dialect);
        const insert = inserter(trx, store.dialect);
        const summary = await generateChunks(
          o,
          threads,
          async (chunk) => {
            await insert(chunk);
            run.onProgress?.(chunk.table, chunk.rows);
          },
          side ? 'main' : 'all',
        );
        await runDdl(trx, side ? deferred.filter((ddl) => !side?.indexes.has(ddl)) : deferred);
        if (side) summary.counts = mergeCounts(summary.counts, await side.copyInto(trx, run.onProgress));
        await recountTotals(trx, store.dialect);
        await runDdl(trx, triggers);
        // The generator's games carry counts of their own, and the streams' triggers added theirs.
        await recountLiveGames(trx);
        const info: SeedInfo = {
          ...o,
          demoUserId: summary.demoUserId,
          demoLogin: summary.demoLogin,
          demoClientId: summary.demoClientId,
        };
        await setSetting(trx, 'seed', JSON.stringify(info));
        await analyzeDataTables(trx, store.dialect);
        return summary;
      }),
    );
  } finally {
    await side?.close(store.db);
  }
}
