// The admin API, kind by kind: a record created through POST /admin/<plural> is what GET /admin
// and the public operation show; PUT, PATCH and DELETE change what they show at once.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, it } from 'node:test';
import { ADMIN_TOKEN, bearer, forEachStore, startTestApp, type TestApp } from '../../support/apps.ts';
import type { StoreKind } from '../../support/stores.ts';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** A small world of records of every kind, each naming only records before it. */
export function world(): { kind: string; plural: string; data: Record<string, unknown> }[] {
  const r = (kind: string, plural: string, data: Record<string, unknown>) => ({ kind, plural, data });
  return [
    r('user', 'users', {
      id: '900001',
      login: 'ada_streams',
      display_name: 'Ada_Streams',
      broadcaster_type: 'partner',
      description: 'Speedruns',
      email: 'ada@example.org',
      created_at: '2015-03-01T10:00:00Z',
    }),
    r('user', 'users', {
      id: '900002',
      login: 'bob',
      display_name: 'Bob',
      broadcaster_type: '',
      description: '',
      created_at: '2016-04-02T11:00:00Z',
    }),
    r('client', 'clients', {
      id: 'adminclient0000000000000000001',
      name: 'Ada app',
      redirect_uris: ['http://localhost:7000/cb'],
      created_at: '2020-01-01T00:00:00Z',
      secret: 'a-secret-of-enough-length',
    }),
    r('game', 'games', { id: '990001', name: 'Admin Quest', igdb_id: '4242', owner_id: '900001' }),
    r('extension', 'extensions', { id: 'adminext0001', name: 'Polls', version: '1.0.0', owner_id: '900001' }),
    r('tag', 'tags', {
      tag_id: 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee',
      is_auto: false,
      localization_names: { 'en-us': 'Speedrun' },
      localization_descriptions: { 'en-us': 'Fast' },
    }),
    r('stream', 'streams', {
      id: '77000001',
      user_id: '900001',
      game_id: '990001',
      title: 'Any% attempts',
      tags: ['English', 'Speedrun'],
      viewer_count: 5,
      started_at: '2026-06-15T10:00:00Z',
      language: 'en',
      is_mature: false,
    }),
    r('video', 'videos', {
      id: '88000001',
      stream_id: '77000001',
      user_id: '900001',
      game_id: '990001',
      title: 'Any% PB',
      description: 'New record',
      created_at: '2026-06-01T10:00:00Z',
      published_at: '2026-06-01T10:05:00Z',
      view_count: 12,
      language: 'en',
      type: 'archive',
      duration: '1h2m3s',
      muted_segments: [{ duration: 30, offset: 60 }],
    }),
    r('clip', 'clips', {
      id: 'AdminClipOne-abc',
      broadcaster_id: '900001',
      creator_id: '900002',
      video_id: '88000001',
      game_id: '990001',
      language: 'en',
      title: 'The skip',
      view_count: 3,
      created_at: '2026-06-01T10:30:00Z',
      duration: 12.5,
      vod_offset: 1800,
      is_featured: true,
    }),
    r('marker', 'markers', {
      id: 'adminmarker1',
      video_id: '88000001',
      user_id: '900001',
      created_at: '2026-06-01T10:40:00Z',
      description: 'the skip',
      position_seconds: 2400,
    }),
    r('subscription', 'subscriptions', {
      broadcaster_id: '900001',
      gifter_id: '',
      is_gift: false,
      plan_name: 'Channel Subscription (ada_streams)',
      tier: '3000',
      user_id: '900002',
      created_at: '2026-05-01T00:00:00Z',
    }),
    r('follow', 'follows', {
      broadcaster_id: '900001',
      user_id: '900002',
      followed_at: '2026-04-01T00:00:00Z',
    }),
    r('moderator', 'moderators', {
      broadcaster_id: '900001',
      user_id: '900002',
      created_at: '2026-04-02T00:00:00Z',
    }),
    r('game_day', 'game_days', {
      date: '2026-06-01',
      game_id: '990001',
      views: 10,
      unique_viewers: 4,
      hours_watched: 1.5,
      broadcasters: 1,
      hours_broadcast: 2,
      follows: 1,
    }),
    r('extension_day', 'extension_days', {
      date: '2026-06-01',
      extension_client_id: 'adminext0001',
      installs: 1,
      uninstalls: 0,
      activations: 1,
      unique_active_channels: 1,
      renders: 5,
      unique_renders: 2,
      views: 4,
      unique_viewers: 2,
      unique_interactors: 1,
      clicks: 3,
    }),
  ];
}

