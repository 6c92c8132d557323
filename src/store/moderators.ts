import type { Kysely } from 'kysely';
import { hasRow } from './page.ts';
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
