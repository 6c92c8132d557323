import type { Kysely } from 'kysely';
import { type Page, type PageQuery, type ShapeValues, shapedPage } from './page.ts';
import type { Database, FollowRow } from './schema.ts';

/** A follow with both users' login and display name, as /users/follows lists it. */
export interface FollowListRow extends FollowRow {
  from_login: string;
  from_name: string;
  to_login: string;
  to_name: string;
}

/**
 * A follow with the login and display name of the one user a one-sided list shows: the follower
 * (GET /channels/followers) or the followed channel (GET /channels/followed).
 */
export interface NamedFollowRow extends FollowRow {
  login: string;
  display_name: string;
}

/** Who /users/follows asks about: the follower, the followed user, or both (at least one). */
export type FollowSelector = { from: number; to?: number } | { from?: number; to: number };

// Most recent follow first; ties by the other user's id, higher first (one direction throughout,
// so the keyset is one row-value compare). With `from` given the other user is `to_id` (index
// follows_from_time), with only `to` given it is `from_id` (index follows_to_time).
const BY_FROM_ORDER = ['follows.followed_at', 'follows.to_id'] as const;
const BY_TO_ORDER = ['follows.followed_at', 'follows.from_id'] as const;

/** The follows of `sel`; its values are put in as they are (they may be slots: src/store/page.ts shapedPage). */
function whereSelector(db: Kysely<Database>, sel: FollowSelector) {
  let q = db.selectFrom('follows');
  if (sel.from !== undefined) q = q.where('follows.from_id', '=', sel.from);
  if (sel.to !== undefined) q = q.where('follows.to_id', '=', sel.to);
  return q;
}

/** `sel` as a shaped query's values, and back (src/store/page.ts shapedPage). */
const selectorValues = (sel: FollowSelector): ShapeValues => ({ from: sel.from, to: sel.to });
const selectorOf = (v: ShapeValues) => ({ from: v.from, to: v.to }) as FollowSelector;

/**
 * One page of follows. A follow whose user row is missing is not listed (the users table is the
 * one source of logins and names) but still counted by `countFollows`, as Helix counted
 * follows of suspended users it no longer showed.
 */
export function followsPage(
  db: Kysely<Database>,
  sel: FollowSelector,
  page: PageQuery,
): Promise<Page<FollowListRow>> {
  const q = (v: ShapeValues) =>
    whereSelector(db, selectorOf(v))
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
  const order = sel.from !== undefined ? BY_FROM_ORDER : BY_TO_ORDER;
  return shapedPage(db, 'follows', selectorValues(sel), q, order, 'desc', page);
}

/** `total` of /users/follows: follows of `from`, followers of `to`, or 1/0 for the pair. */
export async function countFollows(db: Kysely<Database>, sel: FollowSelector): Promise<number> {
  const row = await whereSelector(db, sel)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * The follows of `sel` with the names of the user on side `show` (`from`: the follower, `to`: the
 * followed channel). Inner join, the rule of `followsPage`: a follow whose shown user is missing
 * from the users table is not listed but is still counted by `countFollows`.
 */
function withNamesOf(db: Kysely<Database>, sel: FollowSelector, show: 'from' | 'to') {
  return whereSelector(db, sel)
    .innerJoin('users as u', 'u.id', show === 'from' ? 'follows.from_id' : 'follows.to_id')
    .select(['follows.from_id', 'follows.to_id', 'follows.followed_at', 'u.login', 'u.display_name']);
}

/**
 * One page of one side's follows, most recent first, ties by the other user's id, higher first:
 * a channel's followers (`{ to }`, a range of follows_to_time read backward) or the channels a user
 * follows (`{ from }`, follows_from_time), with the names of the other user. The order of
 * `followsPage` for the same selector.
 */
export function oneSidedPage(
  db: Kysely<Database>,
  sel: { to: number } | { from: number },
  page: PageQuery,
): Promise<Page<NamedFollowRow>> {
  const show = 'to' in sel ? 'from' : 'to';
  return shapedPage(
    db,
    `follows showing ${show}`,
    selectorValues(sel),
    (v) => withNamesOf(db, selectorOf(v), show),
    'to' in sel ? BY_TO_ORDER : BY_FROM_ORDER,
    'desc',
    page,
  );
}

/** Whether `from` follows `to`, with the names of the user on side `show`: one primary-key probe. */
export function followOfPair(
  db: Kysely<Database>,
  from: number,
  to: number,
  show: 'from' | 'to',
): Promise<NamedFollowRow | undefined> {
  return withNamesOf(db, { from, to }, show).executeTakeFirst();
}
