// One description per record kind: the record (the wire object of the matching GET minus the
// fields the server derives, plus the few the wire never shows), its table and key, the records it
// names, and how a record becomes a row and back. The admin API (src/routes/admin/records.ts) and
// `helixd import`/`export` read and write records through these descriptions only
// (src/records/write.ts, src/records/read.ts), so they accept and refuse exactly the same things.
// docs/admin.md documents every kind.
import { type Static, type TObject, type TProperties, Type } from 'typebox';
import { sha256 } from '../auth/tokens.ts';
import type { Database, Tier, VideoType } from '../store/schema.ts';
import { TIERS, VIDEO_TYPES } from '../store/schema.ts';
import { hms } from '../wire/links.ts';
import {
  count,
  dateTime,
  day,
  FieldRule,
  login,
  MAX_INT,
  name,
  nullable,
  numericId,
  optionalId,
  read,
  streamTag,
  text,
  textId,
  uuid,
  write,
} from './fields.ts';
import { RECORD_KIND_NAMES } from './names.ts';

/** A row of a data table, as the write path hands it to the store. */
export type Row = Record<string, string | number | null>;

/** A record field that names a record of another kind. */
export interface Reference {
  /** the record field */
  field: string;
  /** the table column that holds it */
  column: string;
  /** the kind it names (by that kind's single-column key) */
  kind: string;
}

export interface RecordKind<P extends TProperties = TProperties> {
  /** the NDJSON `kind`: singular snake case */
  kind: string;
  /** the admin path segment and the fixture document's key */
  plural: string;
  /** the input record */
  schema: TObject<P>;
  table: keyof Database;
  /** the record fields of the key, in the order the admin path names them */
  key: readonly string[];
  /** the table columns of `key`, same order */
  keyColumns: readonly string[];
  /** the primary key columns in the table's order: records are listed in this order */
  order: readonly string[];
  /** fields of the wire object that the server derives: refused as input */
  derived: readonly string[];
  /** fields whose values name records of other kinds */
  refs: readonly Reference[];
  /** other columns no two rows may share, with the record field that holds each */
  unique: readonly { field: string; column: string }[];
  /** columns a new row gets and an upsert of an existing row leaves as they are (derived data) */
  insertOnly?: Row;
  /** the key columns that hold numeric ids (a path segment must be one) */
  numericKey: readonly string[];
  /** the record's row; reads the record and never changes it (the write path hands over the caller's object) */
  toRow(record: Static<TObject<P>>): Row;
  fromRow(row: Row): Static<TObject<P>>;
}

// biome-ignore lint/suspicious/noExplicitAny: each kind's row is its own table's
type AnyRow = any;

const obj = <P extends TProperties>(props: P) => Type.Object(props, { additionalProperties: false });
/**
 * What a kind's description may leave out: lists none of its fields is on (empty), and a key that is
 * the `id` field in the `id` column (the primary key).
 */
type Defaulted = 'derived' | 'refs' | 'unique' | 'numericKey' | 'key' | 'keyColumns' | 'order';
const define = <P extends TProperties>(
  k: Omit<RecordKind<P>, Defaulted> & Partial<Pick<RecordKind<P>, Defaulted>>,
): RecordKind => {
  const key = k.key ?? ['id'];
  const keyColumns = k.keyColumns ?? key;
  const full = {
    derived: [],
    refs: [],
    unique: [],
    numericKey: [],
    key,
    keyColumns,
    order: keyColumns,
    ...k,
  };
  return full as unknown as RecordKind;
};

const BROADCASTER_TYPES = ['', 'affiliate', 'partner'] as const;
const enumOf = <const T extends readonly string[]>(values: T, description: string) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: values, description });

const user = define({
  kind: 'user',
  plural: 'users',
  table: 'users',
  schema: obj({
    id: numericId('The user id'),
    login,
    display_name: name('The name shown for the user'),
    broadcaster_type: enumOf(BROADCASTER_TYPES, '"", "affiliate" or "partner"'),
    description: text('The channel description'),
    email: Type.Optional(text('The verified email address; "" (the default) when none is on record')),
    created_at: dateTime('When the account was created'),
  }),
  numericKey: ['id'],
  derived: ['type', 'profile_image_url', 'offline_image_url', 'view_count'],
  unique: [{ field: 'login', column: 'login' }],
  toRow: (r) => ({
    id: read.id('id', r.id),
    login: r.login,
    display_name: r.display_name,
    broadcaster_type: r.broadcaster_type,
    description: r.description,
    email: r.email ?? '',
    created_at: read.instant('created_at', r.created_at),
  }),
  fromRow: (row: AnyRow) => ({
    id: write.id(row.id),
    login: row.login,
    display_name: row.display_name,
    broadcaster_type: row.broadcaster_type,
    description: row.description,
    email: row.email,
    created_at: write.instant(row.created_at),
  }),
});

