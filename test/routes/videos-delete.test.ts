// DELETE /videos (Delete Videos): the token user's videos, at most 5 ids, all or none: one video of
// another user is production's 401 and nothing is deleted; ids of no video are passed over. The
// videos and their stream markers are gone from every listing; the clips cut from them stay, with
// `video_id` "" and `vod_offset` null, as production shows a clip whose video is not available.
// Each refusal is a 4xx with the Helix error body and changes nothing: the export before and after
// is the same. The store after a delete exports and imports back whole.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { exportOf, helixd } from '../support/cli.ts';
import { cliDb, type StoreKind, tempStore } from '../support/stores.ts';

const SCOPE = 'channel:manage:videos';
const NOT_YOURS = 'The caller is not authorized to delete the specified video.';

forEachStore('DELETE /helix/videos', (kind: StoreKind) => {
  let t: TestApp;
  let demo: number;
  let app: string;
  const del = (q: string, token: string, prefix = '/helix') =>
    t.inject({
      method: 'DELETE',
      url: `${prefix}/videos${q ? `?${q}` : ''}`,
      headers: { ...bearer(token), 'client-id': t.seed?.demoClientId as string },
    });
  const ids = (list: readonly (number | string)[]) => list.map((id) => `id=${id}`).join('&');
  const exists = async (id: number) =>
    (await t.store.db.selectFrom('videos').select('id').where('id', '=', id).executeTakeFirst()) !==
    undefined;
  /** the demo broadcaster's videos, newest first, with how many markers and clips name each */
  const demoVideos = async () => {
    const videos = await t.store.db
      .selectFrom('videos')
      .select(['id', 'game_id'])
      .where('user_id', '=', demo)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    const markers = await t.store.db.selectFrom('markers').select('video_id').execute();
    const clips = await t.store.db.selectFrom('clips').select('video_id').execute();
    return videos.map((v) => ({
      ...v,
      markers: markers.filter((m) => m.video_id === v.id).length,
      clips: clips.filter((c) => c.video_id === v.id).length,
    }));
  };

  before(async () => {
    t = await startTestApp(kind);
    demo = t.seed?.demoUserId as number;
    app = await t.appToken();
  });
  after(() => t.close());

  it('deletes the videos with their markers, everywhere; their clips stay, video_id "" and vod_offset null', async () => {
    const videos = await demoVideos();
    const marked = videos.find((v) => v.markers > 0 && v.clips > 0) ?? videos.find((v) => v.markers > 0);
    const clipped = videos.find((v) => v.clips > 0 && v !== marked);
    assert.ok(marked && clipped, 'the demo data has a video with markers and one with clips');
    const gone = [marked.id, clipped.id];
    const clipsBefore = await t.store.db
      .selectFrom('clips')
      .selectAll()
      .where('video_id', 'in', gone)
      .orderBy('id')
      .execute();
    const others = await t.store.db
      .selectFrom('clips')
      .selectAll()
      .where((eb) => eb.or([eb('video_id', 'is', null), eb('video_id', 'not in', gone)]))
      .orderBy('id')
      .execute();
    const token = await t.userToken([SCOPE, 'user:read:broadcast']);

    const res = await del(ids(gone), token);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { data: gone.map(String) });

    // Gone from every listing: by id, by owner, by game; its markers too.
    const byId = await t.get(`/helix/videos?${ids(gone)}`, bearer(app));
    assert.equal(byId.statusCode, 404);
    const listed = await t.get(`/helix/videos?user_id=${demo}&first=100`, bearer(app));
    const listedIds = listed.json().data.map((v: { id: string }) => v.id);
    for (const id of gone) assert.ok(!listedIds.includes(String(id)), `${id} not listed by owner`);
    const byGame = await t.get(`/helix/videos?game_id=${marked.game_id}&first=100`, bearer(app));
    assert.ok(!byGame.json().data.some((v: { id: string }) => v.id === String(marked.id)));
    const markers = await t.get(`/helix/streams/markers?video_id=${marked.id}`, bearer(token));
    assert.equal(markers.statusCode, 404);
    assert.equal(markers.json().message, 'The video in "video_id" was not found');
    const left = await t.store.db.selectFrom('markers').select('id').where('video_id', 'in', gone).execute();
    assert.deepEqual(left, []);

    // The clips stay, cut loose from their video; every other clip is as it was.
    const clips = await t.get(`/helix/clips?${ids(clipsBefore.map((c) => c.id))}`, bearer(app));
    assert.equal(clips.json().data.length, clipsBefore.length);
    for (const c of clips.json().data) {
      assert.equal(c.video_id, '', c.id);
      assert.equal(c.vod_offset, null, c.id);
    }
    const after = await t.store.db
      .selectFrom('clips')
      .selectAll()
      .where(
        'id',
        'in',
        clipsBefore.map((c) => c.id),
      )
      .orderBy('id')
      .execute();
    assert.deepEqual(
      after,
      clipsBefore.map((c) => ({ ...c, video_id: null, vod_offset: null })),
    );
    assert.deepEqual(
      await t.store.db
        .selectFrom('clips')
        .selectAll()
        .where(
          'id',
          'in',
          others.map((c) => c.id),
        )
        .orderBy('id')
        .execute(),
      others,
    );
  });

  it('passes over ids of no video and repeated ids: the answer lists each video deleted once, in the order given', async () => {
    const [a, b] = (await demoVideos()).slice(-2);
    assert.ok(a && b);
    const res = await del(ids([b.id, 1, a.id, b.id, 999999999]), await t.userToken([SCOPE]));
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { data: [String(b.id), String(a.id)] });
    assert.equal(await exists(a.id), false);
    const none = await del(ids([1, a.id]), await t.userToken([SCOPE]));
    assert.equal(none.statusCode, 200);
    assert.deepEqual(none.json(), { data: [] });
  });

  it("refuses the whole request when one video is another user's: production's 401, nothing deleted", async () => {
    const mine = (await demoVideos()).slice(0, 2).map((v) => v.id);
    const theirs = (
      await t.store.db
        .selectFrom('videos')
        .select('id')
        .where('user_id', '!=', demo)
        .orderBy('id')
        .executeTakeFirstOrThrow()
    ).id;
    const snapshot = await exportOf(t.storeOptions);
    const res = await del(ids([...mine, theirs]), await t.userToken([SCOPE]));
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), { error: 'Unauthorized', status: 401, message: NOT_YOURS });
    for (const id of [...mine, theirs]) assert.ok(await exists(id), `${id} kept`);
    assert.equal(await exportOf(t.storeOptions), snapshot);
  });

  it('refuses, changing nothing: no id, 6 ids, a malformed id, an app token, no channel:manage:videos', async () => {
    const mine = (await demoVideos()).map((v) => v.id);
    const token = await t.userToken([SCOPE]);
    const snapshot = await exportOf(t.storeOptions);
    const cases: [string, string, number, string][] = [
      ['', token, 400, 'Missing required parameter "id"'],
      [ids(mine.slice(0, 6)), token, 400, 'The parameter "id" may be given at most 5 times'],
      [
        `${ids(mine.slice(0, 1))}&id=abc`,
        token,
        400,
        'The parameter "id" was malformed: each value must be a numeric ID',
      ],
      [
        ids(mine.slice(0, 1)),
        app,
        401,
        'This operation requires a user access token; an app access token was given',
      ],
      [ids(mine.slice(0, 1)), await t.userToken(['user:edit']), 401, 'Missing scope: channel:manage:videos'],
    ];
    for (const [q, tok, status, message] of cases) {
      const res = await del(q, tok);
      assert.equal(res.statusCode, status, `${q}: ${res.body}`);
      assert.deepEqual(res.json(), {
        error: status === 400 ? 'Bad Request' : 'Unauthorized',
        status,
        message,
      });
    }
    assert.equal(await exportOf(t.storeOptions), snapshot);
  });

  it('is served at /mock too; GET and DELETE are its methods, another is a 405', async () => {
    const [v] = (await demoVideos()).slice(-1);
    assert.ok(v);
    const res = await del(ids([v.id]), await t.userToken([SCOPE]), '/mock');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { data: [String(v.id)] });
    for (const method of ['POST', 'PUT', 'PATCH'] as const) {
      const other = await t.inject({ method, url: '/helix/videos', headers: bearer(app) });
      assert.equal(other.statusCode, 405, method);
      assert.equal(other.headers.allow, 'GET, HEAD, DELETE');
    }
  });

  it('leaves a store that exports and imports back whole: no clip names a video that is gone', async () => {
    const exported = await exportOf(t.storeOptions);
    const into = await tempStore(kind);
    try {
      const r = await helixd(
        ['import', '-', '--db', cliDb({ url: into.url, ...(into.schema ? { schema: into.schema } : {}) })],
        exported,
      );
      assert.equal(r.code, 0, r.stderr);
      assert.equal(
        await exportOf({ url: into.url, ...(into.schema ? { schema: into.schema } : {}) }),
        exported,
      );
    } finally {
      await into.drop();
    }
  });
});
