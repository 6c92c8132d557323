// `npm run bench:layout`: how a listing is stored, measured candidate by candidate before any is
// built (issue 16). In process, no HTTP: µs of CPU (process.cpuUsage, user + system) per page of
// `GET /helix/clips?game_id=X&first=20` and `?broadcaster_id=X&first=20`, over distinct keys walked
// round-robin (every game, or the next slice of broadcasters), the candidates interleaved in rounds,
// medians over the rounds. See docs/listing-layout.md for what each candidate is and the figures.
//
//   npm run bench:layout                        20,000 users (200,000 clips), SQLite then PostgreSQL
//   npm run bench:layout -- --rounds 5 --skip-insert --skip-pg
//   other flags: --users N --insert-rows N --skip-sqlite --pg-url postgres://...
//
// The seeded store is kept in bench/data/ (layout-u<users>-s1.db) and reused; the candidates are
// built in a copy of it (…-work.db, removed at the end), each in its own table, from the seeded rows.
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import SQLite from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import { CompiledQuery, type Kysely, sql } from 'kysely';
import pg from 'pg';
import { runCaptured } from '../src/cli.ts';
import { rfc3339 } from '../src/clock.ts';
import type { AppContext } from '../src/context.ts';
import { paginationOf, readPaging } from '../src/http/params.ts';
import { Links } from '../src/links.ts';
import { clipRowToClip, clipsRoutes } from '../src/routes/clips.ts';
import { CLIPS_ORDER, type ClipSelector, clipsPage, clipsPageQuery } from '../src/store/clips.ts';
import { openStore, type Store } from '../src/store/db.ts';
import { keysetPage, type Page } from '../src/store/page.ts';
import type { ClipRow, ClipsTable, Database } from '../src/store/schema.ts';
import { type UserName, UserNames } from '../src/store/users.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** Data is generated relative to a fixed day, so that runs compare (as bench/run.ts and import.ts). */
const ANCHOR_ISO = '2026-11-21T00:00:00Z';
const SITE = 'https://www.twitch.tv';
const SECRET = 'bench-layout-secret-0123456789';
const FIRST = 20;

const { values: args } = parseArgs({
  options: {
    users: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '7' },
    'insert-rows': { type: 'string', default: '1000000' },
    'skip-insert': { type: 'boolean', default: false },
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
const insertRows = Number(args['insert-rows']);
const say = (line = '') => process.stdout.write(`${line}\n`);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const cpuNow = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
/** CPU seconds (user + system) a process has used, from /proc (a PostgreSQL backend here). */
const procCpu = (pid: number) => () => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(f[11]) + Number(f[12])) / 100;
};
interface Spent {
  wall: number;
  cpu: number;
}
/**
 * Wall and CPU seconds from now to the call of what it returns. CPU is this process's unless
 * `cpu` reads another's; on a loaded machine it is the steadier of the two.
 */
function stopwatch(cpu: () => number = () => cpuNow() / 1e6): () => Spent {
  const w = performance.now();
  const c = cpu();
  return () => ({ wall: (performance.now() - w) / 1000, cpu: cpu() - c });
}
const secs = (t: Spent) => `${t.wall.toFixed(1)} s (CPU ${t.cpu.toFixed(1)} s)`;

// ---------------------------------------------------------------------------------------------
// The store: seeded once through the CLI, as an operator seeds one, kept and reused.

async function seededStore(): Promise<string> {
  const file = join(ROOT, 'bench', 'data', `layout-u${users}-s1.db`);
  if (existsSync(file)) {
    // A store whose seed ran to the end holds every user (the seed commits once, at its end).
    const conn = new SQLite(file, { readonly: true });
    const n = (conn.prepare('select count(*) as n from users').get() as { n: number }).n;
    conn.close();
    if (n === users) return file;
  }
  rmSync(file, { force: true });
  await mkdir(dirname(file), { recursive: true });
  say(`seeding ${file}: ${users} users ...`);
  const r = await runCaptured([
    'seed',
    '--db',
    file,
    '--users',
    String(users),
    '--seed',
    '1',
    '--now',
    ANCHOR_ISO,
  ]);
  if (r.code !== 0) throw new Error(`helixd seed: exit ${r.code}: ${r.stderr}`);
  say(`  ${r.stdout.split('\n')[0]}`);
  return file;
}

// ---------------------------------------------------------------------------------------------
// The candidate layouts, each in its own table of the work copy, built from the seeded clips.

/** Every column of a clip row, in the table's order. */
const CLIP_COLUMNS = [
  'id',
  'broadcaster_id',
  'creator_id',
  'video_id',
  'game_id',
  'language',
  'title',
  'view_count',
  'created_at',
  'duration_ds',
  'vod_offset',
  'is_featured',
] as const;
/** The columns a page needs besides the order's key (view_count, id). */
const REST: readonly string[] = CLIP_COLUMNS.filter((c) => c !== 'id' && c !== 'view_count');
const colsWithout = (selector: string) => REST.filter((c) => c !== selector);
const SELECTORS: readonly ClipSelector[] = ['game_id', 'broadcaster_id'];
const short = (s: ClipSelector) => (s === 'game_id' ? 'game' : 'broadcaster');

/**
 * The row's wire JSON cut where the display names go, made by the route's own mapping
 * (clipRowToClip) and JSON.stringify: `head` + name + `mid` + name + `tail`. With links made on
 * SITE_TOKEN (d2), the site's URL is a U+0001 in the text (JSON escapes every control character
 * in a string, so a raw one can only be the mark), put back once per page.
 */
function fragmentOf(row: ClipRow, links: Links): { head: string; mid: string; tail: string } {
  const b = `B${MARK}`;
  const c = `C${MARK}`;
  const names = new Map<number, UserName>([
    [row.broadcaster_id, { id: row.broadcaster_id, login: '', display_name: b }],
  ]);
  if (row.creator_id !== row.broadcaster_id)
    names.set(row.creator_id, { id: row.creator_id, login: '', display_name: c });
  // The site mark is written as a random token and then made a raw U+0001 (a title holding a
  // U+0001 is written `\u0001`, six characters, so it cannot be taken for the mark).
  const text = JSON.stringify(clipRowToClip(row, names, links)).replaceAll(SITE_TOKEN, SITE_MARK);
  // The broadcaster's name comes first on the wire, the creator's second (the same mark twice when
  // the broadcaster cut the clip).
  const qb = `"${b}"`;
  const qc = row.creator_id === row.broadcaster_id ? qb : `"${c}"`;
  const i = text.indexOf(qb);
  const j = text.indexOf(qc, i + qb.length);
  if (i < 0 || j < 0) throw new Error(`cannot cut ${row.id}`);
  const head = text.slice(0, i);
  const mid = text.slice(i + qb.length, j);
  const tail = text.slice(j + qc.length);
  return { head, mid, tail };
}
const MARK = randomBytes(8).toString('hex');
const SITE_MARK = '\u0001';
const SITE_TOKEN = `S${MARK}`;

/**
 * d's fragments written by SQLite itself (an INSERT ... SELECT, no row through JS): the same text
 * as fragmentOf, checked against it on the seeded clips (buildSqliteCandidates).
 */
