import { type Kysely, sql } from 'kysely';

// The links of a video that the Helix writes follow (docs/api.md): from a live stream to its
// archive video (POST /streams/markers marks the stream's current position in it: a video whose
// `stream_id` is the stream's), and from a video to the clips cut from it (DELETE /videos leaves
// the clips, their `video_id` cleared, as production shows a clip whose video is gone). Without
// them the first read every video of the user and the second every clip of the store: each is now
// a range of its index. The admin API's refusal to delete a video that clips still name reads the
// second too. Partial: most clips and videos name none (an upload, a clip of no video), and no
// query asks for the nulls.
//
// Indexes added: videos_stream, clips_video. No table or column changes.

export async function up(db: Kysely<unknown>): Promise<void> {
  const run = (text: string) => sql.raw(text).execute(db);
  await run('create index videos_stream on videos (stream_id, id) where stream_id is not null');
  await run('create index clips_video on clips (video_id) where video_id is not null');
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql.raw('drop index clips_video').execute(db);
  await sql.raw('drop index videos_stream').execute(db);
}
