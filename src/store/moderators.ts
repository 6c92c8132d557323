import type { Kysely } from 'kysely';
import { hasRow, type Page, type PageQuery, shapedPage } from './page.ts';
import type { Database } from './schema.ts';

/** Whether `userId` moderates the channel of `broadcasterId`: one primary-key probe of `moderators`. */
export function isModerator(db: Kysely<Database>, broadcasterId: number, userId: number): Promise<boolean> {
  return hasRow(
    db
      .selectFrom('moderators')
      .select('user_id')
      .where('broadcaster_id', '=', broadcasterId)
      .where('user_id', '=', userId),
  );
}

/** A moderator of a channel with its login and display name (GET /moderation/moderators). */
export interface NamedModeratorRow {
  user_id: number;
  login: string;
  display_name: string;
}

/**
 * The order of a channel's moderators: user id ascending, the primary key (broadcaster_id, user_id)
 * read forward from the channel's first entry (docs/api.md says why this order).
 */
const MODERATORS_ORDER = ['moderators.user_id'] as const;

/**
 * The channel's moderators with their names. Inner join, the rule of the follows listings: a
 * moderator without a user row is not listed (the users table is the one source of names).
 */
function withNames(db: Kysely<Database>, broadcasterId: number) {
  return db
    .selectFrom('moderators')
    .innerJoin('users as u', 'u.id', 'moderators.user_id')
    .select(['moderators.user_id', 'u.login', 'u.display_name'])
    .where('moderators.broadcaster_id', '=', broadcasterId);
}

/** One page of the channel's moderators in MODERATORS_ORDER: a range of the primary key. */
export function moderatorsPage(
  db: Kysely<Database>,
  broadcasterId: number,
  page: PageQuery,
): Promise<Page<NamedModeratorRow>> {
  return shapedPage(
    db,
    'moderators',
    { broadcaster: broadcasterId },
    (v) => withNames(db, v.broadcaster as number),
    MODERATORS_ORDER,
    'asc',
    page,
  );
}

/**
 * Those of `userIds` who moderate the channel, in the order of `userIds` (production's rule): one
 * primary-key probe per id. Ordered here, not in SQL, which has no order of its own to give.
 */
export async function moderatorsAmong(
  db: Kysely<Database>,
  broadcasterId: number,
  userIds: readonly number[],
): Promise<NamedModeratorRow[]> {
  if (userIds.length === 0) return [];
  const rows = await withNames(db, broadcasterId).where('moderators.user_id', 'in', userIds).execute();
  const byId = new Map(rows.map((r) => [r.user_id, r]));
  return userIds.flatMap((id) => byId.get(id) ?? []);
}
