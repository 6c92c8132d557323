import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { assertGolden } from '../support/golden.ts';
import type { StoreKind } from '../support/stores.ts';

const SCOPE = 'user:read:broadcast';

interface Marker {
  id: string;
  created_at: string;
  description: string;
  position_seconds: number;
  URL: string;
}

/** The markers `creator` made in `video` straight from the store, newest first, ties by id. */
function storeMarkers(t: TestApp, video: number, creator: number) {
  return t.store.db
    .selectFrom('markers')
    .selectAll()
    .where('video_id', '=', video)
    .where('creator_id', '=', creator)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

async function mostRecentVideo(t: TestApp, user: number) {
  return t.store.db
    .selectFrom('videos')
    .selectAll()
    .where('user_id', '=', user)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirstOrThrow();
}

const markersOf = (body: { data: { videos: { markers: Marker[] }[] }[] }) =>
  body.data.flatMap((g) => g.videos.flatMap((v) => v.markers));

forEachStore('GET /helix/streams/markers', (kind: StoreKind) => {
  let t: TestApp;
  let token: string;
  let demo: number;
  const get = (q: string, tok = token) => t.get(`/helix/streams/markers?${q}`, bearer(tok));
  before(async () => {
    t = await startTestApp(kind);
    token = await t.userToken([SCOPE]);
    demo = t.seed?.demoUserId as number;
  });
  after(() => t.close());

  it('returns the nested shape: owner, one video, its markers with URL in upper case', async () => {
    const v = await mostRecentVideo(t, demo);
    const res = await get(`user_id=${demo}&first=3`);
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(Object.keys(body), ['data', 'pagination']);
    assert.equal(body.data.length, 1);
    const owner = await t.store.db
      .selectFrom('users')
      .selectAll()
      .where('id', '=', demo)
      .executeTakeFirstOrThrow();
    const g = body.data[0];
    assert.deepEqual(Object.keys(g), ['user_id', 'user_name', 'user_login', 'videos']);
    assert.deepEqual([g.user_id, g.user_name, g.user_login], [String(demo), owner.display_name, owner.login]);
    assert.equal(g.videos.length, 1);
    assert.deepEqual(Object.keys(g.videos[0]), ['video_id', 'markers']);
    assert.equal(g.videos[0].video_id, String(v.id));
    const m = g.videos[0].markers[0];
    assert.deepEqual(Object.keys(m), ['id', 'created_at', 'description', 'position_seconds', 'URL']);
    const row = (await storeMarkers(t, v.id, demo))[0];
    assert.deepEqual(m, {
      id: row?.id,
      created_at: new Date((row?.created_at as number) * 1000).toISOString().replace('.000Z', 'Z'),
      description: row?.description,
      position_seconds: row?.position_seconds,
      URL: `https://streams.example.com/videos/${v.id}?t=${hms(row?.position_seconds as number)}`,
    });
  });

  it("user_id: the markers in that user's most recent video", async () => {
    const v = await mostRecentVideo(t, demo);
    const rows = await storeMarkers(t, v.id, demo);
    assert.ok(rows.length > 20);
    const body = (await get(`user_id=${demo}&first=100`)).json();
    assert.equal(body.data[0].videos[0].video_id, String(v.id));
    assert.deepEqual(
      markersOf(body).map((m) => m.id),
      rows.slice(0, 100).map((r) => r.id),
    );
  });

  it('video_id: the markers in that video', async () => {
    const videos = await t.store.db
      .selectFrom('videos')
      .select('id')
      .where('user_id', '=', demo)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(3)
      .execute();
    const older = videos[2]?.id as number;
    const rows = await storeMarkers(t, older, demo);
    assert.ok(rows.length > 0);
    const body = (await get(`video_id=${older}&first=100`)).json();
    assert.equal(body.data[0].videos[0].video_id, String(older));
    assert.deepEqual(
      markersOf(body).map((m) => m.id),
      rows.map((r) => r.id),
    );
  });

  it('exactly one of user_id and video_id: neither or both is a 400', async () => {
    const v = await mostRecentVideo(t, demo);
    for (const [q, message] of [
      ['', 'Missing required parameter "user_id" or "video_id"'],
      ['user_id=&first=5', 'Missing required parameter "user_id" or "video_id"'],
      [
        `user_id=${demo}&video_id=${v.id}`,
        'The parameters "user_id" and "video_id" cannot be used together: give exactly one',
      ],
    ] as const) {
      const res = await get(q);
      assert.equal(res.statusCode, 400, q);
      assert.deepEqual(res.json(), { error: 'Bad Request', status: 400, message });
    }
  });

  it('user_id and video_id are numeric ids given once (400 naming the parameter otherwise)', async () => {
    for (const q of ['video_id=abc', `user_id=${demo}&user_id=${demo}`, 'user_id=-1']) {
      const res = await get(q);
      assert.equal(res.statusCode, 400, q);
      assert.match(res.json().message, /"(user_id|video_id)"/);
    }
  });

  it('only markers created by the token user are returned (an editor marker is not the owner’s)', async () => {
    // a video of which some markers were made by the owner and some by an editor
    const mixed = await t.store.db
      .selectFrom('markers')
      .innerJoin('videos', 'videos.id', 'markers.video_id')
      .select(['markers.video_id', 'markers.creator_id', 'videos.user_id'])
      .whereRef('markers.creator_id', '<>', 'videos.user_id')
      .execute();
    let found = false;
    for (const m of mixed) {
      const own = await storeMarkers(t, m.video_id, m.user_id);
      if (own.length === 0) continue;
      found = true;
      const all = await t.store.db
        .selectFrom('markers')
        .select('id')
        .where('video_id', '=', m.video_id)
        .execute();
      assert.ok(all.length > own.length);
      const ownerTok = await t.userToken([SCOPE], m.user_id);
      const body = (await get(`video_id=${m.video_id}&first=100`, ownerTok)).json();
      assert.deepEqual(
        markersOf(body).map((x) => x.id),
        own.map((r) => r.id),
      );
      break;
    }
    assert.ok(found, 'the demo data has a video marked by its owner and by an editor');
  });

  it('an editor (a user who created markers in the video) reads their own markers of it', async () => {
    const m = await t.store.db
      .selectFrom('markers')
      .innerJoin('videos', 'videos.id', 'markers.video_id')
      .select(['markers.video_id', 'markers.creator_id', 'videos.user_id'])
      .whereRef('markers.creator_id', '<>', 'videos.user_id')
      .orderBy('markers.id')
      .executeTakeFirstOrThrow();
    const rows = await storeMarkers(t, m.video_id, m.creator_id);
    const res = await get(`video_id=${m.video_id}&first=100`, await t.userToken([SCOPE], m.creator_id));
    assert.equal(res.statusCode, 200);
    const body = res.json();
    // the group names the video's owner, the markers are the editor's
    assert.equal(body.data[0].user_id, String(m.user_id));
    assert.deepEqual(
      markersOf(body).map((x) => x.id),
      rows.map((r) => r.id),
    );
  });

  it('a video the token user neither owns nor marked is a 403 explaining the ownership rule', async () => {
    const v = await mostRecentVideo(t, demo);
    const marked = new Set(
      (
        await t.store.db.selectFrom('markers').select('creator_id').where('video_id', '=', v.id).execute()
      ).map((r) => r.creator_id),
    );
    const users = await t.store.db.selectFrom('users').select('id').execute();
    const stranger = users.find((u) => !marked.has(u.id) && u.id !== demo)?.id as number;
    const tok = await t.userToken([SCOPE], stranger);
    for (const q of [`video_id=${v.id}`, `user_id=${demo}`]) {
      const res = await get(q, tok);
      assert.equal(res.statusCode, 403, q);
      assert.deepEqual(res.json(), {
        error: 'Forbidden',
        status: 403,
        message:
          'The user in the OAuth token may read the markers of a video only if they own the video or ' +
          'created markers in it as an editor of the channel',
      });
    }
  });

  it('an unknown video, an unknown user and a user without videos are a 404 naming the parameter', async () => {
    const withVideos = new Set(
      (await t.store.db.selectFrom('videos').select('user_id').distinct().execute()).map((r) => r.user_id),
    );
    const users = await t.store.db.selectFrom('users').select('id').execute();
    const noVideos = users.find((u) => !withVideos.has(u.id))?.id as number;
    for (const [q, message] of [
      ['video_id=1', 'The video in "video_id" was not found'],
      ['user_id=1', 'The user in "user_id" was not found'],
      [`user_id=${noVideos}`, 'The user in "user_id" has no videos'],
    ] as const) {
      const res = await get(q);
      assert.equal(res.statusCode, 404, q);
      assert.deepEqual(res.json(), { error: 'Not Found', status: 404, message });
    }
  });

  it('a video of the token user without markers of theirs gives {"data": [], "pagination": {}}', async () => {
    const marked = new Set(
      (
        await t.store.db.selectFrom('markers').select('video_id').where('creator_id', '=', demo).execute()
      ).map((r) => r.video_id),
    );
    const videos = await t.store.db.selectFrom('videos').select('id').where('user_id', '=', demo).execute();
    const bare = videos.find((v) => !marked.has(v.id))?.id as number;
    const res = await get(`video_id=${bare}`);
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '{"data":[],"pagination":{}}');
  });

  it('orders by recency, newest first, ties by marker id (higher first)', async () => {
    const v = await mostRecentVideo(t, demo);
    const [a, b] = await t.store.db
      .selectFrom('markers')
      .select('id')
      .where('video_id', '=', v.id)
      .where('creator_id', '=', demo)
      .orderBy('id')
      .limit(2)
      .execute();
    const was = await t.store.db
      .selectFrom('markers')
      .select(['id', 'created_at'])
      .where('id', 'in', [a?.id as string, b?.id as string])
      .execute();
    // two markers of the same second: the higher id comes first
    await t.store.db
      .updateTable('markers')
      .set({ created_at: 1_900_000_000 })
      .where('id', 'in', [a?.id as string, b?.id as string])
      .execute();
    try {
      const got = markersOf((await get(`user_id=${demo}&first=100`)).json());
      assert.deepEqual(
        got.slice(0, 2).map((m) => m.id),
        [b?.id, a?.id],
      );
      for (let i = 1; i < got.length; i++)
        assert.ok((got[i - 1] as Marker).created_at >= (got[i] as Marker).created_at, 'newest first');
    } finally {
      for (const w of was)
        await t.store.db
          .updateTable('markers')
          .set({ created_at: w.created_at })
          .where('id', '=', w.id)
          .execute();
    }
  });

  it('needs a user access token: an app token is a 401', async () => {
    const res = await get(`user_id=${demo}`, await t.appToken());
    assert.equal(res.statusCode, 401);
    assert.match(res.json().message, /user access token/);
  });

  it('needs user:read:broadcast or channel:manage:broadcast: 401 Missing scope naming both', async () => {
    const res = await get(`user_id=${demo}`, await t.userToken(['channel:read:subscriptions']));
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().message, 'Missing scope: user:read:broadcast or channel:manage:broadcast');
  });

  it('accepts channel:manage:broadcast alone, with the same answer as user:read:broadcast', async () => {
    const q = `user_id=${demo}&first=5`;
    const read = await get(q, await t.userToken(['user:read:broadcast']));
    const manage = await get(q, await t.userToken(['channel:manage:broadcast']));
    assert.equal(manage.statusCode, 200, manage.body);
    assert.ok(markersOf(manage.json()).length > 0);
    assert.deepEqual(manage.json(), read.json());
  });

  it('first: default 20, at most 100, counting markers; 0 and 101 are a 400 naming "first"', async () => {
    assert.equal(markersOf((await get(`user_id=${demo}`)).json()).length, 20);
    assert.equal(markersOf((await get(`user_id=${demo}&first=7`)).json()).length, 7);
    for (const v of ['0', '101', 'many']) {
      const res = await get(`user_id=${demo}&first=${v}`);
      assert.equal(res.statusCode, 400);
      assert.match(res.json().message, /^The parameter "first" was malformed/);
    }
  });

  it('after is the forward cursor and before the backward one: before on page N gives page N-1', async () => {
    const p1 = (await get(`user_id=${demo}&first=4`)).json();
    const p2 = (await get(`user_id=${demo}&first=4&after=${p1.pagination.cursor}`)).json();
    const p3 = (await get(`user_id=${demo}&first=4&after=${p2.pagination.cursor}`)).json();
    assert.deepEqual((await get(`user_id=${demo}&first=4&before=${p3.pagination.cursor}`)).json(), p2);
    const back = (await get(`user_id=${demo}&first=4&before=${p2.pagination.cursor}`)).json();
    assert.deepEqual(back.data, p1.data);
    assert.deepEqual(back.pagination, {});
  });

  it('a user_id cursor keeps walking the video it started on when a newer video appears', async () => {
    const v = await mostRecentVideo(t, demo);
    const p1 = (await get(`user_id=${demo}&first=3`)).json();
    const expected = (await get(`user_id=${demo}&first=3&after=${p1.pagination.cursor}`)).json();
    await t.store.db
      .insertInto('videos')
      .values({
        id: 999_999_999_999,
        stream_id: null,
        user_id: demo,
        game_id: v.game_id,
        title: 'newer',
        description: '',
        created_at: v.created_at + 60,
        published_at: v.created_at + 60,
        language: v.language,
        type: 'archive',
        view_count: 0,
        duration_s: 600,
        muted_segments: null,
      })
      .execute();
    await t.store.db
      .insertInto('markers')
      .values({
        id: 'f'.repeat(32),
        video_id: 999_999_999_999,
        creator_id: demo,
        created_at: v.created_at + 90,
        description: 'new',
        position_seconds: 30,
      })
      .execute();
    try {
      const p2 = (await get(`user_id=${demo}&first=3&after=${p1.pagination.cursor}`)).json();
      assert.deepEqual(p2, expected);
      // a fresh first page is from the new video
      assert.equal((await get(`user_id=${demo}&first=3`)).json().data[0].videos[0].video_id, '999999999999');
    } finally {
      await t.store.db.deleteFrom('markers').where('video_id', '=', 999_999_999_999).execute();
      await t.store.db.deleteFrom('videos').where('id', '=', 999_999_999_999).execute();
    }
  });

  it('the last page has "pagination": {}', async () => {
    let body = (await get(`user_id=${demo}&first=100`)).json();
    while (body.pagination.cursor)
      body = (await get(`user_id=${demo}&first=100&after=${body.pagination.cursor}`)).json();
    assert.deepEqual(body.pagination, {});
    assert.ok(body.data.length > 0);
  });

  it("rejects malformed, tampered, foreign and another user's cursors and after with before: 400", async () => {
    const c = (await get(`user_id=${demo}&first=2`)).json().pagination.cursor as string;
    const games = (await t.get('/helix/games/top?first=2', bearer(token))).json().pagination.cursor as string;
    const tampered = `${c.slice(0, 3)}${c[3] === 'A' ? 'B' : 'A'}${c.slice(4)}`;
    for (const bad of ['garbage', tampered, games]) {
      const res = await get(`user_id=${demo}&after=${encodeURIComponent(bad)}`);
      assert.equal(res.statusCode, 400, bad);
      assert.equal(res.json().message, 'Invalid cursor.');
    }
    // the same query by another user (an editor of the video) may not reuse the owner's cursor
    const v = await mostRecentVideo(t, demo);
    const editor = await t.store.db
      .selectFrom('markers')
      .select('creator_id')
      .where('video_id', '=', v.id)
      .where('creator_id', '<>', demo)
      .executeTakeFirst();
    if (editor) {
      const res = await get(`user_id=${demo}&after=${c}`, await t.userToken([SCOPE], editor.creator_id));
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().message, 'Invalid cursor.');
    }
    const both = await get(`user_id=${demo}&after=${c}&before=${c}`);
    assert.equal(both.statusCode, 400);
  });

  it('ignores unknown parameters and is served at /mock/streams/markers too', async () => {
    const a = await get(`user_id=${demo}&first=3`);
    const b = await t.get(`/mock/streams/markers?user_id=${demo}&first=3&color=red`, bearer(token));
    assert.equal(b.statusCode, 200);
    assert.equal(b.body, a.body);
  });

  // Golden answers: seed 1, 200 users, TEST_NOW; byte-identical on both stores, cursors included.
  // The files hold the body indented; the wire body must equal their compact form byte for byte.
  // UPDATE_GOLDEN=1 rewrites them (from the SQLite run).
  describe('golden answers', () => {
    const check = async (file: string, q: string) => {
      const res = await get(q);
      assert.equal(res.statusCode, 200);
      assert.ok(res.json().data.length > 0);
      assertGolden(kind, file, res.body);
    };
    it('answers markers-by-user byte for byte as test/golden/markers-by-user.json', () =>
      check('markers-by-user.json', `user_id=${demo}&first=3`));
    it('answers markers-by-user-second-page byte for byte as test/golden/markers-by-user-second-page.json', async () => {
      const c = (await get(`user_id=${demo}&first=3`)).json().pagination.cursor;
      await check('markers-by-user-second-page.json', `user_id=${demo}&first=3&after=${c}`);
    });
    it('answers markers-by-video byte for byte as test/golden/markers-by-video.json', () =>
      check('markers-by-video.json', 'video_id=1000001745&first=5'));
  });
});

