import type { Kysely } from 'kysely';
import type { Key } from '../http/cursor.ts';
import { keysetPage, type Page, type PageQuery } from './page.ts';
import type { Database, FollowRow } from './schema.ts';

/** A follow with both users' login and display name, as /users/follows lists it. */
export interface FollowListRow extends FollowRow {
  from_login: string;
  from_name: string;
  to_login: string;
  to_name: string;
}

/** Who /users/follows asks about: the follower, the followed user, or both (at least one). */
export type FollowSelector = { from: number; to?: number } | { from?: number; to: number };

// Most recent follow first; ties by the other user's id, higher first (one direction throughout,
// so the keyset is one row-value compare). With `from` given the other user is `to_id` (index
// follows_from_time), with only `to` given it is `from_id` (index follows_to_time).
const BY_FROM_ORDER = ['follows.followed_at', 'follows.to_id'] as const;
const BY_TO_ORDER = ['follows.followed_at', 'follows.from_id'] as const;

/** The cursor key of a row in the ordering `followsPage` uses for `sel`. */
export function followKey(sel: FollowSelector, r: FollowRow): Key {
  return sel.from !== undefined ? [r.followed_at, r.to_id] : [r.followed_at, r.from_id];
}

function whereSelector(db: Kysely<Database>, sel: FollowSelector) {
  let q = db.selectFrom('follows');
  if (sel.from !== undefined) q = q.where('follows.from_id', '=', sel.from);
  if (sel.to !== undefined) q = q.where('follows.to_id', '=', sel.to);
  return q;
}

/**
 * One page of follows. A follow whose user row is missing is not listed (the users table is the
 * one source of logins and names) but still counted by `countFollows`, as production counted
 * follows of suspended users it no longer showed.
 */
export function followsPage(
  db: Kysely<Database>,
  sel: FollowSelector,
  page: PageQuery,
): Promise<Page<FollowListRow>> {
  const q = whereSelector(db, sel)
    .innerJoin('users as fu', 'fu.id', 'follows.from_id')
    .innerJoin('users as tu', 'tu.id', 'follows.to_id')
    .select([
      'follows.from_id',
      'follows.to_id',
      'follows.followed_at',
      'fu.login as from_login',
      'fu.display_name as from_name',
      'tu.login as to_login',
      'tu.display_name as to_name',
    ]);
  return keysetPage(q, sel.from !== undefined ? BY_FROM_ORDER : BY_TO_ORDER, 'desc', page);
}

/** `total` of /users/follows: follows of `from`, followers of `to`, or 1/0 for the pair. */
export async function countFollows(db: Kysely<Database>, sel: FollowSelector): Promise<number> {
  const row = await whereSelector(db, sel)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
