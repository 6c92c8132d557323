// EventSub subscriptions and what their checks read (docs/eventsub-design.md, section 2): the rows
// of eventsub_subscriptions (migration 015), the sessions they are bound to, the grants (user token
// rows) an authorization rests on, and the revocations the write path and the token service make.
// Which subscription is allowed, and why, is decided in src/eventsub/subscriptions.ts.
import type { ExpressionBuilder, Insertable, Kysely, Selectable, Transaction } from 'kysely';
import type { Dialect, Store } from './db.ts';
import { eventsCommitted, type NewEvent, recordEvents } from './events.ts';
import { type Page, type PageQuery, type ShapeValues, shapedPage } from './page.ts';
import type { Database, EventsubSessionsTable, EventsubSubscriptionsTable } from './schema.ts';
import { queueMessage } from './webhook-deliveries.ts';

export type EventsubSubscriptionRow = Selectable<EventsubSubscriptionsTable>;
export type EventsubSessionRow = Selectable<EventsubSessionsTable>;
export type NewEventsubSubscription = Insertable<EventsubSubscriptionsTable>;

/** The statuses of a subscription that is live: it counts against the limits and may be a duplicate. */
export const LIVE_STATUSES = ['enabled', 'webhook_callback_verification_pending'] as const;

/** The order of GET /eventsub/subscriptions: oldest first, ties by id. */
export const EVENTSUB_SUBSCRIPTIONS_ORDER = ['created_at', 'id'] as const;

/**
 * Whose subscriptions a listing or a limit covers: a client's webhook subscriptions (an app
 * token's), or the WebSocket subscriptions one user made for a client (a user token's). A WebSocket
 * subscription's `auth_user_id` is the user whose token made it: the session is that user's, and
 * the subscription rests on that user's authorization of the client.
 */
export type SubscriptionOwner =
  | { method: 'webhook'; clientId: string }
  | { method: 'websocket'; clientId: string; userId: number };

/** The filter of a listing (at most one, src/eventsub/subscriptions.ts checks). */
export type SubscriptionFilter =
  | { kind: 'status'; value: string }
  | { kind: 'type'; value: string }
  | { kind: 'user_id'; value: number }
  | { kind: 'subscription_id'; value: string }
  | undefined;

/**
 * The condition names user `userId` in one of its user fields (every one of them ends in
 * `user_id`). The condition is canonical JSON of strings of digits, so the value is delimited by
 * quotes: `"user_id":"12"` never matches 123.
 */
const namesUser = (userId: number) => `%user_id":"${userId}"%`;

/**
 * The owner and the filter as the SQL binds them: a shaped query's values (src/store/page.ts
 * shapedPage); the user filter as its LIKE pattern.
 */
function filterValues(owner: SubscriptionOwner, filter: SubscriptionFilter): ShapeValues {
  return {
    client: owner.clientId,
    method: owner.method,
    user: owner.method === 'websocket' ? owner.userId : undefined,
    status: filter?.kind === 'status' ? filter.value : undefined,
    type: filter?.kind === 'type' ? filter.value : undefined,
    id: filter?.kind === 'subscription_id' ? filter.value : undefined,
    condition: filter?.kind === 'user_id' ? namesUser(filter.value) : undefined,
  };
}

/** The subscriptions of the owner and filter of `v`; its values are put in as they are (they may be slots). */
function filteredBy(db: Kysely<Database>, v: ShapeValues) {
  let q = db
    .selectFrom('eventsub_subscriptions')
    .where('client_id', '=', v.client as string)
    .where('method', '=', v.method as SubscriptionOwner['method']);
  if (v.user !== undefined) q = q.where('auth_user_id', '=', v.user as number);
  if (v.status !== undefined) q = q.where('status', '=', v.status as string);
  if (v.type !== undefined) q = q.where('type', '=', v.type as string);
  if (v.id !== undefined) q = q.where('id', '=', v.id as string);
  if (v.condition !== undefined) q = q.where('condition', 'like', v.condition as string);
  return q;
}

