// The deterministic demo-data generator. Same seed, size and anchor day: the same rows, in the same
// order, with the same ids, on every store. Shapes follow what a real platform looks like: a few
// huge channels and a long tail (skewed picks, Pareto counts), many languages, content spread over
// years, every enum value present.
import { sha256 } from '../auth/tokens.ts';
import type { Database } from '../store/schema.ts';
import { Random } from './random.ts';
import {
  ADJECTIVES,
  CLIP_TITLES,
  EXTENSION_WORDS,
  GAME_FIRST,
  GAME_SECOND,
  GAME_SUFFIX,
  LANGUAGE_WEIGHTS,
  LANGUAGES,
  MARKER_NOTES,
  NOUNS,
  TAG_LOCALES,
  TAG_WORDS,
  TITLE_PARTS,
} from './words.ts';

export interface SeedOptions {
  seed: number;
  users: number;
  /** the day the data is generated relative to: Unix seconds of 00:00 UTC */
  anchor: number;
}

/** Rows of one table; the writer inserts them in batches. */
export type Emit = <T extends keyof Database>(table: T, rows: Database[T][]) => Promise<void>;

export interface SeedSummary {
  demoUserId: number;
  demoLogin: string;
  demoClientId: string;
  demoClientSecret: string;
  counts: Partial<Record<keyof Database, number>>;
}

/** How many rows each table gets for a given number of users. */
export function sizesFor(users: number) {
  const games = Math.min(2000, Math.max(40, Math.round(users / 50)));
  return {
    users,
    games,
    streams: Math.min(users, Math.max(games, Math.floor(users * 0.15))),
    clips: users * 10,
    videos: users * 3,
    markers: users * 2,
    subscriptions: users * 10,
    follows: users * 15,
    tags: 300,
    extensions: Math.max(5, Math.floor(users / 100)),
  };
}

const DAY = 86400;
/** The first day analytics exist for (docs/api.md, Date rules). */
export const ANALYTICS_EPOCH = Date.UTC(2018, 0, 31) / 1000;
/** Users joined from here on. */
const PLATFORM_START = Date.UTC(2012, 0, 1) / 1000;

/** Today at 00:00 UTC, in Unix seconds. */
export function dayStart(ms: number): number {
  return Math.floor(ms / 1000 / DAY) * DAY;
}

export function isoDay(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toISOString().slice(0, 10);
}

/**
 * A demo user's email address: derived from the login (unique), not drawn, so that adding it left
 * every other column of the demo data as it was. example.com is reserved for examples: no demo
 * address can reach a real mailbox.
 */
export function demoEmail(login: string): string {
  return `${login}@example.com`;
}

const CHUNK = 5000;

type Sizes = ReturnType<typeof sizesFor>;

/**
 * What a channel is before any of its content: its user, its language, the game it mostly plays,
 * whether it is live, and its size rank (its index: 0 is the biggest channel, the demo broadcaster,
 * and size falls with the rank). Drawn once; every table after the users reads it.
 */
interface Channel {
  rank: number;
  user: Database['users'];
  language: string;
  /** index into the games */
  mainGame: number;
  live: boolean;
}

/** What every table's generation reads. */
interface World {
  seed: number;
  size: Sizes;
  /** the data ends just before this (the anchor day) */
  end: number;
  channels: Channel[];
}

/** A channel picked with a skew toward the big ones (rank 0). */
function pickChannel(w: World, rng: Random, skew = 3): Channel {
  return w.channels[rng.skewedIndex(w.size.users, skew)] as Channel;
}

/** A game index picked with a skew toward the first games. */
function pickGame(size: Sizes, rng: Random): number {
  return rng.skewedIndex(size.games, 2.5);
}

/**
 * The tables whose generation reads only the channels, the games and the extensions, and which no
 * other table's generation reads, in the order generated: a seed may generate and write them in a
 * thread of their own (src/seed/side.ts) while the others are written.
 */
export const SIDE_TABLES = [
  'subscriptions',
  'follows',
  'game_days',
  'extension_days',
] as const satisfies readonly (keyof Database)[];

/** Which tables `generate` writes: all, all but SIDE_TABLES, or SIDE_TABLES only. */
export type Part = 'all' | 'main' | 'side';

/**
 * The demo data, table by table, one function each. Each table draws from random streams of its own
 * name, so that changing how one table is generated does not change the others. Two streams serve
 * two tables each, in this order: 'streams' (which channels are live, then the streams' rows) and
 * 'analytics' (the games' days, then the extensions'). The big tables are generators: their rows
 * are written as they are made, CHUNK at a time, so that at most one chunk of them is held in memory.
 *
 * `part`: the rows of every table are the same whichever part writes them; 'main' and 'side' each
 * draw the channels, games and extensions (a few milliseconds), and the summary's counts of 'main'
 * hold the side tables' places, at 0, in the order of 'all' (`mergeCounts`).
 */
