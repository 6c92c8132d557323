// EventSub WebSocket sessions (migration 015, docs/eventsub-design.md section 4): a session's row
// while its socket is open, the heartbeat row of each serving process, and the reads its delivery
// needs (a subscription by id, whether a user granted a scope).
import type { Insertable, Kysely, Selectable } from 'kysely';
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
): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    await trx.deleteFrom('eventsub_sessions').where('id', '=', id).execute();
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

/** Inserts or refreshes a serving process's heartbeat row: when it was seen, its tail's cursor. */
export async function beatProcess(
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

/** Deletes a process's heartbeat row (it stopped). */
export async function deleteProcess(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('eventsub_processes').where('id', '=', id).execute();
}
