import type { Kysely } from 'kysely';
import type { Key } from '../http/cursor.ts';
import { keysetPage, type Page, type PageQuery } from './page.ts';
import type { Database, SubscriptionRow, Tier } from './schema.ts';

/** Subscription points per tier (WIRE.md: Tier 1 = 1, Tier 2 = 2, Tier 3 = 6); migration 004 sums them. */
export const TIER_POINTS: Readonly<Record<Tier, number>> = { '1000': 1, '2000': 2, '3000': 6 };

/**
 * The order of /subscriptions: most recent first, ties by subscriber id, higher first. With the
 * broadcaster fixed it is the index subscriptions_broadcaster_time read backward.
 */
export const SUBSCRIPTIONS_ORDER = ['created_at', 'user_id'] as const;
export const subscriptionKey = (s: Pick<SubscriptionRow, 'created_at' | 'user_id'>): Key => [
  s.created_at,
  s.user_id,
];

const ofBroadcaster = (db: Kysely<Database>, broadcasterId: number) =>
  db.selectFrom('subscriptions').selectAll().where('broadcaster_id', '=', broadcasterId);

/** One page of a broadcaster's subscriptions in SUBSCRIPTIONS_ORDER. */
export function subscriptionsPage(
  db: Kysely<Database>,
  broadcasterId: number,
  page: PageQuery,
): Promise<Page<SubscriptionRow>> {
  return keysetPage(ofBroadcaster(db, broadcasterId), SUBSCRIPTIONS_ORDER, 'desc', page);
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
): Promise<SubscriptionRow[]> {
  if (userIds.length === 0) return [];
  const rows = await ofBroadcaster(db, broadcasterId).where('user_id', 'in', userIds).execute();
  return rows.sort((a, b) => b.created_at - a.created_at || b.user_id - a.user_id);
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