function fragmentSql(site: string): { head: string; mid: string; tail: string } {
  const q = (v: string) => `'${v.replaceAll("'", "''")}'`;
  return {
    head: `'{"id":' || json_quote(id) || ',"url":' || json_quote(${q(`${site}/clip/`)} || id)
      || ',"embed_url":' || json_quote(${q(`${site}/embed/clip?clip=`)} || id)
      || ',"broadcaster_id":"' || broadcaster_id || '","broadcaster_name":'`,
    mid: `',"creator_id":"' || creator_id || '","creator_name":'`,
    tail: `',"video_id":"' || coalesce(video_id, '') || '","game_id":"' || game_id
      || '","language":' || json_quote(language) || ',"title":' || json_quote(title)
      || ',"view_count":' || view_count
      || ',"created_at":"' || strftime('%Y-%m-%dT%H:%M:%SZ', created_at, 'unixepoch')
      || '","thumbnail_url":' || json_quote(${q(`${site}/media/clips/`)} || id || '/preview-480x272.jpg')
      || ',"duration":' || (case when duration_ds % 10 = 0 then duration_ds / 10 else duration_ds / 10.0 end)
      || ',"vod_offset":' || coalesce(vod_offset, 'null')
      || ',"is_featured":' || (case when is_featured then 'true' else 'false' end) || '}'`,
  };
}

/** Fills `table` (d's shape, for selector `s`) from `clips` by SQL alone. */
function fragmentsBySql(conn: SQLite.Database, table: string, s: ClipSelector, site: string): void {
  const ids = nameIds(s);
  const f = fragmentSql(site);
  conn.exec(
    `insert into ${table} (${s}, view_count, id, ${ids.join(', ')}, head, mid, tail)
     select ${s}, view_count, id, ${ids.join(', ')}, ${f.head}, ${f.mid}, ${f.tail}
     from clips order by ${s}, view_count, id`,
  );
}

/** c's table for selector `s`: WITHOUT ROWID, keyed by the listing order, every page column. */
function createClustered(conn: SQLite.Database, table: string, s: ClipSelector, from = 'clips'): void {
  const rest = colsWithout(s);
  conn.exec(
    `create table ${table} (${s} integer not null, view_count integer not null, id text not null,
     ${rest.map((c) => `${c} ${c === 'language' || c === 'title' ? 'text' : 'integer'}`).join(', ')},
     primary key (${s}, view_count, id)) without rowid`,
  );
  conn.exec(
    `insert into ${table} (${s}, view_count, id, ${rest.join(', ')})
     select ${s}, view_count, id, ${rest.join(', ')} from ${from} order by ${s}, view_count, id`,
  );
}

/** The user ids a fragment table keeps beside the key, for the names (the selector's is the key). */
const nameIds = (s: ClipSelector) => (s === 'game_id' ? ['broadcaster_id', 'creator_id'] : ['creator_id']);

/** d's table for selector `s`, empty: the key, the user ids, the fragments. */
function createFragmentTable(conn: SQLite.Database, table: string, s: ClipSelector): void {
  conn.exec(
    `create table ${table} (${s} integer not null, view_count integer not null, id text not null,
     ${nameIds(s)
       .map((c) => `${c} integer not null`)
       .join(', ')}, head text not null, mid text not null,
     tail text not null, primary key (${s}, view_count, id)) without rowid`,
  );
}

/** d's rows for `rows`: the fragments made in JS by fragmentOf. */
function writeFragments(
  conn: SQLite.Database,
  table: string,
  rows: Iterable<ClipRow>,
  links: Links,
  s: ClipSelector,
): void {
  const ids = nameIds(s);
  const ins = conn.prepare(
    `insert into ${table} (${s}, view_count, id, ${ids.join(', ')}, head, mid, tail)
     values (${['', '', '', ...ids, '', '', ''].map(() => '?').join(', ')})`,
  );
  for (const row of rows) {
    const f = fragmentOf(row, links);
    ins.run(row[s], row.view_count, row.id, ...ids.map((c) => row[c as 'creator_id']), f.head, f.mid, f.tail);
  }
}

function buildSqliteCandidates(
  conn: SQLite.Database,
  links: Links,
  markedLinks: Links,
): Record<string, Spent> {
  const seconds: Record<string, Spent> = {};
  const timed = (name: string, fn: () => void) => {
    const done = stopwatch();
    conn.transaction(fn)();
    seconds[name] = done();
  };
  // a0: the row table with the listing indexes of migration 003 (selector, view_count, id,
  // created_at), as the store was before 010 made them covering: today's `a` is 010's layout.
  timed('a0', () => {
    conn.exec(`create table lay_a0_clips as select * from clips where 0`);
    conn.exec(`insert into lay_a0_clips select * from clips order by rowid`);
    for (const s of SELECTORS)
      conn.exec(`create index lay_a0_${short(s)} on lay_a0_clips (${s}, view_count, id, created_at)`);
  });
  // b: the row table as it is, with one covering index per listing: the listing's key, then every
  // other column the page needs (SQLite has no INCLUDE: they are trailing key columns).
  timed('b', () => {
    conn.exec(`create table lay_b_clips as select * from clips where 0`);
    conn.exec(`insert into lay_b_clips select * from clips order by rowid`);
    for (const s of SELECTORS)
      conn.exec(
        `create index lay_b_${short(s)} on lay_b_clips (${s}, view_count, id, ${colsWithout(s).join(', ')})`,
      );
  });
  // c: one WITHOUT ROWID table per listing, its B-tree clustered by the listing's key.
  timed('c', () => {
    for (const s of SELECTORS) createClustered(conn, `lay_c_${short(s)}`, s);
  });
  // d: c's key with the row's wire JSON cut at the names (site in it); d2: the same with the site
  // as a mark, so that moving the site (HELIXD_SITE_URL) needs no rewrite of the fragments.
  for (const [name, l] of [
    ['d', links],
    ['d2', markedLinks],
  ] as const)
    timed(name, () => {
      for (const s of SELECTORS) {
        const t = `lay_${name}_${short(s)}`;
        createFragmentTable(conn, t, s);
        writeFragments(
          conn,
          t,
          conn.prepare(`select * from clips order by ${s}, view_count, id`).all() as ClipRow[],
          l,
          s,
        );
      }
    });
  // d written by SQL: timed, and compared with the JS-made fragments row by row, then dropped.
  timed('d (written by SQL)', () => {
    for (const s of SELECTORS) {
      conn.exec(`create table lay_ds_${short(s)} as select * from lay_d_${short(s)} where 0`);
      fragmentsBySql(conn, `lay_ds_${short(s)}`, s, SITE);
    }
  });
  for (const s of SELECTORS) {
    const t = short(s);
    const diff = conn
      .prepare(
        `select count(*) as n from lay_d_${t} a left join lay_ds_${t} b using (${s}, view_count, id)
         where a.head is not b.head or a.mid is not b.mid or a.tail is not b.tail`,
      )
      .get() as { n: number };
    if (diff.n > 0) throw new Error(`${diff.n} fragments written by SQL differ from clipRowToClip's (${t})`);
    conn.exec(`drop table lay_ds_${t}`);
  }
  return seconds;
}

/** Bytes on disk of each table and index (dbstat), by name. */
function sizes(conn: SQLite.Database): Map<string, number> {
  const rows = conn.prepare(`select name, sum(pgsize) as bytes from dbstat group by name`).all() as {
    name: string;
    bytes: number;
  }[];
  return new Map(rows.map((r) => [r.name, r.bytes]));
}

// ---------------------------------------------------------------------------------------------
// What one page costs, candidate by candidate: each returns the page's body (or its rows).