export async function generate(o: SeedOptions, emit: Emit, part: Part = 'all'): Promise<SeedSummary> {
  const counts: SeedSummary['counts'] = {};
  const write = async <T extends keyof Database>(table: T, rows: Iterable<Database[T]>): Promise<void> => {
    let chunk: Database[T][] = [];
    let n = counts[table] ?? 0;
    for (const row of rows) {
      chunk.push(row);
      n++;
      if (chunk.length === CHUNK) {
        await emit(table, chunk);
        chunk = [];
      }
    }
    if (chunk.length > 0) await emit(table, chunk);
    counts[table] = n;
  };
  const main = part !== 'side';
  const side = part !== 'main';
  // A table of the other part keeps its place in the counts.
  const writeSide = async <T extends keyof Database>(table: T, rows: () => Iterable<Database[T]>) => {
    if (side) await write(table, rows());
    else counts[table] = 0;
  };

  const size = sizesFor(o.users);
  const liveDraws = new Random(o.seed, 'streams');
  const w: World = { seed: o.seed, size, end: o.anchor, channels: channels(o, size, liveDraws) };
  const users = w.channels.map((c) => c.user);
  const demo = users[0] as Database['users'];
  const client = demoClient(w);
  const games = gameRows(w);
  if (main) {
    await write('users', users);
    await write('clients', [client.row]);
    // The live streams add their viewers to their games' counts (they drive /games/top).
    const streams = streamRows(w, games, liveDraws);
    await write('games', games);
    await write('streams', streams);
    const videos = videoRows(w, games);
    // The live streams' archive videos come after the others: they are the newest, and the rows
    // and draws of the videos, clips and markers before them stay what they were.
    const archives = liveArchiveRows(w, streams, videos.rows.length);
    await write('videos', videos.rows);
    await write('videos', archives);
    await write('channels', channelRows(w, streams, videos));
    await write('clips', clipRows(w, games, videos));
    await write('markers', markerRows(w, videos));
    await write('markers', liveMarkerRows(w, archives));
  }
  await writeSide('subscriptions', () => subscriptionRows(w));
  await writeSide('follows', () => followRows(w));
  if (main) {
    await write('moderators', moderatorRows(w));
    await write('tags', tagRows(w));
  }
  const extensions = extensionRows(w);
  if (main) await write('extensions', extensions);
  const analytics = new Random(o.seed, 'analytics');
  await writeSide('game_days', () => gameDayRows(w, games, analytics));
  await writeSide('extension_days', () => extensionDayRows(w, extensions, analytics));

  return {
    demoUserId: demo.id,
    demoLogin: demo.login,
    demoClientId: client.id,
    demoClientSecret: client.secret,
    counts,
  };
}

/** The counts of a 'main' part with those of the 'side' part, in the order of the tables of 'all'. */
export function mergeCounts(main: SeedSummary['counts'], side: SeedSummary['counts']): SeedSummary['counts'] {
  return { ...main, ...side };
}

/**
 * The channels, one per user: the users and their languages from the stream 'users', the main games
 * from 'main-game', and which channels are live from the first draws of `liveDraws` ('streams').
 */
function channels(o: SeedOptions, size: Sizes, liveDraws: Random): Channel[] {
  const ru = new Random(o.seed, 'users');
  // Each channel mostly plays one game.
  const rm = new Random(o.seed, 'main-game');
  const logins = new Set<string>();
  const channels: Channel[] = [];
  for (let i = 0; i < size.users; i++) {
    let base = `${ru.pick(ADJECTIVES)}${ru.pick(NOUNS)}`;
    if (ru.chance(0.5)) base += String(ru.int(1, 999));
    if (ru.chance(0.15)) base = `${base}_tv`;
    let login = base;
    for (let n = 2; logins.has(login); n++) login = `${base}${n}`;
    logins.add(login);
    const display = ru.chance(0.7) ? login.charAt(0).toUpperCase() + login.slice(1) : login;
    // Channel size falls with the index: user 0 is the biggest channel, the demo broadcaster.
    const broadcaster_type = i < size.users * 0.02 ? 'partner' : i < size.users * 0.3 ? 'affiliate' : '';
    const user: Database['users'] = {
      id: 41_000_000 + i * 37 + ru.int(0, 36),
      login,
      display_name: display,
      broadcaster_type,
      description: `${display} streams ${ru.pick(TITLE_PARTS).toLowerCase()}.`,
      created_at: PLATFORM_START + ru.int(0, o.anchor - 30 * DAY - PLATFORM_START),
      email: demoEmail(login),
    };
    const language = ru.weighted(LANGUAGES, LANGUAGE_WEIGHTS);
    channels.push({ rank: i, user, language, mainGame: pickGame(size, rm), live: false });
  }
  // The demo broadcaster is live, and as many others as there are streams, the big ones likelier.
  (channels[0] as Channel).live = true;
  let live = 1;
  while (live < size.streams) {
    const c = channels[liveDraws.skewedIndex(size.users, 1.5)] as Channel;
    if (!c.live) live++;
    c.live = true;
  }
  return channels;
}