const filtered = (db: Kysely<Database>, owner: SubscriptionOwner, filter: SubscriptionFilter) =>
  filteredBy(db, filterValues(owner, filter));

/** One page of the owner's subscriptions (disabled ones included), oldest first. */
export function subscriptionsPage(
  db: Kysely<Database>,
  owner: SubscriptionOwner,
  filter: SubscriptionFilter,
  page: PageQuery,
): Promise<Page<EventsubSubscriptionRow>> {
  return shapedPage(
    db,
    'eventsub subscriptions',
    filterValues(owner, filter),
    (v) => filteredBy(db, v).selectAll(),
    EVENTSUB_SUBSCRIPTIONS_ORDER,
    'asc',
    page,
  );
}

/** How many of the owner's subscriptions pass `filter`, disabled ones included. */
export async function countSubscriptions(
  db: Kysely<Database>,
  owner: SubscriptionOwner,
  filter: SubscriptionFilter,
): Promise<number> {
  const row = await filtered(db, owner, filter)
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** The owner's live subscriptions: how many, and their summed cost (what the limits count). */
export async function liveCost(
  db: Kysely<Database>,
  owner: SubscriptionOwner,
): Promise<{ count: number; cost: number }> {
  const row = await filtered(db, owner, undefined)
    .where('status', 'in', LIVE_STATUSES)
    .select((eb) => [eb.fn.countAll().as('n'), eb.fn.sum('cost').as('cost')])
    .executeTakeFirst();
  return { count: Number(row?.n ?? 0), cost: Number(row?.cost ?? 0) };
}

/** How many enabled subscriptions a session holds. */
export async function sessionSubscriptionCount(db: Kysely<Database>, sessionId: string): Promise<number> {
  const row = await db
    .selectFrom('eventsub_subscriptions')
    .where('session_id', '=', sessionId)
    .where('status', '=', 'enabled')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export function subscriptionById(
  db: Kysely<Database>,
  id: string,
): Promise<EventsubSubscriptionRow | undefined> {
  return db.selectFrom('eventsub_subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function insertSubscription(
  trx: Kysely<Database>,
  row: NewEventsubSubscription,
): Promise<EventsubSubscriptionRow> {
  await trx.insertInto('eventsub_subscriptions').values(row).execute();
  return {
    ...row,
    auth_user_id: row.auth_user_id ?? null,
    disabled_at: row.disabled_at ?? null,
  } as EventsubSubscriptionRow;
}

/** Deletes the subscription; false when no row had that id. */
export async function deleteSubscription(trx: Kysely<Database>, id: string): Promise<boolean> {
  // Its webhook messages go with it: nothing is sent for a subscription that no longer exists.
  await trx.deleteFrom('webhook_deliveries').where('subscription_id', '=', id).execute();
  const res = await trx.deleteFrom('eventsub_subscriptions').where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

// ---- Sessions ----

export function sessionById(db: Kysely<Database>, id: string): Promise<EventsubSessionRow | undefined> {
  return db.selectFrom('eventsub_sessions').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The connected_at (Unix ms) of each session among `ids` that exists. */
export async function sessionsConnectedAt(
  db: Kysely<Database>,
  ids: readonly string[],
): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('eventsub_sessions')
    .select(['id', 'connected_at'])
    .where('id', 'in', [...new Set(ids)])
    .execute();
  return new Map(rows.map((r) => [r.id, Number(r.connected_at)]));
}

/** The sessions bound to (client, user). */
export async function sessionsOf(db: Kysely<Database>, clientId: string, userId: number): Promise<number> {
  const row = await db
    .selectFrom('eventsub_sessions')
    .where('client_id', '=', clientId)
    .where('user_id', '=', userId)
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * Binds a session not yet bound to (client, user), by a conditional update: two first
 * subscriptions racing bind it once. False when it was bound already (to whomever).
 */
export async function bindSession(
  trx: Kysely<Database>,
  id: string,
  clientId: string,
  userId: number,
): Promise<boolean> {
  const res = await trx
    .updateTable('eventsub_sessions')
    .set({ client_id: clientId, user_id: userId })
    .where('id', '=', id)
    .where('client_id', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

// ---- Grants ----

/**
 * The scopes of each user token row of (client, user) that is not dead at `now` (Unix seconds): its
 * access token unexpired, or its refresh token unspent. Such a row is what an authorization of the
 * client by the user is in helixd (docs/eventsub-design.md, section 2). None: not authorized.
 */
export async function liveGrants(
  db: Kysely<Database>,
  clientId: string,
  userId: number,
  now: number,
): Promise<string[][]> {
  const rows = await db
    .selectFrom('tokens')
    .select('scopes')
    .where('client_id', '=', clientId)
    .where('kind', '=', 'user')
    .where('user_id', '=', userId)
    .where((eb) => alive(eb, now))
    .execute();
  return rows.map((r) => r.scopes.split(' ').filter(Boolean));
}

/** A token row not dead at `now` (Unix seconds): its access token unexpired, or its refresh token unspent. */
const alive = (eb: ExpressionBuilder<Database, 'tokens'>, now: number) =>
  eb.or([eb('expires_at', '>', now), eb('refresh_hash', 'is not', null)]);

/** Whether `userId` has granted `scope` to `clientId`: one of its live grants (liveGrants) lists it. */
export async function grantsScope(
  db: Kysely<Database>,
  clientId: string,
  userId: number,
  scope: string,
  now: number,
): Promise<boolean> {
  return (await liveGrants(db, clientId, userId, now)).some((scopes) => scopes.includes(scope));
}

/** The key of a (client, user) pair in the set grantingScope returns. */
export const grantKey = (clientId: string, userId: number) => `${clientId} ${userId}`;

/** The most users one query of grantingScope names. */
const USERS_A_QUERY = 500;

/**
 * Which of `pairs` (client, user) have granted `scope`, as grantsScope says of one: the grantKey of
 * each that has. One query for a tail's batch (the tokens of those clients and users, by
 * tokens_client_user), where grantsScope would be one query per pair.
 */
export async function grantingScope(
  db: Kysely<Database>,
  pairs: readonly { clientId: string; userId: number }[],
  scope: string,
  now: number,
): Promise<Set<string>> {
  const wanted = new Set(pairs.map((p) => grantKey(p.clientId, p.userId)));
  const clients = [...new Set(pairs.map((p) => p.clientId))];
  const users = [...new Set(pairs.map((p) => p.userId))];
  const granted = new Set<string>();
  for (let i = 0; i < users.length; i += USERS_A_QUERY) {
    const rows = await db
      .selectFrom('tokens')
      .select(['client_id', 'user_id', 'scopes'])
      .where('client_id', 'in', clients)
      .where('kind', '=', 'user')
      .where('user_id', 'in', users.slice(i, i + USERS_A_QUERY))
      .where((eb) => alive(eb, now))
      .execute();
    // The lists name every client with every user: only the pairs asked for count.
    for (const r of rows) {
      const key = grantKey(r.client_id, Number(r.user_id));
      if (wanted.has(key) && r.scopes.split(' ').includes(scope)) granted.add(key);
    }
  }
  return granted;
}

/** Which users exist among `ids`. */
export async function existingUsers(db: Kysely<Database>, ids: readonly number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('users').select('id').where('id', 'in', ids).execute();
  return new Set(rows.map((r) => Number(r.id)));
}

// ---- Revocation ----

/** Which live subscriptions a revocation disables. */
export type RevokeWhere =
  /** every one whose condition names the user, or that the user made (a user deleted) */
  | { namesUser: number }
  /** a client's that rest on the user's authorization (the user's last token of the client revoked) */
  | { clientId: string; authUserId: number }
  /** the channel.follow ones of the channel authorized through the moderator (a moderator removed) */
  | { followsOf: number; moderator: number }
  /** one subscription (the admin API's revocation) */
  | { id: string };

/** The control row that tells the session's process of a change of a WebSocket subscription. */
export const subscriptionControl = (
  command: 'subscription.enabled' | 'subscription.deleted' | 'subscription.revoked',
  sessionId: string,
  payload: object,
): NewEvent => ({
  kind: 'control',
  type: command,
  match_key: `session:${sessionId}`,
  payload: JSON.stringify(payload),
});

/**
 * Disables the live subscriptions `where` names with `status` (and `disabled_at` = `at`, Unix ms),
 * inside the caller's transaction, and records a `subscription.revoked` control row per WebSocket
 * subscription so that the process holding its session sends the revocation. Returns how many
 * control rows were recorded (the caller tells eventsCommitted after its commit when any were).
 */
export async function revokeSubscriptions(
  trx: Transaction<Database>,
  dialect: Dialect,
  where: RevokeWhere,
  status: string,
  at: number = Date.now(),
): Promise<number> {
  let q = trx
    .updateTable('eventsub_subscriptions')
    .set({ status, disabled_at: at })
    .where('status', 'in', LIVE_STATUSES);
  if ('namesUser' in where)
    q = q.where((eb) =>
      eb.or([eb('condition', 'like', namesUser(where.namesUser)), eb('auth_user_id', '=', where.namesUser)]),
    );
  else if ('id' in where) q = q.where('id', '=', where.id);
  else if ('clientId' in where)
    q = q.where('client_id', '=', where.clientId).where('auth_user_id', '=', where.authUserId);
  else
    q = q.where('type', '=', 'channel.follow').where(
      'condition',
      '=',
      // The canonical condition of channel.follow (the catalogue's field order).
      JSON.stringify({
        broadcaster_user_id: String(where.followsOf),
        moderator_user_id: String(where.moderator),
      }),
    );
  const revoked = await q.returning(['id', 'method', 'session_id']).execute();
  // A webhook is told by a revocation message, which replaces whatever it was still to be sent.
  for (const r of revoked)
    if (r.method === 'webhook') {
      await trx.deleteFrom('webhook_deliveries').where('subscription_id', '=', r.id).execute();
      await queueMessage(trx, r.id, 'revocation', at);
    }
  const controls = revoked
    .filter((r) => r.method === 'websocket' && r.session_id !== null)
    .map((r) =>
      subscriptionControl('subscription.revoked', r.session_id as string, { subscription_id: r.id, status }),
    );
  return (await recordEvents(trx, dialect, controls, at)).length;
}

/** How many subscriptions there are of each transport and status (one grouped query, for /metrics). */
export async function subscriptionCounts(
  db: Kysely<Database>,
): Promise<{ method: string; status: string; n: number }[]> {
  const rows = await db
    .selectFrom('eventsub_subscriptions')
    .select(['method', 'status', (eb) => eb.fn.countAll<number | string>().as('n')])
    .groupBy(['method', 'status'])
    .execute();
  return rows.map((r) => ({ method: r.method, status: r.status, n: Number(r.n) }));
}

/**
 * Revokes one subscription with `status` (the admin API): 'revoked', or why not: no such
 * subscription, or one already disabled.
 */
export async function revokeSubscription(
  store: Store,
  id: string,
  status: string,
  at: number = Date.now(),
): Promise<'revoked' | 'not_found' | 'disabled'> {
  const outcome = await store.db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom('eventsub_subscriptions')
      .select('status')
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) return { result: 'not_found' as const, controls: 0 };
    if (!(LIVE_STATUSES as readonly string[]).includes(row.status))
      return { result: 'disabled' as const, controls: 0 };
    const controls = await revokeSubscriptions(trx, store.dialect, { id }, status, at);
    return { result: 'revoked' as const, controls };
  });
  if (outcome.controls > 0) eventsCommitted(store);
  return outcome.result;
}