interface LayoutTables {
  lay_a0_clips: ClipsTable;
  lay_b_clips: ClipsTable;
  lay_c_game: ClipsTable;
  lay_c_broadcaster: ClipsTable;
  lay_d_game: FragmentTable;
  lay_d_broadcaster: FragmentTable;
  lay_d2_game: FragmentTable;
  lay_d2_broadcaster: FragmentTable;
}
interface FragmentTable {
  game_id: number;
  broadcaster_id: number;
  view_count: number;
  id: string;
  creator_id: number;
  head: string;
  mid: string;
  tail: string;
}
type Db = Kysely<Database & LayoutTables>;

type Run = (value: number) => Promise<unknown>;
interface Unit {
  name: string;
  what: string;
  run: Run;
  /** untimed work before a round's keys are run (the steps keep their inputs here) */
  prepare?: (keys: readonly number[]) => Promise<void>;
}

/** The route's handler and its 200 serializer, as Fastify compiles them (no HTTP around them). */
function routePage(ctx: AppContext): {
  handler: (q: Record<string, unknown>) => Promise<unknown>;
  serialize: (v: unknown) => string;
} {
  const routes = new Map<
    string,
    {
      handler: (req: unknown, reply: unknown) => Promise<unknown>;
      schema: { response: Record<number, unknown> };
    }
  >();
  const fake = {
    get: (path: string, opts: never) => routes.set(path, opts),
    route: () => undefined,
  } as unknown as FastifyInstance;
  clipsRoutes(fake, ctx);
  const r = routes.get('/helix/clips');
  if (!r) throw new Error('no /helix/clips route');
  // Fastify's default serializer compiler, as its schema controller calls it (no shared schemas).
  const compile = SerializerSelector()({}, undefined);
  const serialize = compile({
    schema: r.schema.response[200] as object,
    method: 'GET',
    url: '/helix/clips',
    httpStatus: '200',
  }) as (v: unknown) => string;
  return { handler: (query) => r.handler({ query }, {}), serialize };
}

/** What every candidate of one listing shares: the route, the paging, mapping as the route maps. */
function listingKit(store: Store, ctx: AppContext, selector: ClipSelector) {
  const route = routePage(ctx);
  // The cursor's scope names every parameter that decides the rows, as the route's does.
  const pagingOf = (value: number) =>
    readPaging(
      ctx,
      '/clips',
      { first: FIRST },
      { [selector]: value, started_at: undefined, ended_at: undefined, is_featured: undefined },
    );
  // Pages mapped as the route maps them (names from UserNames, clipRowToClip, the cursor, the
  // route's serializer), from rows read from any table.
  const mapped =
    (read: (value: number, first: number) => Promise<Page<ClipRow>>): Run =>
    async (value) => {
      const paging = pagingOf(value);
      const page = await read(value, paging.first);
      const names = await ctx.userNames.byIds(page.rows.flatMap((r) => [r.broadcaster_id, r.creator_id]));
      return route.serialize({
        data: page.rows.map((r) => clipRowToClip(r, names, ctx.links)),
        pagination: paginationOf(ctx, paging, page),
      });
    };
  const today = (what: string): Unit[] => [
    {
      name: 'a',
      what,
      run: async (v) => route.serialize(await route.handler({ first: FIRST, [selector]: String(v) })),
    },
    {
      name: 'a.store',
      what: "today's store call alone (clipsPage)",
      run: (v) => clipsPage(store.db, { selector, value: v }, { first: FIRST }),
    },
  ];
  return { route, pagingOf, mapped, today };
}

