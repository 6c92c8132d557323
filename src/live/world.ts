// A world that moves (`serve --live`, development profile; docs/live.md): viewer counts drift,
// streams go live and offline, and new clips, videos, subscriptions, follows and stream markers
// appear, at `--live-rate` events a second. Every event is written through the records' write path
// (writeRecords, deleteRecord: the admin API's), in one transaction (a stream that ends, two: its
// archive video's length, then the stream's delete), so every rule is checked and every derived
// value (the games' live counts, subscription totals, clip counts per game and day) kept as for any
// other write; and walks stay correct while it runs (src/store/moves.ts).
//
// The events are one sequence, drawn from `--live-seed` and the store's content: the same seed on
// the same store gives the same events, rows and ids included (times come from the server clock).
// Rows are chosen by reads of the store in key order, never by anything a process keeps, so the
// sequence does not depend on which process runs it or on a restart. Events run one after another,
// whether the timer or POST /admin/live/step asks for them.
import { type Kysely, sql } from 'kysely';
import { type Clock, nowSeconds } from '../clock.ts';
import { type RecordKind, recordKind } from '../records/kinds.ts';
import { deleteRecord, RecordError, type RecordInput, writeRecords } from '../records/write.ts';
import { NO_VOD_SHARE } from '../seed/generate.ts';
import { Random } from '../seed/random.ts';
import { ADJECTIVES, CLIP_TITLES, LANGUAGES, MARKER_NOTES, NOUNS, TITLE_PARTS } from '../seed/words.ts';
import type { Store } from '../store/db.ts';
import { archiveOfStream } from '../store/markers.ts';
import { forgetMoves } from '../store/moves.ts';
import type { Database } from '../store/schema.ts';
import { rfc3339 } from '../wire/datetime.ts';
import { hms } from '../wire/links.ts';

export const LIVE_EVENT_KINDS = [
  'viewers',
  'live',
  'offline',
  'clip',
  'video',
  'subscription',
  'follow',
  'marker',
] as const;
export type LiveEventKind = (typeof LIVE_EVENT_KINDS)[number];

/** How often each kind of event is drawn, out of the sum: mostly viewer counts drifting. */
const WEIGHTS: Record<LiveEventKind, number> = {
  viewers: 55,
  live: 6,
  offline: 6,
  clip: 10,
  video: 4,
  subscription: 8,
  follow: 8,
  marker: 3,
};

/** Ids of rows the world makes: 15 digits, so that a new id meets an old one with no real chance. */
const NEW_ID_MIN = 100_000_000_000_000;
const NEW_ID_MAX = 999_999_999_999_999;

/** The share of users live the world tends to (the demo data's). */
const LIVE_SHARE = 0.15;

/** Moves older than a walk may live are forgotten this often (seconds of ticking). */
const FORGET_EVERY_MS = 10_000;
/** The timer's period; each tick runs the events the rate owes, at most a second's worth. */
const TICK_MS = 50;
/** Users and games are counted again after this many events (#count). */
const RECOUNT_EVENTS = 100;

type Row = Record<string, string | number | null>;

export class LiveWorld {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #random: Random;
  readonly #counted: (kind: LiveEventKind) => void;
  /** the sequence every event joins: events never overlap */
  #queue: Promise<unknown> = Promise.resolve();
  #events = 0;
  #timer: NodeJS.Timeout | undefined;
  #owed = 0;
  #lastTick = 0;
  #lastForget = 0;
  /** the rows of users and of games, as last counted (see #count), and the event that counted them */
  readonly #counts = new Map<string, number>();
  #countedAt = 0;

  constructor(
    store: Store,
    clock: Clock,
    readonly seed: number,
    counted: (kind: LiveEventKind) => void = () => {},
  ) {
    this.#store = store;
    this.#clock = clock;
    this.#random = new Random(seed, 'live');
    this.#counted = counted;
  }

  /** events made since the start */
  get events(): number {
    return this.#events;
  }

