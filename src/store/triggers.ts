// The lookups of `helixd event trigger` and POST /admin/eventsub/trigger (src/eventsub/trigger.ts):
// what a trigger changes when the caller named only the channel.
import { type Kysely, sql } from 'kysely';
import type { Database } from './schema.ts';

type Related = 'follows' | 'subscriptions' | 'moderators';

const RELATION = {
  follows: { channel: 'to_id', user: 'from_id' },
  subscriptions: { channel: 'broadcaster_id', user: 'user_id' },
  moderators: { channel: 'broadcaster_id', user: 'user_id' },
} as const;

/**
 * Up to `n` users, drawn at random, other than the broadcaster and not already in `table` for the
 * channel (a new follower, subscriber or moderator).
 */
export async function drawUnrelatedUsers(
  db: Kysely<Database>,
  table: Related,
  broadcasterId: number,
  n: number,
): Promise<number[]> {
  const { channel, user } = RELATION[table];
  const rows = await db
    .selectFrom('users')
    .select('id')
    .where('id', '<>', broadcasterId)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom(table as 'follows')
            .select(sql.lit(1).as('x'))
            .where(sql.ref(channel), '=', broadcasterId)
            .whereRef(sql.ref(`${table}.${user}`) as never, '=', 'users.id'),
        ),
      ),
    )
    .orderBy(sql`random()`)
    .limit(n)
    .execute();
  return rows.map((r) => Number(r.id));
}

/** One of the channel's users in `table` (a follower, subscriber or moderator), drawn at random. */
export async function drawRelatedUser(
  db: Kysely<Database>,
  table: Related,
  broadcasterId: number,
): Promise<number | undefined> {
  const { channel, user } = RELATION[table];
  const row = await db
    .selectFrom(table as 'follows')
    .select(sql<number>`${sql.ref(user)}`.as('id'))
    .where(sql.ref(channel), '=', broadcasterId)
    .orderBy(sql`random()`)
    .limit(1)
    .executeTakeFirst();
  return row === undefined ? undefined : Number(row.id);
}

/** The id of the broadcaster's live stream, if any. */
export async function streamOf(db: Kysely<Database>, broadcasterId: number): Promise<number | undefined> {
  const row = await db
    .selectFrom('streams')
    .select('id')
    .where('user_id', '=', broadcasterId)
    .executeTakeFirst();
  return row === undefined ? undefined : Number(row.id);
}

/** A game drawn at random, if the store has any. */
export async function drawGame(db: Kysely<Database>): Promise<number | undefined> {
  const row = await db.selectFrom('games').select('id').orderBy(sql`random()`).limit(1).executeTakeFirst();
  return row === undefined ? undefined : Number(row.id);
}