/**
 * The longest redirect URI a client may register. A URI travels percent-encoded in the query of the
 * authorization request, whose request line must fit the server's 16 KiB limit on a request's head:
 * 2048 characters fit even when each is written %XX, and are more than any callback needs.
 */
export const MAX_REDIRECT_URI = 2048;
/**
 * The most redirect URIs one client may register: each authorization request compares its
 * `redirect_uri` with every one, and a client's record is read whole at each (docs/auth.md).
 */
export const MAX_REDIRECT_URIS = 10;
// C0 controls, DEL and C1 controls: a URL parser drops some (tab, CR, LF) and escapes the others, so
// a URI holding one would be compared and redirected to as another URI than the one registered.
function hasControl(u: string): boolean {
  for (let i = 0; i < u.length; i++) {
    const c = u.charCodeAt(i);
    if (c <= 0x1f || (c >= 0x7f && c <= 0x9f)) return true;
  }
  return false;
}
// The hosts plain http may name: the machine itself, written as the parser writes it.
const LOOPBACK_HOST = /^(localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\])$/;

/**
 * The rule `u` breaks as a client's redirect URI, or undefined when a client may register it
 * (docs/auth.md, "Redirect URIs"). A URI is kept, compared and redirected to exactly as given, so
 * one that a URL parser would write differently is refused (with the form it would take) rather
 * than quietly changed. The authorization request asks here too, so that a URI a store took before
 * this rule is never redirected to.
 */