// The demo broadcaster's most recent video holds about users*0.15 of its markers (the generator puts
// a quarter of all markers on its last three videos): 7,000 users give more than 1,000.
forEachStore('GET /helix/streams/markers walk', (kind: StoreKind) => {
  let t: TestApp;
  let token: string;
  before(async () => {
    t = await startTestApp(kind, { users: 7000 });
    token = await t.userToken([SCOPE]);
  });
  after(() => t.close());

  it('walks every marker of the most recent video once, newest first, and back with before', async () => {
    const demo = t.seed?.demoUserId as number;
    const v = await mostRecentVideo(t, demo);
    const rows = await storeMarkers(t, v.id, demo);
    assert.ok(rows.length > 1000, `only ${rows.length} markers`);
    const url = (extra: string) => `/helix/streams/markers?user_id=${demo}&first=41${extra}`;
    const pages: { data: unknown[]; cursor?: string }[] = [];
    let cursor: string | undefined;
    do {
      const res = await t.get(url(cursor ? `&after=${cursor}` : ''), bearer(token));
      assert.equal(res.statusCode, 200);
      const body = res.json();
      pages.push({ data: body.data, cursor: body.pagination.cursor });
      cursor = body.pagination.cursor;
    } while (cursor);
    const walked = pages.flatMap((p) => markersOf({ data: p.data as never }).map((m) => m.id));
    assert.deepEqual(
      walked,
      rows.map((r) => r.id),
    );
    // page N's cursor with before gives page N-1 (the last page carries no cursor of its own)
    for (let n = pages.length - 2; n >= 1; n--) {
      const body = (await t.get(url(`&before=${pages[n]?.cursor}`), bearer(token))).json();
      assert.deepEqual(body.data, pages[n - 1]?.data, `page ${n - 1}`);
      assert.equal(body.pagination.cursor === undefined, n === 1);
    }
  });
});

function hms(total: number): string {
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return h > 0 ? `${h}h${m}m${s}s` : m > 0 ? `${m}m${s}s` : `${s}s`;
}
