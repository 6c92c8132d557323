// `npm run bench:layout-listings`: the listings other than /clips (issue 16), each measured with
// the indexes it had before migration 012 (`a`) and with 012's covering ones (`b`). In process, no
// HTTP, no mapping: the layout changes the store read only, so a unit is the store call the route
// makes (Kysely, the driver, keysetPage), in µs of CPU per page (process.cpuUsage, user + system;
// on PostgreSQL also the backend's CPU, from /proc). Each round gives `a` and `b` of a listing the
// same slice of keys (walked round-robin), in alternating order; one warm-up round is dropped; medians over
// the rounds. Before timing, `b`'s pages are checked to be `a`'s, for every key.
//
//   npm run bench:layout-listings                       SQLite then PostgreSQL, 20,000 users
//   npm run bench:layout-listings -- --rounds 3 --skip-pg
//   other flags: --users N --per-round N --only <text in a listing's name> --skip-sqlite --pg-url ...
//
// The seeded store is bench/layout.ts's (bench/data/layout-u<users>-s1.db, seeded once through
// the CLI). SQLite: two copies of it, `a` with every listing index of LISTING_INDEXES as it was
// before 012 and `b` with 012's SQLite definitions. PostgreSQL: the listing tables copied from that
// store into a schema made for the run (helixd's own migrations, then 012's indexes undone), and a
// second schema copied from the first with the indexes INCLUDE-covering, for every listing, also
// those that 012 leaves as they were on PostgreSQL (their long text): what a cap would buy. Both
// schemas vacuumed (the visibility map lets index-only scans skip the table) and dropped at the end.
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, rmSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import SQLite from 'better-sqlite3';
import { CompiledQuery, type Kysely, type KyselyPlugin, sql } from 'kysely';
import pg from 'pg';
import { runCaptured } from '../src/cli.ts';
import { openStore, type Store } from '../src/store/db.ts';
import { topGames } from '../src/store/games.ts';
import { markersPage } from '../src/store/markers.ts';
import { LISTING_INDEXES, listingIndexSql } from '../src/store/migrations/012_listings_covering.ts';
import type { Key, Page } from '../src/store/page.ts';
import type { Database } from '../src/store/schema.ts';
import { streamsPage } from '../src/store/streams.ts';
import { subscriptionsPage } from '../src/store/subscriptions.ts';
import { type VideoQuery, videosPage } from '../src/store/videos.ts';
import { cpuSeconds, ROOT } from './child.ts';

const ANCHOR_ISO = '2026-11-21T00:00:00Z';
const FIRST = 20;

const { values: args } = parseArgs({
  options: {
    users: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '5' },
    'per-round': { type: 'string', default: '200' },
    only: { type: 'string' },
    'skip-pg': { type: 'boolean', default: false },
    'skip-sqlite': { type: 'boolean', default: false },
    'pg-url': {
      type: 'string',
      default: process.env.HELIXD_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    },
  },
});
const users = Number(args.users);
const rounds = Number(args.rounds);
const perRound = Number(args['per-round']);
const say = (line = '') => process.stdout.write(`${line}\n`);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
/** The middle value (of an odd count; the lower middle of an even one: rounds are few). */
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1] as number;
/** This process's CPU so far, µs. */
const cpuNow = () => Object.values(process.cpuUsage()).reduce((a, b) => a + b, 0);
/** A PostgreSQL backend's CPU so far, seconds. */
const procCpu = (pid: number) => () => cpuSeconds(pid) ?? Number.NaN;

async function seededStore(): Promise<string> {
  const file = join(ROOT, 'bench', 'data', `layout-u${users}-s1.db`);
  if (existsSync(file)) return file;
  await mkdir(dirname(file), { recursive: true });
  say(`seeding ${file}: ${users} users ...`);
  const args = ['seed', '--db', file, '--users', String(users), '--seed', '1', '--now', ANCHOR_ISO];
  const r = await runCaptured(args);
  if (r.code !== 0) throw new Error(`helixd seed: exit ${r.code}: ${r.stderr}`);
  return file;
}

// ---------------------------------------------------------------------------------------------
// The listings: a store call per key, as the route calls it.

interface Listing {
  name: string;
  /** the indexes of LISTING_INDEXES its pages read */
  indexes: string[];
  /** the distinct keys walked (values of the selector, or depths into a whole list) */
  keys: (conn: SQLite.Database) => unknown[];
  run: (db: Kysely<Database>, key: unknown, postgres: boolean) => Promise<Page<unknown>>;
}