export function redirectUriRule(u: string): string | undefined {
  if (u === '') return 'must not be empty';
  if (u.length > MAX_REDIRECT_URI) return `must be at most ${MAX_REDIRECT_URI} characters`;
  if (hasControl(u)) return 'must not contain control characters (U+0000 to U+001F, U+007F to U+009F)';
  let url: URL;
  try {
    url = new URL(u);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http or https URL';
  if (url.username || url.password) return 'must not hold a user name or password (user:password@)';
  if (u.includes('#')) return 'must not have a fragment (#...)';
  if (url.protocol === 'http:' && !LOOPBACK_HOST.test(url.hostname))
    return 'must use https, or http with a loopback host (localhost, 127.x.x.x or [::1])';
  // The parser writes an empty path as "/": `http://localhost:3000` is the same URI as written.
  if (u !== url.href && !(u === url.origin && url.href === `${url.origin}/`))
    return `must be written as a URL parser writes it: ${JSON.stringify(url.href)}`;
  return undefined;
}

/**
 * Too many redirect URIs, or the first of them that breaks the rule (redirectUriRule), named by its
 * index.
 */
export function redirectUrisRefusal(uris: readonly string[]): FieldRule | undefined {
  if (uris.length > MAX_REDIRECT_URIS)
    return new FieldRule('redirect_uris', `must hold at most ${MAX_REDIRECT_URIS} URIs, not ${uris.length}`);
  for (const [i, u] of uris.entries()) {
    const rule = redirectUriRule(u);
    if (rule) return new FieldRule(`redirect_uris[${i}]`, rule);
  }
  return undefined;
}

// A client's secret is kept as its SHA-256 only (src/auth/tokens.ts checks secrets that way), so an
// export cannot give it back: it gives `secret_hash`, which an import takes as is, and the client's
// secret goes on working. A demo client (`demo: true`, as the seeder makes) keeps its secret in
// clear too, for /units/clients and the start-up banner: its export gives the secret itself.
const client = define({
  kind: 'client',
  plural: 'clients',
  table: 'clients',
  schema: obj({
    id: textId('The client id'),
    name: name('The application name'),
    redirect_uris: Type.Array(Type.String({ minLength: 1 }), {
      description:
        'The registered redirect URIs: https URLs, or http ones to a loopback host (docs/auth.md, Redirect URIs)',
    }),
    created_at: dateTime('When the client was registered'),
    secret: Type.Optional(
      Type.String({ minLength: 8, description: 'The secret in clear (input); kept as its SHA-256' }),
    ),
    secret_hash: Type.Optional(
      Type.String({ pattern: '^[0-9a-f]{64}$', description: 'The SHA-256 of the secret, lower-case hex' }),
    ),
    demo: Type.Optional(
      Type.Boolean({ description: 'A demo client: the secret is kept in clear too (default false)' }),
    ),
  }),
  toRow: (r) => {
    if ((r.secret === undefined) === (r.secret_hash === undefined))
      throw new FieldRule('secret', 'give exactly one of "secret" (in clear) and "secret_hash"');
    if (r.demo && r.secret === undefined)
      throw new FieldRule('demo', 'a demo client keeps its secret in clear: give "secret"');
    const refused = redirectUrisRefusal(r.redirect_uris);
    if (refused) throw refused;
    return {
      id: r.id,
      name: r.name,
      secret_hash: r.secret_hash ?? sha256(r.secret as string),
      demo_secret: r.demo ? (r.secret as string) : null,
      redirect_uris: JSON.stringify(r.redirect_uris),
      created_at: read.instant('created_at', r.created_at),
    };
  },
  fromRow: (row: AnyRow) => ({
    id: row.id,
    name: row.name,
    redirect_uris: JSON.parse(row.redirect_uris) as string[],
    created_at: write.instant(row.created_at),
    ...(row.demo_secret === null
      ? { secret_hash: row.secret_hash }
      : { secret: row.demo_secret, demo: true }),
  }),
});

const game = define({
  kind: 'game',
  plural: 'games',
  table: 'games',
  schema: obj({
    id: numericId('The game id'),
    name: name('The game name', { indexed: true }),
    igdb_id: Type.Optional(optionalId('The IGDB id; "" (the default) when unknown')),
    owner_id: Type.Optional(
      optionalId('The user (developer account) that may read its analytics; "" (the default) for none'),
    ),
  }),
  numericKey: ['id'],
  derived: ['box_art_url'],
  refs: [{ field: 'owner_id', column: 'owner_id', kind: 'user' }],
  // viewer_count and stream_count are the game's live streams' (migration 008): none until one
  // goes live; a replace of an existing game keeps them.
  insertOnly: { viewer_count: 0, stream_count: 0 },
  toRow: (r) => ({
    id: read.id('id', r.id),
    name: r.name,
    igdb_id: r.igdb_id ?? '',
    owner_id: read.optionalId('owner_id', r.owner_id ?? ''),
  }),
  fromRow: (row: AnyRow) => ({
    id: write.id(row.id),
    name: row.name,
    igdb_id: row.igdb_id,
    owner_id: write.optionalId(row.owner_id),
  }),
});

const extension = define({
  kind: 'extension',
  plural: 'extensions',
  table: 'extensions',
  schema: obj({
    id: textId('The extension client id'),
    name: name('The extension name'),
    version: text('The released version'),
    owner_id: numericId('The user (developer account) that owns it and may read its analytics'),
  }),
  refs: [{ field: 'owner_id', column: 'owner_id', kind: 'user' }],
  toRow: (r) => ({ id: r.id, name: r.name, version: r.version, owner_id: read.id('owner_id', r.owner_id) }),
  fromRow: (row: AnyRow) => ({
    id: row.id,
    name: row.name,
    version: row.version,
    owner_id: write.id(row.owner_id),
  }),
});

const localized = (description: string) =>
  Type.Record(Type.String({ minLength: 1 }), Type.String(), { description });

const tag = define({
  kind: 'tag',
  plural: 'tags',
  table: 'tags',
  schema: obj({
    tag_id: uuid('The tag id'),
    is_auto: Type.Boolean({ description: 'Applied by the platform rather than chosen' }),
    localization_names: localized('The name by locale, e.g. {"en-us": "English"}'),
    localization_descriptions: localized('The description by locale'),
  }),
  key: ['tag_id'],
  keyColumns: ['id'],
  order: ['id'],
  toRow: (r) => ({
    id: r.tag_id,
    is_auto: read.flag(r.is_auto),
    localization_names: JSON.stringify(r.localization_names),
    localization_descriptions: JSON.stringify(r.localization_descriptions),
  }),
  fromRow: (row: AnyRow) => ({
    tag_id: row.id,
    is_auto: write.flag(row.is_auto),
    localization_names: JSON.parse(row.localization_names),
    localization_descriptions: JSON.parse(row.localization_descriptions),
  }),
});

// The listings of streams, markers and subscriptions are covering indexes on both stores (migration
// 014): their text must fit a PostgreSQL index entry, so it takes the platform's own limits where
// the platform has short ones (a channel title, its tags, a stream marker's description) and
// MAX_INDEXED_TEXT for a plan name (src/store/text.ts).
/** The longest stream title, in characters (the platform's limit for a channel's title). */
export const MAX_STREAM_TITLE = 140;
/** The most tags a stream has, and the longest tag in characters (the platform's limits). */
export const MAX_TAGS = 10;
export const MAX_TAG = 25;
/** The longest marker description, in characters (the platform's limit for a stream marker). */
export const MAX_MARKER_DESCRIPTION = 140;

const streamTitle = (description: string) =>
  Type.String({
    maxLength: MAX_STREAM_TITLE,
    description: `${description}, at most ${MAX_STREAM_TITLE} characters`,
  });
const tagList = (description: string) =>
  Type.Array(streamTag(MAX_TAG, 'A tag'), {
    maxItems: MAX_TAGS,
    description: `${description}: at most ${MAX_TAGS}, each 1 to ${MAX_TAG} letters or digits`,
  });

/**
 * The content classification labels a channel may carry, in the order the wire lists them. The
 * platform sets `MatureGame` from the game: a broadcaster may not set it (PATCH /channels), the
 * platform (a record) may.
 */
export const CONTENT_LABELS = [
  'DebatedSocialIssuesAndPolitics',
  'DrugsIntoxication',
  'Gambling',
  'MatureGame',
  'ProfanityVulgarity',
  'SexualThemes',
  'ViolentGraphic',
] as const;
export type ContentLabel = (typeof CONTENT_LABELS)[number];
/** The longest stream delay, in seconds (the platform's limit). */
export const MAX_DELAY = 900;

/** Labels in the wire's order, each once. */
export const orderedLabels = (labels: Iterable<string>): ContentLabel[] => {
  const set = new Set(labels);
  return CONTENT_LABELS.filter((l) => set.has(l));
};

// A user's channel: what GET /channels shows, kept when the stream goes offline. A user with no
// record has a new account's channel (src/records/channels.ts, NEW_CHANNEL). A live stream holds
// its channel's title, game, language and tags: the write path keeps the two alike whichever is
// written.
const channel = define({
  kind: 'channel',
  plural: 'channels',
  table: 'channels',
  schema: obj({
    broadcaster_id: numericId('The broadcaster: each user has one channel'),
    title: streamTitle('The title'),
    game_id: optionalId('The game (category); "" for none'),
    broadcaster_language: text('The language, e.g. "en", or "other"', { indexed: true }),
    delay: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_DELAY,
        description: `Seconds the broadcast is held back, 0 (the default) to ${MAX_DELAY}`,
      }),
    ),
    tags: Type.Optional(tagList('Tags (default none)')),
    content_classification_labels: Type.Optional(
      Type.Array(enumOf(CONTENT_LABELS, 'A content classification label'), {
        uniqueItems: true,
        description: `The content classification labels in effect (default none): ${CONTENT_LABELS.join(', ')}`,
      }),
    ),
    is_branded_content: Type.Optional(
      Type.Boolean({ description: 'The channel shows branded content (default false)' }),
    ),
  }),
  key: ['broadcaster_id'],
  numericKey: ['broadcaster_id'],
  derived: ['broadcaster_login', 'broadcaster_name', 'game_name'],
  refs: [
    { field: 'broadcaster_id', column: 'broadcaster_id', kind: 'user' },
    { field: 'game_id', column: 'game_id', kind: 'game' },
  ],
  toRow: (r) => ({
    broadcaster_id: read.id('broadcaster_id', r.broadcaster_id),
    title: r.title,
    game_id: read.optionalId('game_id', r.game_id),
    language: r.broadcaster_language,
    delay: r.delay ?? 0,
    tags: JSON.stringify(r.tags ?? []),
    labels: JSON.stringify(orderedLabels(r.content_classification_labels ?? [])),
    is_branded_content: read.flag(r.is_branded_content ?? false),
  }),
  fromRow: (row: AnyRow) => ({
    broadcaster_id: write.id(row.broadcaster_id),
    title: row.title,
    game_id: write.optionalId(row.game_id),
    broadcaster_language: row.language,
    delay: row.delay,
    tags: JSON.parse(row.tags) as string[],
    content_classification_labels: JSON.parse(row.labels) as ContentLabel[],
    is_branded_content: write.flag(row.is_branded_content),
  }),
});

