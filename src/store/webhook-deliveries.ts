// Webhook messages waiting to be sent (migration 015): queued in the transaction that records an
// event (src/store/events.ts) or changes a subscription, claimed by one process at a time, and
// deleted once sent (src/eventsub/webhooks.ts).

import type { Selectable } from 'kysely';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Dialect } from './db.ts';
import type { Database, EventsubSubscriptionsTable, WebhookDeliveriesTable } from './schema.ts';

export type Delivery = Omit<WebhookDeliveriesTable, 'id'> & { id: number };

/** A claimed delivery with what sending it needs: its subscription and, for a notification, its event. */
export interface ClaimedDelivery extends Delivery {
  subscription: Selectable<EventsubSubscriptionsTable>;
  /** the event's payload (JSON text) of a notification */
  payload: string | null;
  /** when the event of a notification was recorded (Unix ms) */
  event_at: number | null;
}

/**
 * Queues a notification of each of `eventIds` for every enabled webhook subscription that matches
 * it, in event order, in the transaction that recorded them: a subscription is fanned out to when
 * its event commits, whichever process later sends it.
 */
export async function queueNotifications(
  trx: Transaction<Database>,
  eventIds: readonly number[],
  at: number,
): Promise<void> {
  if (eventIds.length === 0) return;
  await trx
    .insertInto('webhook_deliveries')
    .columns(['subscription_id', 'kind', 'event_id', 'attempts', 'due_at'])
    .expression((eb) =>
      eb
        .selectFrom('events as e')
        .innerJoin('eventsub_subscriptions as s', 's.match_key', 'e.match_key')
        .select([
          's.id',
          sql.lit('notification').as('kind'),
          'e.id as event_id',
          sql.lit(0).as('attempts'),
          sql.lit(at).as('due_at'),
        ])
        .where('e.id', 'in', eventIds)
        .where('e.kind', '=', 'event')
        .where('s.method', '=', 'webhook')
        .where('s.status', '=', 'enabled')
        .orderBy('e.id')
        .orderBy('s.id'),
    )
    .execute();
}

/** Queues a verification (with its challenge) or a revocation of one subscription. */
export async function queueMessage(
  db: Kysely<Database>,
  subscriptionId: string,
  kind: 'verification' | 'revocation',
  at: number,
  challenge: string | null = null,
): Promise<void> {
  await db
    .insertInto('webhook_deliveries')
    .values({ subscription_id: subscriptionId, kind, event_id: null, challenge, attempts: 0, due_at: at })
    .execute();
}

/**
 * Claims up to `limit` deliveries due at `now` for `owner` until `leaseUntil`, each the earliest
 * pending one of its subscription (a subscription's messages go in order, one at a time), and
 * returns them with their subscription and event. PostgreSQL: the candidates are locked with SKIP
 * LOCKED, so processes claiming at once take different rows and none waits; SQLite: one writer at
 * a time makes the update atomic. The claim commits before any is sent: no lock is held over HTTP.
 */
export async function claimDeliveries(
  db: Kysely<Database>,
  dialect: Dialect,
  owner: string,
  now: number,
  leaseUntil: number,
  limit: number,
): Promise<ClaimedDelivery[]> {
  const claimed = await db.transaction().execute(async (trx) => {
    let candidates = trx
      .selectFrom('webhook_deliveries as d')
      .select('d.id')
      .where('d.due_at', '<=', now)
      .where((eb) => eb.or([eb('d.claimed_until', 'is', null), eb('d.claimed_until', '<', now)]))
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('webhook_deliveries as e')
              .select('e.id')
              .whereRef('e.subscription_id', '=', 'd.subscription_id')
              .whereRef('e.id', '<', 'd.id'),
          ),
        ),
      )
      .orderBy('d.id')
      .limit(limit);
    if (dialect === 'postgres') candidates = candidates.forUpdate().skipLocked();
    const ids = (await candidates.execute()).map((r) => Number(r.id));
    if (ids.length === 0) return [];
    return trx
      .updateTable('webhook_deliveries')
      .set({ claimed_by: owner, claimed_until: leaseUntil })
      .where('id', 'in', ids)
      .returningAll()
      .execute();
  });
  if (claimed.length === 0) return [];
  const subs = await db
    .selectFrom('eventsub_subscriptions')
    .selectAll()
    .where(
      'id',
      'in',
      claimed.map((d) => d.subscription_id),
    )
    .execute();
  const eventIds = claimed.flatMap((d) => (d.event_id === null ? [] : [Number(d.event_id)]));
  const events = eventIds.length
    ? await db.selectFrom('events').select(['id', 'payload', 'at']).where('id', 'in', eventIds).execute()
    : [];
  const bySub = new Map(subs.map((s) => [s.id, s]));
  const byEvent = new Map(events.map((e) => [Number(e.id), e]));
  const out: ClaimedDelivery[] = [];
  for (const d of claimed.sort((a, b) => Number(a.id) - Number(b.id))) {
    const subscription = bySub.get(d.subscription_id);
    // A subscription deleted after its message was queued: the message goes with it.
    if (!subscription) continue;
    out.push({
      ...d,
      id: Number(d.id),
      event_id: d.event_id === null ? null : Number(d.event_id),
      due_at: Number(d.due_at),
      subscription,
      payload: d.event_id === null ? null : (byEvent.get(Number(d.event_id))?.payload ?? null),
      event_at: d.event_id === null ? null : Number(byEvent.get(Number(d.event_id))?.at ?? Date.now()),
    });
  }
  return out;
}

/** A delivery sent: it goes. */
export async function deleteDelivery(db: Kysely<Database>, id: number): Promise<void> {
  await db.deleteFrom('webhook_deliveries').where('id', '=', id).execute();
}

/** A failed attempt: counted, and due again at `dueAt`, unclaimed. */
export async function retryDelivery(db: Kysely<Database>, id: number, dueAt: number): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set((eb) => ({ attempts: eb('attempts', '+', 1), due_at: dueAt, claimed_by: null, claimed_until: null }))
    .where('id', '=', id)
    .execute();
}

/** The earliest time a delivery is due (Unix ms), or undefined when none waits. */
export async function nextDue(db: Kysely<Database>): Promise<number | undefined> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.min('due_at').as('due'))
    .executeTakeFirst();
  return row?.due === null || row?.due === undefined ? undefined : Number(row.due);
}

/**
 * Ends a webhook subscription with `status` (a failed verification, too many failed
 * notifications): its pending messages go, and a revocation is queued unless `revocation` is false.
 */
export async function disableWebhook(
  db: Kysely<Database>,
  subscriptionId: string,
  status: string,
  now: number,
  revocation: boolean,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .updateTable('eventsub_subscriptions')
      .set({ status, disabled_at: now })
      .where('id', '=', subscriptionId)
      .execute();
    await trx.deleteFrom('webhook_deliveries').where('subscription_id', '=', subscriptionId).execute();
    if (revocation) await queueMessage(trx, subscriptionId, 'revocation', now);
  });
}

/** A verified subscription starts receiving events. */
export async function enableWebhook(db: Kysely<Database>, subscriptionId: string): Promise<void> {
  await db
    .updateTable('eventsub_subscriptions')
    .set({ status: 'enabled' })
    .where('id', '=', subscriptionId)
    .where('status', '=', 'webhook_callback_verification_pending')
    .execute();
}