function sqliteUnits(store: Store, conn: SQLite.Database, ctx: AppContext, selector: ClipSelector): Unit[] {
  const db = store.db as unknown as Db;
  const s = short(selector);
  const { route, pagingOf, mapped, today } = listingKit(store, ctx, selector);
  const body = (data: string, pagination: unknown) =>
    `{"data":${data},"pagination":${JSON.stringify(pagination)}}`;

  const readA0 = (value: number, first: number) =>
    keysetPage(db.selectFrom('lay_a0_clips').selectAll().where(selector, '=', value), CLIPS_ORDER, 'desc', {
      first,
    });
  const readB = (value: number, first: number) =>
    keysetPage(db.selectFrom('lay_b_clips').selectAll().where(selector, '=', value), CLIPS_ORDER, 'desc', {
      first,
    });
  const readC = (value: number, first: number) =>
    keysetPage(
      db
        .selectFrom(`lay_c_${s}` as 'lay_c_game')
        .selectAll()
        .where(selector, '=', value),
      CLIPS_ORDER,
      'desc',
      { first },
    ) as Promise<Page<ClipRow>>;
  const fragmentTable = (v: 'd' | 'd2') => `lay_${v}_${s}` as 'lay_d_game';
  const readD = (v: 'd' | 'd2') => (value: number, first: number) =>
    keysetPage(
      db
        .selectFrom(fragmentTable(v))
        .select(['view_count', 'id', 'broadcaster_id', 'creator_id', 'head', 'mid', 'tail'])
        .where(selector, '=', value),
      CLIPS_ORDER,
      'desc',
      { first },
    );
  const spliced =
    (v: 'd' | 'd2'): Run =>
    async (value) => {
      const paging = pagingOf(value);
      const page = await readD(v)(value, paging.first);
      const names = await ctx.userNames.byIds(page.rows.flatMap((r) => [r.broadcaster_id, r.creator_id]));
      const name = (id: number) => JSON.stringify(names.get(id)?.display_name ?? '');
      let data = '[';
      for (let i = 0; i < page.rows.length; i++) {
        const r = page.rows[i] as (typeof page.rows)[number];
        data += `${i ? ',' : ''}${r.head}${name(r.broadcaster_id)}${r.mid}${name(r.creator_id)}${r.tail}`;
      }
      data += ']';
      if (v === 'd2') data = data.replaceAll(SITE_MARK, SITE);
      return body(data, paginationOf(ctx, paging, page));
    };

  // A JSON template per row from the row's columns (no object, no schema serializer): how much of
  // d's gain comes from not mapping rows at all, without storing any wire text.
  const q = JSON.stringify;
  const links = ctx.links;
  const templated =
    (read: (value: number, first: number) => Promise<Page<ClipRow>>): Run =>
    async (value) => {
      const paging = pagingOf(value);
      const page = await read(value, paging.first);
      const names = await ctx.userNames.byIds(page.rows.flatMap((r) => [r.broadcaster_id, r.creator_id]));
      let data = '[';
      for (let i = 0; i < page.rows.length; i++) {
        const r = page.rows[i] as ClipRow;
        data += `${i ? ',' : ''}{"id":${q(r.id)},"url":${q(links.clip(r.id))},"embed_url":${q(links.clipEmbed(r.id))},"broadcaster_id":"${r.broadcaster_id}","broadcaster_name":${q(names.get(r.broadcaster_id)?.display_name ?? '')},"creator_id":"${r.creator_id}","creator_name":${q(names.get(r.creator_id)?.display_name ?? '')},"video_id":"${r.video_id ?? ''}","game_id":"${r.game_id}","language":${q(r.language)},"title":${q(r.title)},"view_count":${r.view_count},"created_at":"${rfc3339(r.created_at)}","thumbnail_url":${q(links.clipThumbnail(r.id))},"duration":${r.duration_ds / 10},"vod_offset":${r.vod_offset ?? 'null'},"is_featured":${r.is_featured === 1}}`;
      }
      return body(`${data}]`, paginationOf(ctx, paging, page));
    };
  const readA = (value: number, first: number) => clipsPage(store.db, { selector, value }, { first });

  // The route's mapping taken apart, each step alone on inputs kept from a page of the same key
  // read before the step is timed (prepare).
  const kept = new Map<number, { page: Page<ClipRow>; names: Map<number, UserName>; answer: unknown }>();
  const keep = async (value: number) => {
    let k = kept.get(value);
    if (!k) {
      const page = await clipsPage(store.db, { selector, value }, { first: FIRST });
      const names = await ctx.userNames.byIds(page.rows.flatMap((r) => [r.broadcaster_id, r.creator_id]));
      const answer = {
        data: page.rows.map((r) => clipRowToClip(r, names, ctx.links)),
        pagination: paginationOf(ctx, pagingOf(value), page),
      };
      k = { page, names, answer };
      kept.set(value, k);
    }
    return k;
  };
  const keepAll = async (keys: readonly number[]) => {
    for (const k of keys) await keep(k);
  };
  const step =
    (fn: (k: Awaited<ReturnType<typeof keep>>, value: number) => unknown): Run =>
    async (value) =>
      fn(await keep(value), value);

  // e: SQLite writes the `data` array; names joined from the users table in the same statement.
  const ends = `count(*) as n, max(case when rn = ${FIRST} then view_count end) as lv,
    max(case when rn = ${FIRST} then id end) as lid, max(case when rn = 1 then view_count end) as fv,
    max(case when rn = 1 then id end) as fid`;
  const ranked = (table: string, cols: string) =>
    `select row_number() over (order by p.view_count desc, p.id desc) as rn, ${cols},
       coalesce(ub.display_name, '') as bn, coalesce(uc.display_name, '') as cn
     from (select * from ${table} where ${selector} = ? order by view_count desc, id desc limit ${FIRST + 1}) p
     left join users ub on ub.id = p.broadcaster_id left join users uc on uc.id = p.creator_id`;
  const eObject = `select json_group_array(json_object(
      'id', id, 'url', ? || '/clip/' || id, 'embed_url', ? || '/embed/clip?clip=' || id,
      'broadcaster_id', cast(broadcaster_id as text), 'broadcaster_name', bn,
      'creator_id', cast(creator_id as text), 'creator_name', cn,
      'video_id', coalesce(cast(video_id as text), ''), 'game_id', cast(game_id as text),
      'language', language, 'title', title, 'view_count', view_count,
      'created_at', strftime('%Y-%m-%dT%H:%M:%SZ', created_at, 'unixepoch'),
      'thumbnail_url', ? || '/media/clips/' || id || '/preview-480x272.jpg',
      'duration', case when duration_ds % 10 = 0 then duration_ds / 10 else duration_ds / 10.0 end,
      'vod_offset', vod_offset, 'is_featured', json(case when is_featured then 'true' else 'false' end))
      order by rn) filter (where rn <= ${FIRST}) as data, ${ends}
    from (${ranked(`lay_c_${s}`, 'p.*')})`;
  const eFragments = `select '[' || coalesce(group_concat(head || json_quote(bn) || mid || json_quote(cn) || tail, ','
      order by rn) filter (where rn <= ${FIRST}), '') || ']' as data, ${ends}
    from (${ranked(`lay_d_${s}`, 'p.*')})`;
  interface Rendered {
    data: string;
    n: number;
    lv: number | null;
    lid: string | null;
    fv: number | null;
    fid: string | null;
  }
  const rendered =
    (text: string, params: (value: number) => unknown[]): Run =>
    async (value) => {
      const paging = pagingOf(value);
      const row = (await db.executeQuery<Rendered>(CompiledQuery.raw(text, params(value))))
        .rows[0] as Rendered;
      const hasMore = row.n > paging.first;
      const page: Page<unknown> = {
        rows: [],
        hasMore,
        ...(hasMore
          ? {
              ends: {
                first: [row.fv as number, row.fid as string],
                last: [row.lv as number, row.lid as string],
              },
            }
          : {}),
      };
      return body(row.data, paginationOf(ctx, paging, page));
    };

  // The bare statements (better-sqlite3, no Kysely): what the layout itself costs to read.
  // Rows as arrays (as helixd's driver reads them), so that this is SQLite's work and little else.
  const bare = (text: string) => {
    const st = conn.prepare(text).raw(true);
    return async (value: number) => st.all(value);
  };
  const aSql = clipsPageQuery(store.db, { selector, value: 0 }, { first: FIRST }).compile().sql;
  const listing = (table: string, cols = '*') =>
    `select ${cols} from ${table} where ${selector} = ? order by view_count desc, id desc limit ${FIRST + 1}`;
  const dCols = 'view_count, id, broadcaster_id, creator_id, head, mid, tail';

  return [
    ...today("today's route: store call, names, clipRowToClip, cursor, serializer"),
    { name: 'a.sql', what: "today's SQL, bare better-sqlite3", run: bare(aSql) },
    {
      name: 'a.tpl',
      what: "today's store call, rows written by a JSON template (no object, no serializer)",
      run: templated(readA),
    },
    {
      name: 'm.names',
      prepare: keepAll,
      what: 'step: display names of a page (UserNames.byIds, in memory)',
      run: step((k) => ctx.userNames.byIds(k.page.rows.flatMap((r) => [r.broadcaster_id, r.creator_id]))),
    },
    {
      name: 'm.rows',
      prepare: keepAll,
      what: 'step: clipRowToClip over the page',
      run: step((k) => k.page.rows.map((r) => clipRowToClip(r, k.names, ctx.links))),
    },
    {
      name: 'm.cursor',
      prepare: keepAll,
      what: 'step: readPaging + paginationOf (the signed cursor)',
      run: step((k, v) => paginationOf(ctx, pagingOf(v), k.page)),
    },
    {
      name: 'm.json',
      prepare: keepAll,
      what: "step: the route's serializer over the page",
      run: step((k) => route.serialize(k.answer)),
    },
    { name: 'a0', what: "migration 003's index (before 010), mapped as the route maps", run: mapped(readA0) },
    { name: 'a0.store', what: "003's index: keysetPage through Kysely", run: (v) => readA0(v, FIRST) },
    { name: 'b', what: 'covering index, mapped as the route maps', run: mapped(readB) },
    { name: 'b.store', what: 'covering index: keysetPage through Kysely', run: (v) => readB(v, FIRST) },
    { name: 'b.sql', what: 'covering index: bare SQL', run: bare(listing('lay_b_clips')) },
    { name: 'c', what: 'WITHOUT ROWID clustered, mapped as the route maps', run: mapped(readC) },
    { name: 'c.store', what: 'WITHOUT ROWID: keysetPage through Kysely', run: (v) => readC(v, FIRST) },
    { name: 'c.sql', what: 'WITHOUT ROWID: bare SQL', run: bare(listing(`lay_c_${s}`)) },
    { name: 'c.tpl', what: 'WITHOUT ROWID, rows written by the JSON template', run: templated(readC) },
    { name: 'd', what: 'WITHOUT ROWID + wire fragments, names spliced in JS', run: spliced('d') },
    { name: 'd.store', what: 'fragments: keysetPage through Kysely', run: (v) => readD('d')(v, FIRST) },
    { name: 'd.sql', what: 'fragments: bare SQL', run: bare(listing(`lay_d_${s}`, dCols)) },
    { name: 'd2', what: 'd with the site URL as a mark, put back per page', run: spliced('d2') },
    {
      name: 'e.c',
      what: 'SQLite json_group_array(json_object) over c, names joined in SQL',
      run: rendered(eObject, (v) => [SITE, SITE, SITE, v]),
    },
    {
      name: 'e.d',
      what: 'SQLite group_concat of d fragments, names joined in SQL',
      run: rendered(eFragments, (v) => [v]),
    },
  ];
}