const stream = define({
  kind: 'stream',
  plural: 'streams',
  table: 'streams',
  schema: obj({
    id: numericId('The stream id'),
    user_id: numericId('The broadcaster: one live stream per user'),
    // The four fields the stream holds of its channel: left out, they are the channel's
    // (src/records/channels.ts); given, the channel takes them, as a broadcaster who sets them
    // while going live changes the channel.
    game_id: Type.Optional(numericId("The game played; left out, the channel's")),
    title: Type.Optional(streamTitle("The title; left out, the channel's")),
    tags: Type.Optional(tagList("Tags; left out, the channel's")),
    viewer_count: count('Viewers now: orders /streams and, summed per game, /games/top'),
    started_at: dateTime('When it went live'),
    language: Type.Optional(text('The language, e.g. "en"; left out, the channel\'s', { indexed: true })),
    is_mature: Type.Boolean({ description: 'For mature audiences' }),
  }),
  numericKey: ['id'],
  derived: ['user_login', 'user_name', 'game_name', 'type', 'thumbnail_url', 'tag_ids'],
  refs: [
    { field: 'user_id', column: 'user_id', kind: 'user' },
    { field: 'game_id', column: 'game_id', kind: 'game' },
  ],
  unique: [{ field: 'user_id', column: 'user_id' }],
  toRow: (r) => ({
    id: read.id('id', r.id),
    user_id: read.id('user_id', r.user_id),
    // null: the channel's, filled in by the write path (src/records/channels.ts)
    game_id: r.game_id === undefined ? null : read.id('game_id', r.game_id),
    title: r.title ?? null,
    tags: r.tags === undefined ? null : JSON.stringify(r.tags),
    viewer_count: r.viewer_count,
    started_at: read.instant('started_at', r.started_at),
    language: r.language ?? null,
    is_mature: read.flag(r.is_mature),
  }),
  fromRow: (row: AnyRow) => ({
    id: write.id(row.id),
    user_id: write.id(row.user_id),
    game_id: write.id(row.game_id),
    title: row.title,
    tags: JSON.parse(row.tags) as string[],
    viewer_count: row.viewer_count,
    started_at: write.instant(row.started_at),
    language: row.language,
    is_mature: write.flag(row.is_mature),
  }),
});

