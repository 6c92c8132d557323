// An archive video of a user's live stream, written through the records' write path: the video
// POST /streams/markers places its marker in. The demo data's live streams record into archive
// videos of their own (src/seed/generate.ts); one written here with an id above the demo data's
// (theirs start at 1000000000) is the stream's newest, the one POST /streams/markers chooses, so a
// test of the writes knows its id. Tests of the writes give the demo broadcaster's stream one.
import { writeRecords } from '../../src/records/write.ts';
import { rfc3339 } from '../../src/wire/datetime.ts';
import type { TestApp } from './apps.ts';

/** Writes video `id` (type archive) for `userId`'s live stream; returns the stream it records. */
export async function archiveOfLiveStream(
  t: TestApp,
  userId: number,
  id: string,
): Promise<{ id: number; started_at: number }> {
  const stream = await t.store.db
    .selectFrom('streams')
    .selectAll()
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  const at = rfc3339(stream.started_at);
  await writeRecords(
    t.store,
    [
      {
        kind: 'video',
        where: 'archive',
        data: {
          id,
          stream_id: String(stream.id),
          user_id: String(userId),
          game_id: String(stream.game_id),
          title: 'Recording',
          description: '',
          created_at: at,
          published_at: at,
          view_count: 0,
          language: stream.language,
          type: 'archive',
          duration: '0s',
          muted_segments: null,
        },
      },
    ],
    { mode: 'create' },
  );
  return { id: Number(stream.id), started_at: Number(stream.started_at) };
}

/**
 * The first user (by id, other than `except`) whose live stream records no archive video: the demo
 * data leaves one live stream in ten without (src/seed/generate.ts), the 404 of POST
 * /streams/markers and the clip of no video of POST /clips.
 */
export async function liveWithoutArchive(t: TestApp, except?: number): Promise<number> {
  let q = t.store.db
    .selectFrom('streams')
    .select('user_id')
    .where(
      'id',
      'not in',
      t.store.db.selectFrom('videos').select('stream_id').where('stream_id', 'is not', null),
    );
  if (except !== undefined) q = q.where('user_id', '!=', except);
  return (await q.orderBy('user_id').executeTakeFirstOrThrow()).user_id;
}

/** The first user (by id) who is not live: the 404s of the writes that need a live channel. */
export async function offlineUser(t: TestApp): Promise<number> {
  const db = t.store.db;
  return (
    await db
      .selectFrom('users')
      .select('id')
      .where('id', 'not in', db.selectFrom('streams').select('user_id'))
      .orderBy('id')
      .executeTakeFirstOrThrow()
  ).id;
}
