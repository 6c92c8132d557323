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
/** The first day analytics exist for (spec 4.8). */
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

async function emitChunked<T extends keyof Database>(
  emit: Emit,
  table: T,
  rows: Database[T][],
): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) await emit(table, rows.slice(i, i + CHUNK));
}

export async function generate(o: SeedOptions, emit: Emit): Promise<SeedSummary> {
  const size = sizesFor(o.users);
  const counts: SeedSummary['counts'] = {};
  const end = o.anchor; // data ends just before the anchor day
  const tally = async <T extends keyof Database>(table: T, rows: Database[T][]) => {
    counts[table] = (counts[table] ?? 0) + rows.length;
    await emitChunked(emit, table, rows);
  };
  // The big tables are written as they are generated, CHUNK rows at a time, so that at most one
  // chunk of them is held in memory; the random draws happen in the same order either way.
  const flush = async <T extends keyof Database>(table: T, rows: Database[T][]): Promise<Database[T][]> => {
    await tally(table, rows);
    return [];
  };

  // ---- users -----------------------------------------------------------------------------------
  const ru = new Random(o.seed, 'users');
  const logins = new Set<string>();
  const users: Database['users'][] = [];
  const userLang: string[] = [];
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
    users.push({
      id: 41_000_000 + i * 37 + ru.int(0, 36),
      login,
      display_name: display,
      broadcaster_type,
      description: `${display} streams ${ru.pick(TITLE_PARTS).toLowerCase()}.`,
      created_at: PLATFORM_START + ru.int(0, end - 30 * DAY - PLATFORM_START),
      email: demoEmail(login),
    });
    userLang.push(ru.weighted(LANGUAGES, LANGUAGE_WEIGHTS));
  }
  const demo = users[0] as Database['users'];
  await tally('users', users);
  const userIx = (rng: Random, skew = 3) => rng.skewedIndex(size.users, skew);

  // ---- demo client -----------------------------------------------------------------------------
  const rc = new Random(o.seed, 'clients');
  const demoClientId = rc.alnum(30);
  const demoClientSecret = rc.alnum(30);
  await tally('clients', [
    {
      id: demoClientId,
      name: 'helixd demo app',
      secret_hash: sha256(demoClientSecret),
      demo_secret: demoClientSecret,
      redirect_uris: JSON.stringify(['http://localhost:3000', 'http://localhost:3000/auth/callback']),
      created_at: end - 10 * DAY,
    },
  ]);

  // ---- games -----------------------------------------------------------------------------------
  const rg = new Random(o.seed, 'games');
  const gameNames = new Set<string>();
  const games: Database['games'][] = [];
  for (let i = 0; i < size.games; i++) {
    let name = `${rg.pick(GAME_FIRST)} ${rg.pick(GAME_SECOND)}${rg.pick(GAME_SUFFIX)}`;
    for (let n = 2; gameNames.has(name); n++) name = `${name.replace(/ \(\d+\)$/, '')} (${n})`;
    gameNames.add(name);
    games.push({
      id: 20_000 + i * 13 + rg.int(0, 12),
      name,
      igdb_id: rg.chance(0.8) ? String(rg.int(1000, 300_000)) : '',
      // A few games belong to a developer account (their analytics are readable by it); the demo
      // broadcaster owns three, so its token can read game reports.
      owner_id:
        i >= 3 && i < 6 ? demo.id : rg.chance(0.04) ? (users[userIx(rg, 1)] as Database['users']).id : null,
      viewer_count: 0,
      stream_count: 0,
    });
  }
  const gameIx = (rng: Random) => rng.skewedIndex(size.games, 2.5);
  // Each channel mostly plays one game.
  const rm = new Random(o.seed, 'main-game');
  const userGame = users.map(() => gameIx(rm));

  // ---- live streams (they drive /games/top) -------------------------------------------------------
  const rs = new Random(o.seed, 'streams');
  // Tags and the mature flag came later than the other columns: drawn from a stream of their own,
  // so that the streams' other values (and the games' viewer sums) stay what they were.
  const rst = new Random(o.seed, 'stream-tags');
  const liveUsers = new Set<number>([0]);
  while (liveUsers.size < size.streams) liveUsers.add(userIx(rs, 1.5));
  const streams: Database['streams'][] = [];
  const coverage = Math.floor(size.games * 0.9);
  let s = 0;
  for (const ui of [...liveUsers].sort((a, b) => a - b)) {
    const u = users[ui] as Database['users'];
    // Most games have someone live; the rest follow the channels' main games.
    const gi = s < coverage ? s : (userGame[ui] as number);
    const g = games[gi] as Database['games'];
    const viewers = Math.max(0, Math.floor(rs.pareto(3, 1.1, 300_000) * (ui < 20 ? 40 : 1)) - rs.int(0, 3));
    g.viewer_count += viewers;
    g.stream_count += 1;
    streams.push({
      id: 40_000_000_000 + s * 101 + rs.int(0, 100),
      user_id: u.id,
      game_id: g.id,
      title: `${rs.pick(TITLE_PARTS)} | ${g.name}`,
      viewer_count: viewers,
      language: userLang[ui] as string,
      started_at: end - rs.int(600, 12 * 3600),
      tags: JSON.stringify(streamTags(rst)),
      is_mature: rst.chance(0.1) ? 1 : 0,
    });
    s++;
  }
  await tally('games', games);
  await tally('streams', streams);

  // ---- videos (ids grow with time, as on the platform) ---------------------------------------------
  const rv = new Random(o.seed, 'videos');
  const draft: (Omit<Database['videos'], 'id'> & { ui: number })[] = [];
  for (let i = 0; i < size.videos; i++) {
    const ui = i < 40 ? 0 : userIx(rv, 2.5);
    const u = users[ui] as Database['users'];
    const type = rv.weighted(['archive', 'highlight', 'upload'] as const, [60, 25, 15]);
    const since = Math.max(u.created_at, type === 'archive' ? end - 60 * DAY : u.created_at);
    const created = since + rv.int(0, end - DAY - since);
    const duration =
      type === 'archive'
        ? rv.int(1800, 8 * 3600)
        : type === 'highlight'
          ? rv.int(30, 1800)
          : rv.int(60, 3600);
    const gi = rv.chance(0.8) ? (userGame[ui] as number) : gameIx(rv);
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
      ui,
      stream_id: type === 'archive' ? 39_000_000_000 + i * 7 + rv.int(0, 6) : null,
      user_id: u.id,
      game_id: game.id,
      title: `${rv.pick(TITLE_PARTS)} - ${game.name}`,
      description: rv.chance(0.4) ? `Playing ${game.name}. ${rv.pick(TITLE_PARTS)}.` : '',
      created_at: created,
      published_at: type === 'upload' ? created + rv.int(60, 3600) : created,
      language: userLang[ui] as string,
      type,
      view_count: rv.pareto(1, 1.2, 50_000_000),
      duration_s: duration,
      muted_segments: muted,
    });
  }
  draft.sort((a, b) => a.created_at - b.created_at || a.user_id - b.user_id);
  const videos: Database['videos'][] = [];
  const archivesOf = new Map<number, Database['videos'][]>();
  const videosOf = new Map<number, Database['videos'][]>();
  draft.forEach(({ ui, ...v }, i) => {
    const row = { id: 1_000_000_000 + i * 3 + (i % 3), ...v };
    videos.push(row);
    if (!videosOf.has(ui)) videosOf.set(ui, []);
    videosOf.get(ui)?.push(row);
    if (v.type === 'archive') {
      if (!archivesOf.has(ui)) archivesOf.set(ui, []);
      archivesOf.get(ui)?.push(row);
    }
  });
  draft.length = 0;
  await tally('videos', videos);

  // ---- clips -----------------------------------------------------------------------------------
  const rcl = new Random(o.seed, 'clips');
  const clipIds = new Set<string>();
  let clips: Database['clips'][] = [];
  for (let i = 0; i < size.clips; i++) {
    if (clips.length === CHUNK) clips = await flush('clips', clips);
    const ui = i < size.clips * 0.05 ? 0 : userIx(rcl, 3);
    const u = users[ui] as Database['users'];
    const archives = archivesOf.get(ui);
    const fromVod = archives !== undefined && rcl.chance(0.6);
    const vod = fromVod ? rcl.pick(archives) : undefined;
    const created = vod
      ? vod.created_at + rcl.int(60, vod.duration_s)
      : u.created_at + rcl.int(0, end - DAY - u.created_at);
    let id = '';
    do {
      id = `${cap(rcl.pick(ADJECTIVES))}${cap(rcl.pick(NOUNS))}${cap(rcl.pick(ADJECTIVES))}${cap(rcl.pick(NOUNS))}-${rcl.alnum(16)}`;
    } while (clipIds.has(id));
    clipIds.add(id);
    clips.push({
      id,
      broadcaster_id: u.id,
      creator_id: (users[userIx(rcl, 1)] as Database['users']).id,
      video_id: vod ? vod.id : null,
      game_id: vod
        ? vod.game_id
        : (games[rcl.chance(0.8) ? (userGame[ui] as number) : gameIx(rcl)] as Database['games']).id,
      language: userLang[ui] as string,
      title: rcl.pick(CLIP_TITLES),
      view_count: rcl.pareto(1, 0.9, 20_000_000),
      created_at: Math.min(created, end - 1),
      duration_ds: rcl.int(50, 600),
      vod_offset: vod ? Math.max(0, created - vod.created_at - 30) : null,
      is_featured: rcl.chance(0.12) ? 1 : 0,
    });
  }
  await tally('clips', clips);
  clipIds.clear();

  // ---- stream markers: on videos, created by their owner (or now and then by an editor) ---------
  const rk = new Random(o.seed, 'markers');
  let markers: Database['markers'][] = [];
  const demoVideos = videosOf.get(0) ?? [];
  for (let i = 0; i < size.markers; i++) {
    if (markers.length === CHUNK) markers = await flush('markers', markers);
    const v =
      i < size.markers / 4 && demoVideos.length
        ? (demoVideos[demoVideos.length - 1 - (i % 3)] as Database['videos'])
        : rk.pick(videos);
    const editor = rk.chance(0.1);
    const position = rk.int(0, v.duration_s);
    markers.push({
      id: rk.hex(32),
      video_id: v.id,
      creator_id: editor ? (users[userIx(rk, 1)] as Database['users']).id : v.user_id,
      created_at: v.created_at + position,
      description: rk.pick(MARKER_NOTES),
      position_seconds: position,
    });
  }
  await tally('markers', markers);

  // ---- subscriptions: unique (broadcaster, user) --------------------------------------------------
  const rsub = new Random(o.seed, 'subscriptions');
  let subs: Database['subscriptions'][] = [];
  const subSeen = new PairSet(size.subscriptions);
  for (let i = 0; i < size.subscriptions; i++) {
    if (subs.length === CHUNK) subs = await flush('subscriptions', subs);
    const bi = i < size.users / 2 ? 0 : userIx(rsub, 3.5);
    const ui = rsub.int(0, size.users - 1);
    if (ui === bi || subSeen.has(bi * size.users + ui)) continue;
    subSeen.add(bi * size.users + ui);
    const b = users[bi] as Database['users'];
    const tier = rsub.weighted(['1000', '2000', '3000'] as const, [82, 11, 7]);
    const gift = rsub.chance(0.3);
    let gifter = gift ? rsub.int(0, size.users - 1) : -1;
    if (gifter === ui || gifter === bi)
      gifter = (ui + 1) % size.users === bi ? (ui + 2) % size.users : (ui + 1) % size.users;
    subs.push({
      broadcaster_id: b.id,
      user_id: (users[ui] as Database['users']).id,
      tier,
      plan_name: `Channel Subscription (${b.login})${tier === '1000' ? '' : tier === '2000' ? ': $9.99 Sub' : ': $24.99 Sub'}`,
      is_gift: gift ? 1 : 0,
      gifter_id: gift ? (users[gifter] as Database['users']).id : null,
      created_at: end - rsub.int(3600, 365 * DAY),
    });
  }
  await tally('subscriptions', subs);

  // ---- follows ---------------------------------------------------------------------------------
  const rf = new Random(o.seed, 'follows');
  let follows: Database['follows'][] = [];
  const followSeen = new PairSet(size.follows);
  for (let i = 0; i < size.follows; i++) {
    if (follows.length === CHUNK) follows = await flush('follows', follows);
    const from = rf.int(0, size.users - 1);
    const to = userIx(rf, 3);
    if (from === to || followSeen.has(from * size.users + to)) continue;
    followSeen.add(from * size.users + to);
    const a = users[from] as Database['users'];
    const b = users[to] as Database['users'];
    const since = Math.max(a.created_at, b.created_at);
    follows.push({ from_id: a.id, to_id: b.id, followed_at: since + rf.int(0, end - since - 1) });
  }
  await tally('follows', follows);

  // ---- moderators: 1 to 4 per partner channel, 8 for the demo broadcaster, who also moderates 3
  // other channels, so that both sides of the moderator rule of GET /channels/followers are in the
  // demo data. Drawn from their own stream: the other tables do not change.
  const rmod = new Random(o.seed, 'moderators');
  const moderators: Database['moderators'][] = [];
  const modSeen = new Set<number>();
  const moderate = (bi: number, want: number, pickUser: () => number) => {
    for (let got = 0, tries = 0; got < want && tries < want * 10; tries++) {
      const ui = pickUser();
      if (ui === bi || modSeen.has(bi * size.users + ui)) continue;
      modSeen.add(bi * size.users + ui);
      got++;
      const b = users[bi] as Database['users'];
      const u = users[ui] as Database['users'];
      const since = Math.max(b.created_at, u.created_at);
      moderators.push({
        broadcaster_id: b.id,
        user_id: u.id,
        created_at: since + rmod.int(0, end - since - 1),
      });
    }
  };
  const partners = Math.max(1, Math.ceil(size.users * 0.02));
  for (let bi = 0; bi < partners && bi < size.users; bi++)
    moderate(bi, bi === 0 ? 8 : rmod.int(1, 4), () => rmod.int(0, size.users - 1));
  const modded = Math.min(size.users - 1, 20);
  for (let k = 0, tries = 0; k < 3 && modded > 0 && tries < 30; tries++) {
    const bi = rmod.int(1, modded);
    if (modSeen.has(bi * size.users)) continue;
    moderate(bi, 1, () => 0);
    k++;
  }
  await tally('moderators', moderators);

  // ---- stream tags -----------------------------------------------------------------------------
  const rt = new Random(o.seed, 'tags');
  const tags: Database['tags'][] = [];
  for (let i = 0; i < size.tags; i++) {
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
  await tally('tags', tags);

  // ---- extensions ------------------------------------------------------------------------------
  const rx = new Random(o.seed, 'extensions');
  const extensions: Database['extensions'][] = [];
  for (let i = 0; i < size.extensions; i++) {
    extensions.push({
      id: rx.alnum(30),
      name: `${cap(rx.pick(ADJECTIVES))} ${rx.pick(EXTENSION_WORDS)}`,
      owner_id: i < 3 ? demo.id : (users[userIx(rx, 1)] as Database['users']).id,
      version: `${rx.int(0, 3)}.${rx.int(0, 20)}.${rx.int(0, 9)}`,
    });
  }
  await tally('extensions', extensions);

  // ---- analytics days (with gaps: days without data are missing, as on the platform) --------------
  const ra = new Random(o.seed, 'analytics');
  const lastDay = end - DAY;
  const dayTexts = new Map<number, string>();
  const dayText = (d: number) => {
    let t = dayTexts.get(d);
    if (t === undefined) {
      t = isoDay(d);
      dayTexts.set(d, t);
    }
    return t;
  };
  let gameDays: Database['game_days'][] = [];
  for (const g of games.filter((x) => x.owner_id !== null)) {
    const start = ANALYTICS_EPOCH + ra.int(0, 400) * DAY;
    const scale = ra.pareto(50, 1.3, 200_000);
    if (gameDays.length >= CHUNK) gameDays = await flush('game_days', gameDays);
    const rows = gameDays;
    for (let d = start; d <= lastDay; d += DAY) {
      if (ra.chance(0.03)) continue;
      const views = Math.floor(scale * (0.6 + ra.next()));
      const uv = Math.floor(views * (0.3 + 0.4 * ra.next()));
      const bc = Math.max(1, Math.floor(views / (40 + ra.int(0, 80))));
      rows.push({
        game_id: g.id,
        day: dayText(d),
        views,
        unique_viewers: uv,
        minutes_watched: views * ra.int(5, 60),
        broadcasters: bc,
        minutes_broadcast: bc * ra.int(30, 240),
        clips_created: Math.floor(views / ra.int(50, 500)),
        follows: Math.floor(uv / ra.int(20, 200)),
      });
    }
  }
  await tally('game_days', gameDays);
  let extensionDays: Database['extension_days'][] = [];
  for (const x of extensions) {
    const start = ANALYTICS_EPOCH + ra.int(0, 900) * DAY;
    const scale = ra.pareto(20, 1.3, 100_000);
    if (extensionDays.length >= CHUNK) extensionDays = await flush('extension_days', extensionDays);
    const rows = extensionDays;
    for (let d = start; d <= lastDay; d += DAY) {
      if (ra.chance(0.03)) continue;
      const channels = Math.max(1, Math.floor(scale * (0.6 + ra.next())));
      const renders = channels * ra.int(50, 400);
      const views = Math.floor(renders * (0.2 + 0.5 * ra.next()));
      const viewers = Math.floor(views * (0.3 + 0.4 * ra.next()));
      const interactors = Math.floor(viewers * 0.1 * ra.next());
      rows.push({
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
      });
    }
  }
  await tally('extension_days', extensionDays);

  return { demoUserId: demo.id, demoLogin: demo.login, demoClientId, demoClientSecret, counts };
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
