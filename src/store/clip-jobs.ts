// The clips POST /clips asked for, waiting until they are due (migration 020): the request adds one,
// every serving process reads the next ones in the order they fall due, and whichever process deletes
// a row first makes its clip (src/records/clip-jobs.ts).
import type { Kysely, Selectable } from 'kysely';
import { rowLimit } from './page.ts';
import type { ClipJobsTable, Database } from './schema.ts';

export type ClipJobRow = Selectable<ClipJobsTable>;

export async function addClipJob(db: Kysely<Database>, job: ClipJobRow): Promise<void> {
  await db.insertInto('clip_jobs').values(job).execute();
}

/**
 * The `limit` rows that fall due first (due and not yet due alike: the caller makes the due ones and
 * waits for the next): the low end of clip_jobs_due, never the table whole, never a sort.
 */
export function nextClipJobs(db: Kysely<Database>, limit: number): Promise<ClipJobRow[]> {
  return db
    .selectFrom('clip_jobs')
    .select(['id', 'due_at', 'record'])
    .orderBy('due_at')
    .orderBy('id')
    .limit(rowLimit(limit))
    .execute();
}

/**
 * Deletes the row of clip `id` (its primary key); whether this call deleted it. Of processes that
 * race for one row, one deletes it: on PostgreSQL the others wait on its row lock and then find it
 * gone; on SQLite writers take turns.
 */
export async function takeClipJob(db: Kysely<Database>, id: string): Promise<boolean> {
  const r = await db.deleteFrom('clip_jobs').where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) === 1;
}

/** Whether video `id` exists (its primary key). */
export async function videoExists(db: Kysely<Database>, id: number): Promise<boolean> {
  return (await db.selectFrom('videos').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}
