// The one description of the database. Both stores (SQLite and PostgreSQL) hold exactly these
// columns with the same value types, so that the same seed gives byte-identical API answers:
// - instants are integer Unix seconds (no driver-specific date handling, cheap keyset compares);
// - flags are integers 0/1 (SQLite has no boolean type);
// - clip durations are integer tenths of a second (no float drift between stores);
// - lists and localized texts are JSON text.
// No data column is database-generated: every id is assigned by the generator or the token service,
// so that seeded data is identical on both stores (the outbox's order, EventsTable.id, is the one
// exception, and no API answer shows it).
import type { Generated, Insertable, Selectable } from 'kysely';

export interface UsersTable {
  id: number;
  login: string;
  display_name: string;
  /** '', 'affiliate' or 'partner' */
  broadcaster_type: string;
  description: string;
  created_at: number;
  /** the verified email address, '' when none is on record (migration 005) */
  email: string;
}

export interface ClientsTable {
  id: string;
  name: string;
  /** sha256 hex of the secret */
  secret_hash: string;
  /**
   * The secret in clear, kept only for seeded demo clients so that `/units/clients` and the start-up
   * banner can show it. Clients made with `helixd client create` keep only the hash.
   */
  demo_secret: string | null;
  /** JSON array of registered redirect URIs */
  redirect_uris: string;
  created_at: number;
}

export const TOKEN_KINDS = ['app', 'user'] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

export interface TokensTable {
  /** sha256 hex of the access token */
  hash: string;
  kind: TokenKind;
  client_id: string;
  user_id: number | null;
  /** space-separated scopes */
  scopes: string;
  expires_at: number;
  /** sha256 hex of the refresh token (user tokens only) */
  refresh_hash: string | null;
  created_at: number;
}

export interface AuthCodesTable {
  /** sha256 hex of the authorization code */
  hash: string;
  client_id: string;
  user_id: number;
  scopes: string;
  redirect_uri: string;
  expires_at: number;
}

export interface SettingsTable {
  key: string;
  value: string;
}

export interface GamesTable {
  id: number;
  name: string;
  /** IGDB id, '' when unknown */
  igdb_id: string;
  /** the user (developer account) that owns the game's analytics, if any */
  owner_id: number | null;
  /** sum of viewer_count over the game's live streams; kept by whatever writes streams */
  viewer_count: number;
  /** number of live streams of the game; a game is in /games/top while it is above 0 */
  stream_count: number;
}

export interface StreamsTable {
  id: number;
  user_id: number;
  game_id: number;
  title: string;
  viewer_count: number;
  language: string;
  started_at: number;
  /** JSON array of the stream's free-form tags */
  tags: string;
  is_mature: number;
}

/**
 * A user's channel (migration 019): what GET /channels shows. A live stream holds its channel's
 * title, game, language and tags.
 */
export interface ChannelsTable {
  broadcaster_id: number;
  title: string;
  /** null: no game set */
  game_id: number | null;
  language: string;
  /** seconds the broadcast is held back */
  delay: number;
  /** JSON array of the channel's tags */
  tags: string;
  /** JSON array of the content classification labels' ids */
  labels: string;
  is_branded_content: number;
}

/** A stream's listed values before one of them changed (migration 013, docs/live.md). */
export interface StreamMovesTable {
  seq: Generated<number>;
  stream_id: number;
  viewer_count: number;
  game_id: number;
  language: string;
  user_id: number;
  at: number;
}

/** A game's counters before one of them changed (migration 013, docs/live.md). */
export interface GameMovesTable {
  seq: Generated<number>;
  game_id: number;
  viewer_count: number;
  stream_count: number;
  at: number;
}

export interface ClipsTable {
  id: string;
  broadcaster_id: number;
  creator_id: number;
  video_id: number | null;
  game_id: number;
  language: string;
  title: string;
  view_count: number;
  created_at: number;
  /** tenths of a second */
  duration_ds: number;
  vod_offset: number | null;
  is_featured: number;
}

export const VIDEO_TYPES = ['archive', 'highlight', 'upload'] as const;
export type VideoType = (typeof VIDEO_TYPES)[number];

