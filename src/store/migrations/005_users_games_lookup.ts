import type { Kysely } from 'kysely';

// GET /users and GET /games look rows up by what clients know: a user by id or login, a game by id,
// name or IGDB id.
// - users.email: the verified address GET /users shows to the user's own token with
//   user:read:email. Rows that exist when this runs have no address on record: they get '' (the
//   migration invents no data; the seed generator writes addresses for the demo users).
// - Logins are already unique (001), so a login lookup is a probe of that constraint's index; game
//   names and IGDB ids get their own indexes. Neither is unique: two games may share a name, and a
//   game's IGDB id is '' when unknown.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('email', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema.createIndex('games_name').on('games').column('name').execute();
  await db.schema.createIndex('games_igdb').on('games').column('igdb_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('games_igdb').execute();
  await db.schema.dropIndex('games_name').execute();
  await db.schema.alterTable('users').dropColumn('email').execute();
}
