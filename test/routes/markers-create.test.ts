// POST /streams/markers (Create Stream Marker): a marker at the live stream's current position
// (seconds since it started) in the stream's archive video (a video of type archive whose stream_id
// is the stream's), listed at once by GET /streams/markers. Only while live, and only with an
// archive video: production's 404s otherwise. The broadcaster or an editor (one who made markers in
// that video) may mark; anyone else is production's 403. Each refusal is a 4xx with the Helix error
// body and changes nothing: the export before and after is the same.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { ADMIN_TOKEN, bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { liveWithoutArchive } from '../support/archive.ts';
import { exportOf } from '../support/cli.ts';
import type { StoreKind } from '../support/stores.ts';

const SCOPE = 'channel:manage:broadcast';
const READ = 'user:read:broadcast';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
const NOT_LIVE = 'The user in the user_id field is not streaming live.';
const NOT_A_USER = 'The ID in the user_id field is not valid.';
const NO_VOD = "The user hasn't enabled video on demand (VOD).";
const NOT_AN_EDITOR =
  "The user in the access token is not authorized to create video markers for the user in the user_id field. The user in the access token must own the video or they must be one of the broadcaster's editors.";
/**
 * The archive video the tests give the demo broadcaster's live stream: newer than the one the demo
 * data gives it (a higher id, the same start), so the one POST /streams/markers places markers in.
 */
const ARCHIVE = 1_999_999_999;