/** A video's length as the wire writes it (src/wire/links.ts `hms`): `1h2m3s`, `2m3s`, `3s`. */
function readDuration(field: string, v: string): number {
  const m = /^(?:(\d{1,6})h)?(?:(\d{1,2})m)?(\d{1,2})s$/.exec(v);
  const seconds = m ? Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3]) : -1;
  if (seconds < 0 || seconds > MAX_INT || hms(seconds) !== v)
    throw new FieldRule(field, 'must be a length written as the wire writes it, e.g. 1h2m3s, 4m0s or 59s');
  return seconds;
}

const mutedSegment = Type.Object(
  { duration: count('Seconds'), offset: count('Seconds from the start') },
  { additionalProperties: false },
);

const video = define({
  kind: 'video',
  plural: 'videos',
  table: 'videos',
  schema: obj({
    id: numericId('The video id'),
    stream_id: nullable(numericId('The stream it recorded; null for uploads and highlights')),
    user_id: numericId('The owner'),
    game_id: numericId('The game played (GET /videos?game_id=)'),
    title: text('The title'),
    description: text('The description'),
    created_at: dateTime('When it was created'),
    published_at: dateTime('When it was published'),
    view_count: count('Views'),
    language: text('The language, e.g. "en"', { indexed: true }),
    type: enumOf(VIDEO_TYPES, '"archive", "highlight" or "upload"'),
    duration: Type.String({ description: 'The length, e.g. 1h2m3s' }),
    muted_segments: nullable(Type.Array(mutedSegment, { description: 'Muted stretches; null for none' })),
  }),
  numericKey: ['id'],
  derived: ['user_login', 'user_name', 'url', 'thumbnail_url', 'viewable'],
  refs: [
    { field: 'user_id', column: 'user_id', kind: 'user' },
    { field: 'game_id', column: 'game_id', kind: 'game' },
  ],
  toRow: (r) => ({
    id: read.id('id', r.id),
    stream_id: r.stream_id === null ? null : read.id('stream_id', r.stream_id),
    user_id: read.id('user_id', r.user_id),
    game_id: read.id('game_id', r.game_id),
    title: r.title,
    description: r.description,
    created_at: read.instant('created_at', r.created_at),
    published_at: read.instant('published_at', r.published_at),
    language: r.language,
    type: r.type as VideoType,
    view_count: r.view_count,
    duration_s: readDuration('duration', r.duration),
    muted_segments:
      r.muted_segments === null
        ? null
        : JSON.stringify(r.muted_segments.map((s) => ({ duration: s.duration, offset: s.offset }))),
  }),
  fromRow: (row: AnyRow) => ({
    id: write.id(row.id),
    stream_id: row.stream_id === null ? null : write.id(row.stream_id),
    user_id: write.id(row.user_id),
    game_id: write.id(row.game_id),
    title: row.title,
    description: row.description,
    created_at: write.instant(row.created_at),
    published_at: write.instant(row.published_at),
    view_count: row.view_count,
    language: row.language,
    type: row.type,
    duration: hms(row.duration_s),
    muted_segments: row.muted_segments === null ? null : JSON.parse(row.muted_segments),
  }),
});

