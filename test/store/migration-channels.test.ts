// Migration 019_channels on a store made by the version before it (migrated down to 018_search, live
// streams in it): `up` adds the channels table with its index channels_game, one channel per live
// stream holding the stream's title, game, language and tags (a new account's delay, labels and
// branded flag), which GET /channels then answers; `down` removes both, and nothing else of the
// store changes either way. On both stores.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { migrateToLatest } from '../../src/store/migrate.ts';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { type StoreKind, schemaObjects } from '../support/stores.ts';

forEachStore('migration 019_channels', (kind: StoreKind) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(kind, { users: 60 });
  });
  after(() => t.close());

  it('fills a channel from each live stream, which GET /channels answers; down removes the table and its index', async () => {
    const db = t.store.db;
    const objects = () => schemaObjects(kind, db, 'channels');
    const streams = await db
      .selectFrom('streams')
      .select(['user_id', 'title', 'game_id', 'language', 'tags'])
      .orderBy('user_id')
      .execute();
    assert.ok(streams.length > 0, 'the demo data has live streams');

    const down = await migrateToLatest(t.store, '018_search');
    assert.equal(down.error, undefined);
    assert.deepEqual(await objects(), [], 'nothing of 019 before it');
    // The clip jobs of 020 went down first; back up to 019 alone.
    const up = await migrateToLatest(t.store, '019_channels');
    assert.equal(up.error, undefined);
    assert.deepEqual(
      (await objects()).filter((o) => !o.startsWith('sqlite_')),
      kind === 'sqlite' ? ['channels', 'channels_game'] : ['channels', 'channels_game', 'channels_pkey'],
    );
    const channels = await db.selectFrom('channels').selectAll().orderBy('broadcaster_id').execute();
    assert.deepEqual(
      channels,
      streams.map((s) => ({
        broadcaster_id: s.user_id,
        title: s.title,
        game_id: s.game_id,
        language: s.language,
        delay: 0,
        tags: s.tags,
        labels: '[]',
        is_branded_content: 0,
      })),
      'one per live stream, its values',
    );
    assert.equal((await migrateToLatest(t.store)).error, undefined);
    const s = streams[0] as (typeof streams)[number];
    const read = await t.get(`/helix/channels?broadcaster_id=${s.user_id}`, bearer(await t.appToken()));
    assert.deepEqual(
      (({ title, game_id, broadcaster_language, tags }) => ({ title, game_id, broadcaster_language, tags }))(
        read.json().data[0],
      ),
      {
        title: s.title,
        game_id: String(s.game_id),
        broadcaster_language: s.language,
        tags: JSON.parse(s.tags),
      },
    );
  });
});