/** The demo app: its id and secret are drawn, so that every seed has its own. */
function demoClient(w: World): { row: Database['clients']; id: string; secret: string } {
  const rc = new Random(w.seed, 'clients');
  const id = rc.alnum(30);
  const secret = rc.alnum(30);
  return {
    id,
    secret,
    row: {
      id,
      name: 'helixd demo app',
      secret_hash: sha256(secret),
      demo_secret: secret,
      redirect_uris: JSON.stringify(['http://localhost:3000', 'http://localhost:3000/auth/callback']),
      created_at: w.end - 10 * DAY,
    },
  };
}

/** The games, without viewers yet (`streamRows` counts them). */
function gameRows(w: World): Database['games'][] {
  const rg = new Random(w.seed, 'games');
  const demo = (w.channels[0] as Channel).user;
  const names = new Set<string>();
  const games: Database['games'][] = [];
  for (let i = 0; i < w.size.games; i++) {
    let name = `${rg.pick(GAME_FIRST)} ${rg.pick(GAME_SECOND)}${rg.pick(GAME_SUFFIX)}`;
    for (let n = 2; names.has(name); n++) name = `${name.replace(/ \(\d+\)$/, '')} (${n})`;
    names.add(name);
    games.push({
      id: 20_000 + i * 13 + rg.int(0, 12),
      name,
      igdb_id: rg.chance(0.8) ? String(rg.int(1000, 300_000)) : '',
      // A few games belong to a developer account (their analytics are readable by it); the demo
      // broadcaster owns three, so its token can read game reports.
      owner_id: i >= 3 && i < 6 ? demo.id : rg.chance(0.04) ? pickChannel(w, rg, 1).user.id : null,
      viewer_count: 0,
      stream_count: 0,
    });
  }
  return games;
}

/**
 * One stream per live channel, in rank order; each adds its viewers to its game. Draws continue
 * `liveDraws` after the choice of the live channels. Tags and the mature flag came later than the
 * other columns: drawn from a stream of their own, so that the streams' other values (and the
 * games' viewer sums) stay what they were.
 */
function streamRows(w: World, games: Database['games'][], liveDraws: Random): Database['streams'][] {
  const rs = liveDraws;
  const rst = new Random(w.seed, 'stream-tags');
  const streams: Database['streams'][] = [];
  const coverage = Math.floor(w.size.games * 0.9);
  for (const c of w.channels) {
    if (!c.live) continue;
    const s = streams.length;
    // Most games have someone live; the rest follow the channels' main games.
    const g = games[s < coverage ? s : c.mainGame] as Database['games'];
    const viewers = Math.max(
      0,
      Math.floor(rs.pareto(3, 1.1, 300_000) * (c.rank < 20 ? 40 : 1)) - rs.int(0, 3),
    );
    g.viewer_count += viewers;
    g.stream_count += 1;
    streams.push({
      id: 40_000_000_000 + s * 101 + rs.int(0, 100),
      user_id: c.user.id,
      game_id: g.id,
      title: `${rs.pick(TITLE_PARTS)} | ${g.name}`,
      viewer_count: viewers,
      language: c.language,
      started_at: w.end - rs.int(600, 12 * 3600),
      tags: JSON.stringify(streamTags(rst)),
      is_mature: rst.chance(0.1) ? 1 : 0,
    });
  }
  return streams;
}

interface Videos {
  /** oldest first: ids grow with time, as on the platform */
  rows: Database['videos'][];
  /** each channel's videos, by rank; a channel without videos has no entry */
  ofChannel: Map<number, Database['videos'][]>;
  /** each channel's past broadcasts, by rank; a channel without any has no entry */
  archivesOf: Map<number, Database['videos'][]>;
}

