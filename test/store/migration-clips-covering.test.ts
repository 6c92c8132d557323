// Migrations 010_clips_covering and 011_clips_covering_pg on a store made by the version before them
// (migrated to 009, clips in it): each step up and down keeps every page of /clips by broadcaster
// and by game the same; the listing indexes are covering on SQLite from 010 on, INCLUDE every other
// column on PostgreSQL from 011 on, and neither once migrated down. The longest clip the write path
// accepts (256 four-byte characters of title and of language, a 100-character id) fits them. A
// store holding a clip title or language longer than 256 characters is refused by 011 before it
// changes anything, with a message (`helixd migrate`, `helixd serve`) whose SQL fixes it.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { type CompiledQuery, type Kysely, sql } from 'kysely';
import { type ClipQuery, clipsPage } from '../../src/store/clips.ts';
import { migrateToLatest } from '../../src/store/migrate.ts';
import type { Database, NewClip } from '../../src/store/schema.ts';
import { forEachStore } from '../support/apps.ts';
import { helixd } from '../support/cli.ts';
import { cliDb, type StoreKind, type TempStore, tempStore } from '../support/stores.ts';
import { capturedQueries, explain } from './plans.ts';

// Incompressible: 6,000 hex digits, twice what a PostgreSQL B-tree entry may hold.
const LONG_TITLE = Array.from({ length: 6000 }, (_, i) => ((i * 7919) % 16).toString(16)).join('');

/** `n` characters of four UTF-8 bytes each, drawn at random from `seed` (so no compression helps). */
function fourByteText(n: number, seed: number): string {
  let x = seed;
  return Array.from({ length: n }, () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return String.fromCodePoint(0x10000 + (x % 0x100000));
  }).join('');
}

function clip(n: number, title = `clip ${n}`): NewClip {
  return {
    id: `Clip${n}`,
    broadcaster_id: 100 + (n % 2),
    creator_id: 200 + (n % 5),
    video_id: n % 3 === 0 ? null : 300 + n,
    game_id: 400 + (n % 3),
    language: n % 4 === 0 ? 'de' : 'en',
    title,
    view_count: (n * 37) % 11,
    created_at: 1_600_000_000 + n * 86_400,
    duration_ds: 50 + n,
    vod_offset: n % 2 === 0 ? null : n * 10,
    is_featured: n % 3 === 1 ? 1 : 0,
  };
}

/** The largest clip the write path accepts: every index entry of it is the largest there can be. */
function largestClip(n: number): NewClip {
  return {
    ...clip(n),
    id: `${'W'.repeat(96)}${String(n).padStart(4, '0')}`,
    title: fourByteText(256, n),
    language: fourByteText(256, n + 1),
  };
}

const QUERIES: ClipQuery[] = [100, 101].flatMap((value) => [
  { selector: 'broadcaster_id' as const, value },
  { selector: 'game_id' as const, value: value + 300 },
  { selector: 'game_id' as const, value: value + 301, isFeatured: true },
  { selector: 'broadcaster_id' as const, value, isFeatured: false },
  { selector: 'broadcaster_id' as const, value, period: { from: 1_600_000_000, to: 1_601_000_000 } },
]);

/** Every page of every query, 3 rows at a time, walked forward. */
async function allPages(db: Kysely<Database>): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const q of QUERIES) {
    let page = await clipsPage(db, q, { first: 3 });
    out.push(page);
    while (page.hasMore && page.ends) {
      page = await clipsPage(db, q, { first: 3, after: page.ends.last });
      out.push(page);
    }
  }
  return out;
}

const LISTING_INDEXES = [
  'clips_broadcaster_featured_views',
  'clips_broadcaster_views',
  'clips_game_featured_views',
  'clips_game_views',
];

/** The definitions of the clips table's indexes, as the store keeps them, by name. */
async function indexDefinitions(kind: StoreKind, db: Kysely<Database>): Promise<Record<string, string>> {
  const { rows } =
    kind === 'sqlite'
      ? await sql<{ name: string; def: string }>`
          select name, sql as def from sqlite_master where type = 'index' and tbl_name = 'clips'
            and sql is not null order by name`.execute(db)
      : await sql<{ name: string; def: string }>`
          select indexname as name, indexdef as def from pg_indexes
          where schemaname = current_schema() and tablename = 'clips' order by indexname`.execute(db);
  return Object.fromEntries(rows.map((r) => [r.name, r.def]));
}

/**
 * Whether a page reads nothing but the listing index: on SQLite each query's plan is a search of a
 * `COVERING INDEX`; on PostgreSQL (whose planner reads a table this small whole) each of the four
 * indexes INCLUDEs the columns of the row that are not in its key, title last.
 */
async function covering(kind: StoreKind, db: Kysely<Database>): Promise<boolean[]> {
  if (kind === 'sqlite')
    return Promise.all(
      QUERIES.map(async (q) => {
        const [page] = await capturedQueries(db, (d) => clipsPage(d, q, { first: 3 }));
        return / USING COVERING INDEX clips_\w+_views /.test(
          (await explain(kind, db, page as CompiledQuery)).join('\n'),
        );
      }),
    );
  const defs = await indexDefinitions(kind, db);
  return LISTING_INDEXES.map((name) => / INCLUDE \([^)]*\btitle\)$/.test(defs[name] ?? ''));
}

