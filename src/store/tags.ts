import type { Kysely } from 'kysely';
import { type Page, type PageQuery, shapedPage } from './page.ts';
import type { Database, TagRow } from './schema.ts';

// Tags are listed by id, the lowercase UUID text. Every id has its dashes at the same places, so
// byte order (SQLite) and a locale collation (PostgreSQL) agree on this order.
const TAGS_ORDER = ['id'] as const;

/** All platform tags, one page (primary-key range scan). */
export function allTags(db: Kysely<Database>, page: PageQuery): Promise<Page<TagRow>> {
  return shapedPage(db, 'tags', {}, () => db.selectFrom('tags').selectAll(), TAGS_ORDER, 'asc', page);
}

/** The tags with these ids, in the order the ids are given; duplicates and unknown ids are dropped. */
export async function tagsByIds(db: Kysely<Database>, ids: readonly string[]): Promise<TagRow[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('tags').selectAll().where('id', 'in', ids).execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  const out: TagRow[] = [];
  for (const id of new Set(ids)) {
    const r = byId.get(id);
    if (r) out.push(r);
  }
  return out;
}