/** The videos: the demo broadcaster's first forty, then mostly the big channels'. */
function videoRows(w: World, games: Database['games'][]): Videos {
  const rv = new Random(w.seed, 'videos');
  const { end } = w;
  const draft: (Omit<Database['videos'], 'id'> & { rank: number })[] = [];
  for (let i = 0; i < w.size.videos; i++) {
    const c = i < 40 ? (w.channels[0] as Channel) : pickChannel(w, rv, 2.5);
    const u = c.user;
    const type = rv.weighted(['archive', 'highlight', 'upload'] as const, [60, 25, 15]);
    const since = Math.max(u.created_at, type === 'archive' ? end - 60 * DAY : u.created_at);
    const created = since + rv.int(0, end - DAY - since);
    const duration =
      type === 'archive'
        ? rv.int(1800, 8 * 3600)
        : type === 'highlight'
          ? rv.int(30, 1800)
          : rv.int(60, 3600);
    const gi = rv.chance(0.8) ? c.mainGame : pickGame(w.size, rv);
    let muted: string | null = null;
    if (type === 'archive' && rv.chance(0.2)) {
      const segs = [];
      let at = rv.int(0, 600);
      for (let k = rv.int(1, 3); k > 0 && at < duration - 60; k--) {
        const len = 30 * rv.int(1, 12);
        segs.push({ duration: len, offset: at });
        at += len + rv.int(60, 1800);
      }
      muted = JSON.stringify(segs);
    }
    const game = games[gi] as Database['games'];
    draft.push({
      rank: c.rank,
      stream_id: type === 'archive' ? 39_000_000_000 + i * 7 + rv.int(0, 6) : null,
      user_id: u.id,
      game_id: game.id,
      title: `${rv.pick(TITLE_PARTS)} - ${game.name}`,
      description: rv.chance(0.4) ? `Playing ${game.name}. ${rv.pick(TITLE_PARTS)}.` : '',
      created_at: created,
      published_at: type === 'upload' ? created + rv.int(60, 3600) : created,
      language: c.language,
      type,
      view_count: rv.pareto(1, 1.2, 50_000_000),
      duration_s: duration,
      muted_segments: muted,
    });
  }
  draft.sort((a, b) => a.created_at - b.created_at || a.user_id - b.user_id);
  const videos: Videos = { rows: [], ofChannel: new Map(), archivesOf: new Map() };
  const add = (map: Map<number, Database['videos'][]>, rank: number, row: Database['videos']) => {
    const list = map.get(rank);
    if (list) list.push(row);
    else map.set(rank, [row]);
  };
  draft.forEach(({ rank, ...v }, i) => {
    const row = { id: videoId(i), ...v };
    videos.rows.push(row);
    add(videos.ofChannel, rank, row);
    if (v.type === 'archive') add(videos.archivesOf, rank, row);
  });
  return videos;
}

/** The id of the `i`th video, oldest first (ids grow with time, as on the platform). */
function videoId(i: number): number {
  return 1_000_000_000 + i * 3 + (i % 3);
}

/** The share of live streams whose broadcaster keeps no past broadcasts: their streams record no video. */
export const NO_VOD_SHARE = 0.1;

/**
 * The archive videos of the live streams, each recording its stream as the platform does while a
 * broadcaster keeps past broadcasts: type archive, the stream's id, owner, game, title and
 * language, created and published when the stream started. Every live stream has one but one in
 * ten (NO_VOD_SHARE of them, rounded, at least one when there are two streams or more), drawn from
 * the stream 'stream-archives' among all but the demo broadcaster's, which always records: POST
 * /streams/markers and its 404 both have streams to answer about in the demo data.
 *
 * `duration` is the time live at the seed's moment (the anchor): the video as it stood when it was
 * written. A stored length does not grow (docs/your-data.md). Ids follow the other videos' (`first`
 * is how many there are), in the order the streams started: the newest videos get the highest ids.
 */
function liveArchiveRows(w: World, streams: Database['streams'][], first: number): Database['videos'][] {
  const ra = new Random(w.seed, 'stream-archives');
  const n = streams.length;
  // A partial shuffle of the streams but the first (the demo broadcaster's) picks those without.
  const others = Array.from({ length: Math.max(0, n - 1) }, (_, i) => i + 1);
  const without = new Set<number>();
  const k = n > 1 ? Math.max(1, Math.round(n * NO_VOD_SHARE)) : 0;
  for (let j = 0; j < k; j++) {
    const m = ra.int(j, others.length - 1);
    [others[j], others[m]] = [others[m] as number, others[j] as number];
    without.add(others[j] as number);
  }
  const draft: Omit<Database['videos'], 'id'>[] = [];
  streams.forEach((s, i) => {
    if (without.has(i)) return;
    draft.push({
      stream_id: s.id,
      user_id: s.user_id,
      game_id: s.game_id,
      title: s.title,
      description: '',
      created_at: s.started_at,
      published_at: s.started_at,
      language: s.language,
      type: 'archive',
      // Views while live: viewers who went back in the stream, a few of those watching.
      view_count: ra.int(0, Math.floor(s.viewer_count / 10)),
      duration_s: w.end - s.started_at,
      muted_segments: null,
    });
  });
  draft.sort((a, b) => a.created_at - b.created_at || a.user_id - b.user_id);
  return draft.map((v, i) => ({ id: videoId(first + i), ...v }));
}

