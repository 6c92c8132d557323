import type { Kysely } from 'kysely';

// Column types are chosen to read back identically from both stores (see schema.ts): `bigint` for
// ids and instants (int8 is parsed to a JS number by the pg driver set-up in db.ts), `integer` for
// counts and flags, `text` for everything else.
//
// Indexes: every ordering the operations page through has an index whose columns are
// (selector, sort key, id), so that a page is an index range scan at any depth. B-trees are
// scanned in either direction, so descending orders need no separate index.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('settings')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('users')
    .addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('login', 'text', (c) => c.notNull().unique())
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('broadcaster_type', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('clients')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('demo_secret', 'text')
    .addColumn('redirect_uris', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('tokens')
    .addColumn('hash', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.id').onDelete('cascade'))
    .addColumn('user_id', 'bigint')
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('refresh_hash', 'text', (c) => c.unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('tokens_client_user').on('tokens').columns(['client_id', 'user_id']).execute();

  await db.schema
    .createTable('auth_codes')
    .addColumn('hash', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.id').onDelete('cascade'))
    .addColumn('user_id', 'bigint', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('games')
    .addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('igdb_id', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'bigint')
    .addColumn('viewer_count', 'integer', (c) => c.notNull())
    .addColumn('stream_count', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('games_top').on('games').columns(['viewer_count', 'id']).execute();
  await db.schema.createIndex('games_owner').on('games').columns(['owner_id', 'id']).execute();

  await db.schema
    .createTable('streams')
    .addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('user_id', 'bigint', (c) => c.notNull().unique())
    .addColumn('game_id', 'bigint', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('viewer_count', 'integer', (c) => c.notNull())
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('streams_game').on('streams').columns(['game_id']).execute();

  await db.schema
    .createTable('clips')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('broadcaster_id', 'bigint', (c) => c.notNull())
    .addColumn('creator_id', 'bigint', (c) => c.notNull())
    .addColumn('video_id', 'bigint')
    .addColumn('game_id', 'bigint', (c) => c.notNull())
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('view_count', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('duration_ds', 'integer', (c) => c.notNull())
    .addColumn('vod_offset', 'integer')
    .addColumn('is_featured', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('clips_broadcaster_views')
    .on('clips')
    .columns(['broadcaster_id', 'view_count', 'id'])
    .execute();
  await db.schema
    .createIndex('clips_game_views')
    .on('clips')
    .columns(['game_id', 'view_count', 'id'])
    .execute();

  await db.schema
    .createTable('videos')
    .addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('stream_id', 'bigint')
    .addColumn('user_id', 'bigint', (c) => c.notNull())
    .addColumn('game_id', 'bigint', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('published_at', 'bigint', (c) => c.notNull())
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('view_count', 'integer', (c) => c.notNull())
    .addColumn('duration_s', 'integer', (c) => c.notNull())
    .addColumn('muted_segments', 'text')
    .execute();
  await db.schema
    .createIndex('videos_user_time')
    .on('videos')
    .columns(['user_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('videos_user_views')
    .on('videos')
    .columns(['user_id', 'view_count', 'id'])
    .execute();
  await db.schema
    .createIndex('videos_game_time')
    .on('videos')
    .columns(['game_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('videos_game_views')
    .on('videos')
    .columns(['game_id', 'view_count', 'id'])
    .execute();

  await db.schema
    .createTable('markers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('video_id', 'bigint', (c) => c.notNull())
    .addColumn('creator_id', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('position_seconds', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('markers_video_creator_time')
    .on('markers')
    .columns(['video_id', 'creator_id', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('subscriptions')
    .addColumn('broadcaster_id', 'bigint', (c) => c.notNull())
    .addColumn('user_id', 'bigint', (c) => c.notNull())
    .addColumn('tier', 'text', (c) => c.notNull())
    .addColumn('plan_name', 'text', (c) => c.notNull())
    .addColumn('is_gift', 'integer', (c) => c.notNull())
    .addColumn('gifter_id', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('subscriptions_pk', ['broadcaster_id', 'user_id'])
    .execute();
  await db.schema
    .createIndex('subscriptions_broadcaster_time')
    .on('subscriptions')
    .columns(['broadcaster_id', 'created_at', 'user_id'])
    .execute();

  await db.schema
    .createTable('follows')
    .addColumn('from_id', 'bigint', (c) => c.notNull())
    .addColumn('to_id', 'bigint', (c) => c.notNull())
    .addColumn('followed_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('follows_pk', ['from_id', 'to_id'])
    .execute();
  await db.schema
    .createIndex('follows_from_time')
    .on('follows')
    .columns(['from_id', 'followed_at', 'to_id'])
    .execute();
  await db.schema
    .createIndex('follows_to_time')
    .on('follows')
    .columns(['to_id', 'followed_at', 'from_id'])
    .execute();

  await db.schema
    .createTable('tags')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('is_auto', 'integer', (c) => c.notNull())
    .addColumn('localization_names', 'text', (c) => c.notNull())
    .addColumn('localization_descriptions', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('extensions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'bigint', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('extensions_owner').on('extensions').columns(['owner_id', 'id']).execute();

  await db.schema
    .createTable('game_days')
    .addColumn('game_id', 'bigint', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('views', 'integer', (c) => c.notNull())
    .addColumn('unique_viewers', 'integer', (c) => c.notNull())
    .addColumn('minutes_watched', 'integer', (c) => c.notNull())
    .addColumn('broadcasters', 'integer', (c) => c.notNull())
    .addColumn('minutes_broadcast', 'integer', (c) => c.notNull())
    .addColumn('clips_created', 'integer', (c) => c.notNull())
    .addColumn('follows', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('game_days_pk', ['game_id', 'day'])
    .execute();

  await db.schema
    .createTable('extension_days')
    .addColumn('extension_id', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('installs', 'integer', (c) => c.notNull())
    .addColumn('uninstalls', 'integer', (c) => c.notNull())
    .addColumn('activations', 'integer', (c) => c.notNull())
    .addColumn('unique_active_channels', 'integer', (c) => c.notNull())
    .addColumn('renders', 'integer', (c) => c.notNull())
    .addColumn('unique_renders', 'integer', (c) => c.notNull())
    .addColumn('views', 'integer', (c) => c.notNull())
    .addColumn('unique_viewers', 'integer', (c) => c.notNull())
    .addColumn('unique_interactors', 'integer', (c) => c.notNull())
    .addColumn('clicks', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('extension_days_pk', ['extension_id', 'day'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of [
    'extension_days',
    'game_days',
    'extensions',
    'tags',
    'follows',
    'subscriptions',
    'markers',
    'videos',
    'clips',
    'streams',
    'games',
    'auth_codes',
    'tokens',
    'clients',
    'users',
    'settings',
  ]) {
    await db.schema.dropTable(t).execute();
  }
}
