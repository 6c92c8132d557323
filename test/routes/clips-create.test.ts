// POST /clips (Create Clip): a clip of a live channel, answered 202 at once with its id and edit
// URL, and listed by GET /clips only CLIP_DELAY_MS later on the server clock (the test app's clock
// is driven: moved by hand, never by time). The clip is the last 30 seconds of the stream, cut from
// its archive video (a video of type archive whose stream_id is the stream's) at the stream's
// position, with the stream's game, language and title, created by the token user; with no archive
// video, a clip of no video. Only for a live channel: production's 404 otherwise. Each refusal is a
// 4xx with the Helix error body and changes nothing: the export before and after (the delay passed
// meanwhile) is the same.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { CLIP_DELAY_MS } from '../../src/records/clip-jobs.ts';
import { rfc3339 } from '../../src/wire/datetime.ts';
import { ADMIN_TOKEN, bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { archiveOfLiveStream, liveWithoutArchive, offlineUser } from '../support/archive.ts';
import { exportOf } from '../support/cli.ts';
import type { StoreKind } from '../support/stores.ts';

const SCOPE = 'clips:edit';
const OFFLINE = 'Clipping is not possible for an offline channel.';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
/** The archive video the tests give the demo broadcaster's live stream. */
const ARCHIVE = '1999999999';
/** The seed's shape of a clip id (src/seed/generate.ts). */
const CLIP_ID = /^(?:[A-Z][a-z]+){4}-[a-z0-9]{16}$/;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Clip {
  id: string;
  url: string;
  broadcaster_id: string;
  broadcaster_name: string;
  creator_id: string;
  creator_name: string;
  video_id: string;
  game_id: string;
  language: string;
  title: string;
  view_count: number;
  created_at: string;
  duration: number;
  vod_offset: number | null;
  is_featured: boolean;
}

forEachStore('POST /helix/clips', (kind: StoreKind) => {
  let t: TestApp;
  let demo: number;
  /** the demo broadcaster's live stream, with its archive video */
  let stream: { id: number; started_at: number; game_id: number; language: string; title: string };
  /** another live channel, whose stream has no archive video */
  let liveNoVod: number;
  /** a user who is not live */
  let offline: number;
  let reader: Record<string, string>;
  const nowS = () => Math.floor(t.clock.now() / 1000);
  const post = (query: string, token: string, prefix = '/helix') =>
    t.inject({
      method: 'POST',
      url: `${prefix}/clips${query ? `?${query}` : ''}`,
      headers: { ...bearer(token), 'client-id': t.seed?.demoClientId as string },
    });
  /** A clip of `broadcaster` asked for by `token`'s user: its id. */
  const clip = async (broadcaster: number, token: string, extra = ''): Promise<string> => {
    const res = await post(`broadcaster_id=${broadcaster}${extra}`, token);
    assert.equal(res.statusCode, 202, res.body);
    return res.json().data[0].id;
  };
  const listed = async (id: string): Promise<Clip | undefined> => {
    const res = await t.get(`/helix/clips?id=${encodeURIComponent(id)}`, reader);
    assert.equal(res.statusCode, 200, res.body);
    return res.json().data[0];
  };
  /** Waits (in real time: the serving process's next look at its store) until the clip is listed. */
  const made = async (id: string): Promise<Clip> => {
    for (let i = 0; i < 200; i++) {
      const c = await listed(id);
      if (c) return c;
      await sleep(50);
    }
    assert.fail(`clip ${id} not listed after 10 s`);
  };
  const streamOf = (userId: number) =>
    t.store.db.selectFrom('streams').selectAll().where('user_id', '=', userId).executeTakeFirstOrThrow();

  before(async () => {
    t = await startTestApp(kind, { config: { adminToken: ADMIN_TOKEN } });
    demo = t.seed?.demoUserId as number;
    await archiveOfLiveStream(t, demo, ARCHIVE);
    stream = await streamOf(demo);
    // A live channel whose stream records no archive video (one in ten of the demo data's).
    liveNoVod = await liveWithoutArchive(t, demo);
    offline = await offlineUser(t);
    reader = bearer(await t.appToken());
  });
  after(() => t.close());

  it('answers 202 with the new id (the seed shape) and its edit URL: the clip page, then /edit', async () => {
    const res = await post(`broadcaster_id=${demo}`, await t.userToken([SCOPE]));
    assert.equal(res.statusCode, 202, res.body);
    const body = res.json();
    assert.deepEqual(Object.keys(body), ['data']);
    assert.equal(body.data.length, 1);
    const [created] = body.data;
    assert.deepEqual(Object.keys(created), ['id', 'edit_url']);
    assert.match(created.id, CLIP_ID);
    t.clock.advance(CLIP_DELAY_MS);
    const c = await made(created.id);
    assert.equal(created.edit_url, `${c.url}/edit`);
    assert.equal(created.edit_url, `${t.config.siteUrl}/clip/${created.id}/edit`);
  });

  it(`is not listed before ${CLIP_DELAY_MS} ms of server time, and is after, by id and by broadcaster`, async () => {
    const token = await t.userToken([SCOPE]);
    const first = await clip(demo, token);
    t.clock.advance(1000);
    const second = await clip(demo, token);
    assert.equal(await listed(second), undefined, 'not at once');
    // The first clip is due, the second 1 ms from it: the look that makes the first one saw the
    // second not yet due.
    t.clock.advance(CLIP_DELAY_MS - 1);
    await made(first);
    assert.equal(await listed(second), undefined, 'not 1 ms before its delay');
    const byBroadcaster = async () => {
      const res = await t.get(`/helix/clips?broadcaster_id=${demo}&first=100`, reader);
      return (res.json().data as Clip[]).map((c) => c.id);
    };
    // Its view count is 0, the least: on the last page of the broadcaster's clips.
    assert.ok(!(await byBroadcaster()).includes(second));
    t.clock.advance(1);
    await made(second);
  });

  it('a faster server clock (what --clock-speed 10 sets) makes the clip in a tenth of the real time', async () => {
    const SPEED = 10;
    t.clock.adopt({ realMs: Date.now(), nowMs: t.clock.now(), speed: SPEED });
    try {
      const token = await t.userToken([SCOPE]);
      const askedReal = Date.now();
      const askedServer = t.clock.now();
      const id = await clip(demo, token);
      await made(id);
      const real = Date.now() - askedReal;
      // Never before its delay on the server clock, which a tenth of it in real time is; and far
      // sooner than the 5 s a clock at real speed takes (a loaded machine only makes it later).
      assert.ok(t.clock.now() - askedServer >= CLIP_DELAY_MS, 'not before its delay on the server clock');
      assert.ok(real >= CLIP_DELAY_MS / SPEED - 20, `made after ${real} ms of real time`);
      assert.ok(
        real < CLIP_DELAY_MS * 0.8,
        `made after ${real} ms of real time, not a tenth of ${CLIP_DELAY_MS}`,
      );
    } finally {
      t.clock.set(t.clock.now());
    }
  });

  it("is cut from the stream's archive video at the stream's position, with its game, language and title, by the token's user", async () => {
    // Any user may clip any live channel: the creator is the token's user.
    const creator = offline;
    const at = nowS();
    const id = await clip(demo, await t.userToken([SCOPE], creator));
    t.clock.advance(CLIP_DELAY_MS);
    const c = await made(id);
    const names = await t.store.db
      .selectFrom('users')
      .select(['id', 'display_name'])
      .where('id', 'in', [demo, creator])
      .execute();
    const name = (u: number) => names.find((n) => n.id === u)?.display_name;
    assert.deepEqual(
      { ...c, url: undefined },
      {
        id,
        url: undefined,
        embed_url: `${t.config.siteUrl}/embed/clip?clip=${id}`,
        broadcaster_id: String(demo),
        broadcaster_name: name(demo),
        creator_id: String(creator),
        creator_name: name(creator),
        video_id: ARCHIVE,
        game_id: String(stream.game_id),
        language: stream.language,
        title: stream.title,
        view_count: 0,
        created_at: rfc3339(at),
        thumbnail_url: `${t.config.siteUrl}/media/clips/${id}/preview-480x272.jpg`,
        duration: 30,
        // Its last second is the stream's position when it was asked for.
        vod_offset: at - stream.started_at - 30,
        is_featured: false,
      },
    );
  });

  it('with no archive video, a clip of no video: video_id "" and vod_offset null', async () => {
    const other = await streamOf(liveNoVod);
    const id = await clip(liveNoVod, await t.userToken([SCOPE]));
    t.clock.advance(CLIP_DELAY_MS);
    const c = await made(id);
    assert.equal(c.broadcaster_id, String(liveNoVod));
    assert.equal(c.video_id, '');
    assert.equal(c.vod_offset, null);
    assert.equal(c.title, other.title);
    assert.equal(c.game_id, String(other.game_id));
  });

  it('a stream live for less than the clip: vod_offset 0, never negative', async () => {
    const other = await streamOf(liveNoVod);
    await archiveOfLiveStream(t, liveNoVod, '1999999998');
    const res = await t.inject({
      method: 'PATCH',
      url: `/admin/streams/${other.id}`,
      headers: admin,
      payload: JSON.stringify({ started_at: rfc3339(nowS() - 10) }),
    });
    assert.equal(res.statusCode, 200, res.body);
    const id = await clip(liveNoVod, await t.userToken([SCOPE]));
    t.clock.advance(CLIP_DELAY_MS);
    const c = await made(id);
    assert.equal(c.video_id, '1999999998');
    assert.equal(c.vod_offset, 0);
  });

  it('has_delay: true or false in any letter case; helixd keeps no delay, so the same clip', async () => {
    const token = await t.userToken([SCOPE]);
    const ids = [];
    for (const value of ['true', 'false', 'TRUE', 'False'])
      ids.push(await clip(demo, token, `&has_delay=${value}`));
    t.clock.advance(CLIP_DELAY_MS);
    const clips = [];
    for (const id of ids) clips.push(await made(id));
    assert.equal(new Set(clips.map((c) => c.vod_offset)).size, 1, 'one position');
    assert.equal(new Set(ids).size, 4, 'four clips');
  });

  it('a video deleted before the clip is made: the clip stays, of no video, as DELETE /videos leaves one', async () => {
    const other = await streamOf(liveNoVod);
    assert.ok(other);
    const id = await clip(liveNoVod, await t.userToken([SCOPE]));
    const deleted = await t.inject({
      method: 'DELETE',
      url: '/helix/videos?id=1999999998',
      headers: {
        ...bearer(await t.userToken(['channel:manage:videos'], liveNoVod)),
        'client-id': t.seed?.demoClientId as string,
      },
    });
    assert.equal(deleted.statusCode, 200, deleted.body);
    t.clock.advance(CLIP_DELAY_MS);
    const c = await made(id);
    assert.equal(c.video_id, '');
    assert.equal(c.vod_offset, null);
  });

  it('a clip the write path refuses when it is due (its creator deleted meanwhile) is never made, and waits no more', async () => {
    const user = {
      id: '995577',
      login: 'clipper_gone',
      display_name: 'Clipper_Gone',
      broadcaster_type: '',
      description: '',
      created_at: '2024-01-01T00:00:00Z',
    };
    const created = await t.inject({
      method: 'POST',
      url: '/admin/users',
      headers: admin,
      payload: JSON.stringify(user),
    });
    assert.equal(created.statusCode, 201, created.body);
    const id = await clip(demo, await t.userToken([SCOPE], Number(user.id)));
    const gone = await t.inject({ method: 'DELETE', url: `/admin/users/${user.id}`, headers: admin });
    assert.equal(gone.statusCode, 204, gone.body);
    // A clip asked for after it, made when due: the look at the store that made it passed the first.
    const later = await clip(demo, await t.userToken([SCOPE]));
    t.clock.advance(CLIP_DELAY_MS);
    await made(later);
    assert.equal(await listed(id), undefined);
    const waiting = await t.store.db.selectFrom('clip_jobs').select('id').where('id', '=', id).execute();
    assert.deepEqual(waiting, [], 'its row is gone: it is not tried again');
  });

  it('refuses a bad parameter, an offline or unknown channel, a token of the wrong kind or scope, with a 4xx naming it; nothing written, after the delay too', async () => {
    const token = await t.userToken([SCOPE]);
    const snapshot = await exportOf(t.storeOptions);
    const bad = (message: string) => ({ status: 400, error: 'Bad Request', message });
    const cases: [string, string, { status: number; error: string; message: string }][] = [
      ['', token, bad('Missing required parameter "broadcaster_id"')],
      ['broadcaster_id=', token, bad('Missing required parameter "broadcaster_id"')],
      [
        'broadcaster_id=me',
        token,
        bad('The parameter "broadcaster_id" was malformed: the value must be a numeric ID'),
      ],
      [
        'broadcaster_id=-1',
        token,
        bad('The parameter "broadcaster_id" was malformed: the value must be a numeric ID'),
      ],
      [
        `broadcaster_id=${demo}&broadcaster_id=${demo}`,
        token,
        bad('The parameter "broadcaster_id" may be given only once'),
      ],
      [
        `broadcaster_id=${demo}&has_delay=yes`,
        token,
        bad('The parameter "has_delay" was malformed: the value must be true or false'),
      ],
      [
        `broadcaster_id=${demo}&has_delay=1`,
        token,
        bad('The parameter "has_delay" was malformed: the value must be true or false'),
      ],
      [
        `broadcaster_id=${demo}&has_delay=`,
        token,
        bad('The parameter "has_delay" was malformed: the value must be true or false'),
      ],
      [`broadcaster_id=${offline}`, token, { status: 404, error: 'Not Found', message: OFFLINE }],
      ['broadcaster_id=987654321', token, { status: 404, error: 'Not Found', message: OFFLINE }],
      [
        `broadcaster_id=${demo}`,
        await t.appToken(),
        {
          status: 401,
          error: 'Unauthorized',
          message: 'This operation requires a user access token; an app access token was given',
        },
      ],
      [
        `broadcaster_id=${demo}`,
        await t.userToken(['channel:manage:broadcast', 'user:edit']),
        { status: 401, error: 'Unauthorized', message: 'Missing scope: clips:edit' },
      ],
    ];
    for (const [query, tok, expected] of cases) {
      const res = await post(query, tok);
      assert.equal(res.statusCode, expected.status, `${query}: ${res.body}`);
      assert.deepEqual(res.json(), expected, query);
    }
    // A clip asked for by mistake would be made by now: nothing was.
    t.clock.advance(CLIP_DELAY_MS);
    await sleep(1500);
    assert.equal(await exportOf(t.storeOptions), snapshot);
  });

  it('reads the query string only: a body of any type, even JSON that does not parse, is passed over', async () => {
    const token = await t.userToken([SCOPE]);
    for (const [type, payload] of [
      ['application/json', '{"broadcaster_id":'],
      ['application/json', JSON.stringify({ broadcaster_id: String(offline) })],
      ['text/plain', '\u0000'.repeat(10)],
      ['application/x-www-form-urlencoded', `broadcaster_id=${offline}`],
    ] as const) {
      const res = await t.inject({
        method: 'POST',
        url: `/helix/clips?broadcaster_id=${demo}`,
        headers: { ...bearer(token), 'client-id': t.seed?.demoClientId as string, 'content-type': type },
        payload,
      });
      assert.equal(res.statusCode, 202, `${type}: ${res.body}`);
    }
  });

  it('is served at /mock too; GET and POST are its methods, another is a 405', async () => {
    const res = await post(`broadcaster_id=${demo}`, await t.userToken([SCOPE]), '/mock');
    assert.equal(res.statusCode, 202, res.body);
    t.clock.advance(CLIP_DELAY_MS);
    await made(res.json().data[0].id);
    for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
      const other = await t.inject({ method, url: '/helix/clips', headers: bearer(await t.appToken()) });
      assert.equal(other.statusCode, 405, method);
      assert.equal(other.headers.allow, 'GET, HEAD, POST');
    }
  });
});
