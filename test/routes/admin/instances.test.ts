// Two instances on one store: a write through one is read through the other at once, or, for what
// the other keeps in memory (user names), within CHANGE_CHECK_MS (src/store/db.ts), and a forward walk of a public listing while records are added returns no
// row twice (keyset cursors).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../../src/app.ts';
import { openStore, type Store } from '../../../src/store/db.ts';
import { ADMIN_TOKEN, bearer, forEachStore, startTestApp, type TestApp } from '../../support/apps.ts';
import { changeSeen, type StoreKind } from '../../support/stores.ts';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };

forEachStore('admin API: two instances on one store', (kind: StoreKind) => {
  let t: TestApp;
  let otherStore: Store;
  let other: FastifyInstance;
  let token: string;
  let demo: number;

  before(async () => {
    t = await startTestApp(kind, { users: 30, config: { adminToken: ADMIN_TOKEN } });
    otherStore = openStore(t.storeOptions);
    other = await buildApp({
      config: t.config,
      store: otherStore,
      clock: t.clock,
      secret: t.config.secret as string,
      logger: false,
    });
    token = await t.appToken();
    demo = t.seed?.demoUserId as number;
  });
  after(async () => {
    await other.close();
    await otherStore.close();
    await t.close();
  });

  const clipsOf = async (app: FastifyInstance, q: string) => {
    const res = await app.inject({
      method: 'GET',
      url: `/helix/clips?${q}`,
      headers: { ...bearer(token), 'client-id': t.seed?.demoClientId as string },
    });
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };

  it('a user renamed through one instance is named so by the other once the change is seen', async () => {
    const before = (await clipsOf(other, `broadcaster_id=${demo}&first=1`)).data[0];
    const got = await t.inject({ method: 'GET', url: `/admin/users/${demo}`, headers: admin });
    const res = await t.inject({
      method: 'PATCH',
      url: `/admin/users/${demo}`,
      headers: admin,
      payload: JSON.stringify({ display_name: `${got.json().data[0].display_name}_Renamed` }),
    });
    assert.equal(res.statusCode, 200, res.body);
    await changeSeen();
    const after = (await clipsOf(other, `broadcaster_id=${demo}&first=1`)).data[0];
    assert.equal(after.broadcaster_name, `${before.broadcaster_name}_Renamed`);
  });

  it('a record created through one instance is served by the other at once', async () => {
    const res = await other.inject({
      method: 'POST',
      url: '/admin/clips',
      headers: admin,
      payload: JSON.stringify({
        id: 'TwoInstancesClip',
        broadcaster_id: String(demo),
        creator_id: String(demo),
        video_id: '',
        game_id: String((await t.store.db.selectFrom('games').select('id').executeTakeFirstOrThrow()).id),
        language: 'en',
        title: 'made over there',
        view_count: 1,
        created_at: '2026-06-10T00:00:00Z',
        duration: 30,
        vod_offset: null,
        is_featured: false,
      }),
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal((await clipsOf(t.app, 'id=TwoInstancesClip')).data[0]?.title, 'made over there');
  });

  it('a forward walk of GET /clips by broadcaster while clips are added returns no clip twice', async () => {
    const game = String((await t.store.db.selectFrom('games').select('id').executeTakeFirstOrThrow()).id);
    const seen: string[] = [];
    let cursor: string | undefined;
    let n = 0;
    do {
      const page = await clipsOf(t.app, `broadcaster_id=${demo}&first=7${cursor ? `&after=${cursor}` : ''}`);
      seen.push(...page.data.map((c: { id: string }) => c.id));
      cursor = page.pagination.cursor;
      // between pages, through the other instance: clips with view counts on both sides of the walk
      const batch = [0, 1, 2].map((i) => ({
        id: `WalkClip-${n}-${i}`,
        broadcaster_id: String(demo),
        creator_id: String(demo),
        video_id: '',
        game_id: game,
        language: 'en',
        title: 'added during the walk',
        view_count: [0, 1_000_000_000, (n * 7919) % 5000][i],
        created_at: '2026-06-10T00:00:00Z',
        duration: 10,
        vod_offset: null,
        is_featured: false,
      }));
      const res = await other.inject({
        method: 'POST',
        url: '/admin/clips',
        headers: admin,
        payload: JSON.stringify(batch),
      });
      assert.equal(res.statusCode, 201, res.body);
      n++;
    } while (cursor);
    assert.ok(n > 3, 'the walk spans several pages');
    assert.equal(new Set(seen).size, seen.length, 'no clip twice');
  });
});