const clip = define({
  kind: 'clip',
  plural: 'clips',
  table: 'clips',
  schema: obj({
    id: textId('The clip id'),
    broadcaster_id: numericId('The channel it was clipped from'),
    creator_id: numericId('The user who made it'),
    video_id: optionalId('The video it was cut from; "" for none'),
    game_id: numericId('The game played'),
    language: text('The language, e.g. "en"', { indexed: true }),
    // Indexed: the /clips listing indexes hold the whole row (migrations 010, 011).
    title: text('The title', { indexed: true }),
    view_count: count('Views'),
    created_at: dateTime('When it was made'),
    duration: Type.Number({ minimum: 0, maximum: 100_000, description: 'Seconds, to a tenth of a second' }),
    vod_offset: nullable(count('Seconds into the video where it starts; null when unknown')),
    is_featured: Type.Boolean({ description: 'Featured by the broadcaster' }),
  }),
  derived: ['url', 'embed_url', 'broadcaster_name', 'creator_name', 'thumbnail_url', 'trending'],
  refs: [
    { field: 'broadcaster_id', column: 'broadcaster_id', kind: 'user' },
    { field: 'creator_id', column: 'creator_id', kind: 'user' },
    { field: 'video_id', column: 'video_id', kind: 'video' },
    { field: 'game_id', column: 'game_id', kind: 'game' },
  ],
  toRow: (r) => {
    const tenths = Math.round(r.duration * 10);
    if (tenths / 10 !== r.duration)
      throw new FieldRule('duration', 'must be in seconds to a tenth of a second');
    return {
      id: r.id,
      broadcaster_id: read.id('broadcaster_id', r.broadcaster_id),
      creator_id: read.id('creator_id', r.creator_id),
      video_id: read.optionalId('video_id', r.video_id),
      game_id: read.id('game_id', r.game_id),
      language: r.language,
      title: r.title,
      view_count: r.view_count,
      created_at: read.instant('created_at', r.created_at),
      duration_ds: tenths,
      vod_offset: r.vod_offset,
      is_featured: read.flag(r.is_featured),
    };
  },
  fromRow: (row: AnyRow) => ({
    id: row.id,
    broadcaster_id: write.id(row.broadcaster_id),
    creator_id: write.id(row.creator_id),
    video_id: write.optionalId(row.video_id),
    game_id: write.id(row.game_id),
    language: row.language,
    title: row.title,
    view_count: row.view_count,
    created_at: write.instant(row.created_at),
    duration: row.duration_ds / 10,
    vod_offset: row.vod_offset,
    is_featured: write.flag(row.is_featured),
  }),
});

const marker = define({
  kind: 'marker',
  plural: 'markers',
  table: 'markers',
  schema: obj({
    id: textId('The marker id'),
    video_id: numericId('The video it marks'),
    user_id: numericId('The user who created it (the owner, or an editor of the channel)'),
    created_at: dateTime('When it was created'),
    description: Type.String({
      maxLength: MAX_MARKER_DESCRIPTION,
      description: `The description, at most ${MAX_MARKER_DESCRIPTION} characters`,
    }),
    position_seconds: count('Seconds into the video'),
  }),
  derived: ['URL', 'user_name', 'user_login'],
  refs: [
    { field: 'video_id', column: 'video_id', kind: 'video' },
    { field: 'user_id', column: 'creator_id', kind: 'user' },
  ],
  toRow: (r) => ({
    id: r.id,
    video_id: read.id('video_id', r.video_id),
    creator_id: read.id('user_id', r.user_id),
    created_at: read.instant('created_at', r.created_at),
    description: r.description,
    position_seconds: r.position_seconds,
  }),
  fromRow: (row: AnyRow) => ({
    id: row.id,
    video_id: write.id(row.video_id),
    user_id: write.id(row.creator_id),
    created_at: write.instant(row.created_at),
    description: row.description,
    position_seconds: row.position_seconds,
  }),
});