const distinct = (conn: SQLite.Database, q: string) =>
  (conn.prepare(q).all() as { k: unknown }[]).map((r) => r.k);
/** The key of the row at each depth of a whole list (every `step` rows), undefined first. */
const depths = (conn: SQLite.Database, q: string, step: number): unknown[] => {
  const rows = conn.prepare(q).raw().all() as Key[];
  return [undefined, ...rows.filter((_, i) => i % step === step - 1)];
};
const video = (q: Omit<VideoQuery, 'value'>, index: string): Listing => ({
  name: `videos by ${q.selector === 'user_id' ? 'user' : 'game'}, sort=${q.sort}${q.type ? `, type=${q.type}` : ''}`,
  indexes: [index],
  keys: (conn) => distinct(conn, `select distinct ${q.selector} as k from videos order by 1`),
  run: (db, k) => videosPage(db, { ...q, value: k as number }, { first: FIRST }),
});

const ALL_LISTINGS: Listing[] = [
  video({ selector: 'user_id', sort: 'time' }, 'videos_user_time'),
  video({ selector: 'user_id', sort: 'views' }, 'videos_user_views'),
  video({ selector: 'user_id', sort: 'trending' }, 'videos_user_trending'),
  video({ selector: 'game_id', sort: 'time' }, 'videos_game_time'),
  video({ selector: 'game_id', sort: 'views' }, 'videos_game_views'),
  video({ selector: 'game_id', sort: 'time', type: 'highlight' }, 'videos_game_time'),
  {
    name: 'subscriptions by broadcaster',
    indexes: ['subscriptions_broadcaster_time'],
    keys: (conn) => distinct(conn, 'select distinct broadcaster_id as k from subscriptions order by 1'),
    // The route joins the names on PostgreSQL (no in-memory copy of them there).
    run: (db, k, postgres) => subscriptionsPage(db, k as number, { first: FIRST }, postgres),
  },
  {
    name: 'markers by video and creator',
    indexes: ['markers_video_creator_time'],
    keys: (conn) =>
      conn
        .prepare('select distinct video_id, creator_id from markers order by 1, 2')
        .raw()
        .all() as number[][],
    run: (db, k) => {
      const [v, c] = k as number[];
      return markersPage(db, v as number, c as number, { first: FIRST });
    },
  },
  {
    name: 'top games, every depth',
    indexes: ['games_top_live'],
    keys: (conn) =>
      depths(conn, 'select viewer_count, id from games where stream_count > 0 order by 1 desc, 2 desc', 5),
    run: (db, k) => topGames(db, k === undefined ? { first: FIRST } : { first: FIRST, after: k as Key }),
  },
  {
    name: 'streams, whole list, every depth',
    indexes: ['streams_viewers'],
    keys: (conn) => depths(conn, 'select viewer_count, id from streams order by 1 desc, 2 desc', 15),
    run: (db, k) =>
      streamsPage(db, {}, k === undefined ? { first: FIRST } : { first: FIRST, after: k as Key }),
  },
  {
    name: 'streams by game',
    indexes: ['streams_game_viewers'],
    keys: (conn) => distinct(conn, 'select distinct game_id as k from streams order by 1'),
    run: (db, k) => streamsPage(db, { gameIds: [k as number] }, { first: FIRST }),
  },
  {
    name: 'streams by language',
    indexes: ['streams_language_viewers'],
    keys: (conn) => distinct(conn, 'select distinct language as k from streams order by 1'),
    run: (db, k) => streamsPage(db, { languages: [k as string] }, { first: FIRST }),
  },
  {
    name: 'streams by user',
    indexes: ['streams_user_viewers'],
    keys: (conn) => distinct(conn, 'select user_id as k from streams order by 1'),
    run: (db, k) => streamsPage(db, { userIds: [k as number] }, { first: FIRST }),
  },
];
const LISTINGS = ALL_LISTINGS.filter((l) => args.only === undefined || l.name.includes(args.only));

// ---------------------------------------------------------------------------------------------

interface Figure {
  /** medians over the rounds, µs per page */
  a: number;
  b: number;
  aServer?: number;
  bServer?: number;
  rowsPerPage: number;
}

interface Side {
  db: Kysely<Database>;
  server?: () => number;
}

