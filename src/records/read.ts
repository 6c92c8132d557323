// The read path of records: a kind's records in primary-key order, each exactly the object the
// write path accepts, so that what is read can be written back unchanged (export -> import).
import type { Store } from '../store/db.ts';
import type { Key } from '../store/page.ts';
import { rowsInKeyOrder } from '../store/records.ts';
import { type RecordKind, recordKind } from './kinds.ts';

export interface RecordPage {
  records: object[];
  /** the key of the last record, to read on from; absent when no record follows */
  next?: Key;
}

/** One page of `kind`'s records after the key `after` (one of `next`). */
export async function readRecordPage(
  store: Store,
  kind: RecordKind,
  page: { first: number; after?: Key },
): Promise<RecordPage> {
  const p = await rowsInKeyOrder(store.db, kind.table, kind.order, page);
  return {
    records: p.rows.map((r) => kind.fromRow(r)),
    ...(p.hasMore && p.ends ? { next: p.ends.last } : {}),
  };
}

/** Rows read per query by `readRecords`. */
const READ_CHUNK = 2000;

/**
 * Every record of the kind named `kindName`, in primary-key order, read a chunk at a time.
 * `after`: a JSON key as `readRecordPage` gives it (`JSON.stringify(next)`), to start after;
 * `first`: stop after this many.
 */
export async function* readRecords(
  store: Store,
  kindName: string,
  opts: { after?: string; first?: number } = {},
): AsyncIterable<object> {
  const kind = recordKind(kindName);
  if (!kind) throw new Error(`unknown record kind ${JSON.stringify(kindName)}`);
  let after = opts.after === undefined ? undefined : (JSON.parse(opts.after) as Key);
  let left = opts.first ?? Number.POSITIVE_INFINITY;
  while (left > 0) {
    const page = await readRecordPage(store, kind, { first: Math.min(READ_CHUNK, left), after });
    for (const r of page.records) yield r;
    left -= page.records.length;
    if (!page.next) return;
    after = page.next;
  }
}