const subscription = define({
  kind: 'subscription',
  plural: 'subscriptions',
  table: 'subscriptions',
  schema: obj({
    broadcaster_id: numericId('The channel subscribed to'),
    gifter_id: optionalId('Who gave it; "" unless is_gift'),
    is_gift: Type.Boolean({ description: 'A gift: gifter_id names the giver' }),
    plan_name: text('The plan name', { indexed: true }),
    tier: enumOf(TIERS, '"1000", "2000" or "3000"'),
    user_id: numericId('The subscriber'),
    created_at: dateTime('When it started: the listing is most recent first'),
  }),
  key: ['broadcaster_id', 'user_id'],
  keyColumns: ['broadcaster_id', 'user_id'],
  order: ['broadcaster_id', 'user_id'],
  numericKey: ['broadcaster_id', 'user_id'],
  derived: [
    'broadcaster_login',
    'broadcaster_name',
    'gifter_login',
    'gifter_name',
    'user_name',
    'user_login',
    'total',
    'points',
  ],
  refs: [
    { field: 'broadcaster_id', column: 'broadcaster_id', kind: 'user' },
    { field: 'gifter_id', column: 'gifter_id', kind: 'user' },
    { field: 'user_id', column: 'user_id', kind: 'user' },
  ],
  toRow: (r) => {
    if (r.is_gift !== (r.gifter_id !== ''))
      throw new FieldRule('gifter_id', 'must name the giver when is_gift is true, and be "" otherwise');
    return {
      broadcaster_id: read.id('broadcaster_id', r.broadcaster_id),
      user_id: read.id('user_id', r.user_id),
      tier: r.tier as Tier,
      plan_name: r.plan_name,
      is_gift: read.flag(r.is_gift),
      gifter_id: read.optionalId('gifter_id', r.gifter_id),
      created_at: read.instant('created_at', r.created_at),
    };
  },
  fromRow: (row: AnyRow) => ({
    broadcaster_id: write.id(row.broadcaster_id),
    gifter_id: write.optionalId(row.gifter_id),
    is_gift: write.flag(row.is_gift),
    plan_name: row.plan_name,
    tier: row.tier,
    user_id: write.id(row.user_id),
    created_at: write.instant(row.created_at),
  }),
});

/**
 * A relation of a user to a channel since an instant (a follow, a moderator): the channel's
 * `broadcaster_id`, the user's `user_id`, and the instant under `at`. The wire shows both users'
 * names, which are derived.
 */
function userToChannel(o: {
  kind: 'follow' | 'moderator';
  /** the columns of the channel and of the user */
  columns: { broadcaster: string; user: string };
  /** the table's primary key, in its order */
  order: readonly string[];
  at: string;
  describe: { broadcaster: string; user: string; at: string };
}): RecordKind {
  const { broadcaster, user } = o.columns;
  // The plural names the table too.
  const plural = `${o.kind}s` as const;
  return define({
    kind: o.kind,
    plural,
    table: plural,
    schema: obj({
      broadcaster_id: numericId(o.describe.broadcaster),
      user_id: numericId(o.describe.user),
      [o.at]: dateTime(o.describe.at),
    }),
    key: ['broadcaster_id', 'user_id'],
    keyColumns: [broadcaster, user],
    order: o.order,
    numericKey: [broadcaster, user],
    derived: ['user_login', 'user_name', 'broadcaster_login', 'broadcaster_name'],
    refs: [
      { field: 'broadcaster_id', column: broadcaster, kind: 'user' },
      { field: 'user_id', column: user, kind: 'user' },
    ],
    toRow: (r: Record<string, string>) => ({
      [broadcaster]: read.id('broadcaster_id', r.broadcaster_id as string),
      [user]: read.id('user_id', r.user_id as string),
      // the instant's column has the field's name in both tables
      [o.at]: read.instant(o.at, r[o.at] as string),
    }),
    fromRow: (row: AnyRow) => ({
      broadcaster_id: write.id(row[broadcaster]),
      user_id: write.id(row[user]),
      [o.at]: write.instant(row[o.at]),
    }),
  });
}

const follow = userToChannel({
  kind: 'follow',
  columns: { broadcaster: 'to_id', user: 'from_id' },
  order: ['from_id', 'to_id'],
  at: 'followed_at',
  describe: { broadcaster: 'The channel followed', user: 'The follower', at: 'When the follow began' },
});

const moderator = userToChannel({
  kind: 'moderator',
  columns: { broadcaster: 'broadcaster_id', user: 'user_id' },
  order: ['broadcaster_id', 'user_id'],
  at: 'created_at',
  describe: {
    broadcaster: 'The channel moderated',
    user: 'The moderator',
    at: 'When the user became a moderator',
  },
});

const hours = (description: string) =>
  Type.Number({ minimum: 0, description: `${description}, to 2 decimals (kept in whole minutes)` });

