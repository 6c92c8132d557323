// EventSub's outbox (migration 015, docs/eventsub-design.md): the events the write path records in
// the transaction of each write, read back in id order by every serving process.
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Dialect, Store } from './db.ts';
import type { Database, EventsTable } from './schema.ts';
import { queueNotifications } from './webhook-deliveries.ts';

export type EventRow = Omit<EventsTable, 'id'> & { id: number };
export type NewEvent = Pick<EventsTable, 'kind' | 'type' | 'match_key' | 'payload'>;

/**
 * The advisory lock key of transactions that record events: "events", any fixed number. On
 * PostgreSQL every such transaction takes it before its first insert into `events` and holds it
 * to its end, so ids become visible in their order (a tail reading `id > cursor` never skips a
 * late commit). A transaction that also writes streams takes MOVES_LOCK first (src/records/write.ts):
 * one order, no deadlock. SQLite has one writer at a time already.
 */
const EVENTS_LOCK = 0x6576656e7473;

/** Events inserted by one statement: five values each. */
const EVENTS_PER_STATEMENT = 1000;

/** The channel PostgreSQL notifies at the commit of a transaction that recorded events. */
export const EVENTS_CHANNEL = 'helixd_events';

/** Takes EVENTS_LOCK (PostgreSQL); call before reading what the events' order depends on. */
export async function lockEvents(trx: Transaction<Database>, dialect: Dialect): Promise<void> {
  if (dialect === 'postgres') await sql`select pg_advisory_xact_lock(${EVENTS_LOCK})`.execute(trx);
}

/**
 * Records `events` in order inside `trx` and returns their ids. On PostgreSQL it takes EVENTS_LOCK
 * and queues a notification that is sent at commit, and only then (a rolled-back write wakes no
 * one, and records nothing).
 */
export async function recordEvents(
  trx: Transaction<Database>,
  dialect: Dialect,
  events: readonly NewEvent[],
  at: number,
): Promise<number[]> {
  if (events.length === 0) return [];
  await lockEvents(trx, dialect);
  const ids: number[] = [];
  // A write of thousands of records (an admin array) makes thousands of events: one statement a
  // chunk stays under both stores' limit of bound values (SQLite's 32,766; PostgreSQL's 65,535).
  for (let i = 0; i < events.length; i += EVENTS_PER_STATEMENT) {
    const rows = await trx
      .insertInto('events')
      .values(events.slice(i, i + EVENTS_PER_STATEMENT).map((e) => ({ ...e, at })))
      .returning('id')
      .execute();
    const chunk = rows.map((r) => Number(r.id));
    await queueNotifications(trx, chunk, at);
    ids.push(...chunk);
  }
  if (dialect === 'postgres') await sql`select pg_notify(${EVENTS_CHANNEL}, '')`.execute(trx);
  return ids;
}

/** The events after `cursor`, in order, at most `limit`. */
export async function eventsAfter(db: Kysely<Database>, cursor: number, limit: number): Promise<EventRow[]> {
  const rows = await db
    .selectFrom('events')
    .selectAll()
    .where('id', '>', cursor)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ ...r, id: Number(r.id), at: Number(r.at) }));
}

/** The id of the last event recorded (0 when none ever was, or every one was pruned). */
export async function lastEventId(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('events')
    .select((eb) => eb.fn.max('id').as('last'))
    .executeTakeFirst();
  return Number(row?.last ?? 0);
}

/**
 * Deletes the events at or below `throughId` recorded before `before` (Unix ms); how many went.
 * An event a queued webhook message still needs stays (a notification's body is made from it at
 * each attempt, src/eventsub/webhooks.ts), and so does every later one: the bound is one read of
 * the earliest such event, not a lookup per event.
 */
export async function pruneEvents(db: Kysely<Database>, throughId: number, before: number): Promise<number> {
  const queued = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.min('event_id').as('first'))
    .where('event_id', 'is not', null)
    .executeTakeFirst();
  const first = queued?.first;
  const through = first === null || first === undefined ? throughId : Math.min(throughId, Number(first) - 1);
  const res = await db
    .deleteFrom('events')
    .where('id', '<=', through)
    .where('at', '<', before)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

// A process's own commits do not move SQLite's data_version on its connection, and a PostgreSQL
// notification may come later than the commit's return: the write path says here that it
// committed events, and the process's tail (src/eventsub/) wakes at once.
const committedListeners = new WeakMap<Store, Set<() => void>>();

/** Calls `listener` whenever this process commits events to `store`; returns what stops it. */
export function onEventsCommitted(store: Store, listener: () => void): () => void {
  const set = committedListeners.get(store) ?? new Set();
  committedListeners.set(store, set);
  set.add(listener);
  return () => void set.delete(listener);
}

/** Tells this process's listeners that a transaction that recorded events on `store` committed. */
export function eventsCommitted(store: Store): void {
  for (const l of committedListeners.get(store) ?? []) l();
}