/** The path segments of a record's key, per plural. */
export const KEY_PATH: Record<string, (d: Record<string, unknown>) => string> = {
  tags: (d) => String(d.tag_id),
  subscriptions: (d) => `${d.broadcaster_id}/${d.user_id}`,
  follows: (d) => `${d.broadcaster_id}/${d.user_id}`,
  moderators: (d) => `${d.broadcaster_id}/${d.user_id}`,
  game_days: (d) => `${d.game_id}/${d.date}`,
  extension_days: (d) => `${d.extension_client_id}/${d.date}`,
};
export const keyPath = (plural: string, d: Record<string, unknown>) =>
  (KEY_PATH[plural] ?? ((x) => String(x.id)))(d);

/** What GET /admin answers for a record written as `d`: the defaults filled in, secrets hashed. */
function stored(plural: string, d: Record<string, unknown>): Record<string, unknown> {
  if (plural === 'users') return { email: '', ...d };
  if (plural === 'clients') {
    const { secret, ...rest } = d;
    return { ...rest, secret_hash: createHash('sha256').update(String(secret)).digest('hex') };
  }
  return d;
}

forEachStore('admin API: every kind round-trips', (kind: StoreKind) => {
  let t: TestApp;
  let token: string;
  const adminReq = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
    t.inject({
      method,
      url,
      headers: payload === undefined ? admin : { ...admin, 'content-type': 'application/json' },
      ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
    });

  before(async () => {
    t = await startTestApp(kind, { users: 20, config: { adminToken: ADMIN_TOKEN } });
    token = await t.appToken();
  });
  after(() => t.close());

  it('creates each record with POST and reads it back with GET /admin/<plural>/<key>', async () => {
    for (const { plural, data } of world()) {
      const res = await adminReq('POST', `/admin/${plural}`, data);
      assert.equal(res.statusCode, 201, `${plural}: ${res.body}`);
      assert.deepEqual(res.json().data, [stored(plural, data)], plural);
      const got = await adminReq('GET', `/admin/${plural}/${keyPath(plural, data)}`);
      assert.equal(got.statusCode, 200, `${plural}: ${got.body}`);
      assert.deepEqual(got.json().data, [stored(plural, data)], plural);
    }
  });

  it('shows the records through the public operations', async () => {
    const h = bearer(token);
    const user = (await t.get('/helix/users?id=900001', h)).json().data[0];
    assert.equal(user.login, 'ada_streams');
    const game = (await t.get('/helix/games?id=990001', h)).json().data[0];
    assert.deepEqual([game.name, game.igdb_id], ['Admin Quest', '4242']);
    const stream = (await t.get('/helix/streams?user_id=900001', h)).json().data[0];
    assert.deepEqual(
      [stream.id, stream.user_login, stream.game_name, stream.viewer_count],
      ['77000001', 'ada_streams', 'Admin Quest', 5],
    );
    const video = (await t.get('/helix/videos?id=88000001', h)).json().data[0];
    assert.deepEqual(
      [video.duration, video.user_name, video.muted_segments],
      ['1h2m3s', 'Ada_Streams', [{ duration: 30, offset: 60 }]],
    );
    const clip = (await t.get('/helix/clips?id=AdminClipOne-abc', h)).json().data[0];
    assert.deepEqual(
      [clip.broadcaster_name, clip.creator_name, clip.duration, clip.video_id],
      ['Ada_Streams', 'Bob', 12.5, '88000001'],
    );
    const owner = await t.userToken(
      ['user:read:broadcast', 'channel:read:subscriptions', 'moderator:read:followers'],
      900001,
    );
    const markers = (await t.get('/helix/streams/markers?video_id=88000001', bearer(owner))).json().data[0];
    assert.equal(markers.videos[0].markers[0].id, 'adminmarker1');
    const subs = (await t.get('/helix/subscriptions?broadcaster_id=900001', bearer(owner))).json();
    assert.deepEqual([subs.total, subs.points, subs.data[0].user_login], [1, 6, 'bob']);
    const followers = (await t.get('/helix/channels/followers?broadcaster_id=900001', bearer(owner))).json();
    assert.deepEqual([followers.total, followers.data[0].user_name], [1, 'Bob']);
  });

  it('lists a kind in key order with cursors', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const res = await adminReq('GET', `/admin/users?first=7${cursor ? `&after=${cursor}` : ''}`);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      seen.push(...body.data.map((u: { id: string }) => u.id));
      cursor = body.pagination.cursor;
    } while (cursor);
    const ids = (await t.store.db.selectFrom('users').select('id').orderBy('id').execute()).map((r) =>
      String(r.id),
    );
    assert.deepEqual(seen, ids);
  });

  it('PUT replaces, PATCH merges, and the public answers follow at once', async () => {
    const h = bearer(token);
    const put = await adminReq('PUT', '/admin/users/900002', {
      login: 'bobby',
      display_name: 'Bobby',
      broadcaster_type: 'affiliate',
      description: 'renamed',
      created_at: '2016-04-02T11:00:00Z',
    });
    assert.equal(put.statusCode, 200, put.body);
    const clip = (await t.get('/helix/clips?id=AdminClipOne-abc', h)).json().data[0];
    assert.equal(clip.creator_name, 'Bobby');
    const patch = await adminReq('PATCH', '/admin/subscriptions/900001/900002', { tier: '1000' });
    assert.equal(patch.statusCode, 200, patch.body);
    assert.equal(patch.json().data[0].plan_name, 'Channel Subscription (ada_streams)');
    const owner = await t.userToken(['channel:read:subscriptions'], 900001);
    const subs = (await t.get('/helix/subscriptions?broadcaster_id=900001', bearer(owner))).json();
    assert.deepEqual([subs.total, subs.points, subs.data[0].user_login], [1, 1, 'bobby']);
  });

  it('a client created with a secret in clear issues tokens with it, and keeps only its hash', async () => {
    const res = await t.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload:
        'client_id=adminclient0000000000000000001&client_secret=a-secret-of-enough-length&grant_type=client_credentials',
    });
    assert.equal(res.statusCode, 200, res.body);
    const row = await t.store.db
      .selectFrom('clients')
      .selectAll()
      .where('id', '=', 'adminclient0000000000000000001')
      .executeTakeFirstOrThrow();
    assert.equal(row.demo_secret, null);
    assert.notEqual(row.secret_hash, 'a-secret-of-enough-length');
  });

  it('DELETE refuses a record others name (409 naming them), then deletes once they are gone', async () => {
    const refused = await adminReq('DELETE', '/admin/videos/88000001');
    assert.equal(refused.statusCode, 409);
    assert.match(refused.json().message, /^path: video id: is named by clips \(video_id\)/);
    for (const url of [
      '/admin/markers/adminmarker1',
      '/admin/clips/AdminClipOne-abc',
      '/admin/videos/88000001',
    ]) {
      const res = await adminReq('DELETE', url);
      assert.equal(res.statusCode, 204, `${url}: ${res.body}`);
    }
    assert.equal((await adminReq('GET', '/admin/videos/88000001')).statusCode, 404);
    const gone = await t.get('/helix/videos?id=88000001', bearer(token));
    assert.equal(gone.statusCode, 404);
  });

  it('POST /admin/batch writes records of several kinds, each may name the ones before it', async () => {
    const res = await adminReq('POST', '/admin/batch', [
      {
        kind: 'user',
        data: {
          id: '900003',
          login: 'cy',
          display_name: 'Cy',
          broadcaster_type: '',
          description: '',
          created_at: '2020-01-01T00:00:00Z',
        },
      },
      {
        kind: 'follow',
        data: { broadcaster_id: '900001', user_id: '900003', followed_at: '2026-06-01T00:00:00Z' },
      },
    ]);
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(
      res.json().data.map((i: { kind: string }) => i.kind),
      ['user', 'follow'],
    );
    const total = (await t.get('/helix/channels/followers?broadcaster_id=900001', bearer(token))).json()
      .total;
    assert.equal(total, 2);
  });
});
