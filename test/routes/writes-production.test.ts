// The production profile serves the writes of the Helix API like every operation: PUT /users, PATCH
// /channels, POST /streams/markers, DELETE /videos and POST /clips answer as in development, under
// /helix and /mock (a clip is listed once its delay has passed on the server clock), and every
// other write method on their paths is still a 405.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { CLIP_DELAY_MS } from '../../src/records/clip-jobs.ts';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { archiveOfLiveStream } from '../support/archive.ts';
import type { StoreKind } from '../support/stores.ts';

forEachStore('the writes in the production profile', (kind: StoreKind) => {
  let t: TestApp;
  let demo: number;
  let token: string;
  const send = (method: 'PUT' | 'POST' | 'DELETE' | 'PATCH', url: string, payload?: unknown) =>
    t.inject({
      method,
      url,
      headers: {
        ...bearer(token),
        'client-id': t.seed?.demoClientId as string,
        ...(payload ? { 'content-type': 'application/json' } : {}),
      },
      ...(payload ? { payload: JSON.stringify(payload) } : {}),
    });

  before(async () => {
    t = await startTestApp(kind, {
      users: 30,
      config: { profile: 'production', publicUrl: 'https://api.example.com' },
    });
    assert.equal(t.config.profile, 'production');
    demo = t.seed?.demoUserId as number;
    token = await t.userToken([
      'user:edit',
      'channel:manage:broadcast',
      'channel:manage:videos',
      'clips:edit',
    ]);
    await archiveOfLiveStream(t, demo, '1999999999');
  });
  after(() => t.close());

  it('answers PUT /users, POST /streams/markers, DELETE /videos and PATCH /channels as every operation', async () => {
    const user = await send('PUT', '/helix/users?description=In%20production');
    assert.equal(user.statusCode, 200, user.body);
    assert.equal(user.json().data[0].description, 'In production');
    const marker = await send('POST', '/mock/streams/markers', { user_id: String(demo) });
    assert.equal(marker.statusCode, 200, marker.body);
    const video = (
      await t.store.db
        .selectFrom('videos')
        .select('id')
        .where('user_id', '=', demo)
        .where('id', '!=', 1999999999)
        .orderBy('id')
        .executeTakeFirstOrThrow()
    ).id;
    const deleted = await send('DELETE', `/helix/videos?id=${video}`);
    assert.equal(deleted.statusCode, 200, deleted.body);
    assert.deepEqual(deleted.json(), { data: [String(video)] });
    const game = (
      await t.store.db
        .selectFrom('streams')
        .select('game_id')
        .where('user_id', '=', demo)
        .executeTakeFirstOrThrow()
    ).game_id;
    const channel = await send('PATCH', `/mock/channels?broadcaster_id=${demo}`, {
      title: 'In production',
      game_id: String(game),
    });
    assert.equal(channel.statusCode, 204, channel.body);
    const read = await t.get(`/helix/channels?broadcaster_id=${demo}`, bearer(token));
    assert.equal(read.json().data[0].title, 'In production');
  });

  it('answers POST /clips with 202, and GET /clips lists the clip once its delay has passed', async () => {
    const created = await send('POST', `/helix/clips?broadcaster_id=${demo}`);
    assert.equal(created.statusCode, 202, created.body);
    const id = created.json().data[0].id as string;
    assert.equal(created.json().data[0].edit_url, `${t.config.siteUrl}/clip/${id}/edit`);
    t.clock.advance(CLIP_DELAY_MS);
    let found: unknown[] = [];
    for (let i = 0; i < 200 && found.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      found = (await t.get(`/mock/clips?id=${id}`, bearer(token))).json().data;
    }
    assert.equal(found.length, 1, 'listed');
  });

  it('answers any other write method on their paths with 405', async () => {
    for (const [method, url] of [
      ['PATCH', '/helix/users'],
      ['DELETE', '/helix/users'],
      ['PUT', '/helix/streams/markers'],
      ['POST', '/mock/videos'],
      ['PATCH', '/helix/videos'],
      ['PUT', '/helix/channels'],
      ['POST', '/mock/channels'],
      ['PUT', '/helix/clips'],
      ['DELETE', '/mock/clips'],
    ] as const) {
      const res = await send(method, url);
      assert.equal(res.statusCode, 405, `${method} ${url}`);
    }
  });
});