// ---------------------------------------------------------------------------------------------
// Rounds: every unit reads the same slice of keys in a round, the units in a rotated order, so
// that a change in the machine's load hits all of them; the first round warms up and is dropped.

interface Figure {
  name: string;
  what: string;
  /** medians over the rounds, µs per page */
  cpu: number;
  wall: number;
  /** the spread of the rounds' CPU figures */
  min: number;
  max: number;
  /** server CPU per page (PostgreSQL backend), µs */
  server?: number;
}

async function runRounds(
  units: Unit[],
  keys: readonly number[],
  perRound: number,
  serverCpu?: () => number,
): Promise<Figure[]> {
  const cpu = new Map<string, number[]>();
  const wall = new Map<string, number[]>();
  const server = new Map<string, number[]>();
  for (let r = 0; r <= rounds; r++) {
    const slice = Array.from(
      { length: perRound },
      (_, i) => keys[(r * perRound + i) % keys.length] as number,
    );
    for (let i = 0; i < units.length; i++) {
      const u = units[(i + r) % units.length] as Unit;
      await u.prepare?.(slice);
      const s0 = serverCpu?.();
      const w0 = performance.now();
      const c0 = cpuNow();
      for (const k of slice) await u.run(k);
      const c = (cpuNow() - c0) / slice.length;
      const w = ((performance.now() - w0) * 1000) / slice.length;
      const s = serverCpu && s0 !== undefined ? ((serverCpu() - s0) * 1e6) / slice.length : undefined;
      if (r === 0) continue;
      for (const [m, v] of [
        [cpu, c],
        [wall, w],
        [server, s],
      ] as const)
        if (v !== undefined) m.set(u.name, [...(m.get(u.name) ?? []), v]);
    }
  }
  return units.map((u) => {
    const cs = cpu.get(u.name) ?? [];
    const ss = server.get(u.name);
    return {
      name: u.name,
      what: u.what,
      cpu: median(cs),
      wall: median(wall.get(u.name) ?? []),
      min: Math.min(...cs),
      max: Math.max(...cs),
      ...(ss ? { server: median(ss) } : {}),
    };
  });
}

/** Each page-producing unit must answer what today's route answers, byte for byte. */
async function sameAnswers(units: Unit[], keys: readonly number[]): Promise<void> {
  const a = units.find((u) => u.name === 'a') as Unit;
  for (const k of keys) {
    const want = await a.run(k);
    for (const u of units) {
      if (/\.(store|sql)$|^m\./.test(u.name)) continue;
      const got = await u.run(k);
      if (got !== want)
        throw new Error(
          `${u.name} answers otherwise than today's route for ${k}:\n${String(got).slice(0, 400)}\n--- today:\n${String(want).slice(0, 400)}`,
        );
    }
  }
}

