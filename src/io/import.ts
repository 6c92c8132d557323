// `helixd import` and `serve --fixtures`: records go through the one write path
// (src/records/write.ts), in chunks, inside ONE transaction per input, so that a file is written
// whole or not at all, and the first refusal names the line (or fixture entry) and the field.
import type { Transaction } from 'kysely';
import {
  ImportedKeys,
  type PreparedRun,
  prepareRuns,
  type RecordInput,
  writeRuns,
} from '../records/index.ts';
import { analyzeDataTables, dropSecondaryIndexes, holdsData, runDdl, withLargeCache } from '../store/bulk.ts';
import type { Store } from '../store/db.ts';
import type { Database } from '../store/schema.ts';
import type { Items } from './input.ts';
import { type Summary, Tally } from './progress.ts';

/**
 * Items per call of the write path: large enough that its batched inserts and reference checks
 * pay off, small enough that a chunk's rows stay a few megabytes.
 */
export const CHUNK = 5_000;

/** Past this many rows PostgreSQL's planner statistics are refreshed before the commit. */
const ANALYZE_FROM = 10_000;

export interface ImportRun {
  tally?: Tally;
  /** runs in the import's transaction after the last record, before the commit */
  finish?: (trx: Transaction<Database>) => Promise<void>;
  /**
   * record the EventSub events the records cause (`helixd import --events`); default false: a bulk
   * load notifies no subscriber of old news, nor doubles its cost in outbox rows
   */
  events?: boolean;
}

/**
 * Writes every item, all or nothing; ids are kept as given ('create': an existing id is refused).
 *
 * Into a store that holds no data, an input of more than one chunk is loaded as the demo data is
 * (src/seed/index.ts): the secondary indexes are dropped inside the transaction and built once
 * from the loaded rows before the commit, a sort instead of a B-tree insert per row and index. The
 * write path's checks read primary keys and unique constraints only, which stay. Into a store
 * that holds data, rebuilding its indexes could cost more than the input, so rows go in with them.
 */
export async function importItems(
  store: Store,
  input: AsyncIterable<Prepared>,
  run: ImportRun = {},
): Promise<Summary> {
  const tally = run.tally ?? new Tally();
  const chunks = input[Symbol.asyncIterator]();
  try {
    await withLargeCache(store, () =>
      store.db.transaction().execute(async (trx) => {
        const intoEmpty = !(await holdsData(trx));
        // Into an empty store, what a reference may name is what this import wrote before it.
        const imported = intoEmpty ? new ImportedKeys() : undefined;
        let deferred: string[] | undefined;
        // The next chunk is read and prepared while the store works on this one (on PostgreSQL the
        // process would otherwise wait for the database with nothing to do). Only reading and the
        // checks of a record by itself run ahead: a chunk's checks against the store must see the
        // rows of the chunks before it.
        let next = chunks.next();
        for (let r = await next; !r.done; r = await next) {
          next = chunks.next();
          next.catch(() => {}); // an error ahead is thrown in its turn, after this chunk's
          const { runs, records, bytes } = r.value;
          if (intoEmpty && !deferred && records >= CHUNK)
            deferred = await dropSecondaryIndexes(trx, store.dialect);
          await writeRuns(store, runs, { mode: 'create', trx, imported, events: run.events ?? false });
          for (const { kind, wheres } of runs) tally.add(kind, wheres.length);
          tally.read(bytes);
        }
        if (deferred) await runDdl(trx, deferred);
        await run.finish?.(trx);
        if (tally.rows >= ANALYZE_FROM) await analyzeDataTables(trx, store.dialect);
      }),
    );
  } finally {
    // Not awaited: a read ahead may wait on an input that never ends (the caller closes it).
    chunks.return?.(undefined).catch(() => {});
    tally.stop();
  }
  return tally.summary();
}

/** A chunk of input's records, checked each by itself and made into runs for the store. */
export interface Prepared {
  runs: PreparedRun[];
  records: number;
  bytes: number;
}

/** The input's records in chunks of CHUNK, prepared in this thread (small inputs: fixtures). */
export async function* prepared(input: AsyncIterable<Items>): AsyncGenerator<Prepared> {
  for await (const { items, bytes } of inChunks(input))
    yield { runs: prepareRuns(items), records: items.length, bytes };
}

/** The input's records in chunks of CHUNK (the last one shorter), with the bytes they came from. */
async function* inChunks(input: AsyncIterable<Items>): AsyncGenerator<Items> {
  let items: RecordInput[] = [];
  let bytes = 0;
  for await (const batch of input) {
    for (const item of batch.items) {
      items.push(item);
      if (items.length >= CHUNK) {
        yield { items, bytes };
        items = [];
        bytes = 0;
      }
    }
    bytes += batch.bytes;
  }
  if (items.length) yield { items, bytes };
}
