import type { Kysely, SelectQueryBuilder } from 'kysely';
import { type Page, type PageQuery, type ShapeValues, shapedPage } from './page.ts';
import type { ClipRow, Database } from './schema.ts';

/** The selectors of a paged /clips query (docs/api.md, GET /clips): one broadcaster or one game. */
export const CLIP_SELECTORS = ['broadcaster_id', 'game_id'] as const;
export type ClipSelector = (typeof CLIP_SELECTORS)[number];

/** The filters of GET /clips (docs/api.md) that apply to every kind of /clips query. */
export interface ClipFilters {
  /** [from, to): Unix seconds, on created_at */
  period?: { from: number; to: number };
  isFeatured?: boolean;
}

export interface ClipQuery extends ClipFilters {
  selector: ClipSelector;
  value: number;
}

/** The order of /clips by broadcaster or game: most viewed first; ties by id, higher first. */
export const CLIPS_ORDER = ['view_count', 'id'] as const;

/** The filters' values as the SQL binds them (a shaped query's values: src/store/page.ts shapedPage). */
interface FilterValues extends ShapeValues {
  featured: number | undefined;
  from: number | undefined;
  to: number | undefined;
}

const filterValues = (f: ClipFilters): FilterValues => ({
  featured: f.isFeatured === undefined ? undefined : f.isFeatured ? 1 : 0,
  from: f.period?.from,
  to: f.period?.to,
});

/** `q` with the filters of `v` that are defined; each value is put in as it is (it may be a slot). */
function withFilters<O>(
  q: SelectQueryBuilder<Database, 'clips', O>,
  v: ShapeValues,
): SelectQueryBuilder<Database, 'clips', O> {
  let r = q;
  if (v.featured !== undefined) r = r.where('is_featured', '=', v.featured as number);
  if (v.from !== undefined && v.to !== undefined)
    r = r.where('created_at', '>=', v.from as number).where('created_at', '<', v.to as number);
  return r;
}

/**
 * One page of clips (migration 003: with `is_featured` the index
 * (selector, is_featured, view_count, id, created_at), else (selector, view_count, id, created_at);
 * a period is checked on the index entries). Built once per shape (src/store/page.ts shapedPage).
 */
export function clipsPage(db: Kysely<Database>, q: ClipQuery, page: PageQuery): Promise<Page<ClipRow>> {
  return shapedPage(
    db,
    `clips by ${q.selector}`,
    { value: q.value, ...filterValues(q) },
    (v) =>
      withFilters(
        db
          .selectFrom('clips')
          .selectAll()
          .where(q.selector, '=', v.value as number),
        v,
      ),
    CLIPS_ORDER,
    'desc',
    page,
  );
}

/** Clips by id (primary key), in the order of `ids`; duplicates and unknown ids are left out. */
export async function clipsByIds(
  db: Kysely<Database>,
  ids: readonly string[],
  f: ClipFilters,
): Promise<ClipRow[]> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return [];
  const rows = await withFilters(
    db.selectFrom('clips').selectAll().where('id', 'in', unique),
    filterValues(f),
  ).execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  return unique.flatMap((id) => byId.get(id) ?? []);
}

/**
 * The clips cut from these videos keep their rows when the videos go (DELETE /videos): their
 * `video_id` and `vod_offset` are cleared, as production shows a clip whose video is not available.
 * A range of clips_video (migration 017) per video.
 */
export async function detachClipsFromVideos(
  db: Kysely<Database>,
  videoIds: readonly number[],
): Promise<void> {
  if (videoIds.length === 0) return;
  await db
    .updateTable('clips')
    .set({ video_id: null, vod_offset: null })
    .where('video_id', 'in', [...videoIds])
    .execute();
}
