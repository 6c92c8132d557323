// Walks that stay correct while the listings' order changes (docs/live.md).
//
// GET /streams orders by viewer_count and GET /games/top by summed viewers; both change while a
// walk goes on (the admin API, the live world). A plain keyset walk then repeats a row that moved
// from below its cursor to above it, and skips one that moved the other way. So a walk sees every
// row at its values as of the walk's first page, its epoch E (the last move logged then):
//
//   key_E(row) = the values logged by the row's first move after E (migration 013 logs a row's
//                values BEFORE each change), or its current values when it has not moved since E.
//
// key_E of a row never changes during the walk: until the row first moves after E its current
// values are its values as of E, and that first move logs exactly them. A page after a cursor is
// the rows after the cursor in key_E order, read in two statements:
//   1. the rows that have not moved since E, in the listing's own index order, from the cursor (the
//      same range as without moves, each row's "moved since E?" one probe of the log's index);
//   2. the rows that have moved since E, at their logged values: the log's entries after E, each
//      kept if it is its row's first (one probe), then sorted (the moves of one walk's lifetime).
// Their first `first` + 1 rows together, merged by key_E, are the page. A row that moves between
// the two statements is in both, at the same key_E: kept once. Run the other way round, such a row
// would be in neither. A row that went away (a stream offline) is in neither: a removal. A row new
// since E (a stream gone live) is listed at its values, as an insertion is.
//
// The first page reads E in the same statement as its rows (a subquery), so both are one snapshot;
// the first statement of a later page reads the last move logged the same way, and the second
// statement is skipped when nothing was logged after E (a store where nothing moves).
// A cursor carries E (src/http/cursor.ts); E = 0 (no move logged yet) is left out of it.
import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type { Dialect } from './db.ts';
import {
  type Direction,
  type Key,
  type Page,
  type PageQuery,
  type ShapeValues,
  shapedKeysetRows,
} from './page.ts';
import type { Database } from './schema.ts';

export type MovesTable = 'stream_moves' | 'game_moves';

/**
 * How long moves are kept, seconds: a walk whose pages all come within this time of its first one
 * lists every row present throughout it once. A later page is still a keyset page, in the order
 * of the moves still kept.
 */
export const MOVES_KEPT_SECONDS = 15 * 60;

/** The listing's epoch as a column of the first page's statement: the last move logged, or 0. */
export function epochColumn(table: MovesTable) {
  return sql<number>`(select coalesce(max(seq), 0) from ${sql.table(table)})`.as('walk_epoch');
}

/**
 * The row (`idRef` its id) has not moved since `epoch`: no log entry of it after the epoch, one
 * probe of the log's (id, seq) index per row. On PostgreSQL written as `(select 1 where not exists
 * ...) is not null`, for its planner: it takes an IS NOT NULL it cannot estimate to keep nearly
 * every row, as is the truth here (few rows move during a walk), where it takes a comparison to
 * keep a third of them and would then sort a small range rather than walk the listing's index in
 * order; and a bare NOT EXISTS it would plan as a join over the whole log. SQLite runs a NOT EXISTS
 * as the probe it is.
 */
export function unmovedSince(
  table: MovesTable,
  idColumn: string,
  idRef: string,
  epoch: number,
  dialect: Dialect,
) {
  const moved = sql`select 1 from ${sql.table(table)} m where m.${sql.ref(idColumn)} = ${sql.ref(idRef)} and m.seq > ${epoch}`;
  // Nothing logged after the epoch (a store where nothing moved during the walk, as most are):
  // the log's last entry, read once for the statement, answers for every row, and the probes are
  // not made (both stores stop an OR at its first true operand).
  const stillSince = sql`(select coalesce(max(seq), 0) from ${sql.table(table)}) <= ${epoch}`;
  return dialect === 'sqlite'
    ? sql<boolean>`(${stillSince} or not exists (${moved}))`
    : sql<boolean>`(${stillSince} or (select 1 where not exists (${moved})) is not null)`;
}

/** The log entry `m` is its row's first move after `epoch` (to be said with `m.seq > epoch`). */
export function firstMoveAfter(table: MovesTable, idColumn: string, epoch: number) {
  return sql<boolean>`m.seq = (select min(f.seq) from ${sql.table(table)} f where f.${sql.ref(idColumn)} = m.${sql.ref(idColumn)} and f.seq > ${epoch})`;
}

/** A row's key in its listing: the values of `fields`, then the id. */
function keyOf(row: Record<string, unknown>, fields: readonly string[]): Key {
  return fields.map((f) => row[f] as string | number);
}

/** -1, 0, 1: a before b in the direction of travel. */
function compareKeys(a: Key, b: Key, descending: boolean): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as string | number;
    const y = b[i] as string | number;
    if (x !== y) return (x < y ? -1 : 1) * (descending ? -1 : 1);
  }
  return 0;
}

export interface MovedWalk<R> {
  /** the listing's name and the values its statements bind (src/store/page.ts shapedRows) */
  name: string;
  values: ShapeValues;
  /** the rows not moved since the epoch, at their values, each with epochColumn (statement 1) */
  unmoved: (slots: ShapeValues) => SelectQueryBuilder<Database, never, R>;
  /** the rows moved since the epoch, at their values as of it (statement 2), run only when needed */
  moved: (slots: ShapeValues) => SelectQueryBuilder<Database, never, R>;
  /** each statement's ordering columns (its sort columns, then the id) */
  unmovedColumns: readonly string[];
  movedColumns: readonly string[];
  /** the names the rows carry those values under, the same in both */
  fields: readonly string[];
}

