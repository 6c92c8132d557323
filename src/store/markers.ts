import type { Kysely } from 'kysely';
import { hasRow, type Page, type PageQuery, rowLimit, shapedPage } from './page.ts';
import type { Database, MarkerRow } from './schema.ts';

/**
 * The order of /streams/markers: newest first, ties by marker id, higher first. A cursor's key
 * leads with the video and the creator (pinned by equalities: src/store/page.ts shapedPage), so that it names the
 * video it walks (a `user_id` query keeps walking the video it started on when the user's most
 * recent video changes).
 */
export const MARKERS_ORDER = ['created_at', 'id'] as const;

/** A video with its owner's names (null when the owner is not in the store). */
export interface MarkedVideo {
  id: number;
  user_id: number;
  user_login: string | null;
  user_name: string | null;
}

function videoWithOwner(db: Kysely<Database>) {
  return db
    .selectFrom('videos')
    .leftJoin('users', 'users.id', 'videos.user_id')
    .select(['videos.id', 'videos.user_id', 'users.login as user_login', 'users.display_name as user_name']);
}

export function videoById(db: Kysely<Database>, videoId: number): Promise<MarkedVideo | undefined> {
  return videoWithOwner(db).where('videos.id', '=', videoId).executeTakeFirst();
}

/** The user's most recent video: latest created_at, ties by id (index videos_user_time, first entry). */
export function mostRecentVideo(db: Kysely<Database>, userId: number): Promise<MarkedVideo | undefined> {
  return videoWithOwner(db)
    .where('videos.user_id', '=', userId)
    .orderBy('videos.created_at', 'desc')
    .orderBy('videos.id', 'desc')
    .limit(rowLimit(1))
    .executeTakeFirst();
}

/** Whether `creatorId` created at least one marker in the video (one probe of markers_video_creator_time). */
export function hasMarkedVideo(db: Kysely<Database>, videoId: number, creatorId: number): Promise<boolean> {
  return hasRow(
    db.selectFrom('markers').select('id').where('video_id', '=', videoId).where('creator_id', '=', creatorId),
  );
}

/** One page of the markers `creatorId` created in the video, in MARKERS_ORDER. */
export function markersPage(
  db: Kysely<Database>,
  videoId: number,
  creatorId: number,
  page: PageQuery,
): Promise<Page<MarkerRow>> {
  return shapedPage(
    db,
    'markers',
    { video: videoId, creator: creatorId },
    (v) =>
      db
        .selectFrom('markers')
        .selectAll()
        .where('video_id', '=', v.video as number)
        .where('creator_id', '=', v.creator as number),
    MARKERS_ORDER,
    'desc',
    page,
    [videoId, creatorId],
  );
}

export async function userExists(db: Kysely<Database>, userId: number): Promise<boolean> {
  return (
    (await db.selectFrom('users').select('id').where('id', '=', userId).executeTakeFirst()) !== undefined
  );
}

/** Deletes every marker of these videos (DELETE /videos): a range of markers_video_creator_time each. */
export async function deleteMarkersOfVideos(
  db: Kysely<Database>,
  videoIds: readonly number[],
): Promise<void> {
  if (videoIds.length === 0) return;
  await db
    .deleteFrom('markers')
    .where('video_id', 'in', [...videoIds])
    .execute();
}

/**
 * A live stream: where a new marker goes (POST /streams/markers), what a new clip is cut from (POST
 * /clips: its game, language and title are the clip's).
 */
export interface LiveStream {
  id: number;
  started_at: number;
  game_id: number;
  language: string;
  title: string;
}

/** The user's live stream, if any (one probe of the streams' unique index of user_id). */
export function liveStreamOf(db: Kysely<Database>, userId: number): Promise<LiveStream | undefined> {
  return db
    .selectFrom('streams')
    .select(['id', 'started_at', 'game_id', 'language', 'title'])
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

/**
 * The archive video recording live stream `streamId` of user `userId`: a video of type `archive`
 * whose `stream_id` is the stream's, the newest if several (a range of videos_stream, migration
 * 017, read from its high end).
 */
export function archiveOfStream(
  db: Kysely<Database>,
  streamId: number,
  userId: number,
): Promise<{ id: number } | undefined> {
  return db
    .selectFrom('videos')
    .select('id')
    .where('stream_id', '=', streamId)
    .where('user_id', '=', userId)
    .where('type', '=', 'archive')
    .orderBy('id', 'desc')
    .limit(rowLimit(1))
    .executeTakeFirst();
}