async function measure(
  listing: Listing,
  keys: unknown[],
  a: Side,
  b: Side,
  postgres: boolean,
): Promise<Figure> {
  let rows = 0;
  for (const k of keys) {
    const [pa, pb] = [await listing.run(a.db, k, postgres), await listing.run(b.db, k, postgres)];
    if (JSON.stringify(pa) !== JSON.stringify(pb))
      throw new Error(`${listing.name}: b answers otherwise than a for ${JSON.stringify(k)}`);
    rows += pa.rows.length;
  }
  // A listing with fewer keys than a round takes walks them again (the server CPU needs pages to resolve).
  const n = perRound;
  const times = { a: [] as number[], b: [] as number[], aServer: [] as number[], bServer: [] as number[] };
  for (let r = 0; r <= rounds; r++) {
    const slice = Array.from({ length: n }, (_, i) => keys[(r * n + i) % keys.length]);
    const order = r % 2 === 0 ? (['a', 'b'] as const) : (['b', 'a'] as const);
    for (const which of order) {
      const side = which === 'a' ? a : b;
      const s0 = side.server?.();
      const c0 = cpuNow();
      for (const k of slice) await listing.run(side.db, k, postgres);
      const c = (cpuNow() - c0) / n;
      const s = side.server && s0 !== undefined ? ((side.server() - s0) * 1e6) / n : undefined;
      if (r === 0) continue;
      times[which].push(c);
      if (s !== undefined) times[which === 'a' ? 'aServer' : 'bServer'].push(s);
    }
  }
  return {
    a: median(times.a),
    b: median(times.b),
    ...(times.aServer.length ? { aServer: median(times.aServer), bServer: median(times.bServer) } : {}),
    rowsPerPage: rows / keys.length,
  };
}