  /** Makes `n` events, after any already asked for; how many of each kind happened. */
  step(n: number): Promise<Record<LiveEventKind, number>> {
    const run = this.#queue.then(async () => {
      const kinds = Object.fromEntries(LIVE_EVENT_KINDS.map((k) => [k, 0])) as Record<LiveEventKind, number>;
      for (let i = 0; i < n; i++) {
        const kind = await this.#event();
        if (kind) kinds[kind]++;
      }
      return kinds;
    });
    this.#queue = run.catch(() => {});
    return run;
  }

  /** Makes events at `rate` a second until stopped; `onError` hears an event that failed. */
  start(rate: number, onError: (err: unknown) => void): void {
    if (rate <= 0 || this.#timer) return;
    this.#lastTick = Date.now();
    this.#lastForget = this.#lastTick;
    let busy = false;
    this.#timer = setInterval(() => {
      const now = Date.now();
      // A tick that finds the last one's events still running adds its share to the next, up to a
      // tenth of a second's worth: a store slower than the rate gets fewer events, not a backlog
      // that POST /admin/live/step would wait behind.
      this.#owed = Math.min(Math.max(1, rate / 10), this.#owed + ((now - this.#lastTick) / 1000) * rate);
      this.#lastTick = now;
      if (busy || this.#owed < 1) return;
      const n = Math.floor(this.#owed);
      this.#owed -= n;
      busy = true;
      const forget = now - this.#lastForget >= FORGET_EVERY_MS;
      if (forget) this.#lastForget = now;
      this.step(n)
        .then(() => (forget ? forgetMoves(this.#store.db, this.#store.dialect) : undefined))
        .catch(onError)
        .finally(() => {
          busy = false;
        });
    }, TICK_MS);
    this.#timer.unref();
  }

  /** Stops the timer; resolves once the event in progress has finished. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#queue;
  }

  /** One event: the kind drawn, or another when it cannot happen (no stream to end). */
  async #event(): Promise<LiveEventKind | undefined> {
    const r = this.#random;
    if (this.#events - this.#countedAt >= RECOUNT_EVENTS) {
      this.#counts.clear();
      this.#countedAt = this.#events;
    }
    let drawn = r.weighted(
      LIVE_EVENT_KINDS,
      LIVE_EVENT_KINDS.map((k) => WEIGHTS[k]),
    );
    if (drawn === 'live' || drawn === 'offline') drawn = (await this.#liveOrOffline()) ? 'live' : 'offline';
    const happened = (await this.#try(drawn)) ? drawn : (await this.#try('viewers')) ? 'viewers' : undefined;
    this.#events++;
    if (happened) this.#counted(happened);
    return happened;
  }

  /**
   * Whether a stream goes live (or one ends): drawn so that the share of users live returns to
   * LIVE_SHARE, as a platform's does over a day, rather than wandering off to none or all.
   */
  async #liveOrOffline(): Promise<boolean> {
    const live = await this.#count('streams');
    const target = LIVE_SHARE * (await this.#count('users'));
    return !this.#random.chance(live / (live + target || 1));
  }

  /** Whether the event happened: false when the store offers nothing for it or a rule refused it. */
  async #try(kind: LiveEventKind): Promise<boolean> {
    try {
      return await this.#events_[kind]();
    } catch (err) {
      // A row the draw named is taken (a follow that exists) or gone: no event, as for a client.
      if (err instanceof RecordError) return false;
      throw err;
    }
  }

  readonly #events_: Record<LiveEventKind, () => Promise<boolean>> = {
    viewers: async () => {
      const stream = await this.#pickStream();
      if (!stream) return false;
      const r = this.#random;
      // Drift: mostly a few percent, now and then a raid or an exodus.
      const factor = r.chance(0.1) ? 0.3 + r.next() * 2.5 : 0.85 + r.next() * 0.3;
      const viewers = Math.max(0, Math.round((stream.viewer_count as number) * factor) + r.int(-5, 5));
      return this.#replace('stream', stream, { viewer_count: viewers });
    },
    live: async () => {
      const r = this.#random;
      const user = await this.#pick('users');
      const game = await this.#pick('games');
      const id = r.int(NEW_ID_MIN, NEW_ID_MAX);
      const archiveId = r.int(NEW_ID_MIN, NEW_ID_MAX);
      const records = r.chance(1 - NO_VOD_SHARE);
      if (!user || !game) return false;
      const drawn = { title: this.#title(), language: r.pick(LANGUAGES) };
      const stream = {
        id: String(id),
        user_id: String(user.id),
        game_id: String(game.id),
        title: drawn.title,
        tags: [] as string[],
        viewer_count: r.pareto(1, 1.1, 200_000),
        started_at: this.#now(),
        language: drawn.language,
        is_mature: r.chance(0.1),
      };
      // A user with a channel goes live with its title, game, language and tags (a channel without
      // a game: the game drawn); the draws above are made either way, so that the sequence of
      // draws does not depend on who has a channel.
      const channel = await this.#store.db
        .selectFrom('channels')
        .select(['title', 'game_id', 'language', 'tags'])
        .where('broadcaster_id', '=', user.id as number)
        .executeTakeFirst();
      if (channel) {
        stream.title = channel.title;
        if (channel.game_id !== null) stream.game_id = String(channel.game_id);
        stream.language = channel.language;
        stream.tags = JSON.parse(channel.tags) as string[];
      }
      const items: RecordInput[] = [{ kind: 'stream', data: stream, where: 'live' }];
      // The stream records into its archive video, written with it, as it stands now: nothing
      // recorded yet (duration 0s, no views). The offline event gives it its length.
      if (records)
        items.push({
          kind: 'video',
          where: 'live',
          data: {
            id: String(archiveId),
            stream_id: stream.id,
            user_id: stream.user_id,
            game_id: stream.game_id,
            title: stream.title,
            description: '',
            created_at: stream.started_at,
            published_at: stream.started_at,
            view_count: 0,
            language: stream.language,
            type: 'archive',
            duration: hms(0),
            muted_segments: null,
          },
        });
      await writeRecords(this.#store, items, { mode: 'create' });
      return true;
    },
    offline: async () => {
      const stream = await this.#pickStream();
      if (!stream) return false;
      // The archive video stays, a past broadcast now: its length is the time the stream was live.
      // Written before the stream goes (the write path deletes in a transaction of its own): a
      // stream whose delete fails has ended anyway.
      const archive = await archiveOfStream(this.#store.db, stream.id as number, stream.user_id as number);
      if (archive) {
        const row = await this.#store.db
          .selectFrom('videos')
          .selectAll()
          .where('id', '=', archive.id)
          .executeTakeFirst();
        const live = nowSeconds(this.#clock) - (stream.started_at as number);
        if (row) await this.#replace('video', row as unknown as Row, { duration: hms(Math.max(0, live)) });
      }
      await deleteRecord(this.#store, this.#kind('stream'), [stream.id as number], 'live');
      return true;
    },
    clip: async () => {
      const r = this.#random;
      const broadcaster = await this.#pick('users');
      const creator = await this.#pick('users');
      const game = await this.#pick('games');
      const id = `${r.pick(ADJECTIVES)}${r.pick(NOUNS)}${r.alnum(10)}`.replace(/[^A-Za-z0-9]/g, '');
      if (!broadcaster || !creator || !game) return false;
      return this.#create('clip', {
        id,
        broadcaster_id: String(broadcaster.id),
        creator_id: String(creator.id),
        video_id: '',
        game_id: String(game.id),
        language: r.pick(LANGUAGES),
        title: r.pick(CLIP_TITLES),
        view_count: r.pareto(1, 1.2, 5_000_000),
        created_at: this.#now(),
        duration: r.int(50, 600) / 10,
        vod_offset: null,
        is_featured: r.chance(0.05),
      });
    },
    video: async () => {
      const r = this.#random;
      const user = await this.#pick('users');
      const game = await this.#pick('games');
      const id = r.int(NEW_ID_MIN, NEW_ID_MAX);
      const seconds = r.int(30, 4 * 3600);
      if (!user || !game) return false;
      return this.#create('video', {
        id: String(id),
        stream_id: null,
        user_id: String(user.id),
        game_id: String(game.id),
        title: this.#title(),
        description: '',
        created_at: this.#now(),
        published_at: this.#now(),
        view_count: r.pareto(1, 1.3, 1_000_000),
        language: r.pick(LANGUAGES),
        type: r.chance(0.5) ? 'highlight' : 'upload',
        duration: hms(seconds),
        muted_segments: null,
      });
    },
    subscription: async () => {
      const r = this.#random;
      const broadcaster = await this.#pick('users');
      const user = await this.#pick('users');
      const tier = r.weighted(['1000', '2000', '3000'], [85, 10, 5]);
      if (!broadcaster || !user || broadcaster.id === user.id) return false;
      return this.#create('subscription', {
        broadcaster_id: String(broadcaster.id),
        gifter_id: '',
        is_gift: false,
        plan_name: `Channel Subscription (${broadcaster.login})`,
        tier,
        user_id: String(user.id),
        created_at: this.#now(),
      });
    },
    follow: async () => {
      const broadcaster = await this.#pick('users');
      const user = await this.#pick('users');
      if (!broadcaster || !user || broadcaster.id === user.id) return false;
      return this.#create('follow', {
        broadcaster_id: String(broadcaster.id),
        user_id: String(user.id),
        followed_at: this.#now(),
      });
    },
    marker: async () => {
      const r = this.#random;
      const user = await this.#pick('users');
      const id = r.alnum(16);
      const note = r.pick(MARKER_NOTES);
      const position = r.int(0, 3600);
      if (!user) return false;
      // The user's newest video: markers are made in the video being recorded.
      const video = await this.#store.db
        .selectFrom('videos')
        .select('id')
        .where('user_id', '=', user.id as number)
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst();
      if (!video) return false;
      return this.#create('marker', {
        id,
        video_id: String(video.id),
        user_id: String(user.id),
        created_at: this.#now(),
        description: note,
        position_seconds: position,
      });
    },
  };

  #kind(name: string): RecordKind {
    return recordKind(name) as RecordKind;
  }

  #now(): string {
    return rfc3339(nowSeconds(this.#clock));
  }

  #title(): string {
    const r = this.#random;
    return `${r.pick(TITLE_PARTS)} ${r.pick(ADJECTIVES)} ${r.pick(NOUNS)}`;
  }

  async #create(kind: string, data: object): Promise<boolean> {
    await writeRecords(this.#store, [{ kind, data, where: 'live' }], { mode: 'create' });
    return true;
  }

  /** Writes `row` (of `kind`'s table) back with `changes`, as PATCH /admin/<plural>/<key> does. */
  async #replace(kind: string, row: Row, changes: object): Promise<boolean> {
    const k = this.#kind(kind);
    const data = { ...(k.fromRow(row) as object), ...changes };
    await writeRecords(this.#store, [{ kind, data, where: 'live' }], { mode: 'replace' });
    return true;
  }

  /**
   * A row of a live stream, drawn uniformly among them by rank (as users are, below), or none when
   * nobody is live.
   */
  async #pickStream(): Promise<Row | undefined> {
    const n = await this.#count('streams');
    const at = Math.floor(this.#random.next() * n);
    return this.#atRank('streams', n, at);
  }

  /**
   * A row of `table`, drawn uniformly among its rows by rank, whatever their ids. Ids need not be
   * dense (the demo data's step by 13 or 37; an admin write or an import adds any id), so a draw by
   * id (the first row at or after a point between the lowest and the highest id) would give each
   * row the gap below it as its share: one user far below the others would be drawn almost every
   * time, and the world would stop moving.
   *
   * The cost is a count and a walk of the primary key to the rank from the nearer end (a quarter
   * of the key on average, read from the index only): on SQLite about what the draw by id it
   * replaced cost, on PostgreSQL more, since a count reads the whole key there
   * (docs/perf/2026-11-27-live-draws.md). A list of ids kept in the process would spare
   * the count, but it would have to hear of every user or game another process adds or removes, and
   * the draws would depend on what the process had heard.
   */
  async #pick(table: 'users' | 'games'): Promise<Row | undefined> {
    const n = await this.#count(table);
    const at = Math.floor(this.#random.next() * n);
    return this.#atRank(table, n, at);
  }

  /**
   * The number of rows of `table`. Users and games are counted once every RECOUNT_EVENTS events:
   * the world adds and removes neither, and on PostgreSQL a count reads the whole key
   * (docs/perf/2026-11-27-live-draws.md), which at every event would cap the rate.
   * Rows another writer adds meanwhile are drawn from the next count on; a draw past the rows
   * another removed finds none (no event) and has them counted again at once.
   */
  async #count(table: 'streams' | 'users' | 'games'): Promise<number> {
    const known = this.#counts.get(table);
    if (known !== undefined) return known;
    const db = this.#store.db;
    const n = Number(
      (await db.selectFrom(table).select(sql<number>`count(*)`.as('n')).executeTakeFirst())?.n,
    );
    if (table !== 'streams') this.#counts.set(table, n);
    return n;
  }

  /**
   * The row at rank `at` (0 the lowest id) of `table`'s `n`, or none when there is no such row (the
   * table changed since it was counted). The rank is reached by walking the primary key, from the
   * nearer end, in a subquery that reads the index only: then one row is read.
   */
  async #atRank(table: 'streams' | 'users' | 'games', n: number, at: number): Promise<Row | undefined> {
    if (at >= n) return undefined;
    const db = this.#store.db as Kysely<Database>;
    const fromTop = at >= n / 2;
    const id = db
      .selectFrom(table)
      .select('id')
      .orderBy('id', fromTop ? 'desc' : 'asc')
      .limit(1)
      .offset(fromTop ? n - 1 - at : at);
    const row = (await db.selectFrom(table).selectAll().where('id', '=', id).executeTakeFirst()) as
      | Row
      | undefined;
    if (!row) this.#counts.delete(table);
    return row;
  }
}
