// GET /channels: users' channels by id, each joined with its user (the names) and its game (the
// name). A user with no channel row has a new account's channel (src/records/channels.ts,
// NEW_CHANNEL); an id of no user is passed over, as Helix does. One statement by primary keys.
import type { Kysely } from 'kysely';
import type { Database } from './schema.ts';

export interface ChannelInfoRow {
  broadcaster_id: number;
  login: string;
  display_name: string;
  broadcaster_type: string;
  /** null: the user has no channel row */
  title: string | null;
  game_id: number | null;
  game_name: string | null;
  language: string | null;
  delay: number | null;
  tags: string | null;
  labels: string | null;
  is_branded_content: number | null;
}

/** The channels of these users, in the order of `ids` (each once), users that do not exist left out. */
export async function channelsOf(db: Kysely<Database>, ids: readonly number[]): Promise<ChannelInfoRow[]> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return [];
  const rows = await db
    .selectFrom('users as u')
    .leftJoin('channels as c', 'c.broadcaster_id', 'u.id')
    .leftJoin('games as g', 'g.id', 'c.game_id')
    .select([
      'u.id as broadcaster_id',
      'u.login',
      'u.display_name',
      'u.broadcaster_type',
      'c.title',
      'c.game_id',
      'g.name as game_name',
      'c.language',
      'c.delay',
      'c.tags',
      'c.labels',
      'c.is_branded_content',
    ])
    .where('u.id', 'in', wanted)
    .execute();
  const byId = new Map(rows.map((r) => [Number(r.broadcaster_id), r as ChannelInfoRow]));
  return wanted.flatMap((id) => byId.get(id) ?? []);
}
