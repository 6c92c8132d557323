// EventSub's housekeeping in the store (docs/eventsub-design.md section 3, "Pruning"): the least
// outbox cursor anyone still reads from, the sweep of serving processes that stopped beating
// (their sessions ended as a client's close would end them), and the removal of subscriptions
// disabled long enough ago. Any serving process runs these; each is safe to run in several at once.
import type { Kysely } from 'kysely';
import { endSession } from './eventsub-sessions.ts';
import type { Database } from './schema.ts';

/**
 * The least outbox cursor still read from: of the processes seen at or after `seenSince` (their
 * tails) and of the sessions being handed over (the new owner resumes from theirs). Undefined when
 * no one reads: then no event is needed by a tail.
 */
export async function leastCursor(db: Kysely<Database>, seenSince: number): Promise<number | undefined> {
  const processes = await db
    .selectFrom('eventsub_processes')
    .select((eb) => eb.fn.min('cursor').as('least'))
    .where('seen_at', '>=', seenSince)
    .executeTakeFirst();
  const sessions = await db
    .selectFrom('eventsub_sessions')
    .select((eb) => eb.fn.min('cursor').as('least'))
    .where('status', '=', 'reconnecting')
    .executeTakeFirst();
  const found = [processes?.least, sessions?.least].filter((v) => v !== null && v !== undefined);
  return found.length ? Math.min(...found.map(Number)) : undefined;
}

/** The id of the last event recorded before `before` (Unix ms), if any is left. */
export async function lastEventBefore(db: Kysely<Database>, before: number): Promise<number | undefined> {
  const row = await db
    .selectFrom('events')
    .select((eb) => eb.fn.max('id').as('last'))
    .where('at', '<', before)
    .executeTakeFirst();
  return row?.last === null || row?.last === undefined ? undefined : Number(row.last);
}

/**
 * Sweeps the processes not seen since `seenBefore`, and those whose tail has not read through
 * `behindThrough` (an event about to be pruned by age: the process would miss it): their heartbeat
 * rows go, and so do the sessions no live process holds (owner gone or not seen since), each ended
 * with `websocket_disconnected` and `disabledAt` on its subscriptions. A swept process that is still
 * alive finds its row gone at its next heartbeat and closes its sockets (src/eventsub/service.ts).
 * A session being handed over whose reconnect window is still open is left for the instance the
 * client reconnects to. Returns how many processes and sessions went.
 */
export async function sweepProcesses(
  db: Kysely<Database>,
  seenBefore: number,
  disabledAt: number,
  behindThrough?: number,
): Promise<{ processes: number; sessions: number }> {
  const gone = await db
    .deleteFrom('eventsub_processes')
    .where((eb) =>
      behindThrough === undefined
        ? eb('seen_at', '<', seenBefore)
        : eb.or([eb('seen_at', '<', seenBefore), eb('cursor', '<', behindThrough)]),
    )
    .executeTakeFirst();
  const orphans = await db
    .selectFrom('eventsub_sessions')
    .select(['id', 'owner'])
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('eventsub_processes as p')
            .select('p.id')
            .whereRef('p.id', '=', 'eventsub_sessions.owner')
            .where('p.seen_at', '>=', seenBefore),
        ),
      ),
    )
    .where((eb) =>
      eb.or([
        eb('status', '=', 'connected'),
        eb('reconnect_until', 'is', null),
        eb('reconnect_until', '<', disabledAt),
      ]),
    )
    .execute();
  // Only while the lost process still owns it: a session claimed meanwhile by a reconnect lives on.
  for (const s of orphans)
    await endSession(db, s.id, 'websocket_disconnected', disabledAt, { owner: s.owner });
  return { processes: Number(gone.numDeletedRows), sessions: orphans.length };
}

/**
 * Deletes the subscriptions disabled before `before` (Helix lists a disabled one for a while, then
 * it goes), with any message still queued for them. Returns how many went.
 */
export async function deleteDisabledSubscriptions(db: Kysely<Database>, before: number): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const rows = await trx
      .selectFrom('eventsub_subscriptions')
      .select('id')
      .where('disabled_at', 'is not', null)
      .where('disabled_at', '<', before)
      .execute();
    if (rows.length === 0) return 0;
    const ids = rows.map((r) => r.id);
    await trx.deleteFrom('webhook_deliveries').where('subscription_id', 'in', ids).execute();
    await trx.deleteFrom('eventsub_subscriptions').where('id', 'in', ids).execute();
    return ids.length;
  });
}
