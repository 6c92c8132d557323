import type { Kysely } from 'kysely';

// Who moderates which channel. GET /channels/followers lists a channel's followers to the
// broadcaster and to the channel's moderators only, so such a request probes one (broadcaster,
// user) pair: the primary key. The primary key also serves a channel's moderator list (by
// broadcaster, in user id order). An operation listing the channels a user moderates would need an
// index led by user_id; none does yet, and an unused index would only slow every write.
// `created_at` (Unix seconds) is when the user became a moderator.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('moderators')
    .addColumn('broadcaster_id', 'bigint', (c) => c.notNull())
    .addColumn('user_id', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('moderators_pk', ['broadcaster_id', 'user_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('moderators').execute();
}