const all = (n: number, value: boolean) => Array.from({ length: n }, () => value);

forEachStore('migrations 010_clips_covering and 011_clips_covering_pg', (kind: StoreKind) => {
  const listings = kind === 'sqlite' ? QUERIES.length : LISTING_INDEXES.length;

  it('keep every page the same at each step up and down; covering on SQLite from 010, on PostgreSQL from 011; the largest clip fits', async () => {
    const temp = await tempStore(kind);
    try {
      const db = temp.store.db;
      const to = async (target?: string) => {
        const r = await migrateToLatest(temp.store, target);
        assert.equal(r.error, undefined, String(r.error));
      };
      await to('009_clips_per_game_day');
      await db
        .insertInto('clips')
        .values([...Array.from({ length: 40 }, (_, n) => clip(n)), largestClip(40)])
        .execute();
      const before = await allPages(db);
      assert.ok(before.length > QUERIES.length, 'the queries should span several pages');
      assert.deepEqual(await covering(kind, db), all(listings, false));

      for (const [target, expected] of [
        ['010_clips_covering', kind === 'sqlite'],
        [undefined, true],
        ['010_clips_covering', kind === 'sqlite'],
        ['009_clips_per_game_day', false],
      ] as const) {
        await to(target);
        assert.deepEqual(await allPages(db), before, `pages after migrating to ${target ?? 'the latest'}`);
        assert.deepEqual(await covering(kind, db), all(listings, expected), `at ${target ?? 'the latest'}`);
        if (target === undefined) {
          // Written into the built indexes, not only built from: an insert checks the entry's size.
          await db.insertInto('clips').values(largestClip(41)).execute();
          await db.deleteFrom('clips').where('id', '=', largestClip(41).id).execute();
        }
      }
    } finally {
      await temp.drop();
    }
  });

  it('011 refuses a store holding a clip title or language past 256 characters: nothing changed, one line from migrate and serve, its SQL fixes it', async () => {
    const temp: TempStore = await tempStore(kind);
    try {
      const db = temp.store.db;
      const down = await migrateToLatest(temp.store, '010_clips_covering');
      assert.equal(down.error, undefined);
      // Written before the limit: the store's own insert, as the write path of that version did.
      await db
        .insertInto('clips')
        .values([
          ...Array.from({ length: 40 }, (_, n) => clip(n, n % 6 === 5 ? LONG_TITLE : `clip ${n}`)),
          { ...clip(40), title: 'x'.repeat(257) },
          { ...clip(41), title: 'é'.repeat(256) },
          { ...clip(42), language: 'y'.repeat(300) },
        ])
        .execute();
      const state = async () => ({
        pages: await allPages(db),
        indexes: await indexDefinitions(kind, db),
        applied: (await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db))
          .rows,
      });
      const before = await state();

      const refused = await migrateToLatest(temp.store);
      const message = String((refused.error as Error | undefined)?.message);
      // 6 long titles of the 40 (5, 11, 17, 23, 29, 35) and Clip40: the first five ids by id order.
      assert.match(
        message,
        /clip title: must be at most 256 characters: 7 rows of clips \(Clip11, Clip17, Clip23, Clip29, Clip35, \.\.\.\)/,
      );
      assert.match(message, /clip language: must be at most 256 characters: 1 row of clips \(Clip42\)/);
      assert.match(message, /nothing was changed/);
      assert.deepEqual(await state(), before, 'the refused migration changed nothing');

      const db1 = cliDb({ url: temp.url, ...(temp.schema ? { schema: temp.schema } : {}) });
      for (const args of [
        ['migrate', '--db', db1],
        ['serve', '--db', db1, '--port', '0', '--log-level', 'silent'],
      ]) {
        const r = await helixd(args);
        assert.equal(r.code, 1, `${args[0]}: ${r.stdout}${r.stderr}`);
        assert.match(
          r.stderr,
          /^helixd: migration 011_clips_covering_pg failed: the store holds rows whose text is now too long for a record \(clip title: /,
        );
        assert.equal(r.stderr.split('\n').length, 2, `${args[0]}: one line:\n${r.stderr}`);
        assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
      }
      assert.deepEqual(await state(), before, 'migrate and serve changed nothing');

      // The SQL the message gives cuts them to the limit, and the store then migrates.
      const fixes =
        /or in SQL: (.*)$/
          .exec(message)?.[1]
          ?.split(';')
          .filter((s) => s.trim()) ?? [];
      assert.equal(fixes.length, 2, message);
      for (const statement of fixes) await sql.raw(statement).execute(db);
      const up = await migrateToLatest(temp.store);
      assert.equal(up.error, undefined, String(up.error));
      const cut = await db.selectFrom('clips').select(['id', 'title', 'language']).orderBy('id').execute();
      for (const c of cut) {
        assert.ok([...c.title].length <= 256 && [...c.language].length <= 256, c.id);
      }
      assert.equal(cut.find((c) => c.id === 'Clip11')?.title, LONG_TITLE.slice(0, 256));
      assert.equal(cut.find((c) => c.id === 'Clip41')?.title, 'é'.repeat(256), 'at the limit: kept');
    } finally {
      await temp.drop();
    }
  });
});
