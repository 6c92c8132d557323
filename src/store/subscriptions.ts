import { type Kysely, type SelectQueryBuilder, SqliteAdapter, sql } from 'kysely';
import type { Dialect } from './db.ts';
import { fillTotals } from './migrations/004_subscription_totals.ts';
import { type Page, type PageQuery, shapedPage } from './page.ts';
import type { Database, SubscriptionRow, Tier } from './schema.ts';

/** Subscription points per tier (docs/api.md: Tier 1 = 1, Tier 2 = 2, Tier 3 = 6); migration 004 sums them. */
export const TIER_POINTS: Readonly<Record<Tier, number>> = { '1000': 1, '2000': 2, '3000': 6 };

/**
 * The order of /subscriptions: most recent first, ties by subscriber id, higher first. With the
 * broadcaster fixed it is the index subscriptions_broadcaster_time read backward.
 */
export const SUBSCRIPTIONS_ORDER = ['subscriptions.created_at', 'subscriptions.user_id'] as const;

/** A subscription; with `names`, also its subscriber's and gifter's (null: no such user). */
export type ListedSubscription = SubscriptionRow & {
  user_login?: string | null;
  user_name?: string | null;
  gifter_login?: string | null;
  gifter_name?: string | null;
};

/**
 * The broadcaster's subscriptions. With `names` the subscriber's and gifter's names are joined in:
 * where no in-memory copy of user names exists (PostgreSQL, src/store/users.ts) that is one round
 * trip instead of two; where one exists (SQLite) the rows come alone and the names from the copy.
 */
function ofBroadcaster(
  db: Kysely<Database>,
  broadcasterId: number,
  names: boolean,
  userIds?: readonly number[],
): SelectQueryBuilder<Database, 'subscriptions', ListedSubscription> {
  let rows = db.selectFrom('subscriptions').selectAll('subscriptions');
  if (userIds !== undefined && db.getExecutor().adapter instanceof SqliteAdapter) {
    // Given users, on SQLite: as (broadcaster, user) pairs, which only the primary key serves. For
    // `broadcaster_id = ? AND user_id IN (...)` SQLite, which plans without statistics, prefers
    // reading the broadcaster's whole range of the listing index (covering since migration 012) to
    // probing the primary key once per user, and that range is every subscriber of the channel.
    const pairs = userIds.map((id) => sql`(${broadcasterId}, ${id})`);
    rows = rows.where(
      sql<boolean>`(subscriptions.broadcaster_id, subscriptions.user_id) in (values ${sql.join(pairs)})`,
    );
  } else {
    rows = rows.where('subscriptions.broadcaster_id', '=', broadcasterId);
    if (userIds !== undefined) rows = rows.where('subscriptions.user_id', 'in', userIds);
  }
  if (!names) return rows;
  return rows
    .leftJoin('users as u', 'u.id', 'subscriptions.user_id')
    .leftJoin('users as g', 'g.id', 'subscriptions.gifter_id')
    .select(['u.login as user_login', 'u.display_name as user_name'])
    .select(['g.login as gifter_login', 'g.display_name as gifter_name']) as unknown as SelectQueryBuilder<
    Database,
    'subscriptions',
    ListedSubscription
  >;
}

/** One page of a broadcaster's subscriptions in SUBSCRIPTIONS_ORDER (`names`: see ofBroadcaster). */
export function subscriptionsPage(
  db: Kysely<Database>,
  broadcasterId: number,
  page: PageQuery,
  names = false,
): Promise<Page<ListedSubscription>> {
  return shapedPage(
    db,
    `subscriptions${names ? ' with names' : ''}`,
    { broadcaster: broadcasterId },
    (v) => ofBroadcaster(db, v.broadcaster as number, names),
    SUBSCRIPTIONS_ORDER,
    'desc',
    page,
  );
}

/**
 * The subscriptions of the given users to the broadcaster, in SUBSCRIPTIONS_ORDER: at most 100
 * primary-key probes. Sorted here, not in SQL: with an ORDER BY, SQLite prefers walking the
 * broadcaster's whole time index to sorting 100 rows.
 */
export async function subscriptionsOfUsers(
  db: Kysely<Database>,
  broadcasterId: number,
  userIds: readonly number[],
  names = false,
): Promise<ListedSubscription[]> {
  if (userIds.length === 0) return [];
  const rows = await ofBroadcaster(db, broadcasterId, names, userIds).execute();
  return rows.sort((a, b) => b.created_at - a.created_at || b.user_id - a.user_id);
}

/** A user's subscription to a broadcaster, with the broadcaster's and the gifter's names (null: no such user). */
export type UserSubscriptionRow = SubscriptionRow & {
  broadcaster_login: string | null;
  broadcaster_name: string | null;
  gifter_login: string | null;
  gifter_name: string | null;
};

/**
 * The subscription of `userId` to `broadcasterId`, if any (GET /subscriptions/user): one probe of
 * the primary key (broadcaster_id, user_id), and the broadcaster's and the gifter's names by the
 * users primary key in the same statement.
 */
export function subscriptionOfUser(
  db: Kysely<Database>,
  broadcasterId: number,
  userId: number,
): Promise<UserSubscriptionRow | undefined> {
  return db
    .selectFrom('subscriptions')
    .leftJoin('users as b', 'b.id', 'subscriptions.broadcaster_id')
    .leftJoin('users as g', 'g.id', 'subscriptions.gifter_id')
    .selectAll('subscriptions')
    .select(['b.login as broadcaster_login', 'b.display_name as broadcaster_name'])
    .select(['g.login as gifter_login', 'g.display_name as gifter_name'])
    .where('subscriptions.broadcaster_id', '=', broadcasterId)
    .where('subscriptions.user_id', '=', userId)
    .executeTakeFirst();
}

export interface BroadcasterTotals {
  login: string;
  display_name: string;
  total: number;
  points: number;
}

/** The broadcaster's names and its subscription counters (one primary-key lookup each). */
export async function broadcasterTotals(
  db: Kysely<Database>,
  broadcasterId: number,
): Promise<BroadcasterTotals> {
  const row = await db
    .selectFrom('users')
    .leftJoin('subscription_totals as t', 't.broadcaster_id', 'users.id')
    .select(['users.login', 'users.display_name', 't.total', 't.points'])
    .where('users.id', '=', broadcasterId)
    .executeTakeFirst();
  return {
    login: row?.login ?? '',
    display_name: row?.display_name ?? '',
    total: row?.total ?? 0,
    points: row?.points ?? 0,
  };
}

/**
 * Sets subscription_totals from the subscriptions, all of it anew: the rows migration 004's
 * triggers would have kept, in the order they would have added them. A bulk load that drops the
 * triggers while it writes (the demo data, src/seed/index.ts) calls this once after.
 */
export async function recountTotals(db: Kysely<Database>, dialect: Dialect): Promise<void> {
  await db.deleteFrom('subscription_totals').execute();
  await sql.raw(fillTotals(dialect === 'postgres')).execute(db);
}

/**
 * How many of the broadcaster's subscriptions `gifterId` gifted (the `cumulative_total` of EventSub's
 * channel.subscription.gift), counting the ones written in the current transaction.
 */
export async function giftedCount(
  db: Kysely<Database>,
  broadcasterId: number,
  gifterId: number,
): Promise<number> {
  const row = await db
    .selectFrom('subscriptions')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('broadcaster_id', '=', broadcasterId)
    .where('gifter_id', '=', gifterId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}