const f0 = (v: number | undefined) => (v === undefined ? '' : Math.round(v).toLocaleString('en-US'));
const pct = (a: number, b: number) => `${b <= a ? '-' : '+'}${Math.abs(Math.round((100 * (b - a)) / a))}%`;
function report(title: string, figs: Record<string, Figure & { keys: number }>): void {
  say(title);
  for (const [name, f] of Object.entries(figs)) {
    const server =
      f.aServer !== undefined && f.bServer !== undefined
        ? `; server ${f0(f.aServer)} -> ${f0(f.bServer)} (${pct(f.aServer, f.bServer)})`
        : '';
    say(
      `  ${name.padEnd(34)} ${String(f.keys).padStart(6)} keys ${f.rowsPerPage.toFixed(1).padStart(5)} rows: a ${f0(f.a).padStart(4)}  b ${f0(f.b).padStart(4)} µs (${pct(f.a, f.b)})${server}`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// SQLite

function redefine(conn: SQLite.Database, layout: 'key' | 'sqlite'): Record<string, number> {
  const seconds: Record<string, number> = {};
  for (const l of LISTING_INDEXES) {
    conn.exec(`drop index if exists ${l.index}`);
    const c0 = cpuNow();
    conn.exec(listingIndexSql(l, layout));
    seconds[l.index] = (cpuNow() - c0) / 1e6;
  }
  return seconds;
}

function indexBytes(conn: SQLite.Database): Map<string, number> {
  const rows = conn.prepare('select name, sum(pgsize) as bytes from dbstat group by name').all() as {
    name: string;
    bytes: number;
  }[];
  return new Map(rows.map((r) => [r.name, r.bytes]));
}

async function measureSqlite(seeded: string) {
  const files = { a: seeded.replace(/\.db$/, '-lst-a.db'), b: seeded.replace(/\.db$/, '-lst-b.db') };
  const build: Record<string, Record<string, number>> = {};
  const bytes: Record<string, Record<string, number>> = {};
  for (const [side, file] of Object.entries(files)) {
    for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
    copyFileSync(seeded, file);
    const conn = new SQLite(file);
    // A large cache for building, as the seed has (src/store/bulk.ts).
    conn.pragma('cache_size = -262144');
    build[side] = redefine(conn, side === 'a' ? 'key' : 'sqlite');
    conn.exec('analyze');
    const size = indexBytes(conn);
    bytes[side] = Object.fromEntries(LISTING_INDEXES.map((l) => [l.index, size.get(l.index) ?? 0]));
    conn.close();
  }
  say('SQLite: the listing indexes, CPU seconds to build and MB (dbstat), before (a) and 012 (b):');
  for (const l of LISTING_INDEXES)
    say(
      `  ${l.index.padEnd(32)} ${build.a?.[l.index]?.toFixed(2)} s ${((bytes.a?.[l.index] ?? 0) / 1e6).toFixed(1).padStart(5)} MB -> ${build.b?.[l.index]?.toFixed(2)} s ${((bytes.b?.[l.index] ?? 0) / 1e6).toFixed(1).padStart(5)} MB`,
    );
  const stores = { a: openStore({ url: files.a }), b: openStore({ url: files.b }) };
  const src = new SQLite(seeded, { readonly: true });
  const figs: Record<string, Figure & { keys: number }> = {};
  const start = load();
  try {
    for (const l of LISTINGS) {
      const keys = l.keys(src);
      figs[l.name] = { keys: keys.length, ...(await measure(l, keys, stores.a, stores.b, false)) };
    }
  } finally {
    src.close();
    for (const s of Object.values(stores)) await s.close();
    for (const file of Object.values(files))
      for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
  }
  report(
    `SQLite, µs of CPU per page (store call), medians of ${rounds} rounds; load ${start} -> ${load()}:`,
    figs,
  );
  return { build, bytes, figures: figs, load: { start, end: load() } };
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

/**
 * The page query `run` makes through `db` (its last query), run again under EXPLAIN (ANALYZE,
 * BUFFERS): the shared buffers it touched, its heap fetches, and its first scan node.
 */
async function explained(
  db: Kysely<Database>,
  run: (db: Kysely<Database>) => Promise<unknown>,
): Promise<{ buffers: number; heapFetches: number; scan: string }> {
  let last: CompiledQuery | undefined;
  const recorder: KyselyPlugin = {
    transformQuery: (a) => {
      last = db.getExecutor().compileQuery(a.node, a.queryId);
      return a.node;
    },
    transformResult: async (a) => a.result,
  };
  await run(db.withPlugin(recorder));
  if (!last) throw new Error('no query');
  const r = await db.executeQuery<Record<string, string>>(
    CompiledQuery.raw(`explain (analyze, buffers, costs off, timing off) ${last.sql}`, [...last.parameters]),
  );
  const lines = r.rows.map((row) => row['QUERY PLAN'] as string);
  const num = (re: RegExp) => Number(lines.map((l) => re.exec(l)?.[1]).find((v) => v !== undefined) ?? 0);
  return {
    buffers: num(/Buffers: shared hit=(\d+)/),
    heapFetches: lines.reduce((n, l) => n + Number(/Heap Fetches: (\d+)/.exec(l)?.[1] ?? 0), 0),
    scan:
      lines
        .find((l) => /Index (Only )?Scan/.test(l))
        ?.trim()
        .replace(/\s+\(.*$/, '') ?? '?',
  };
}

const PG_TABLES = ['users', 'games', 'videos', 'subscriptions', 'markers', 'streams'];

async function measurePg(seeded: string) {
  const url = args['pg-url'] as string;
  const tag = randomBytes(4).toString('hex');
  const schemas = { a: `bench_lst_a_${tag}`, b: `bench_lst_b_${tag}` };
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const stores: Store[] = [];
  try {
    // Each schema: helixd's own tables (helixd migrate), 012's indexes undone, the seeded rows.
    const src = new SQLite(seeded, { readonly: true });
    for (const schema of Object.values(schemas)) {
      await admin.query(`create schema ${schema}`);
      const scoped = `${url}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
      const m = await runCaptured(['migrate', '--db', scoped]);
      if (m.code !== 0) throw new Error(`helixd migrate: ${m.stderr}`);
      await admin.query(`set search_path = ${schema}`);
      for (const l of LISTING_INDEXES)
        if (l.postgres) await admin.query(`drop index ${l.index}; ${listingIndexSql(l, 'key')}`);
      // Streams before games: the triggers of 008 would otherwise add the streams' viewers to the
      // games' copied counts a second time.
      for (const table of ['users', 'videos', 'subscriptions', 'markers', 'streams', 'games']) {
        const rows = src.prepare(`select * from ${table}`).all() as Record<string, unknown>[];
        for (const r of rows) delete r.trending;
        const columns = Object.keys(rows[0] ?? {}).join(', ');
        for (let i = 0; i < rows.length; i += 20_000)
          await admin.query(
            `insert into ${table} (${columns}) select ${columns} from json_populate_recordset(null::${table}, $1)`,
            [JSON.stringify(rows.slice(i, i + 20_000))],
          );
      }
    }
    src.close();
    // Every listing index built again from the loaded rows on both sides (as the seed builds
    // them), so that their sizes compare; b's INCLUDE-covering.
    const build: Record<string, { a: number; b: number }> = {};
    for (const l of LISTING_INDEXES) {
      const took = { a: 0, b: 0 };
      for (const side of ['a', 'b'] as const) {
        await admin.query(`set search_path = ${schemas[side]}`);
        await admin.query(`drop index ${l.index}`);
        const t0 = performance.now();
        await admin.query(listingIndexSql(l, side === 'a' ? 'key' : 'postgres'));
        took[side] = (performance.now() - t0) / 1000;
      }
      build[l.index] = took;
    }
    for (const s of Object.values(schemas))
      await admin.query(`vacuum analyze ${PG_TABLES.map((t) => `${s}.${t}`).join(', ')}`);
    const rel = async (schema: string, name: string) =>
      Number(
        (await admin.query('select pg_relation_size($1::regclass) as n', [`${schema}.${name}`])).rows[0].n,
      );
    say('PostgreSQL: the listing indexes before (a) and INCLUDE-covering (b): MB, seconds to build (wall):');
    const bytes: Record<string, { a: number; b: number }> = {};
    for (const l of LISTING_INDEXES) {
      const size = { a: await rel(schemas.a, l.index), b: await rel(schemas.b, l.index) };
      bytes[l.index] = size;
      say(
        `  ${l.index.padEnd(32)} ${(size.a / 1e6).toFixed(1).padStart(5)} -> ${(size.b / 1e6).toFixed(1).padStart(5)} MB, built in ${build[l.index]?.a.toFixed(2)} -> ${build[l.index]?.b.toFixed(2)} s${l.postgres ? ' (012 builds it)' : ''}`,
      );
    }
    const side = async (schema: string): Promise<Side> => {
      const store = openStore({ url, schema, poolSize: 1 });
      stores.push(store);
      const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(store.db);
      return { db: store.db, server: procCpu(Number(rows[0]?.pid)) };
    };
    const [a, b] = [await side(schemas.a), await side(schemas.b)];
    const src2 = new SQLite(seeded, { readonly: true });
    const figs: Record<string, Figure & { keys: number }> = {};
    const buffers: Record<string, { a: number; b: number; heapFetches: number; plan: string }> = {};
    const start = load();
    for (const l of LISTINGS) {
      const keys = l.keys(src2);
      figs[l.name] = { keys: keys.length, ...(await measure(l, keys, a, b, true)) };
      buffers[l.name] = { a: 0, b: 0, heapFetches: 0, plan: '' };
      const sample = keys.filter((_, i) => i % Math.max(1, Math.floor(keys.length / 50)) === 0);
      for (const side of ['a', 'b'] as const)
        for (const k of sample) {
          const p = await explained((side === 'a' ? a : b).db, (db) => l.run(db, k, true));
          const e = buffers[l.name] as { a: number; b: number; heapFetches: number; plan: string };
          e[side] += p.buffers / sample.length;
          if (side === 'b') {
            e.heapFetches += p.heapFetches / sample.length;
            e.plan = p.scan;
          }
        }
    }
    src2.close();
    say(
      'PostgreSQL, shared buffers a page touches (EXPLAIN ANALYZE BUFFERS, the page query, mean over ~50 keys):',
    );
    for (const [name, e] of Object.entries(buffers))
      say(
        `  ${name.padEnd(34)} a ${e.a.toFixed(1).padStart(5)}  b ${e.b.toFixed(1).padStart(5)}  (b: ${e.plan}, heap fetches ${e.heapFetches.toFixed(1)})`,
      );
    report(
      `PostgreSQL, µs of CPU per page (store call: client; backend: server), medians of ${rounds} rounds; load ${start} -> ${load()}:`,
      figs,
    );
    return { build, bytes, figures: figs, buffers, load: { start, end: load() } };
  } finally {
    for (const s of stores) await s.close();
    for (const s of Object.values(schemas)) await admin.query(`drop schema if exists ${s} cascade`);
    await admin.end();
  }
}

// ---------------------------------------------------------------------------------------------

const results: Record<string, unknown> = {
  date: new Date().toISOString(),
  users,
  rounds,
  perRound,
  first: FIRST,
};
const seeded = await seededStore();
say(`store ${seeded}; load ${load()}`);
if (!args['skip-sqlite']) results.sqlite = await measureSqlite(seeded);
if (!args['skip-pg']) results.postgres = await measurePg(seeded);
const out = join(ROOT, 'bench', 'results', `${new Date().toISOString().slice(0, 10)}-layout-listings.json`);
await mkdir(dirname(out), { recursive: true });
await writeFile(out, `${JSON.stringify(results, null, 2)}\n`);
say(`results: ${out}`);