/** Content classification labels' ids, in the platform's order: a channel's list keeps it. */
const CONTENT_LABELS = [
  'DebatedSocialIssuesAndPolitics',
  'DrugsIntoxication',
  'Gambling',
  'MatureGame',
  'ProfanityVulgarity',
  'SexualThemes',
  'ViolentGraphic',
] as const;

/** The delays (seconds) a partner's channel holds its broadcast back by: at most 900. */
const DELAYS = [5, 10, 15, 30, 60, 120, 300, 900] as const;

/**
 * The channels: a row for every user who streams now or has streamed (a past broadcast), in user
 * order; a user who never streamed has none. A live user's channel holds exactly its stream's
 * title, game, language and tags (the stream shows its channel's); an offline one's, the title,
 * game and language of its most recent past broadcast and tags drawn as the streams' are (stream
 * 'channel-tags'). A channel is held back by no delay, carries no labels and no branded content,
 * but one in four partners' channels, the demo broadcaster's aside (stream 'channel-extras'): a
 * delay, labels or branded content, each drawn, so that every field has values to show.
 */
function channelRows(w: World, streams: Database['streams'][], videos: Videos): Database['channels'][] {
  const rct = new Random(w.seed, 'channel-tags');
  const rx = new Random(w.seed, 'channel-extras');
  const liveOf = new Map(streams.map((s) => [s.user_id, s]));
  const rows: Database['channels'][] = [];
  for (const c of w.channels) {
    const u = c.user;
    const stream = liveOf.get(u.id);
    const past = videos.archivesOf.get(c.rank);
    const last = past?.[past.length - 1];
    let row: Database['channels'];
    if (stream)
      row = {
        broadcaster_id: u.id,
        title: stream.title,
        game_id: stream.game_id,
        language: stream.language,
        delay: 0,
        tags: stream.tags,
        labels: '[]',
        is_branded_content: 0,
      };
    else if (last)
      row = {
        broadcaster_id: u.id,
        title: last.title,
        game_id: last.game_id,
        language: last.language,
        delay: 0,
        tags: JSON.stringify(streamTags(rct)),
        labels: '[]',
        is_branded_content: 0,
      };
    else continue;
    if (c.rank > 0 && u.broadcaster_type === 'partner' && rx.chance(0.25)) {
      if (rx.chance(0.5)) row.delay = rx.pick(DELAYS);
      row.labels = JSON.stringify(CONTENT_LABELS.filter(() => rx.chance(0.3)));
      row.is_branded_content = rx.chance(0.3) ? 1 : 0;
    }
    rows.push(row);
  }
  return rows;
}

/** The clips: a twentieth of them the demo broadcaster's; most of a channel's from its broadcasts. */
function* clipRows(w: World, games: Database['games'][], videos: Videos): Generator<Database['clips']> {
  const rcl = new Random(w.seed, 'clips');
  const { end } = w;
  const ids = new Set<string>();
  for (let i = 0; i < w.size.clips; i++) {
    const c = i < w.size.clips * 0.05 ? (w.channels[0] as Channel) : pickChannel(w, rcl, 3);
    const u = c.user;
    const archives = videos.archivesOf.get(c.rank);
    const fromVod = archives !== undefined && rcl.chance(0.6);
    const vod = fromVod ? rcl.pick(archives) : undefined;
    const created = vod
      ? vod.created_at + rcl.int(60, vod.duration_s)
      : u.created_at + rcl.int(0, end - DAY - u.created_at);
    let id = '';
    do {
      id = `${cap(rcl.pick(ADJECTIVES))}${cap(rcl.pick(NOUNS))}${cap(rcl.pick(ADJECTIVES))}${cap(rcl.pick(NOUNS))}-${rcl.alnum(16)}`;
    } while (ids.has(id));
    ids.add(id);
    yield {
      id,
      broadcaster_id: u.id,
      creator_id: pickChannel(w, rcl, 1).user.id,
      video_id: vod ? vod.id : null,
      game_id: vod
        ? vod.game_id
        : (games[rcl.chance(0.8) ? c.mainGame : pickGame(w.size, rcl)] as Database['games']).id,
      language: c.language,
      title: rcl.pick(CLIP_TITLES),
      view_count: rcl.pareto(1, 0.9, 20_000_000),
      created_at: Math.min(created, end - 1),
      duration_ds: rcl.int(50, 600),
      vod_offset: vod ? Math.max(0, created - vod.created_at - 30) : null,
      is_featured: rcl.chance(0.12) ? 1 : 0,
    };
  }
}