const f0 = (v: number | undefined) => (v === undefined ? '' : Math.round(v).toLocaleString('en-US'));
function printFigures(title: string, figs: Figure[]): void {
  say(title);
  const server = figs.some((f) => f.server !== undefined);
  say(
    `  ${'unit'.padEnd(9)}${'CPU µs'.padStart(8)}${'min-max'.padStart(12)}${'wall µs'.padStart(9)}${server ? 'server µs'.padStart(11) : ''}  what`,
  );
  for (const f of figs)
    say(
      `  ${f.name.padEnd(9)}${f0(f.cpu).padStart(8)}${`${f0(f.min)}-${f0(f.max)}`.padStart(12)}${f0(f.wall).padStart(9)}${server ? f0(f.server).padStart(11) : ''}  ${f.what}`,
    );
  const by = new Map(figs.map((f) => [f.name, f]));
  for (const c of ['a', 'a0', 'b', 'c', 'd']) {
    const whole = by.get(c);
    const store = by.get(`${c}.store`);
    if (!whole || !store) continue;
    const bare = by.get(`${c}.sql`);
    say(
      `  ${c}: store read ${f0(store.cpu)} µs (${Math.round((100 * store.cpu) / whole.cpu)}%${bare ? `; bare SQL ${f0(bare.cpu)}` : ''}), mapping/names/cursor/JSON ${f0(whole.cpu - store.cpu)} µs (${Math.round((100 * (whole.cpu - store.cpu)) / whole.cpu)}%)`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// SQLite

interface SqliteResult {
  store: string;
  clips: number;
  buildSeconds: Record<string, Spent>;
  bytes: Record<string, number>;
  pages: Record<
    string,
    { keys: number; perRound: number; rowsPerPage: number; bytesPerPage: number; figures: Figure[] }
  >;
  plans: Record<string, string[]>;
  load: { start: string; end: string };
}

async function measureSqlite(seeded: string): Promise<SqliteResult> {
  const work = seeded.replace(/\.db$/, '-work.db');
  for (const f of [work, `${work}-wal`, `${work}-shm`]) rmSync(f, { force: true });
  copyFileSync(seeded, work);
  const links = new Links(SITE);
  const conn = new SQLite(work);
  conn.pragma('journal_mode = WAL');
  say('building the candidates in a copy of the store ...');
  const buildSeconds = buildSqliteCandidates(conn, links, new Links(SITE_TOKEN));
  say(
    `  built in ${Object.entries(buildSeconds)
      .map(([k, v]) => `${k} ${secs(v)}`)
      .join(', ')}`,
  );
  const size = sizes(conn);
  const bytes: Record<string, number> = {
    'a: clips table + its id index': (size.get('clips') ?? 0) + (size.get('sqlite_autoindex_clips_1') ?? 0),
    'a: clips_game_views': size.get('clips_game_views') ?? 0,
    'a: clips_broadcaster_views': size.get('clips_broadcaster_views') ?? 0,
    'a0: lay_a0_game (003)': size.get('lay_a0_game') ?? 0,
    'a0: lay_a0_broadcaster (003)': size.get('lay_a0_broadcaster') ?? 0,
    'b: lay_b_game (covering index)': size.get('lay_b_game') ?? 0,
    'b: lay_b_broadcaster (covering index)': size.get('lay_b_broadcaster') ?? 0,
  };
  for (const c of ['c', 'd', 'd2'])
    for (const s of SELECTORS)
      bytes[`${c}: lay_${c}_${short(s)} (WITHOUT ROWID)`] = size.get(`lay_${c}_${short(s)}`) ?? 0;
  const clips = (conn.prepare('select count(*) as n from clips').get() as { n: number }).n;
  say(`  bytes on disk (dbstat), ${clips.toLocaleString('en-US')} clips:`);
  for (const [k, v] of Object.entries(bytes))
    say(`    ${k.padEnd(48)}${(v / 1e6).toFixed(1).padStart(7)} MB`);

  const store = openStore({ url: work });
  const ctx = { store, secret: SECRET, links, userNames: new UserNames(store) } as unknown as AppContext;
  const start = load();
  const pages: SqliteResult['pages'] = {};
  const plans: SqliteResult['plans'] = {};
  try {
    for (const selector of SELECTORS) {
      const keys = (
        conn.prepare(`select distinct ${selector} as k from clips order by 1`).all() as { k: number }[]
      ).map((r) => r.k);
      const units = sqliteUnits(store, conn, ctx, selector);
      const sample = keys.filter((_, i) => i % Math.max(1, Math.floor(keys.length / 400)) === 0);
      say(
        `${short(selector)}: ${keys.length} keys; checking every candidate's answer against today's (${sample.length} keys) ...`,
      );
      await sameAnswers(units, sample);
      let rows = 0;
      let size = 0;
      for (const k of sample) {
        const b = (await (units[0] as Unit).run(k)) as string;
        size += b.length;
        rows += (JSON.parse(b) as { data: unknown[] }).data.length;
      }
      for (const t of [
        'clips',
        'lay_a0_clips',
        'lay_b_clips',
        `lay_c_${short(selector)}`,
        `lay_d_${short(selector)}`,
      ]) {
        const q = `select * from ${t} where ${selector} = ? order by view_count desc, id desc limit ${FIRST + 1}`;
        plans[`${short(selector)} ${t}`] = (
          conn.prepare(`explain query plan ${q}`).all(1) as { detail: string }[]
        ).map((p) => p.detail);
      }
      const perRound = Math.min(keys.length, 400);
      say(`  ${rounds} rounds (+1 warm-up) of ${perRound} distinct keys per unit; load ${load()}`);
      const figures = await runRounds(units, keys, perRound);
      printFigures(
        `SQLite, clips by ${short(selector)}, first=${FIRST}, µs per page (medians of ${rounds} rounds):`,
        figures,
      );
      pages[short(selector)] = {
        keys: keys.length,
        perRound,
        rowsPerPage: rows / sample.length,
        bytesPerPage: size / sample.length,
        figures,
      };
    }
  } finally {
    await store.close();
    conn.close();
    for (const f of [work, `${work}-wal`, `${work}-shm`]) rmSync(f, { force: true });
  }
  return { store: seeded, clips, buildSeconds, bytes, pages, plans, load: { start, end: load() } };
}

// ---------------------------------------------------------------------------------------------
// The cost of writing each layout: `insertRows` clips (the seeded clips repeated, each copy with
// its own ids) loaded as the seed loads (the row table first, with a large page cache, then the
// listing structures built from it), and then 100,000 more clips written into the built layout
// one by one (an import into a store that holds them).

interface InsertResult {
  rows: number;
  load: Spent;
  layouts: Record<
    string,
    {
      build: Spent;
      bytes: number;
      clipsPerSecond: number;
      clipsPerCpuSecond: number;
      live: Spent;
      liveClipsPerCpuSecond: number;
    }
  >;
  baseBytes: number;
}

const sqliteListing = (conn: SQLite.Database, layout: string) => {
  if (layout === 'a')
    for (const s of SELECTORS)
      conn.exec(`create index lay_a_${short(s)} on clips (${s}, view_count, id, created_at)`);
  if (layout === 'b')
    for (const s of SELECTORS)
      conn.exec(
        `create index lay_b_${short(s)} on clips (${s}, view_count, id, ${colsWithout(s).join(', ')})`,
      );
  if (layout === 'c') for (const s of SELECTORS) createClustered(conn, `lay_c_${short(s)}`, s);
  if (layout === 'd' || layout === 'ds')
    for (const s of SELECTORS) {
      createFragmentTable(conn, `lay_d_${short(s)}`, s);
      if (layout === 'ds') fragmentsBySql(conn, `lay_d_${short(s)}`, s, SITE);
    }
};

function openForLoad(file: string): SQLite.Database {
  const conn = new SQLite(file);
  conn.pragma('journal_mode = WAL');
  conn.pragma('synchronous = NORMAL');
  conn.pragma('cache_size = -262144');
  return conn;
}

async function measureInsert(seeded: string): Promise<InsertResult> {
  const src = new SQLite(seeded, { readonly: true });
  const ddl = (src.prepare(`select sql from sqlite_master where name = 'clips'`).get() as { sql: string })
    .sql;
  const cols = CLIP_COLUMNS;
  const source = src.prepare(`select ${cols.join(', ')} from clips order by rowid`).all() as ClipRow[];
  src.close();
  /** The n-th generated clip: a seeded clip with an id of its own copy. */
  const nth = (n: number, tag: string): ClipRow => {
    const r = source[n % source.length] as ClipRow;
    return { ...r, id: `${r.id}-${tag}${Math.floor(n / source.length)}` };
  };
  const dir = join(tmpdir(), `helixd-bench-layout-${randomBytes(4).toString('hex')}`);
  await mkdir(dir, { recursive: true });
  const links = new Links(SITE);
  try {
    const base = join(dir, 'base.db');
    let conn = openForLoad(base);
    conn.exec(ddl);
    const ins = conn.prepare(
      `insert into clips (${cols.join(', ')}) values (${cols.map(() => '?').join(', ')})`,
    );
    const loading = stopwatch();
    conn.transaction(() => {
      for (let n = 0; n < insertRows; n++) {
        const r = nth(n, 'c');
        ins.run(cols.map((c) => r[c]));
      }
    })();
    const loaded = loading();
    conn.pragma('wal_checkpoint(truncate)');
    const baseBytes = [...sizes(conn).values()].reduce((a, b) => a + b, 0);
    conn.close();
    say(
      `  ${insertRows.toLocaleString('en-US')} clips into the row table (id index only): ${secs(loaded)}; load ${load()}`,
    );
    const layouts: InsertResult['layouts'] = {};
    for (const layout of ['a', 'b', 'c', 'd', 'ds']) {
      const file = join(dir, `${layout}.db`);
      copyFileSync(base, file);
      conn = openForLoad(file);
      const building = stopwatch();
      conn.transaction(() => sqliteListing(conn, layout))();
      if (layout === 'd') {
        // Read with a second connection: better-sqlite3 cannot write while a statement iterates.
        const reader = new SQLite(file, { readonly: true });
        for (const s of SELECTORS)
          conn.transaction(() =>
            writeFragments(
              conn,
              `lay_d_${short(s)}`,
              reader
                .prepare(`select * from clips order by ${s}, view_count, id`)
                .iterate() as Iterable<ClipRow>,
              links,
              s,
            ),
          )();
        reader.close();
      }
      const built = building();
      const sz = sizes(conn);
      const bytes = [...sz.entries()]
        .filter(([name]) => name.startsWith(`lay_${layout === 'ds' ? 'd' : layout}_`))
        .reduce((a, [, b]) => a + b, 0);
      // Live writes: 100,000 more clips, in the seed's order (random in every listing's key).
      const live = 100_000;
      const insC = conn.prepare(
        `insert into clips (${cols.join(', ')}) values (${cols.map(() => '?').join(', ')})`,
      );
      const extra = (s: ClipSelector) => {
        if (layout === 'c')
          return conn.prepare(
            `insert into lay_c_${short(s)} (${s}, view_count, id, ${colsWithout(s).join(', ')}) values (${['', '', '', ...colsWithout(s)].map(() => '?').join(', ')})`,
          );
        return undefined;
      };
      const extras = SELECTORS.map((s) => [s, extra(s)] as const);
      const writing = stopwatch();
      conn.transaction(() => {
        for (let n = 0; n < live; n++) {
          const r = nth(n, 'l');
          insC.run(cols.map((c) => r[c]));
          for (const [s, st] of extras)
            st?.run(r[s], r.view_count, r.id, ...colsWithout(s).map((c) => r[c as 'title']));
          if (layout === 'd' || layout === 'ds')
            for (const s of SELECTORS) writeFragments(conn, `lay_d_${short(s)}`, [r], links, s);
        }
      })();
      const wrote = writing();
      conn.close();
      rmSync(file, { force: true });
      for (const f of [`${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
      const perSecond = (n: number, t: number) => Math.round(n / t);
      layouts[layout] = {
        build: built,
        bytes,
        clipsPerSecond: perSecond(insertRows, loaded.wall + built.wall),
        clipsPerCpuSecond: perSecond(insertRows, loaded.cpu + built.cpu),
        live: wrote,
        liveClipsPerCpuSecond: perSecond(live, wrote.cpu),
      };
      const n = (v: number) => v.toLocaleString('en-US');
      say(
        `  ${layout}: listing structures built in ${secs(built)}, ${(bytes / 1e6).toFixed(0)} MB; load + build ${n(perSecond(insertRows, loaded.wall + built.wall))} clips/s (per CPU second ${n(perSecond(insertRows, loaded.cpu + built.cpu))}); 100,000 live writes ${secs(wrote)}: ${n(perSecond(live, wrote.cpu))} clips per CPU second; load ${load()}`,
      );
    }
    return { rows: insertRows, load: loaded, layouts, baseBytes };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL: the same clips (and users, for the names) in a schema made for the run and dropped
// after it. a: helixd's own tables and indexes (helixd migrate: since migration 011 the listing
// indexes INCLUDE every other column); a0: a copy of clips with migration 003's listing indexes
// (selector, view_count, id, created_at), as a was before 011; b: a copy of clips with one
// covering index per listing, (selector, view_count, id) INCLUDE (every other column), vacuumed
// so that the visibility map allows index-only scans; c: a copy with today's indexes, CLUSTERed on
// the by-game one (a one-off reordering that PostgreSQL does not keep up as rows are written).
// Server CPU per page is read from the backend's /proc/<pid>/stat (the server runs on this machine).

interface PgResult {
  bytes: Record<string, number>;
  pages: Record<string, { figures: Figure[]; buffers: Record<string, string> }>;
  /** the page query run by the backend alone, µs of its CPU per page (medians), by listing and table */
  executor: Record<string, Record<string, number>>;
  insert?: { rows: number; load: Spent; buildSeconds: Record<string, Spent> };
  load: { start: string; end: string };
}

async function measurePg(seeded: string): Promise<PgResult> {
  const url = args['pg-url'] as string;
  const schema = `bench_layout_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.query(`set search_path = ${schema}`);
  const store = openStore({ url, schema, poolSize: 1 });
  try {
    const scoped = `${url}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    const m = await runCaptured(['migrate', '--db', scoped]);
    if (m.code !== 0) throw new Error(`helixd migrate: ${m.stderr}`);
    const src = new SQLite(seeded, { readonly: true });
    for (const table of ['users', 'clips']) {
      const rows = src.prepare(`select * from ${table}`).all();
      for (let i = 0; i < rows.length; i += 20_000)
        await admin.query(`insert into ${table} select * from json_populate_recordset(null::${table}, $1)`, [
          JSON.stringify(rows.slice(i, i + 20_000)),
        ]);
    }
    src.close();
    // As a seeded store has them: the seed builds the indexes after the rows are in (bulk.ts), where
    // rows inserted into built indexes leave their pages part empty (an INCLUDE index ~30% larger).
    await admin.query('reindex table clips');
    const rest = (sel: string) => colsWithout(sel).join(', ');
    /** A copy of clips, its primary key, and one index per listing: `key` after the selector. */
    const copy = async (layout: string, key: (sel: string) => string) => {
      await admin.query(`create table lay_${layout}_clips (like clips including all excluding indexes)`);
      await admin.query(`insert into lay_${layout}_clips select * from clips`);
      await admin.query(`alter table lay_${layout}_clips add primary key (id)`);
      for (const sel of SELECTORS)
        await admin.query(
          `create index lay_${layout}_${short(sel)} on lay_${layout}_clips (${sel}, ${key(sel)})`,
        );
    };
    await copy('a0', () => 'view_count, id, created_at');
    await copy('b', (sel) => `view_count, id) include (${rest(sel)}`);
    await copy('c', () => 'view_count, id, created_at');
    const tc = performance.now();
    await admin.query(`cluster lay_c_clips using lay_c_game`);
    const clusterSeconds = (performance.now() - tc) / 1000;
    await admin.query(`vacuum analyze clips, users, lay_a0_clips, lay_b_clips, lay_c_clips`);
    const rel = async (name: string) =>
      Number(
        (await admin.query(`select pg_relation_size($1::regclass) as n`, [`${schema}.${name}`])).rows[0].n,
      );
    const bytes: Record<string, number> = {
      'a: clips table': await rel('clips'),
      'a: clips_game_views': await rel('clips_game_views'),
      'a: clips_broadcaster_views': await rel('clips_broadcaster_views'),
      'a0: lay_a0_game (003)': await rel('lay_a0_game'),
      'a0: lay_a0_broadcaster (003)': await rel('lay_a0_broadcaster'),
      'b: lay_b_game (INCLUDE)': await rel('lay_b_game'),
      'b: lay_b_broadcaster (INCLUDE)': await rel('lay_b_broadcaster'),
      'c: lay_c_clips table (clustered)': await rel('lay_c_clips'),
      'c: lay_c_game': await rel('lay_c_game'),
    };
    say(`  CLUSTER of 200,000 clips: ${clusterSeconds.toFixed(1)} s; relation sizes:`);
    for (const [k, v] of Object.entries(bytes))
      say(`    ${k.padEnd(48)}${(v / 1e6).toFixed(1).padStart(7)} MB`);

    const ctx = {
      store,
      secret: SECRET,
      links: new Links(SITE),
      userNames: new UserNames(store),
    } as unknown as AppContext;
    const pid = Number(
      (
        (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(store.db)).rows[0] as {
          pid: number;
        }
      ).pid,
    );
    const serverCpu = procCpu(pid);
    const start = load();
    const pages: PgResult['pages'] = {};
    for (const selector of SELECTORS) {
      const db = store.db as unknown as Db;
      const { mapped, today } = listingKit(store, ctx, selector);
      const keys = (await admin.query(`select distinct ${selector} as k from clips order by 1`)).rows.map(
        (r) => Number(r.k),
      );
      const read = (table: 'lay_a0_clips' | 'lay_b_clips' | 'lay_c_clips') => (value: number) =>
        keysetPage(
          db
            .selectFrom(table as 'lay_b_clips')
            .selectAll()
            .where(selector, '=', value),
          CLIPS_ORDER,
          'desc',
          { first: FIRST },
        );
      const units: Unit[] = [
        ...today("today's route (names: one users query per page on PostgreSQL)"),
        {
          name: 'a0',
          what: "migration 003's index (before 011), mapped as the route maps",
          run: mapped(read('lay_a0_clips')),
        },
        { name: 'a0.store', what: "003's index: keysetPage", run: read('lay_a0_clips') },
        {
          name: 'b',
          what: 'INCLUDE covering index, mapped as the route maps',
          run: mapped(read('lay_b_clips')),
        },
        { name: 'b.store', what: 'INCLUDE covering index: keysetPage', run: read('lay_b_clips') },
        {
          name: 'c',
          what: `CLUSTERed by game${selector === 'game_id' ? '' : ' (not by broadcaster: this listing is scattered)'}, mapped`,
          run: mapped(read('lay_c_clips')),
        },
        { name: 'c.store', what: 'CLUSTERed: keysetPage', run: read('lay_c_clips') },
      ];
      const sample = keys.filter((_, i) => i % Math.max(1, Math.floor(keys.length / 100)) === 0);
      await sameAnswers(units, sample);
      // Buffers a first page touches, and the plan's node, for the biggest key of the listing.
      const big = Number(
        (await admin.query(`select ${selector} as k from clips group by 1 order by count(*) desc limit 1`))
          .rows[0].k,
      );
      const buffers: Record<string, string> = {};
      for (const t of ['clips', 'lay_a0_clips', 'lay_b_clips', 'lay_c_clips']) {
        const plan = (
          await admin.query(
            `explain (analyze, buffers, costs off, timing off, summary off) select * from ${t} where ${selector} = $1 order by view_count desc, id desc limit ${FIRST + 1}`,
            [big],
          )
        ).rows.map((r) => r['QUERY PLAN'] as string);
        buffers[t] = plan
          .filter((l) => /Scan|Buffers|Heap Fetches/.test(l))
          .map((l) => l.trim())
          .join('; ');
      }
      say(
        `PostgreSQL, clips by ${short(selector)}: ${keys.length} keys, ${rounds} rounds of 1,200 per unit; load ${load()}`,
      );
      for (const [t, b] of Object.entries(buffers)) say(`  plan ${t}: ${b}`);
      // The backend's CPU is counted in ticks of 10 ms: a round of 1,200 pages makes a tick ~8 µs/page.
      const figures = await runRounds(units, keys, 1200, serverCpu);
      printFigures(
        `PostgreSQL, clips by ${short(selector)}, first=${FIRST}, µs per page (client = this process; server = the backend):`,
        figures,
      );
      pages[short(selector)] = { figures, buffers };
    }
    const executor = await pgExecutor(admin, ['clips', 'lay_a0_clips', 'lay_b_clips']);
    const result: PgResult = { bytes, pages, executor, load: { start, end: load() } };
    if (!args['skip-insert']) {
      // Load then build, as the seed does: 1M clips into a table with its primary key, then each
      // layout's listing structures (dropped again before the next).
      await admin.query(`create table ins_clips (like clips including all excluding indexes)`);
      await admin.query(`alter table ins_clips add primary key (id)`);
      const copies = Math.ceil(insertRows / 200_000);
      // One backend does all the work (no parallel index build), so that its CPU is the cost.
      await admin.query('set max_parallel_maintenance_workers = 0');
      const adminPid = Number((await admin.query('select pg_backend_pid() as pid')).rows[0].pid);
      const loading = stopwatch(procCpu(adminPid));
      await admin.query(
        `insert into ins_clips select id || '-c' || k, broadcaster_id, creator_id, video_id, game_id, language, title,
           view_count, created_at, duration_ds, vod_offset, is_featured
         from clips, generate_series(0, ${copies - 1}) k limit ${insertRows}`,
      );
      const loaded = loading();
      const buildSeconds: Record<string, Spent> = {};
      const build = async (name: string, statements: string[]) => {
        const building = stopwatch(procCpu(adminPid));
        for (const q of statements) await admin.query(q);
        buildSeconds[name] = building();
        for (const sel of SELECTORS) await admin.query(`drop index if exists ins_${short(sel)}`);
      };
      await build(
        'a: 2 indexes (selector, view_count, id, created_at)',
        SELECTORS.map(
          (sel) => `create index ins_${short(sel)} on ins_clips (${sel}, view_count, id, created_at)`,
        ),
      );
      await build(
        'b: 2 INCLUDE covering indexes',
        SELECTORS.map(
          (sel) =>
            `create index ins_${short(sel)} on ins_clips (${sel}, view_count, id) include (${rest(sel)})`,
        ),
      );
      await build('c: 2 indexes + CLUSTER by game', [
        ...SELECTORS.map(
          (sel) => `create index ins_${short(sel)} on ins_clips (${sel}, view_count, id, created_at)`,
        ),
        'cluster ins_clips using ins_game',
      ]);
      say(
        `PostgreSQL insert cost: ${insertRows.toLocaleString('en-US')} clips loaded (primary key only) in ${secs(loaded)} (CPU: the backend's); then:`,
      );
      for (const [k, v] of Object.entries(buildSeconds))
        say(
          `  ${k.padEnd(48)} ${secs(v)}: load + build ${Math.round(insertRows / (loaded.wall + v.wall)).toLocaleString('en-US')} clips/s (per backend CPU second ${Math.round(insertRows / (loaded.cpu + v.cpu)).toLocaleString('en-US')})`,
        );
      result.insert = { rows: insertRows, load: loaded, buildSeconds };
    }
    return result;
  } finally {
    await store.close();
    await admin.query(`drop schema if exists ${schema} cascade`);
    await admin.end();
  }
}

/**
 * The page query run by the backend alone, in a PL/pgSQL loop (parsed and planned each time, as
 * the route's query is, but no protocol and no client): µs of the backend's CPU per page for each
 * table, interleaved in rounds of 4,800 pages (a CPU tick of 10 ms is then ~2 µs per page).
 */
async function pgExecutor(
  admin: pg.Client,
  tables: string[],
): Promise<Record<string, Record<string, number>>> {
  await admin.query(`create function lay_pages(tbl text, sel text, keys bigint[]) returns bigint language plpgsql as $$
    declare k bigint; n bigint := 0; r record; begin
      foreach k in array keys loop
        for r in execute format('select * from %I where %I = $1 order by view_count desc, id desc limit ${FIRST + 1}', tbl, sel) using k loop
          n := n + 1;
        end loop;
      end loop;
      return n;
    end $$`);
  const cpu = procCpu(Number((await admin.query('select pg_backend_pid() as pid')).rows[0].pid));
  const perRound = 4800;
  const out: Record<string, Record<string, number>> = {};
  for (const selector of SELECTORS) {
    const keys = (await admin.query(`select distinct ${selector} as k from clips order by 1`)).rows.map((r) =>
      String(r.k),
    );
    const spent = new Map<string, number[]>();
    for (let r = 0; r <= rounds; r++) {
      const slice = Array.from({ length: perRound }, (_, i) => keys[(r * perRound + i) % keys.length]);
      for (let i = 0; i < tables.length; i++) {
        const t = tables[(i + r) % tables.length] as string;
        const c0 = cpu();
        await admin.query('select lay_pages($1, $2, $3::bigint[])', [t, selector, slice]);
        if (r > 0) spent.set(t, [...(spent.get(t) ?? []), ((cpu() - c0) * 1e6) / perRound]);
      }
    }
    out[short(selector)] = Object.fromEntries(tables.map((t) => [t, median(spent.get(t) ?? [])]));
    say(
      `PostgreSQL, clips by ${short(selector)}: the page query alone in the backend (PL/pgSQL loop), µs of its CPU per page; load ${load()}`,
    );
    for (const t of tables) say(`  ${t.padEnd(14)}${f0(out[short(selector)]?.[t]).padStart(6)}`);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Main (the insert cost and PostgreSQL follow)

const results: Record<string, unknown> = { date: new Date().toISOString(), users, rounds, first: FIRST };
const seeded = await seededStore();
if (!args['skip-sqlite']) results.sqlite = await measureSqlite(seeded);
if (!args['skip-insert']) {
  say(`insert cost, SQLite: ${insertRows.toLocaleString('en-US')} clips per layout ...`);
  results.insert = await measureInsert(seeded);
}
if (!args['skip-pg']) {
  say(`PostgreSQL (${args['pg-url']}) ...`);
  results.postgres = await measurePg(seeded);
}
const out = join(ROOT, 'bench', 'results', `${new Date().toISOString().slice(0, 10)}-layout.json`);
await mkdir(dirname(out), { recursive: true });
await writeFile(out, `${JSON.stringify(results, null, 2)}\n`);
say(`report: ${out}`);
