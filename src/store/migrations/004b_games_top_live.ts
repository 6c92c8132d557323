import { type Kysely, sql } from 'kysely';

// GET /games/top lists only games with a live stream (`stream_count > 0`). Through games_top the
// scan passes over every game that is not live before it reaches the end of the list, and a
// platform has far more games than live ones, so the last pages would cost more than the first. An
// index that holds the live games only keeps every page a range of exactly the rows it returns;
// both stores use a partial index when the query repeats its WHERE clause.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('games_top_live')
    .on('games')
    .columns(['viewer_count', 'id'])
    .where(sql<boolean>`stream_count > 0`)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('games_top_live').execute();
}