export interface VideosTable {
  id: number;
  stream_id: number | null;
  user_id: number;
  game_id: number;
  title: string;
  description: string;
  created_at: number;
  published_at: number;
  language: string;
  type: VideoType;
  view_count: number;
  /** seconds */
  duration_s: number;
  /** JSON array of {duration, offset}, or null */
  muted_segments: string | null;
}

export interface MarkersTable {
  id: string;
  video_id: number;
  /** the user who created the marker */
  creator_id: number;
  created_at: number;
  description: string;
  position_seconds: number;
}

export const TIERS = ['1000', '2000', '3000'] as const;
export type Tier = (typeof TIERS)[number];

export interface SubscriptionsTable {
  broadcaster_id: number;
  user_id: number;
  tier: Tier;
  plan_name: string;
  is_gift: number;
  gifter_id: number | null;
  created_at: number;
}

/** Per-broadcaster counters of /subscriptions' `total` and `points`, kept by triggers (migration 004). */
export interface SubscriptionTotalsTable {
  broadcaster_id: number;
  total: number;
  points: number;
}

export interface FollowsTable {
  from_id: number;
  to_id: number;
  followed_at: number;
}

/** `user_id` moderates the channel of `broadcaster_id` since `created_at` (migration 007). */
export interface ModeratorsTable {
  broadcaster_id: number;
  user_id: number;
  created_at: number;
}

export interface TagsTable {
  id: string;
  is_auto: number;
  /** JSON object locale -> name */
  localization_names: string;
  /** JSON object locale -> description */
  localization_descriptions: string;
}

export interface ExtensionsTable {
  id: string;
  name: string;
  owner_id: number;
  version: string;
}

/** One day of a game's analytics; `day` is YYYY-MM-DD (UTC). */
export interface GameDaysTable {
  game_id: number;
  day: string;
  views: number;
  unique_viewers: number;
  minutes_watched: number;
  broadcasters: number;
  minutes_broadcast: number;
  follows: number;
}

/** One day of an extension's analytics; `day` is YYYY-MM-DD (UTC). */
export interface ExtensionDaysTable {
  extension_id: string;
  day: string;
  installs: number;
  uninstalls: number;
  activations: number;
  unique_active_channels: number;
  renders: number;
  unique_renders: number;
  views: number;
  unique_viewers: number;
  unique_interactors: number;
  clicks: number;
}

/**
 * The keys GET /search/channels finds a user by (migration 018, kept by triggers): its login and
 * display name, ASCII letters lower-cased, spaces and "_" removed; `live` 1 while it has a stream.
 */
export interface SearchChannelKeysTable {
  key: string;
  user_id: number;
  live: number;
}

/** The keys GET /search/categories finds a game by (migration 018): its name from each word on. */
export interface SearchGameKeysTable {
  key: string;
  game_id: number;
}

/**
 * EventSub's outbox (migration 015): an event recorded with the write that caused it, or a control
 * row (a subscription's change, a command for a session) at its place in the same order. `id` is
 * the one database-generated column: it is the commit order, which no generator could give.
 */
export interface EventsTable {
  id: Generated<number>;
  kind: 'event' | 'control';
  /** the event type (`stream.online`) or the control command */
  type: string;
  /** `<type>:<value of the condition's key field>`, or `session:<id>` for a session's command */
  match_key: string;
  /** JSON text: the event object as delivered, or the command's arguments */
  payload: string;
  /** Unix milliseconds, when it was recorded */
  at: number;
}

/** An EventSub subscription (migration 015); times in Unix milliseconds. */
export interface EventsubSubscriptionsTable {
  /** a UUID, the wire's */
  id: string;
  client_id: string;
  type: string;
  version: string;
  /** canonical JSON text: the type's condition fields in the catalogue's order */
  condition: string;
  match_key: string;
  /** the condition's user whose authorization the subscription rests on; null for none */
  auth_user_id: number | null;
  status: string;
  method: 'webhook' | 'websocket';
  callback: string | null;
  /** the webhook secret, kept as given (signing needs it), never answered */
  secret: string | null;
  session_id: string | null;
  cost: number;
  /** events with a greater id are delivered to it (the id of the control row that created it) */
  from_event: number;
  created_at: number;
  disabled_at: number | null;
}