/** One page of a walk of epoch `page.epoch` (a page after or before a cursor; see the top). */
export async function movedKeysetPage<R>(
  db: Kysely<Database>,
  walk: MovedWalk<R>,
  direction: Direction,
  page: PageQuery,
): Promise<Page<R>> {
  // Both statements built once per shape (src/store/page.ts shapedKeysetRows).
  const rowsOf = (part: 'unmoved' | 'moved', columns: readonly string[]) =>
    shapedKeysetRows(db, `${walk.name}, ${part}`, walk.values, walk[part], columns, direction, page);
  const unmoved = await rowsOf('unmoved', walk.unmovedColumns);
  // Nothing logged after the epoch when the first statement ran: no row it left out has moved,
  // and a row that moves later was in it at its walk's values. The second statement (a round
  // trip, most of a page's cost on PostgreSQL) is needed only when something moved.
  const moved =
    unmoved.length > 0 && epochOfRows(unmoved) <= (page.epoch ?? 0)
      ? []
      : await rowsOf('moved', walk.movedColumns);
  const backward = page.before !== undefined;
  // Nothing moved: the first statement's rows are the page, already in the order of travel (as
  // shapedPage reads them), and need no merge.
  if (moved.length === 0) {
    const hasMore = unmoved.length > page.first;
    const rows = unmoved.slice(0, page.first);
    if (backward) rows.reverse();
    return endsOf(rows, hasMore, walk.fields, page.epoch);
  }
  const travelDescending = (direction === 'desc') !== backward;
  const byId = new Map<string | number, { row: R; key: Key }>();
  for (const row of [...unmoved, ...moved]) {
    const key = keyOf(row as Record<string, unknown>, walk.fields);
    byId.set(key[key.length - 1] as string | number, { row, key });
  }
  const merged = [...byId.values()].sort((a, b) => compareKeys(a.key, b.key, travelDescending));
  const hasMore = merged.length > page.first;
  const rows = merged.slice(0, page.first).map((k) => k.row);
  if (backward) rows.reverse();
  return endsOf(rows, hasMore, walk.fields, page.epoch);
}

/**
 * One page of a walk whose every candidate row is in hand (GET /streams/followed from the user's
 * follows, src/store/streams.ts): `rows` are all the rows the listing could show, in no order, each
 * at its key_E (for a page after a cursor: the unmoved rows at their values and the moved ones at
 * their values as of the epoch, a row in both kept at the latter, as movedKeysetPage merges them).
 * Ordered and cut here: a set bounded by the user's follows, never a sort in a statement.
 */
export function pageInHand<R>(
  rows: readonly R[],
  fields: readonly string[],
  direction: Direction,
  page: PageQuery,
  epoch: number | undefined,
): Page<R> {
  const byId = new Map<string | number, { row: R; key: Key }>();
  for (const row of rows) {
    const key = keyOf(row as Record<string, unknown>, fields);
    byId.set(key[key.length - 1] as string | number, { row, key });
  }
  const descending = direction === 'desc';
  const sorted = [...byId.values()].sort((a, b) => compareKeys(a.key, b.key, descending));
  const { after, before } = page;
  // The rows strictly after `after` and strictly before `before`, in the listing's order.
  const inRange = sorted.filter(
    (k) =>
      (after === undefined || compareKeys(k.key, after, descending) > 0) &&
      (before === undefined || compareKeys(k.key, before, descending) < 0),
  );
  const hasMore = inRange.length > page.first;
  // Backward (before a cursor): the `first` rows nearest to it.
  const taken =
    before !== undefined
      ? inRange.slice(Math.max(0, inRange.length - page.first))
      : inRange.slice(0, page.first);
  return endsOf(
    taken.map((k) => k.row),
    hasMore,
    fields,
    epoch,
  );
}

/** A page of `rows` (in the listing's order), its ends their keys. */
function endsOf<R>(
  rows: R[],
  hasMore: boolean,
  fields: readonly string[],
  epoch: number | undefined,
): Page<R> {
  const first = rows[0];
  const last = rows[rows.length - 1];
  if (first === undefined || last === undefined) return { rows, hasMore, epoch };
  const key = (row: R) => keyOf(row as Record<string, unknown>, fields);
  return { rows, hasMore, ends: { first: key(first), last: key(last) }, epoch };
}

/** The epoch a first page's rows read with epochColumn (0 for an empty page, which has no cursor). */
export function epochOfRows(rows: readonly unknown[]): number {
  const e = (rows[0] as { walk_epoch?: number | string } | undefined)?.walk_epoch;
  return e === undefined ? 0 : Number(e);
}

/**
 * Forgets the moves older than MOVES_KEPT_SECONDS (by the database's clock, which logged them):
 * the live world does after its events, and the server at its start.
 */
export async function forgetMoves(db: Kysely<Database>, dialect: Dialect): Promise<void> {
  const cutoff =
    dialect === 'postgres'
      ? sql<number>`floor(extract(epoch from now()))::bigint - ${MOVES_KEPT_SECONDS}`
      : sql<number>`cast(strftime('%s', 'now') as integer) - ${MOVES_KEPT_SECONDS}`;
  for (const table of ['stream_moves', 'game_moves'] as const)
    await db.deleteFrom(table).where('at', '<', cutoff).execute();
}

/**
 * Forgets every move: a bulk load that writes a whole listing at once (the demo data's recount)
 * before any walk of it exists.
 */
export async function forgetAllMoves(db: Kysely<Database>): Promise<void> {
  for (const table of ['stream_moves', 'game_moves'] as const) await db.deleteFrom(table).execute();
}