/**
 * Stream markers: on videos, created by their owner (or now and then by an editor); the first
 * quarter on the demo broadcaster's three latest videos.
 */
function* markerRows(w: World, videos: Videos): Generator<Database['markers']> {
  const rk = new Random(w.seed, 'markers');
  const demoVideos = videos.ofChannel.get(0) ?? [];
  for (let i = 0; i < w.size.markers; i++) {
    const v =
      i < w.size.markers / 4 && demoVideos.length
        ? (demoVideos[demoVideos.length - 1 - (i % 3)] as Database['videos'])
        : rk.pick(videos.rows);
    const editor = rk.chance(0.1);
    const position = rk.int(0, v.duration_s);
    yield {
      id: rk.hex(32),
      video_id: v.id,
      creator_id: editor ? pickChannel(w, rk, 1).user.id : v.user_id,
      created_at: v.created_at + position,
      description: rk.pick(MARKER_NOTES),
      position_seconds: position,
    };
  }
}

/**
 * Stream markers in the live streams' archive videos (stream 'live-markers'), after the others: the
 * demo broadcaster's as many as each of its three latest past videos holds (a twelfth of the
 * markers), so that its most recent video, the one recording now, has markers to list; 0 to 3 in
 * each other. Each at a position within the time live so far, by the owner or now and then an editor.
 */
function* liveMarkerRows(w: World, archives: Database['videos'][]): Generator<Database['markers']> {
  const rk = new Random(w.seed, 'live-markers');
  const demo = (w.channels[0] as Channel).user.id;
  for (const v of archives) {
    for (let n = v.user_id === demo ? Math.round(w.size.markers / 12) : rk.int(0, 3); n > 0; n--) {
      const editor = rk.chance(0.1);
      const position = rk.int(0, v.duration_s);
      yield {
        id: rk.hex(32),
        video_id: v.id,
        creator_id: editor ? pickChannel(w, rk, 1).user.id : v.user_id,
        created_at: v.created_at + position,
        description: rk.pick(MARKER_NOTES),
        position_seconds: position,
      };
    }
  }
}

/** Subscriptions, unique (broadcaster, user): the first half of the draws to the demo broadcaster. */
function* subscriptionRows(w: World): Generator<Database['subscriptions']> {
  const rsub = new Random(w.seed, 'subscriptions');
  const { users } = w.size;
  const seen = new PairSet(w.size.subscriptions);
  const user = (rank: number) => (w.channels[rank] as Channel).user;
  for (let i = 0; i < w.size.subscriptions; i++) {
    const bi = i < users / 2 ? 0 : rsub.skewedIndex(users, 3.5);
    const ui = rsub.int(0, users - 1);
    if (ui === bi || seen.has(bi * users + ui)) continue;
    seen.add(bi * users + ui);
    const b = user(bi);
    const tier = rsub.weighted(['1000', '2000', '3000'] as const, [82, 11, 7]);
    const gift = rsub.chance(0.3);
    let gifter = gift ? rsub.int(0, users - 1) : -1;
    if (gifter === ui || gifter === bi)
      gifter = (ui + 1) % users === bi ? (ui + 2) % users : (ui + 1) % users;
    yield {
      broadcaster_id: b.id,
      user_id: user(ui).id,
      tier,
      plan_name: `Channel Subscription (${b.login})${tier === '1000' ? '' : tier === '2000' ? ': $9.99 Sub' : ': $24.99 Sub'}`,
      is_gift: gift ? 1 : 0,
      gifter_id: gift ? user(gifter).id : null,
      created_at: w.end - rsub.int(3600, 365 * DAY),
    };
  }
}

/** Follows, unique (follower, channel): anyone follows, mostly the big channels. */
function* followRows(w: World): Generator<Database['follows']> {
  const rf = new Random(w.seed, 'follows');
  const { users } = w.size;
  const seen = new PairSet(w.size.follows);
  for (let i = 0; i < w.size.follows; i++) {
    const from = rf.int(0, users - 1);
    const to = rf.skewedIndex(users, 3);
    if (from === to || seen.has(from * users + to)) continue;
    seen.add(from * users + to);
    const a = (w.channels[from] as Channel).user;
    const b = (w.channels[to] as Channel).user;
    const since = Math.max(a.created_at, b.created_at);
    yield { from_id: a.id, to_id: b.id, followed_at: since + rf.int(0, w.end - since - 1) };
  }
}

