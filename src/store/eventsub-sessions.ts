// EventSub WebSocket sessions (migration 015, docs/eventsub-design.md section 4): a session's row
// while its socket is open, the heartbeat row of each serving process, and the reads its delivery
// needs (subscriptions by id).
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Store } from './db.ts';
import { eventsCommitted, recordEvents } from './events.ts';
import type { Database, EventsubSessionsTable, EventsubSubscriptionsTable } from './schema.ts';

export type SessionRow = Selectable<EventsubSessionsTable>;

export async function insertSession(
  db: Kysely<Database>,
  row: Insertable<EventsubSessionsTable>,
): Promise<void> {
  await db.insertInto('eventsub_sessions').values(row).execute();
}

/**
 * Ends a session: its row goes, and its enabled subscriptions get `status` (a `websocket_*` one)
 * and `disabledAt`, in one transaction. The row is deleted first: on PostgreSQL that waits for a
 * subscription request that holds the row (its check of the session) to commit, and the update
 * after it (a statement of its own, with a snapshot of its own) then sees that subscription too.
 * Returns the ids of the subscriptions it disabled.
 */
export async function endSession(
  db: Kysely<Database>,
  id: string,
  status: string,
  disabledAt: number,
  /**
   * only while the row is still this process's (and, given, in this status): a socket closed after
   * its session was claimed by another connection ends nothing
   */
  guard?: { owner: string; status?: string },
): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    let del = trx.deleteFrom('eventsub_sessions').where('id', '=', id);
    if (guard) del = del.where('owner', '=', guard.owner);
    if (guard?.status) del = del.where('status', '=', guard.status);
    const deleted = await del.executeTakeFirst();
    if (guard && Number(deleted.numDeletedRows) === 0) return [];
    const rows = await trx
      .updateTable('eventsub_subscriptions')
      .set({ status, disabled_at: disabledAt })
      .where('session_id', '=', id)
      .where('status', '=', 'enabled')
      .returning('id')
      .execute();
    return rows.map((r) => r.id);
  });
}

