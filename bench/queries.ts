// The query mixes: for each operation, the kinds of requests real clients send, built from the
// data actually in the store. First pages spread over many broadcasters, users and games (head and
// long tail alike); deep pages reached through real cursors (one walk of ~500 pages, then the last
// hundred replayed); lookups of 100 ids; filters.
import { type Kysely, sql } from 'kysely';
import { Random } from '../src/seed/random.ts';
import type { Database } from '../src/store/schema.ts';
import type { BenchRequest } from './load.ts';

/** first: the first pages of listings; deep: pages far down a listing; ids: lookups; filter: narrowed listings */
export type QueryClass = 'first' | 'deep' | 'ids' | 'filter';

export interface QueryKind {
  op: string;
  kind: string;
  cls: QueryClass;
  requests: BenchRequest[];
  /** e.g. which pages a deep kind replays */
  note?: string;
  /** deep kinds: the first-pages kind of the same listing they are compared with */
  baseline?: string;
  /** a listing's first and deep pages: the walk that reached them, pages `from` to `to` counted from `first` (page 1) */
  walk?: { first: BenchRequest; from: number; to: number };
}

export interface MixContext {
  /** http://127.0.0.1:port of helixd */
  base: string;
  db: Kysely<Database>;
  /** the seed's anchor day, Unix seconds */
  anchor: number;
  appToken: string;
  /** the demo client's id: every token here is its, and every request sends it as Client-Id */
  clientId: string;
  /** a user token of `userId` carrying every scope of the ten operations */
  tokenFor(userId: number): Promise<string>;
  /** how many pages a deep walk goes down */
  walkPages: number;
  /** how many different broadcasters/users/games first-page kinds spread over */
  spread: number;
  log(line: string): void;
}

export interface OperationMix {
  /** the operation's path, e.g. '/clips' */
  path: string;
  /** one request that answers 200 when the operation exists */
  probe(ctx: MixContext): Promise<BenchRequest>;
  build(ctx: MixContext): Promise<QueryKind[]>;
}

const H = '/helix';
const DAY = 86400;