/**
 * Moderators: 1 to 4 per partner channel, 8 for the demo broadcaster, who also moderates 3 other
 * channels, so that both sides of the moderator rule of GET /channels/followers are in the demo
 * data. Drawn from their own stream: the other tables do not change.
 */
function moderatorRows(w: World): Database['moderators'][] {
  const rmod = new Random(w.seed, 'moderators');
  const { users } = w.size;
  const moderators: Database['moderators'][] = [];
  const seen = new Set<number>();
  const moderate = (bi: number, want: number, pickUser: () => number) => {
    for (let got = 0, tries = 0; got < want && tries < want * 10; tries++) {
      const ui = pickUser();
      if (ui === bi || seen.has(bi * users + ui)) continue;
      seen.add(bi * users + ui);
      got++;
      const b = (w.channels[bi] as Channel).user;
      const u = (w.channels[ui] as Channel).user;
      const since = Math.max(b.created_at, u.created_at);
      moderators.push({
        broadcaster_id: b.id,
        user_id: u.id,
        created_at: since + rmod.int(0, w.end - since - 1),
      });
    }
  };
  const partners = Math.max(1, Math.ceil(users * 0.02));
  for (let bi = 0; bi < partners && bi < users; bi++)
    moderate(bi, bi === 0 ? 8 : rmod.int(1, 4), () => rmod.int(0, users - 1));
  const modded = Math.min(users - 1, 20);
  for (let k = 0, tries = 0; k < 3 && modded > 0 && tries < 30; tries++) {
    const bi = rmod.int(1, modded);
    if (seen.has(bi * users)) continue;
    moderate(bi, 1, () => 0);
    k++;
  }
  return moderators;
}

/** The stream tags of the legacy tag operations, named in every locale. */
function tagRows(w: World): Database['tags'][] {
  const rt = new Random(w.seed, 'tags');
  const tags: Database['tags'][] = [];
  for (let i = 0; i < w.size.tags; i++) {
    const word = TAG_WORDS[i % TAG_WORDS.length] as string;
    const name = i < TAG_WORDS.length ? word : `${word} ${Math.floor(i / TAG_WORDS.length) + 1}`;
    const names: Record<string, string> = {};
    const descriptions: Record<string, string> = {};
    for (const loc of TAG_LOCALES) {
      names[loc] = loc === 'en-us' ? name : `${name} (${loc.slice(0, 2)})`;
      descriptions[loc] = `${loc === 'en-us' ? 'For streams about' : `[${loc}]`} ${name.toLowerCase()}`;
    }
    tags.push({
      id: rt.uuid(),
      is_auto: rt.chance(0.2) ? 1 : 0,
      localization_names: JSON.stringify(names),
      localization_descriptions: JSON.stringify(descriptions),
    });
  }
  return tags;
}

/** Extensions: the first three the demo broadcaster's, so its token can read extension reports. */
function extensionRows(w: World): Database['extensions'][] {
  const rx = new Random(w.seed, 'extensions');
  const demo = (w.channels[0] as Channel).user;
  const extensions: Database['extensions'][] = [];
  for (let i = 0; i < w.size.extensions; i++) {
    extensions.push({
      id: rx.alnum(30),
      name: `${cap(rx.pick(ADJECTIVES))} ${rx.pick(EXTENSION_WORDS)}`,
      owner_id: i < 3 ? demo.id : pickChannel(w, rx, 1).user.id,
      version: `${rx.int(0, 3)}.${rx.int(0, 20)}.${rx.int(0, 9)}`,
    });
  }
  return extensions;
}

/** ISO day texts, each computed once: the analytics tables repeat a few thousand days. */
function dayTexts(): (unixSeconds: number) => string {
  const texts = new Map<number, string>();
  return (d) => {
    let t = texts.get(d);
    if (t === undefined) {
      t = isoDay(d);
      texts.set(d, t);
    }
    return t;
  };
}

/**
 * The days of each owned game's analytics, from a start drawn after ANALYTICS_EPOCH to the day
 * before the anchor, with gaps: days without data are missing, as on the platform. Draws from `ra`
 * ('analytics') before `extensionDayRows` does.
 */