/** The session's row, or undefined once it ended. */
export function sessionById(db: Kysely<Database>, id: string): Promise<SessionRow | undefined> {
  return db.selectFrom('eventsub_sessions').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Whether a subscription was ever made for the session: its row was bound to a client by the
 * first one, or a subscription names it (one deleted since counts: the session was used).
 */
export async function sessionWasUsed(db: Kysely<Database>, id: string): Promise<boolean> {
  const bound = await db
    .selectFrom('eventsub_sessions')
    .select('id')
    .where('id', '=', id)
    .where('client_id', 'is not', null)
    .executeTakeFirst();
  if (bound) return true;
  const named = await db
    .selectFrom('eventsub_subscriptions')
    .select('id')
    .where('session_id', '=', id)
    .limit(1)
    .executeTakeFirst();
  return named !== undefined;
}

/** A subscription's row by id, or undefined. */
export function subscriptionById(
  db: Kysely<Database>,
  id: string,
): Promise<Selectable<EventsubSubscriptionsTable> | undefined> {
  return db.selectFrom('eventsub_subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The most ids one `in` list of subscriptionsByIds holds (the tail's batch is 500 events). */
const IDS_A_QUERY = 500;

/**
 * The rows of the subscriptions `ids` names that exist, by id: one query (a probe of the primary
 * key per id) for a tail's batch, where subscriptionById would be one query per id.
 */
export async function subscriptionsByIds(
  db: Kysely<Database>,
  ids: readonly string[],
): Promise<Map<string, Selectable<EventsubSubscriptionsTable>>> {
  const unique = [...new Set(ids)];
  const found = new Map<string, Selectable<EventsubSubscriptionsTable>>();
  for (let i = 0; i < unique.length; i += IDS_A_QUERY) {
    const rows = await db
      .selectFrom('eventsub_subscriptions')
      .selectAll()
      .where('id', 'in', unique.slice(i, i + IDS_A_QUERY))
      .execute();
    for (const r of rows) found.set(r.id, r);
  }
  return found;
}

/** Inserts (or refreshes) a serving process's heartbeat row: when it was seen, its tail's cursor. */
export async function registerProcess(
  db: Kysely<Database>,
  id: string,
  seenAt: number,
  cursor: number,
): Promise<void> {
  await db
    .insertInto('eventsub_processes')
    .values({ id, seen_at: seenAt, cursor })
    .onConflict((oc) => oc.column('id').doUpdateSet({ seen_at: seenAt, cursor }))
    .execute();
}

/**
 * Refreshes a process's heartbeat row. False when it is gone: the process was swept as lost (not
 * seen for 30 s, or an hour behind, src/eventsub/housekeeping.ts), its sessions ended by the sweep.
 */
export async function beatProcess(
  db: Kysely<Database>,
  id: string,
  seenAt: number,
  cursor: number,
): Promise<boolean> {
  const res = await db
    .updateTable('eventsub_processes')
    .set({ seen_at: seenAt, cursor })
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Deletes a process's heartbeat row (it stopped). */
export async function deleteProcess(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('eventsub_processes').where('id', '=', id).execute();
}

// ---- Hand-over (docs/eventsub-design.md, section 4: Reconnect) ----

/**
 * Marks this process's session as being handed over: `reconnecting`, the hash of its reconnect
 * token valid until `until` (Unix ms), and `cursor`, the outbox id through which every event was
 * sent to it. False when the row is no longer this process's.
 */
export async function startReconnect(
  db: Kysely<Database>,
  id: string,
  owner: string,
  hash: string,
  until: number,
  cursor: number,
): Promise<boolean> {
  const res = await db
    .updateTable('eventsub_sessions')
    .set({ status: 'reconnecting', reconnect_hash: hash, reconnect_until: until, cursor })
    .where('id', '=', id)
    .where('owner', '=', owner)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/**
 * Claims the session whose reconnect token hashes to `hash`, for `owner`: one conditional update
 * (the hash matches, not expired at `now`, still reconnecting) that consumes the token, and in the
 * same transaction a `session.claimed` control row, which tells the old holder (on any process) to
 * close its socket. The claimed row, or undefined for an unknown, used or expired token.
 */
export async function claimSession(
  store: Store,
  hash: string,
  now: number,
  owner: string,
): Promise<SessionRow | undefined> {
  const row = await store.db.transaction().execute(async (trx) => {
    const claimed = await trx
      .updateTable('eventsub_sessions')
      .set({ owner, status: 'connected', reconnect_hash: null, reconnect_until: null })
      .where('reconnect_hash', '=', hash)
      .where('reconnect_until', '>', now)
      .where('status', '=', 'reconnecting')
      .returningAll()
      .executeTakeFirst();
    if (!claimed) return undefined;
    await recordEvents(
      trx,
      store.dialect,
      [
        {
          kind: 'control',
          type: 'session.claimed',
          match_key: `session:${claimed.id}`,
          payload: JSON.stringify({ owner }),
        },
      ],
      now,
    );
    return claimed;
  });
  if (row) eventsCommitted(store);
  return row && { ...row, cursor: Number(row.cursor), connected_at: Number(row.connected_at) };
}

/**
 * Records a command for the process holding session `id` (a `control` row keyed
 * `session:<id>`), when the session exists; false when it does not.
 */
export async function sessionCommand(
  store: Store,
  id: string,
  type: string,
  payload: object,
  at: number,
): Promise<boolean> {
  const found = await store.db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom('eventsub_sessions')
      .select('id')
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) return false;
    await recordEvents(
      trx,
      store.dialect,
      [{ kind: 'control', type, match_key: `session:${id}`, payload: JSON.stringify(payload) }],
      at,
    );
    return true;
  });
  if (found) eventsCommitted(store);
  return found;
}

/** Every session's row, oldest first (the admin API's list). */
export async function listSessions(db: Kysely<Database>): Promise<SessionRow[]> {
  return db.selectFrom('eventsub_sessions').selectAll().orderBy('connected_at').orderBy('id').execute();
}

/** The enabled subscriptions of a session (loaded by the process that claims it). */
export function enabledSubscriptionsOf(
  db: Kysely<Database>,
  sessionId: string,
): Promise<Selectable<EventsubSubscriptionsTable>[]> {
  return db
    .selectFrom('eventsub_subscriptions')
    .selectAll()
    .where('session_id', '=', sessionId)
    .where('status', '=', 'enabled')
    .execute();
}