const rfc3339 = (unix: number) => new Date(unix * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
const qs = (params: [string, string | number][]) =>
  params.map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`).join('&');

/** `k` items spread evenly over `items` (which come ranked by size: head and tail both present). */
export function spreadPick<T>(items: readonly T[], k: number): T[] {
  if (items.length <= k) return [...items];
  const out: T[] = [];
  for (let i = 0; i < k; i++) out.push(items[Math.floor((i * items.length) / k)] as T);
  return out;
}

function shuffled<T>(items: readonly T[], rng: Random): T[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    [a[i], a[j]] = [a[j] as T, a[i] as T];
  }
  return a;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i + size <= items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export async function getJson(
  base: string,
  r: BenchRequest,
  clientId: string,
): Promise<{ status: number; body: unknown; bytes: number }> {
  const res = await fetch(base + r.path, {
    headers: { authorization: `Bearer ${r.token}`, 'client-id': clientId },
  });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, body, bytes: Buffer.byteLength(text) };
}

/**
 * Walks a listing forward `pages` pages through its cursors and returns the requests for the last
 * fifth of the pages reached (pages 401-500 of a 500-page walk), and as many of its first pages.
 */
async function deepPages(
  ctx: MixContext,
  first: BenchRequest,
): Promise<{ requests: BenchRequest[]; from: number; to: number; early: BenchRequest[] }> {
  const walked: BenchRequest[] = [first];
  let r = first;
  for (let page = 1; page < ctx.walkPages; page++) {
    const res = await getJson(ctx.base, r, ctx.clientId);
    if (res.status !== 200) throw new Error(`walk: ${r.path} answered ${res.status}`);
    const cursor = (res.body as { pagination?: { cursor?: string } }).pagination?.cursor;
    if (!cursor) break;
    r = { path: `${first.path}&after=${encodeURIComponent(cursor)}`, token: first.token };
    walked.push(r);
  }
  const n = Math.max(1, Math.floor(walked.length / 5));
  const from = walked.length - n;
  return { requests: walked.slice(from), from: from + 1, to: walked.length, early: walked.slice(0, n) };
}

/**
 * A deep-page kind, and with it the first pages of the same listing, as many (pages 1-100 against
 * pages 401-500): the budget compares a deep page with the first pages of the same listing (same
 * rows per page, same index range), not with first pages of small channels that hold a handful of
 * rows, nor with page 1 alone: one URL replayed keeps its few index pages hot in every cache, which
 * a hundred pages do not, and the line would then measure that, not the depth (docs/perf/2026-11-27-where-the-rest-goes.md).
 */
async function deepKinds(
  ctx: MixContext,
  op: string,
  listing: string,
  first: BenchRequest,
): Promise<QueryKind[]> {
  const d = await deepPages(ctx, first);
  const early = `first pages of ${listing}`;
  return [
    {
      op,
      kind: early,
      cls: 'first',
      requests: d.early,
      note: `pages 1-${d.early.length}`,
      walk: { first, from: 1, to: d.early.length },
    },
    {
      op,
      kind: `deep page of ${listing}`,
      cls: 'deep',
      requests: d.requests,
      note: `pages ${d.from}-${d.to}`,
      baseline: early,
      walk: { first, from: d.from, to: d.to },
    },
  ];
}

/** Values of `column` in `table` with their row counts, largest first. */
async function ranked(
  ctx: MixContext,
  table: 'clips' | 'videos' | 'subscriptions',
  column: 'broadcaster_id' | 'game_id' | 'user_id',
): Promise<number[]> {
  const rows = await sql<{ v: number; n: number }>`
    select ${sql.ref(column)} as v, count(*) as n from ${sql.table(table)}
    group by ${sql.ref(column)} order by n desc, v`.execute(ctx.db);
  return rows.rows.map((r) => Number(r.v));
}

// ---- /clips ------------------------------------------------------------------------------------

const clips: OperationMix = {
  path: '/clips',
  async probe(ctx) {
    const g = await ctx.db.selectFrom('games').select('id').limit(1).executeTakeFirstOrThrow();
    return { path: `${H}/clips?game_id=${g.id}`, token: ctx.appToken };
  },
  async build(ctx) {
    const t = ctx.appToken;
    const rng = new Random(1, 'bench-clips');
    const broadcasters = await ranked(ctx, 'clips', 'broadcaster_id');
    const games = await ranked(ctx, 'clips', 'game_id');
    const ids: string[] = [];
    const letters = 'ABCDEFGHIJKLMNOPRSTUVWabcdefghijklmnopqrstuvwxyz';
    for (let i = 0; i < 100; i++) {
      const prefix = `${letters[rng.int(0, 21)]}${letters[rng.int(22, letters.length - 1)]}`;
      const rows = await ctx.db
        .selectFrom('clips')
        .select('id')
        .where('id', '>=', prefix)
        .orderBy('id')
        .limit(100)
        .execute();
      ids.push(...rows.map((r) => r.id));
    }
    const spreadB = spreadPick(broadcasters, ctx.spread);
    const end = ctx.anchor;
    return [
      {
        op: '/clips',
        kind: 'first page by broadcaster',
        cls: 'first',
        requests: spreadB.map((b) => ({ path: `${H}/clips?${qs([['broadcaster_id', b]])}`, token: t })),
      },
      {
        op: '/clips',
        kind: 'first page by game',
        cls: 'first',
        requests: spreadPick(games, ctx.spread).map((g) => ({
          path: `${H}/clips?${qs([['game_id', g]])}`,
          token: t,
        })),
      },
      ...(await deepKinds(ctx, '/clips', 'the biggest broadcaster', {
        path: `${H}/clips?${qs([
          ['broadcaster_id', broadcasters[0] as number],
          ['first', 20],
        ])}`,
        token: t,
      })),
      ...(await deepKinds(ctx, '/clips', 'the biggest game', {
        path: `${H}/clips?${qs([
          ['game_id', games[0] as number],
          ['first', 20],
        ])}`,
        token: t,
      })),
      {
        op: '/clips',
        kind: '100 ids',
        cls: 'ids',
        requests: chunks(shuffled(ids, rng), 100).map((c) => ({
          path: `${H}/clips?${c.map((id) => `id=${encodeURIComponent(id)}`).join('&')}`,
          token: t,
        })),
      },
      {
        op: '/clips',
        kind: 'featured by game',
        cls: 'filter',
        requests: spreadPick(games, ctx.spread).map((g) => ({
          path: `${H}/clips?${qs([
            ['game_id', g],
            ['is_featured', 'true'],
          ])}`,
          token: t,
        })),
      },
      {
        op: '/clips',
        kind: 'period by broadcaster',
        cls: 'filter',
        requests: spreadB.map((b, i) => {
          const from = end - (30 + (i % 300)) * DAY;
          return {
            path: `${H}/clips?${qs([
              ['broadcaster_id', b],
              ['started_at', rfc3339(from)],
              ['ended_at', rfc3339(from + 30 * DAY)],
            ])}`,
            token: t,
          };
        }),
      },
    ];
  },
};

// ---- /videos -----------------------------------------------------------------------------------

const videos: OperationMix = {
  path: '/videos',
  async probe(ctx) {
    const v = await ctx.db.selectFrom('videos').select('id').limit(1).executeTakeFirstOrThrow();
    return { path: `${H}/videos?id=${v.id}`, token: ctx.appToken };
  },
  async build(ctx) {
    const t = ctx.appToken;
    const rng = new Random(1, 'bench-videos');
    const users = await ranked(ctx, 'videos', 'user_id');
    const games = await ranked(ctx, 'videos', 'game_id');
    const bounds = await ctx.db
      .selectFrom('videos')
      .select((eb) => [eb.fn.min('id').as('lo'), eb.fn.max('id').as('hi')])
      .executeTakeFirstOrThrow();
    const ids: number[] = [];
    for (let i = 0; i < 100; i++) {
      const from = rng.int(Number(bounds.lo), Number(bounds.hi));
      const rows = await ctx.db
        .selectFrom('videos')
        .select('id')
        .where('id', '>=', from)
        .orderBy('id')
        .limit(100)
        .execute();
      ids.push(...rows.map((r) => r.id));
    }
    const spreadG = spreadPick(games, ctx.spread);
    const filters: [string, string | number][][] = [
      [
        ['sort', 'views'],
        ['type', 'archive'],
      ],
      [
        ['period', 'month'],
        ['sort', 'time'],
      ],
      [
        ['language', 'en'],
        ['sort', 'trending'],
      ],
      [
        ['period', 'week'],
        ['type', 'highlight'],
      ],
    ];
    return [
      {
        op: '/videos',
        kind: 'first page by user',
        cls: 'first',
        requests: spreadPick(users, ctx.spread).map((u) => ({
          path: `${H}/videos?${qs([['user_id', u]])}`,
          token: t,
        })),
      },
      {
        op: '/videos',
        kind: 'first page by game',
        cls: 'first',
        requests: spreadG.map((g) => ({ path: `${H}/videos?${qs([['game_id', g]])}`, token: t })),
      },
      ...(await deepKinds(ctx, '/videos', 'the biggest game', {
        path: `${H}/videos?${qs([
          ['game_id', games[0] as number],
          ['first', 20],
        ])}`,
        token: t,
      })),
      {
        op: '/videos',
        kind: '100 ids',
        cls: 'ids',
        requests: chunks(shuffled(ids, rng), 100).map((c) => ({
          path: `${H}/videos?${c.map((id) => `id=${id}`).join('&')}`,
          token: t,
        })),
      },
      {
        op: '/videos',
        kind: 'filters by game',
        cls: 'filter',
        requests: spreadG.map((g, i) => ({
          path: `${H}/videos?${qs([['game_id', g], ...(filters[i % filters.length] ?? [])])}`,
          token: t,
        })),
      },
    ];
  },
};

// ---- /subscriptions ----------------------------------------------------------------------------

const subscriptions: OperationMix = {
  path: '/subscriptions',
  async probe(ctx) {
    const s = await ctx.db
      .selectFrom('subscriptions')
      .select('broadcaster_id')
      .limit(1)
      .executeTakeFirstOrThrow();
    return {
      path: `${H}/subscriptions?broadcaster_id=${s.broadcaster_id}`,
      token: await ctx.tokenFor(s.broadcaster_id),
    };
  },
  async build(ctx) {
    const broadcasters = await ranked(ctx, 'subscriptions', 'broadcaster_id');
    const top = broadcasters[0] as number;
    const topToken = await ctx.tokenFor(top);
    const first: BenchRequest[] = [];
    for (const b of spreadPick(broadcasters, ctx.spread))
      first.push({ path: `${H}/subscriptions?${qs([['broadcaster_id', b]])}`, token: await ctx.tokenFor(b) });
    const subscribers = await ctx.db
      .selectFrom('subscriptions')
      .select('user_id')
      .where('broadcaster_id', '=', top)
      .orderBy('user_id')
      .limit(2000)
      .execute();
    const users = await ctx.db.selectFrom('users').select('id').orderBy('id').limit(2000).execute();
    const rng = new Random(1, 'bench-subscriptions');
    // Half are subscribers, half are random users (mostly not subscribed).
    const mixed = shuffled(
      [...subscribers.map((r) => r.user_id), ...users.map((r) => r.id)].filter((id) => id !== top),
      rng,
    );
    return [
      { op: '/subscriptions', kind: 'first page by broadcaster', cls: 'first', requests: first },
      ...(await deepKinds(ctx, '/subscriptions', 'the biggest broadcaster', {
        path: `${H}/subscriptions?${qs([
          ['broadcaster_id', top],
          ['first', 20],
        ])}`,
        token: topToken,
      })),
      {
        op: '/subscriptions',
        kind: 'check 10 user_ids',
        cls: 'ids',
        requests: chunks(mixed, 10).map((c) => ({
          path: `${H}/subscriptions?broadcaster_id=${top}&${c.map((u) => `user_id=${u}`).join('&')}`,
          token: topToken,
        })),
      },
    ];
  },
};

// ---- /streams/markers --------------------------------------------------------------------------

const markers: OperationMix = {
  path: '/streams/markers',
  async probe(ctx) {
    const m = await ctx.db
      .selectFrom('markers')
      .innerJoin('videos', 'videos.id', 'markers.video_id')
      .select(['markers.video_id', 'markers.creator_id'])
      .whereRef('markers.creator_id', '=', 'videos.user_id')
      .limit(1)
      .executeTakeFirstOrThrow();
    return {
      path: `${H}/streams/markers?video_id=${m.video_id}`,
      token: await ctx.tokenFor(m.creator_id),
    };
  },
  async build(ctx) {
    // Markers a broadcaster made on its own videos, per broadcaster and per video.
    const byUser = await sql<{ u: number; n: number }>`
      select v.user_id as u, count(*) as n from markers m join videos v on v.id = m.video_id
      where m.creator_id = v.user_id group by v.user_id order by n desc, u`.execute(ctx.db);
    const byVideo = await sql<{ v: number; u: number; n: number }>`
      select m.video_id as v, m.creator_id as u, count(*) as n from markers m
      group by m.video_id, m.creator_id order by n desc, v, u`.execute(ctx.db);
    const users = byUser.rows.map((r) => Number(r.u));
    const top = users[0] as number;
    const first: BenchRequest[] = [];
    for (const u of spreadPick(users, ctx.spread))
      first.push({ path: `${H}/streams/markers?${qs([['user_id', u]])}`, token: await ctx.tokenFor(u) });
    const perVideo: BenchRequest[] = [];
    for (const r of spreadPick(byVideo.rows, ctx.spread))
      perVideo.push({
        path: `${H}/streams/markers?${qs([['video_id', Number(r.v)]])}`,
        token: await ctx.tokenFor(Number(r.u)),
      });
    const topVideo = byVideo.rows[0];
    return [
      { op: '/streams/markers', kind: 'first page by user', cls: 'first', requests: first },
      { op: '/streams/markers', kind: 'first page by video', cls: 'first', requests: perVideo },
      ...(await deepKinds(ctx, '/streams/markers', 'the most marked user', {
        path: `${H}/streams/markers?${qs([
          ['user_id', top],
          ['first', 20],
        ])}`,
        token: await ctx.tokenFor(top),
      })),
      ...(topVideo
        ? [
            ...(await deepKinds(ctx, '/streams/markers', 'the most marked video', {
              path: `${H}/streams/markers?${qs([
                ['video_id', Number(topVideo.v)],
                ['first', 20],
              ])}`,
              token: await ctx.tokenFor(Number(topVideo.u)),
            })),
          ]
        : []),
    ];
  },
};

// ---- /games/top --------------------------------------------------------------------------------

const gamesTop: OperationMix = {
  path: '/games/top',
  async probe(ctx) {
    return { path: `${H}/games/top`, token: ctx.appToken };
  },
  async build(ctx) {
    const t = ctx.appToken;
    return [
      {
        op: '/games/top',
        kind: 'page 1 of top games',
        cls: 'first',
        requests: [{ path: `${H}/games/top?first=20`, token: t }],
      },
      ...(await deepKinds(ctx, '/games/top', 'top games', { path: `${H}/games/top?first=20`, token: t })),
    ];
  },
};

// ---- /analytics/games and /analytics/extensions ------------------------------------------------

function analyticsWindows(anchor: number): [string, string][] {
  const out: [string, string][] = [];
  for (let k = 0; k < 12; k++) {
    const end = anchor - (2 + k * 30) * DAY;
    out.push([rfc3339(end - 90 * DAY), rfc3339(end)]);
  }
  return out;
}

const analyticsGames: OperationMix = {
  path: '/analytics/games',
  async probe(ctx) {
    const g = await ctx.db
      .selectFrom('games')
      .select('owner_id')
      .where('owner_id', 'is not', null)
      .limit(1)
      .executeTakeFirstOrThrow();
    return { path: `${H}/analytics/games`, token: await ctx.tokenFor(g.owner_id as number) };
  },
  async build(ctx) {
    const owned = await ctx.db
      .selectFrom('games')
      .select(['id', 'owner_id'])
      .where('owner_id', 'is not', null)
      .orderBy('id')
      .execute();
    const owners = [...new Set(owned.map((g) => g.owner_id as number))];
    const list: BenchRequest[] = [];
    for (const o of spreadPick(owners, ctx.spread))
      list.push({ path: `${H}/analytics/games?first=20`, token: await ctx.tokenFor(o) });
    const windows = analyticsWindows(ctx.anchor);
    const one: BenchRequest[] = [];
    for (const [i, g] of spreadPick(owned, ctx.spread).entries()) {
      const [from, to] = windows[i % windows.length] as [string, string];
      one.push({
        path: `${H}/analytics/games?${qs([
          ['game_id', g.id],
          ['type', 'overview_v2'],
          ['started_at', from],
          ['ended_at', to],
        ])}`,
        token: await ctx.tokenFor(g.owner_id as number),
      });
    }
    return [
      { op: '/analytics/games', kind: "first page of owner's reports", cls: 'first', requests: list },
      { op: '/analytics/games', kind: 'one game, date range', cls: 'filter', requests: one },
    ];
  },
};

const analyticsExtensions: OperationMix = {
  path: '/analytics/extensions',
  async probe(ctx) {
    const x = await ctx.db.selectFrom('extensions').select('owner_id').limit(1).executeTakeFirstOrThrow();
    return { path: `${H}/analytics/extensions`, token: await ctx.tokenFor(x.owner_id) };
  },
  async build(ctx) {
    const owned = await ctx.db.selectFrom('extensions').select(['id', 'owner_id']).orderBy('id').execute();
    const owners = [...new Set(owned.map((x) => x.owner_id))];
    const list: BenchRequest[] = [];
    for (const o of spreadPick(owners, ctx.spread))
      list.push({ path: `${H}/analytics/extensions?first=20`, token: await ctx.tokenFor(o) });
    const windows = analyticsWindows(ctx.anchor);
    const one: BenchRequest[] = [];
    for (const [i, x] of spreadPick(owned, ctx.spread).entries()) {
      const [from, to] = windows[i % windows.length] as [string, string];
      one.push({
        path: `${H}/analytics/extensions?${qs([
          ['extension_id', x.id],
          ['type', 'overview_v2'],
          ['started_at', from],
          ['ended_at', to],
        ])}`,
        token: await ctx.tokenFor(x.owner_id),
      });
    }
    return [
      { op: '/analytics/extensions', kind: "first page of owner's reports", cls: 'first', requests: list },
      { op: '/analytics/extensions', kind: 'one extension, date range', cls: 'filter', requests: one },
    ];
  },
};

// ---- /search/categories and /search/channels ---------------------------------------------------

/**
 * What a user types into a search box: the first 1 to 6 characters of `name` from one of its words
 * on (a word starts after a space), in the case written, so that short queries with many matches
 * and longer ones with a few are both there.
 */
function typed(name: string, rng: Random): string {
  const starts = [0, ...[...name].flatMap((c, i) => (c === ' ' && i + 1 < name.length ? [i + 1] : []))];
  const from = rng.pick(starts);
  return name.slice(from, from + rng.int(1, 6)).trimEnd() || name.slice(0, 1);
}

/** The initial letter most names of `names` start with: the longest search of one letter. */
function commonestInitial(names: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const n of names) {
    const c = n.charAt(0).toLowerCase();
    counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0] ?? 'a';
}

const searchCategories: OperationMix = {
  path: '/search/categories',
  async probe(ctx) {
    return { path: `${H}/search/categories?query=a`, token: ctx.appToken };
  },
  async build(ctx) {
    const t = ctx.appToken;
    const names = (await ctx.db.selectFrom('games').select('name').orderBy('id').execute()).map(
      (g) => g.name,
    );
    const rng = new Random(1, 'bench-search-categories');
    const queries = [...new Set(spreadPick(names, ctx.spread).map((n) => typed(n, rng)))];
    const first = { path: `${H}/search/categories?${qs([['query', commonestInitial(names)]])}`, token: t };
    return [
      {
        op: '/search/categories',
        kind: 'first page by typed text',
        cls: 'first',
        requests: queries.map((q) => ({ path: `${H}/search/categories?${qs([['query', q]])}`, token: t })),
      },
      ...(await deepKinds(ctx, '/search/categories', 'the longest one-letter search', first)),
    ];
  },
};

const searchChannels: OperationMix = {
  path: '/search/channels',
  async probe(ctx) {
    return { path: `${H}/search/channels?query=a`, token: ctx.appToken };
  },
  async build(ctx) {
    const t = ctx.appToken;
    const names = (await ctx.db.selectFrom('users').select('display_name').orderBy('id').execute()).map(
      (u) => u.display_name,
    );
    const rng = new Random(1, 'bench-search-channels');
    const queries = [...new Set(spreadPick(names, ctx.spread).map((n) => typed(n, rng)))];
    const path = (q: string, liveOnly: boolean) =>
      `${H}/search/channels?${qs([['query', q], ...(liveOnly ? ([['live_only', 'true']] as [string, string][]) : [])])}`;
    const initial = commonestInitial(names);
    return [
      {
        op: '/search/channels',
        kind: 'first page by typed text',
        cls: 'first',
        requests: queries.map((q) => ({ path: path(q, false), token: t })),
      },
      {
        op: '/search/channels',
        kind: 'first page by typed text, live only',
        cls: 'first',
        requests: queries.map((q) => ({ path: path(q, true), token: t })),
      },
      ...(await deepKinds(ctx, '/search/channels', 'the longest one-letter search', {
        path: path(initial, false),
        token: t,
      })),
      ...(await deepKinds(ctx, '/search/channels', 'the longest one-letter live search', {
        path: path(initial, true),
        token: t,
      })),
    ];
  },
};

// ---- /streams/followed --------------------------------------------------------------------------

/**
 * Every user with how many channels they follow and how many of those are live now, most live
 * follows first (then most follows, then id): the users a first page of GET /streams/followed is
 * asked for, ranked by the size of their answer.
 */
async function followersByLiveFollows(
  ctx: MixContext,
): Promise<{ u: number; live: number; follows: number }[]> {
  const rows = await sql<{ u: number; live: number; follows: number }>`
    select u.id as u, count(s.id) as live, count(f.to_id) as follows from users u
    left join follows f on f.from_id = u.id left join streams s on s.user_id = f.to_id
    group by u.id order by live desc, follows desc, u.id`.execute(ctx.db);
  return rows.rows.map((r) => ({ u: Number(r.u), live: Number(r.live), follows: Number(r.follows) }));
}

const streamsFollowed: OperationMix = {
  path: '/streams/followed',
  async probe(ctx) {
    const f = await ctx.db
      .selectFrom('follows')
      .innerJoin('streams', 'streams.user_id', 'follows.to_id')
      .select('follows.from_id')
      .limit(1)
      .executeTakeFirstOrThrow();
    return {
      path: `${H}/streams/followed?user_id=${f.from_id}`,
      token: await ctx.tokenFor(f.from_id),
    };
  },
  async build(ctx) {
    const ranked = await followersByLiveFollows(ctx);
    const live = await ctx.db
      .selectFrom('streams')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const page = async (users: readonly { u: number }[]) => {
      const out: BenchRequest[] = [];
      for (const { u } of users)
        out.push({ path: `${H}/streams/followed?${qs([['user_id', u]])}`, token: await ctx.tokenFor(u) });
      return out;
    };
    // A page walks the live streams in page order and stops at `first` + 1 of the user's: a user
    // who follows fewer live channels than that (on the seeded stores, every user) has every live
    // stream read, and one none of whose channels is live reads them all to answer nothing.
    const following = ranked.filter((r) => r.live > 0);
    const none = ranked.filter((r) => r.live === 0);
    const most = following[0]?.live ?? 0;
    ctx.log(
      `  /streams/followed: ${Number(live.n).toLocaleString('en')} live streams; ${following.length.toLocaleString('en')} users follow 1-${most} live channels, ${none.length.toLocaleString('en')} none`,
    );
    return [
      {
        op: '/streams/followed',
        kind: 'first page by user',
        cls: 'first',
        requests: await page(spreadPick(following, ctx.spread)),
        note: `1-${most} live followed`,
      },
      {
        op: '/streams/followed',
        kind: 'first page by user, no followed channel live',
        cls: 'first',
        requests: await page(spreadPick(none, ctx.spread)),
      },
    ];
  },
};

/** The live operations the bench measures, in the order docs/api.md lists them. */
export const OPERATIONS: readonly OperationMix[] = [
  subscriptions,
  clips,
  videos,
  markers,
  gamesTop,
  searchCategories,
  searchChannels,
  streamsFollowed,
  analyticsGames,
  analyticsExtensions,
];