// The analytics rows are the report's CSV columns (src/reports/csv.ts) in snake case; the columns
// the report derives (names, Clips Created, ratios) are not input.
const gameDay = define({
  kind: 'game_day',
  plural: 'game_days',
  table: 'game_days',
  schema: obj({
    date: day,
    game_id: numericId('The game'),
    views: count('Views'),
    unique_viewers: count('Unique viewers'),
    hours_watched: hours('Hours watched'),
    broadcasters: count('Broadcasters'),
    hours_broadcast: hours('Hours broadcast'),
    follows: count('Follows'),
  }),
  key: ['game_id', 'date'],
  keyColumns: ['game_id', 'day'],
  order: ['game_id', 'day'],
  numericKey: ['game_id'],
  derived: ['game_name', 'clips_created'],
  refs: [{ field: 'game_id', column: 'game_id', kind: 'game' }],
  toRow: (r) => {
    const minutesWatched = read.hours('hours_watched', r.hours_watched);
    const minutesBroadcast = read.hours('hours_broadcast', r.hours_broadcast);
    // No viewer can watch more than every broadcast of the game that day (docs/api.md): the rule
    // the demo data keeps too.
    if (minutesWatched > r.unique_viewers * minutesBroadcast)
      throw new FieldRule('hours_watched', 'must not exceed unique_viewers x hours_broadcast');
    return {
      game_id: read.id('game_id', r.game_id),
      day: read.day('date', r.date),
      views: r.views,
      unique_viewers: r.unique_viewers,
      minutes_watched: minutesWatched,
      broadcasters: r.broadcasters,
      minutes_broadcast: minutesBroadcast,
      follows: r.follows,
    };
  },
  fromRow: (row: AnyRow) => ({
    date: row.day,
    game_id: write.id(row.game_id),
    views: row.views,
    unique_viewers: row.unique_viewers,
    hours_watched: write.hours(row.minutes_watched),
    broadcasters: row.broadcasters,
    hours_broadcast: write.hours(row.minutes_broadcast),
    follows: row.follows,
  }),
});

/** The counts of an extension's day: the report's columns, record fields and table columns alike. */
const EXTENSION_COUNTS = {
  installs: 'Installs',
  uninstalls: 'Uninstalls',
  activations: 'Activations',
  unique_active_channels: 'Unique active channels',
  renders: 'Renders',
  unique_renders: 'Unique renders',
  views: 'Views',
  unique_viewers: 'Unique viewers',
  unique_interactors: 'Unique interactors',
  clicks: 'Clicks',
} as const;
const COUNT_FIELDS = Object.keys(EXTENSION_COUNTS) as (keyof typeof EXTENSION_COUNTS)[];
/** The counts of `from` copied into `to` (a loop: an import copies them for millions of days). */
const extensionCounts = <T extends object>(from: Record<string, unknown>, to: T) => {
  const counts = to as Record<string, unknown>;
  for (const k of COUNT_FIELDS) counts[k] = from[k];
  return to as T & Record<keyof typeof EXTENSION_COUNTS, number>;
};

const extensionDay = define({
  kind: 'extension_day',
  plural: 'extension_days',
  table: 'extension_days',
  schema: obj({
    date: day,
    extension_client_id: textId('The extension'),
    ...(Object.fromEntries(Object.entries(EXTENSION_COUNTS).map(([k, d]) => [k, count(d)])) as Record<
      keyof typeof EXTENSION_COUNTS,
      ReturnType<typeof count>
    >),
  }),
  key: ['extension_client_id', 'date'],
  keyColumns: ['extension_id', 'day'],
  order: ['extension_id', 'day'],
  derived: ['extension_name', 'clicks_per_interactor', 'interaction_rate'],
  refs: [{ field: 'extension_client_id', column: 'extension_id', kind: 'extension' }],
  toRow: (r) => extensionCounts(r, { extension_id: r.extension_client_id, day: read.day('date', r.date) }),
  fromRow: (row: AnyRow) => extensionCounts(row, { date: row.day, extension_client_id: row.extension_id }),
});

/** Every kind, a kind after every kind its records name (the order of an export and a fixture). */
export const RECORD_KINDS: readonly RecordKind[] = [
  user,
  client,
  game,
  extension,
  tag,
  channel,
  stream,
  video,
  clip,
  marker,
  subscription,
  follow,
  moderator,
  gameDay,
  extensionDay,
];
if (RECORD_KINDS.map((k) => k.kind).join(' ') !== RECORD_KIND_NAMES.join(' '))
  throw new Error('src/records/names.ts must list the kinds of RECORD_KINDS, in its order');

const BY_NAME = new Map(RECORD_KINDS.map((k) => [k.kind, k]));
const BY_PLURAL = new Map(RECORD_KINDS.map((k) => [k.plural, k]));

export function recordKind(name: string): RecordKind | undefined {
  return BY_NAME.get(name);
}

export function recordKindByPlural(plural: string): RecordKind | undefined {
  return BY_PLURAL.get(plural);
}