function* gameDayRows(w: World, games: Database['games'][], ra: Random): Generator<Database['game_days']> {
  const dayText = dayTexts();
  const lastDay = w.end - DAY;
  for (const g of games) {
    if (g.owner_id === null) continue;
    const start = ANALYTICS_EPOCH + ra.int(0, 400) * DAY;
    const scale = ra.pareto(50, 1.3, 200_000);
    for (let d = start; d <= lastDay; d += DAY) {
      if (ra.chance(0.03)) continue;
      const views = Math.floor(scale * (0.6 + ra.next()));
      const uv = Math.floor(views * (0.3 + 0.4 * ra.next()));
      const bc = Math.max(1, Math.floor(views / (40 + ra.int(0, 80))));
      const minutesPerView = ra.int(5, 60);
      const mb = bc * ra.int(30, 240);
      // The largest part of the day's broadcasting a viewer watches on average. Drawn where the
      // clip count was drawn (the report now counts the clips themselves), so that every later
      // draw of 'analytics', the extensions' days included, stays where it was.
      const share = 0.2 + 0.6 * ra.next();
      yield {
        game_id: g.id,
        day: dayText(d),
        views,
        unique_viewers: uv,
        // No viewer watches more than all of the day's broadcasts of the game, so minutes watched
        // <= unique viewers x minutes broadcast: the views of a small game's few short streams are
        // shorter than minutesPerView.
        minutes_watched: Math.min(views * minutesPerView, Math.floor(uv * mb * share)),
        broadcasters: bc,
        minutes_broadcast: mb,
        follows: Math.floor(uv / ra.int(20, 200)),
      };
    }
  }
}

/** The days of each extension's analytics, as `gameDayRows`; continues `ra` after the games' days. */
function* extensionDayRows(
  w: World,
  extensions: Database['extensions'][],
  ra: Random,
): Generator<Database['extension_days']> {
  const dayText = dayTexts();
  const lastDay = w.end - DAY;
  for (const x of extensions) {
    const start = ANALYTICS_EPOCH + ra.int(0, 900) * DAY;
    const scale = ra.pareto(20, 1.3, 100_000);
    for (let d = start; d <= lastDay; d += DAY) {
      if (ra.chance(0.03)) continue;
      const channels = Math.max(1, Math.floor(scale * (0.6 + ra.next())));
      const renders = channels * ra.int(50, 400);
      const views = Math.floor(renders * (0.2 + 0.5 * ra.next()));
      const viewers = Math.floor(views * (0.3 + 0.4 * ra.next()));
      const interactors = Math.floor(viewers * 0.1 * ra.next());
      yield {
        extension_id: x.id,
        day: dayText(d),
        installs: ra.int(0, Math.max(1, Math.floor(channels / 20))),
        uninstalls: ra.int(0, Math.max(1, Math.floor(channels / 40))),
        activations: ra.int(0, Math.max(1, Math.floor(channels / 25))),
        unique_active_channels: channels,
        renders,
        unique_renders: Math.floor(renders * (0.4 + 0.4 * ra.next())),
        views,
        unique_viewers: viewers,
        unique_interactors: interactors,
        clicks: interactors * ra.int(1, 6),
      };
    }
  }
}

/**
 * A set of non-negative integers below 2^53 (pair keys such as `a * users + b`) in one typed array:
 * a million of them as `Set<number>` entries would be a million heap numbers for the GC to trace.
 * Open addressing, linear probing; 0 marks a free slot, so keys are stored plus one.
 */
class PairSet {
  private slots: Float64Array;
  private mask: number;

  constructor(expected: number) {
    let cap = 1024;
    while (cap < expected * 2) cap *= 2;
    this.slots = new Float64Array(cap);
    this.mask = cap - 1;
  }

  private slot(key: number): number {
    const lo = (key % 4294967296) | 0;
    const hi = Math.floor(key / 4294967296) | 0;
    let i = Math.imul(lo ^ Math.imul(hi, 0x9e3779b1), 0x85ebca6b) & this.mask;
    const stored = key + 1;
    for (;;) {
      const v = this.slots[i] as number;
      if (v === 0 || v === stored) return i;
      i = (i + 1) & this.mask;
    }
  }

  has(key: number): boolean {
    return this.slots[this.slot(key)] !== 0;
  }

  /** callers add at most `expected` keys */
  add(key: number): void {
    this.slots[this.slot(key)] = key + 1;
  }
}

/**
 * 0 to 5 distinct free-form tags, as broadcasters set them: letters and digits only (the platform
 * refuses spaces and symbols in a tag), in the order chosen.
 */
function streamTags(rng: Random): string[] {
  const tags: string[] = [];
  for (let n = rng.int(0, 5); n > 0; n--) {
    const tag = rng.pick(TAG_WORDS).replace(/[^\p{L}\p{N}]/gu, '');
    if (!tags.includes(tag)) tags.push(tag);
  }
  return tags;
}

function cap(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
