import { type Generated, type Kysely, type Selectable, SqliteAdapter, sql } from 'kysely';
import { type Page, type PageQuery, type ShapeValues, shapedPage } from './page.ts';
import type { Database, VideosTable, VideoType } from './schema.ts';

/** The selectors of a paged /videos query (docs/api.md, GET /videos): one owner or one game. */
export const VIDEO_SELECTORS = ['user_id', 'game_id'] as const;
export type VideoSelector = (typeof VIDEO_SELECTORS)[number];

/** `sort` of GET /videos (docs/api.md), default `time`. */
export const VIDEO_SORTS = ['time', 'trending', 'views'] as const;
export type VideoSort = (typeof VIDEO_SORTS)[number];

// `trending` is a generated column (migration 003): created_at + 864000 * ln(1 + view_count), the
// now-independent order of views decayed by age with an e-folding time of 10 days. The generator
// and importers never write it, so it is declared here, for the queries that read it.
type VideosWithTrending = VideosTable & { trending: Generated<number> };
type VideoDatabase = Omit<Database, 'videos'> & { videos: VideosWithTrending };
export type VideoRow = Selectable<VideosWithTrending>;

const SORT_COLUMN = { time: 'created_at', trending: 'trending', views: 'view_count' } as const;

/** The order of each sort: its column, most first; ties by id, higher first. */
export const videoOrder = (sort: VideoSort) => [SORT_COLUMN[sort], 'id'] as const;

export interface VideoQuery {
  selector: VideoSelector;
  value: number;
  sort: VideoSort;
  language?: string;
  type?: VideoType;
  /** only videos created at or after this instant (Unix seconds) */
  since?: number;
}

/**
 * The videos of `q`'s selector with the filters of `v` that are defined; each value of `v` is put in
 * as it is (it may be a slot: src/store/page.ts shapedPage).
 */
function videosWhere(db: Kysely<Database>, q: Pick<VideoQuery, 'selector' | 'sort'>, v: ShapeValues) {
  let r = (db as unknown as Kysely<VideoDatabase>)
    .selectFrom('videos')
    .selectAll()
    .where(q.selector, '=', v.value as number);
  // Spec 4.3 rule 1: the filters combine with AND.
  if (v.language !== undefined) r = r.where('language', '=', v.language as string);
  if (v.type !== undefined) r = r.where('type', '=', v.type as VideoType);
  const since = v.since as number | undefined;
  if (since !== undefined) {
    // Under another order than time, SQLite (which plans without row statistics) would take the
    // period as a range of the time index and sort all of the period's videos for every page; the
    // unary plus keeps the period a check on the entries of the ordering's own index.
    // Under the time order the period is written as a row value on the ordering's own columns
    // (ids are positive, so it means created_at >= since): the cursor's bound and the period's are
    // then two bounds of one index range, and a deep page starts at the cursor instead of reading
    // the period from its newest end.
    const steer = q.sort !== 'time' && db.getExecutor().adapter instanceof SqliteAdapter;
    if (q.sort === 'time') r = r.where(sql<boolean>`(created_at, id) >= (${since}, 0)`);
    else r = steer ? r.where(sql<number>`+created_at`, '>=', since) : r.where('created_at', '>=', since);
  }
  return r;
}

/**
 * One page of videos: an index range scan of (selector, sort column, id, type, language
 * [, created_at]) (migration 003), the filters checked on the index entries. Built once per shape
 * (src/store/page.ts shapedPage).
 */
export function videosPage(db: Kysely<Database>, q: VideoQuery, page: PageQuery): Promise<Page<VideoRow>> {
  return shapedPage(
    db,
    `videos by ${q.selector}, ${q.sort}`,
    { value: q.value, language: q.language, type: q.type, since: q.since },
    (v) => videosWhere(db, q, v),
    videoOrder(q.sort),
    'desc',
    page,
  );
}

/** Videos by id (primary key), in the order of `ids`; duplicates and unknown ids are left out. */
export async function videosByIds(db: Kysely<Database>, ids: readonly number[]): Promise<VideoRow[]> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return [];
  const rows = await (db as unknown as Kysely<VideoDatabase>)
    .selectFrom('videos')
    .selectAll()
    .where('id', 'in', unique)
    .execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  return unique.flatMap((id) => byId.get(id) ?? []);
}

/**
 * The owners of the videos among `ids` that exist (primary-key probes), by video id. `lock`
 * (PostgreSQL: SQLite has one writer at a time already) locks them to the end of the transaction
 * `db` is: a delete that waited for another finds only what is left.
 */
export async function videoOwners(
  db: Kysely<Database>,
  ids: readonly number[],
  lock = false,
): Promise<Map<number, number>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const q = db.selectFrom('videos').select(['id', 'user_id']).where('id', 'in', unique);
  const rows = await (lock ? q.forUpdate() : q).execute();
  return new Map(rows.map((r) => [r.id, r.user_id]));
}

/** Deletes the videos with these ids (primary-key probes). */
export async function deleteVideoRows(db: Kysely<Database>, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await db
    .deleteFrom('videos')
    .where('id', 'in', [...ids])
    .execute();
}