/** A WebSocket session (migration 015); times in Unix milliseconds. */
export interface EventsubSessionsTable {
  id: string;
  /** the process holding its socket (`host:pid:start`) */
  owner: string;
  /** 'connected' or 'reconnecting' */
  status: string;
  /** bound by the session's first subscription */
  client_id: string | null;
  user_id: number | null;
  keepalive_seconds: number;
  connected_at: number;
  /** the outbox id through which every event was sent to it (written at a hand-over) */
  cursor: number;
  reconnect_hash: string | null;
  reconnect_until: number | null;
}

/** A serving process's heartbeat (migration 015). */
export interface EventsubProcessesTable {
  id: string;
  seen_at: number;
  /** the outbox id its tail has read through */
  cursor: number;
}

/**
 * A webhook message waiting to be sent (migration 015); times in Unix milliseconds. Its body is
 * made at each attempt from the subscription and the event (src/eventsub/webhooks.ts).
 */
export interface WebhookDeliveriesTable {
  id: Generated<number>;
  subscription_id: string;
  /** 'verification', 'notification' or 'revocation' */
  kind: 'verification' | 'notification' | 'revocation';
  /** the event of a notification */
  event_id: number | null;
  /** the challenge of a verification, which the callback must echo */
  challenge: string | null;
  /** failed attempts so far */
  attempts: number;
  due_at: number;
  /** the process sending it, until `claimed_until` (a lease: a sender that died lets another take it) */
  claimed_by: string | null;
  claimed_until: number | null;
}

/** A clip POST /clips asked for, made when it is due (migration 020, src/records/clip-jobs.ts). */
export interface ClipJobsTable {
  /** the clip's id, as the request's answer gave it */
  id: string;
  /** when the clip is made: Unix ms on the server clock */
  due_at: number;
  /** the clip record (src/records/kinds.ts) as the request made it, JSON text */
  record: string;
}

export interface Database {
  users: UsersTable;
  clients: ClientsTable;
  tokens: TokensTable;
  auth_codes: AuthCodesTable;
  settings: SettingsTable;
  games: GamesTable;
  streams: StreamsTable;
  channels: ChannelsTable;
  stream_moves: StreamMovesTable;
  game_moves: GameMovesTable;
  clips: ClipsTable;
  videos: VideosTable;
  markers: MarkersTable;
  subscriptions: SubscriptionsTable;
  subscription_totals: SubscriptionTotalsTable;
  follows: FollowsTable;
  moderators: ModeratorsTable;
  tags: TagsTable;
  extensions: ExtensionsTable;
  game_days: GameDaysTable;
  extension_days: ExtensionDaysTable;
  search_channel_keys: SearchChannelKeysTable;
  search_game_keys: SearchGameKeysTable;
  events: EventsTable;
  eventsub_subscriptions: EventsubSubscriptionsTable;
  eventsub_sessions: EventsubSessionsTable;
  eventsub_processes: EventsubProcessesTable;
  webhook_deliveries: WebhookDeliveriesTable;
  clip_jobs: ClipJobsTable;
}

export type UserRow = Selectable<UsersTable>;
export type ClientRow = Selectable<ClientsTable>;
export type TokenRow = Selectable<TokensTable>;
export type GameRow = Selectable<GamesTable>;
export type StreamRow = Selectable<StreamsTable>;
export type ClipRow = Selectable<ClipsTable>;
export type VideoRow = Selectable<VideosTable>;
export type MarkerRow = Selectable<MarkersTable>;
export type SubscriptionRow = Selectable<SubscriptionsTable>;
export type FollowRow = Selectable<FollowsTable>;
export type ModeratorRow = Selectable<ModeratorsTable>;
export type TagRow = Selectable<TagsTable>;
export type ExtensionRow = Selectable<ExtensionsTable>;
export type GameDayRow = Selectable<GameDaysTable>;
export type ExtensionDayRow = Selectable<ExtensionDaysTable>;

export type NewUser = Insertable<UsersTable>;
export type NewClip = Insertable<ClipsTable>;