forEachStore('POST /helix/streams/markers', (kind: StoreKind) => {
  let t: TestApp;
  let demo: number;
  let startedAt: number;
  /** another live channel, whose stream has no archive video */
  let liveNoVod: number;
  /** a user who is not live */
  let offline: number;
  /** a user who made a marker in the archive video: an editor of the demo channel */
  let editor: number;
  const nowS = () => Math.floor(t.clock.now() / 1000);
  const post = (payload: unknown, token: string, prefix = '/helix', type = 'application/json') =>
    t.inject({
      method: 'POST',
      url: `${prefix}/streams/markers`,
      headers: { ...bearer(token), 'client-id': t.seed?.demoClientId as string, 'content-type': type },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });
  const write = async (url: string, payload: unknown) => {
    const res = await t.inject({ method: 'POST', url, headers: admin, payload: JSON.stringify(payload) });
    assert.equal(res.statusCode, 201, res.body);
  };

  before(async () => {
    t = await startTestApp(kind, { config: { adminToken: ADMIN_TOKEN } });
    demo = t.seed?.demoUserId as number;
    const stream = await t.store.db
      .selectFrom('streams')
      .selectAll()
      .where('user_id', '=', demo)
      .executeTakeFirstOrThrow();
    startedAt = stream.started_at;
    await write('/admin/videos', {
      id: String(ARCHIVE),
      stream_id: String(stream.id),
      user_id: String(demo),
      game_id: String(stream.game_id),
      title: 'The live stream, recorded',
      description: '',
      created_at: new Date(startedAt * 1000).toISOString().replace('.000Z', 'Z'),
      published_at: new Date(startedAt * 1000).toISOString().replace('.000Z', 'Z'),
      view_count: 0,
      language: stream.language,
      type: 'archive',
      duration: '0s',
      muted_segments: null,
    });
    // The demo data gives one live stream in ten no archive video (src/seed/generate.ts).
    liveNoVod = await liveWithoutArchive(t, demo);
    const users = await t.store.db
      .selectFrom('users')
      .select('id')
      .where('id', 'not in', t.store.db.selectFrom('streams').select('user_id'))
      .orderBy('id')
      .limit(2)
      .execute();
    [offline, editor] = users.map((u) => u.id) as [number, number];
    await write('/admin/markers', {
      id: 'editorsmarker0000000000000000001',
      video_id: String(ARCHIVE),
      user_id: String(editor),
      created_at: new Date(startedAt * 1000).toISOString().replace('.000Z', 'Z'),
      description: 'Made as an editor',
      position_seconds: 0,
    });
  });
  after(() => t.close());

  it('marks the stream where it is now, in its archive video; GET /streams/markers lists it at once', async () => {
    const token = await t.userToken([SCOPE, READ]);
    const res = await post({ user_id: String(demo), description: 'Great play' }, token);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.deepEqual(Object.keys(body), ['data']);
    const [m] = body.data;
    assert.deepEqual(Object.keys(m), ['id', 'created_at', 'position_seconds', 'description']);
    assert.match(m.id, /^[0-9a-f]{32}$/);
    assert.equal(m.created_at, new Date(nowS() * 1000).toISOString().replace('.000Z', 'Z'));
    assert.equal(m.position_seconds, nowS() - startedAt);
    assert.equal(m.description, 'Great play');

    for (const q of [`video_id=${ARCHIVE}`, `user_id=${demo}`]) {
      const read = await t.get(`/helix/streams/markers?${q}&first=1`, bearer(token));
      assert.equal(read.statusCode, 200, read.body);
      const group = read.json().data[0];
      assert.equal(group.videos[0].video_id, String(ARCHIVE), q);
      const { URL, ...listed } = group.videos[0].markers[0];
      assert.deepEqual(listed, {
        id: m.id,
        created_at: m.created_at,
        description: m.description,
        position_seconds: m.position_seconds,
      });
      assert.match(URL, new RegExp(`/videos/${ARCHIVE}\\?t=`));
    }
  });

  it('the position follows the stream: a later marker is as much later', async () => {
    const token = await t.userToken([SCOPE]);
    const first = (await post({ user_id: String(demo) }, token)).json().data[0];
    t.clock.advance(95_000);
    const second = (await post({ user_id: String(demo) }, token)).json().data[0];
    assert.equal(second.position_seconds - first.position_seconds, 95);
  });

  it('takes description left out (""), up to 140 characters, and user_id as a JSON number', async () => {
    const token = await t.userToken([SCOPE]);
    const bare = await post({ user_id: String(demo) }, token);
    assert.equal(bare.statusCode, 200, bare.body);
    assert.equal(bare.json().data[0].description, '');
    const numeric = await post({ user_id: demo, description: null }, token);
    assert.equal(numeric.statusCode, 200, numeric.body);
    for (const text of ['x'.repeat(140), '\u{1f3ae}'.repeat(140)]) {
      const res = await post({ user_id: String(demo), description: text }, token);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().data[0].description, text);
    }
  });

  it("production's 404s: a user not live, no such user, a live stream with no archive video; nothing written", async () => {
    const snapshot = await exportOf(t.storeOptions);
    for (const [user, message] of [
      [offline, NOT_LIVE],
      [987654321, NOT_A_USER],
      [liveNoVod, NO_VOD],
    ] as const) {
      const res = await post(
        { user_id: String(user) },
        await t.userToken([SCOPE], user === 987654321 ? demo : user),
      );
      assert.equal(res.statusCode, 404, `${user}: ${res.body}`);
      assert.deepEqual(res.json(), { error: 'Not Found', status: 404, message });
    }
    assert.equal(await exportOf(t.storeOptions), snapshot);
  });

  it("an editor (one who made markers in the archive video) marks the channel's stream; the marker is the editor's", async () => {
    const token = await t.userToken([SCOPE, READ], editor);
    const res = await post({ user_id: String(demo), description: 'By the editor' }, token);
    assert.equal(res.statusCode, 200, res.body);
    const id = res.json().data[0].id;
    const mine = await t.get(`/helix/streams/markers?video_id=${ARCHIVE}&first=100`, bearer(token));
    assert.ok(mine.json().data[0].videos[0].markers.some((m: { id: string }) => m.id === id));
    const owners = await t.get(
      `/helix/streams/markers?video_id=${ARCHIVE}&first=100`,
      bearer(await t.userToken([READ])),
    );
    assert.ok(
      !owners.json().data[0].videos[0].markers.some((m: { id: string }) => m.id === id),
      "not among the owner's own",
    );
  });

  it("anyone else is production's 403; nothing written", async () => {
    const snapshot = await exportOf(t.storeOptions);
    const res = await post({ user_id: String(demo) }, await t.userToken([SCOPE], offline));
    assert.equal(res.statusCode, 403);
    assert.deepEqual(res.json(), { error: 'Forbidden', status: 403, message: NOT_AN_EDITOR });
    assert.equal(await exportOf(t.storeOptions), snapshot);
  });

  it('refuses a body that breaks a rule, a token of the wrong kind or scope, with a 4xx naming it; nothing written', async () => {
    const token = await t.userToken([SCOPE]);
    const snapshot = await exportOf(t.storeOptions);
    const bad = (message: string) => ({ status: 400, message });
    const cases: [unknown, string, { status: number; message: string }, string?][] = [
      [
        '',
        token,
        bad('The body must be a JSON object {"user_id", "description"} (Content-Type: application/json)'),
      ],
      [
        [demo],
        token,
        bad('The body must be a JSON object {"user_id", "description"} (Content-Type: application/json)'),
      ],
      [{ description: 'x' }, token, bad('Missing required field "user_id"')],
      [{ user_id: '' }, token, bad('Missing required field "user_id"')],
      [{ user_id: 'me' }, token, bad('The field "user_id" was malformed: the value must be a numeric ID')],
      [{ user_id: -1 }, token, bad('The field "user_id" was malformed: the value must be a numeric ID')],
      [
        { user_id: [String(demo)] },
        token,
        bad('The field "user_id" was malformed: the value must be a numeric ID'),
      ],
      [{ user_id: String(demo), description: 5 }, token, bad('The field "description" must be a string')],
      [
        { user_id: String(demo), description: 'a\u0000b' },
        token,
        bad('The field "description" was malformed: the value must not contain a NUL character (U+0000)'),
      ],
      [
        { user_id: String(demo), description: 'x'.repeat(141) },
        token,
        bad('The length of the string in the "description" field is too long: at most 140 characters'),
      ],
      ['{"user_id":', token, { status: 400, message: 'Unexpected end of JSON input' }],
      [
        `user_id=${demo}`,
        token,
        { status: 415, message: 'Unsupported Media Type' },
        'application/x-www-form-urlencoded',
      ],
      [
        { user_id: String(demo) },
        await t.appToken(),
        {
          status: 401,
          message: 'This operation requires a user access token; an app access token was given',
        },
      ],
      [
        { user_id: String(demo) },
        await t.userToken([READ]),
        { status: 401, message: 'Missing scope: channel:manage:broadcast' },
      ],
    ];
    for (const [payload, tok, expected, type] of cases) {
      const res = await post(payload, tok, '/helix', type);
      const what = `${JSON.stringify(payload).slice(0, 60)}: ${res.body}`;
      assert.equal(res.statusCode, expected.status, what);
      const body = res.json();
      assert.equal(body.status, expected.status, what);
      if (expected.status === 400 && expected.message.startsWith('Unexpected'))
        assert.match(body.message, /JSON/, what);
      else assert.equal(body.message, expected.message, what);
    }
    assert.equal(await exportOf(t.storeOptions), snapshot);
  });

  it('is served at /mock too; GET and POST are its methods, another is a 405', async () => {
    const res = await post({ user_id: String(demo) }, await t.userToken([SCOPE]), '/mock');
    assert.equal(res.statusCode, 200, res.body);
    for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
      const other = await t.inject({
        method,
        url: '/helix/streams/markers',
        headers: bearer(await t.appToken()),
      });
      assert.equal(other.statusCode, 405, method);
      assert.equal(other.headers.allow, 'GET, HEAD, POST');
    }
  });
});
