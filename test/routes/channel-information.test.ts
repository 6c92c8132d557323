// GET /channels and PATCH /channels (Get and Modify Channel Information): the channel is a record of
// its own, kept when the stream goes offline; a live stream holds its channel's title, game,
// language and tags, whichever side is written (a stream that goes live takes them from the
// channel, a stream written with them gives them to the channel, a channel changed while live
// changes its stream). A change of the title, language, game or labels records one channel.update.
// Each refusal is production's status and message and changes nothing: the export before and after
// is the same, and no event is recorded.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { exportOf } from '../support/cli.ts';
import { assertGolden } from '../support/golden.ts';
import type { StoreKind } from '../support/stores.ts';

const SCOPE = 'channel:manage:broadcast';
const ADMIN_TOKEN = 'admin-token-0123456789-0123456789-abcdef';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };

forEachStore('GET and PATCH /helix/channels', (kind: StoreKind) => {
  let t: TestApp;
  let app: string;
  // Users of this test's own: a partner who streams, and a user with no channel record.
  const PARTNER = 997001;
  const NEWCOMER = 997002;
  const AFFILIATE = 997003;
  const GAMES = { first: '997500', second: '997501' };

  const adminCall = (method: 'POST' | 'PUT' | 'DELETE', url: string, body?: object) =>
    t.inject({ method, url, headers: admin, ...(body ? { payload: JSON.stringify(body) } : {}) });
  const patch = async (broadcaster: number | string, body: unknown, token?: string, prefix = '/helix') =>
    t.inject({
      method: 'PATCH',
      url: `${prefix}/channels?broadcaster_id=${broadcaster}`,
      headers: {
        ...bearer(token ?? (await t.userToken([SCOPE], Number(broadcaster)))),
        'client-id': t.seed?.demoClientId as string,
        'content-type': 'application/json',
      },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const channel = async (id: number, token = app) => {
    const res = await t.get(`/helix/channels?broadcaster_id=${id}`, bearer(token));
    assert.equal(res.statusCode, 200, res.body);
    return res.json().data[0];
  };
  const streamOf = async (id: number) =>
    (await t.get(`/helix/streams?user_id=${id}`, bearer(app))).json().data[0];
  const updates = async (id: number) =>
    (
      await t.store.db
        .selectFrom('events')
        .select('payload')
        .where('match_key', '=', `channel.update:${id}`)
        .orderBy('id')
        .execute()
    ).map((e) => JSON.parse(e.payload));
  const goLive = (user: number, fields: object = {}) =>
    adminCall('POST', '/admin/streams', {
      id: String(user + 1_000_000),
      user_id: String(user),
      viewer_count: 5,
      started_at: '2026-06-15T11:00:00Z',
      is_mature: false,
      ...fields,
    });

  before(async () => {
    t = await startTestApp(kind, { users: 200, config: { adminToken: ADMIN_TOKEN } });
    app = await t.appToken();
    for (const [name, id] of Object.entries(GAMES))
      assert.equal(
        (await adminCall('POST', '/admin/games', { id, name: `Channel ${name}` })).statusCode,
        201,
      );
    for (const [id, type] of [
      [PARTNER, 'partner'],
      [NEWCOMER, ''],
      [AFFILIATE, 'affiliate'],
    ] as const) {
      const res = await adminCall('POST', '/admin/users', {
        id: String(id),
        login: `channel_${id}`,
        display_name: `Channel_${id}`,
        broadcaster_type: type,
        description: '',
        created_at: '2024-01-01T00:00:00Z',
      });
      assert.equal(res.statusCode, 201, res.body);
    }
  });
  after(() => t.close());

  it('answers channels-by-ids byte for byte: a live channel, an offline one with its last values, a partner with labels, one never set', async () => {
    // The same seed gives byte-identical bodies on both stores; UPDATE_GOLDEN=1 rewrites the file
    // from the SQLite run.
    const db = t.store.db;
    const live = await db
      .selectFrom('streams')
      .select('user_id')
      .orderBy('user_id')
      .executeTakeFirstOrThrow();
    const offline = await db
      .selectFrom('channels')
      .select('broadcaster_id')
      .where('broadcaster_id', 'not in', db.selectFrom('streams').select('user_id'))
      .orderBy('broadcaster_id')
      .executeTakeFirstOrThrow();
    const labelled = await db
      .selectFrom('channels')
      .select('broadcaster_id')
      .where('labels', '!=', '[]')
      .orderBy('broadcaster_id')
      .executeTakeFirst();
    // Every seeded user of this small store has streamed: the one never set is this test's own.
    const ids = [live.user_id, offline.broadcaster_id, labelled?.broadcaster_id, NEWCOMER].filter(
      (id) => id !== undefined,
    );
    const res = await t.get(
      `/helix/channels?${ids.map((id) => `broadcaster_id=${id}`).join('&')}`,
      bearer(app),
    );
    assert.equal(res.statusCode, 200);
    assertGolden(kind, 'channels-by-ids.json', res.body);
  });

  it("shows a user who never set a channel as a new account's: no title, no game, English, nothing else", async () => {
    const res = await t.get(`/helix/channels?broadcaster_id=${NEWCOMER}`, bearer(app));
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), {
      data: [
        {
          broadcaster_id: String(NEWCOMER),
          broadcaster_login: `channel_${NEWCOMER}`,
          broadcaster_name: `Channel_${NEWCOMER}`,
          broadcaster_language: 'en',
          game_id: '',
          game_name: '',
          title: '',
          delay: 0,
          tags: [],
          content_classification_labels: [],
          is_branded_content: false,
        },
      ],
    });
  });

  it('answers up to 100 ids in the order given, each once, leaving out ids of no user', async () => {
    const res = await t.get(
      `/helix/channels?broadcaster_id=${AFFILIATE}&broadcaster_id=1&broadcaster_id=${NEWCOMER}&broadcaster_id=${AFFILIATE}`,
      bearer(app),
    );
    assert.deepEqual(
      res.json().data.map((c: { broadcaster_id: string }) => c.broadcaster_id),
      [String(AFFILIATE), String(NEWCOMER)],
    );
    const many = Array.from({ length: 101 }, (_, i) => `broadcaster_id=${i + 1}`).join('&');
    const over = await t.get(`/helix/channels?${many}`, bearer(app));
    assert.equal(over.statusCode, 400);
    assert.match(over.json().message, /broadcaster_id/);
    for (const [q, message] of [
      ['', 'Missing required parameter "broadcaster_id"'],
      ['broadcaster_id=abc', 'The parameter "broadcaster_id" was malformed: each value must be a numeric ID'],
    ]) {
      const r = await t.get(`/helix/channels${q ? `?${q}` : ''}`, bearer(app));
      assert.equal(r.statusCode, 400);
      assert.equal(r.json().message, message);
    }
  });

  it('a stream that goes live gives the channel its fields; the channel keeps them when the stream goes offline', async () => {
    const res = await goLive(PARTNER, {
      game_id: GAMES.first,
      title: 'Going live',
      tags: ['English', 'Speedrun'],
      language: 'fr',
    });
    assert.equal(res.statusCode, 201, res.body);
    const live = await channel(PARTNER);
    assert.deepEqual(
      [live.title, live.game_id, live.game_name, live.broadcaster_language, live.tags],
      ['Going live', GAMES.first, 'Channel first', 'fr', ['English', 'Speedrun']],
    );
    // The channel changed through the stream's write: a channel.update, as from PATCH /channels.
    assert.deepEqual(
      (await updates(PARTNER)).map((e) => [e.title, e.category_id, e.language]),
      [['Going live', GAMES.first, 'fr']],
    );
    assert.equal((await adminCall('DELETE', `/admin/streams/${PARTNER + 1_000_000}`)).statusCode, 204);
    assert.equal(await streamOf(PARTNER), undefined);
    assert.deepEqual(await channel(PARTNER), live, 'kept offline');
  });

  it("a stream written without title, game, language or tags takes its channel's; with no game to take, a 400 naming game_id", async () => {
    const res = await goLive(PARTNER);
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(
      (({ title, game_id, language, tags }) => ({ title, game_id, language, tags }))(res.json().data[0]),
      { title: 'Going live', game_id: GAMES.first, language: 'fr', tags: ['English', 'Speedrun'] },
      'the admin API echoes the stream as written',
    );
    const s = await streamOf(PARTNER);
    assert.deepEqual(
      [s.title, s.game_id, s.language, s.tags],
      ['Going live', GAMES.first, 'fr', ['English', 'Speedrun']],
    );
    const refused = await goLive(NEWCOMER);
    assert.equal(refused.statusCode, 400);
    assert.match(refused.json().message, /stream game_id: is required: the user's channel has no game/);
    assert.equal(await streamOf(NEWCOMER), undefined);
  });

  it("PATCH changes the fields given, keeps the others, and changes the live stream's title, game, language and tags with them", async () => {
    assert.ok(await streamOf(PARTNER), 'live since the test before');
    const before = await channel(PARTNER);
    const res = await patch(PARTNER, { title: 'Patched', game_id: GAMES.second, tags: ['Chill'] });
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(res.body, '');
    const after = await channel(PARTNER);
    assert.deepEqual(after, {
      ...before,
      title: 'Patched',
      game_id: GAMES.second,
      game_name: 'Channel second',
      tags: ['Chill'],
    });
    const s = await streamOf(PARTNER);
    assert.deepEqual(
      [s.title, s.game_id, s.game_name, s.tags, s.language],
      ['Patched', GAMES.second, 'Channel second', ['Chill'], 'fr'],
    );
    // The listing by game follows: the stream left the first game's listing for the second's.
    const byGame = async (g: string) =>
      (await t.get(`/helix/streams?game_id=${g}`, bearer(app)))
        .json()
        .data.map((x: { user_id: string }) => x.user_id);
    assert.deepEqual(await byGame(GAMES.first), []);
    assert.deepEqual(await byGame(GAMES.second), [String(PARTNER)]);
  });

  it("turns labels on and off over the channel's, shows the delay to the broadcaster's own token only, and sets branded content", async () => {
    const on = [
      { id: 'ViolentGraphic', is_enabled: true },
      { id: 'Gambling', is_enabled: true },
    ];
    assert.equal((await patch(PARTNER, { content_classification_labels: on, delay: 30 })).statusCode, 204);
    assert.deepEqual((await channel(PARTNER)).content_classification_labels, ['Gambling', 'ViolentGraphic']);
    const off = [{ id: 'Gambling', is_enabled: false }];
    assert.equal(
      (await patch(PARTNER, { content_classification_labels: off, is_branded_content: true })).statusCode,
      204,
    );
    const read = await channel(PARTNER);
    assert.deepEqual(read.content_classification_labels, ['ViolentGraphic']);
    assert.equal(read.is_branded_content, true);
    assert.equal(read.delay, 0, 'another token reads 0');
    assert.equal(
      (await channel(PARTNER, await t.userToken([], PARTNER))).delay,
      30,
      "the broadcaster's own reads it",
    );
  });

  it('records one channel.update (version 2) per change of the title, language, game or labels; none for tags, delay or the same values', async () => {
    const before = (await updates(PARTNER)).length;
    assert.equal(
      (await patch(PARTNER, { title: 'Event title', broadcaster_language: 'other' })).statusCode,
      204,
    );
    assert.equal((await patch(PARTNER, { title: 'Event title' })).statusCode, 204);
    assert.equal(
      (await patch(PARTNER, { tags: ['Other'], delay: 10, is_branded_content: false })).statusCode,
      204,
    );
    const after = await updates(PARTNER);
    assert.equal(after.length, before + 1);
    assert.deepEqual(after.at(-1), {
      broadcaster_user_id: String(PARTNER),
      broadcaster_user_login: `channel_${PARTNER}`,
      broadcaster_user_name: `Channel_${PARTNER}`,
      title: 'Event title',
      language: 'other',
      category_id: GAMES.second,
      category_name: 'Channel second',
      content_classification_labels: ['ViolentGraphic'],
    });
  });

  it('PATCH of a user with no channel record makes one; served at /mock too; other methods are 405', async () => {
    const res = await patch(AFFILIATE, { title: 'First title' }, undefined, '/mock');
    assert.equal(res.statusCode, 204, res.body);
    const c = await channel(AFFILIATE);
    assert.deepEqual([c.title, c.game_id, c.broadcaster_language], ['First title', '', 'en']);
    const exported = await t.inject({ method: 'GET', url: `/admin/channels/${AFFILIATE}`, headers: admin });
    assert.equal(exported.statusCode, 200, exported.body);
    assert.deepEqual(exported.json().data[0], {
      broadcaster_id: String(AFFILIATE),
      title: 'First title',
      game_id: '',
      broadcaster_language: 'en',
      delay: 0,
      tags: [],
      content_classification_labels: [],
      is_branded_content: false,
    });
    const put = await t.inject({
      method: 'PUT',
      url: `/helix/channels?broadcaster_id=${AFFILIATE}`,
      headers: { ...bearer(app), 'client-id': t.seed?.demoClientId as string },
    });
    assert.equal(put.statusCode, 405);
  });

  it('refuses, changing nothing and recording no event: each rule with its status and message', async () => {
    const snapshot = await exportOf(t.storeOptions);
    const events = (await updates(PARTNER)).length + (await updates(AFFILIATE)).length;
    const own = await t.userToken([SCOPE], PARTNER);
    const cases: [number | string, unknown, string | undefined, number, string][] = [
      [PARTNER, {}, own, 400, 'The request must update at least one property.'],
      [PARTNER, { unknown: 1 }, own, 400, 'The request must update at least one property.'],
      [
        PARTNER,
        [],
        own,
        400,
        'The body must be a JSON object with at least one of "game_id", "broadcaster_language", "title", "delay", "tags", "content_classification_labels", "is_branded_content" (Content-Type: application/json)',
      ],
      [PARTNER, { title: '' }, own, 400, 'The title field may not contain an empty string.'],
      [PARTNER, { title: '  ' }, own, 400, 'The title field may not contain an empty string.'],
      [
        PARTNER,
        { title: 'x'.repeat(141) },
        own,
        400,
        'The field "title" was malformed: the value must be at most 140 characters',
      ],
      [PARTNER, { title: 5 }, own, 400, 'The field "title" was malformed: the value must be a string'],
      [PARTNER, { game_id: '123456789' }, own, 400, 'The ID in game_id is not valid.'],
      [PARTNER, { game_id: 'abc' }, own, 400, 'The ID in game_id is not valid.'],
      [
        PARTNER,
        { game_id: '' },
        own,
        400,
        'The field "game_id" may not remove the game while the channel is live: a live stream in helixd has a game',
      ],
      [
        PARTNER,
        { broadcaster_language: 'EN' },
        own,
        400,
        'The field "broadcaster_language" was malformed: the value must be an ISO 639-1 two-letter code in lower case, or "other"',
      ],
      [
        PARTNER,
        { delay: 901 },
        own,
        400,
        'The field "delay" was malformed: the value must be a whole number of seconds from 0 to 900',
      ],
      [
        AFFILIATE,
        { delay: 5 },
        undefined,
        400,
        'To update the delay field, the broadcaster must have partner status.',
      ],
      [
        PARTNER,
        { tags: Array.from({ length: 11 }, (_, i) => `t${i}`) },
        own,
        400,
        'The field "tags" was malformed: the list may hold at most 10 tags',
      ],
      [
        PARTNER,
        { tags: ['two words'] },
        own,
        400,
        'The field "tags" was malformed: each tag must be 1 to 25 letters or digits, with no spaces or special characters: "two words" is not',
      ],
      [
        PARTNER,
        { tags: ['x'.repeat(26)] },
        own,
        400,
        `The field "tags" was malformed: each tag must be 1 to 25 letters or digits, with no spaces or special characters: "${'x'.repeat(26)}" is not`,
      ],
      [
        PARTNER,
        { tags: ['Same', 'same'] },
        own,
        400,
        'The field "tags" was malformed: the tag "same" is given twice',
      ],
      [
        PARTNER,
        { content_classification_labels: [{ id: 'Nope', is_enabled: true }] },
        own,
        400,
        "The list in the content_classification_labels field contains a value that's not valid.",
      ],
      [
        PARTNER,
        { content_classification_labels: [{ id: 'Gambling' }] },
        own,
        400,
        "The list in the content_classification_labels field contains a value that's not valid.",
      ],
      [
        PARTNER,
        { content_classification_labels: [{ id: 'MatureGame', is_enabled: true }] },
        own,
        403,
        'The content classification label "MatureGame" is set from the game: a broadcaster may not set it.',
      ],
      [
        PARTNER,
        { is_branded_content: 'yes' },
        own,
        400,
        'The field "is_branded_content" was malformed: the value must be true or false',
      ],
      [
        AFFILIATE,
        { title: 'Not mine' },
        own,
        401,
        "The ID in broadcaster_id must match the user ID found in the request's OAuth token.",
      ],
      ['', { title: 'x' }, own, 400, 'Missing required parameter "broadcaster_id"'],
      [PARTNER, { title: 'x' }, await t.userToken(['user:edit'], PARTNER), 401, `Missing scope: ${SCOPE}`],
      [
        PARTNER,
        { title: 'x' },
        app,
        401,
        'This operation requires a user access token; an app access token was given',
      ],
      [PARTNER, '{"title":', own, 400, ''],
    ];
    for (const [broadcaster, body, token, status, message] of cases) {
      const res = await patch(broadcaster, body, token);
      assert.equal(res.statusCode, status, `${JSON.stringify(body)}: ${res.body}`);
      if (message) assert.equal(res.json().message, message, JSON.stringify(body));
    }
    const xml = await t.inject({
      method: 'PATCH',
      url: `/helix/channels?broadcaster_id=${PARTNER}`,
      headers: {
        ...bearer(own),
        'client-id': t.seed?.demoClientId as string,
        'content-type': 'application/xml',
      },
      payload: '<title>x</title>',
    });
    assert.equal(xml.statusCode, 415);
    assert.equal(await exportOf(t.storeOptions), snapshot);
    assert.equal(
      (await updates(PARTNER)).length + (await updates(AFFILIATE)).length,
      events,
      'no event recorded',
    );
  });

  it('the admin API: a channel written while live changes the stream; a live channel cannot be deleted; a user goes with its channel', async () => {
    const res = await adminCall('PUT', `/admin/channels/${PARTNER}`, {
      broadcaster_id: String(PARTNER),
      title: 'From the admin API',
      game_id: GAMES.first,
      broadcaster_language: 'en',
    });
    assert.ok([200, 201].includes(res.statusCode), res.body);
    const s = await streamOf(PARTNER);
    assert.deepEqual([s.title, s.game_id, s.tags, s.language], ['From the admin API', GAMES.first, [], 'en']);
    // A record's own rules: each label once; while live, a game (the stream holds it).
    const record = { broadcaster_id: String(PARTNER), title: 'x', broadcaster_language: 'en' };
    for (const [body, message] of [
      [
        { ...record, game_id: GAMES.first, content_classification_labels: ['Gambling', 'Gambling'] },
        /^body: channel content_classification_labels: must not hold an item twice$/,
      ],
      [{ ...record, game_id: '' }, /^body: channel game_id: must name a game while the broadcaster is live/],
    ] as const) {
      const bad = await adminCall('PUT', `/admin/channels/${PARTNER}`, body);
      assert.equal(bad.statusCode, 400, bad.body);
      assert.match(bad.json().message, message);
    }
    assert.equal((await streamOf(PARTNER)).title, 'From the admin API', 'unchanged');
    const refused = await adminCall('DELETE', `/admin/channels/${PARTNER}`);
    assert.equal(refused.statusCode, 409);
    assert.match(refused.json().message, /is live/);
    // A user with a channel and nothing else: deleting the user deletes the channel.
    const gone = await adminCall('DELETE', `/admin/users/${AFFILIATE}`);
    assert.equal(gone.statusCode, 204, gone.body);
    assert.equal(
      (
        await adminCall('POST', '/admin/users', {
          id: String(AFFILIATE),
          login: `channel_${AFFILIATE}`,
          display_name: `Channel_${AFFILIATE}`,
          broadcaster_type: 'affiliate',
          description: '',
          created_at: '2024-01-01T00:00:00Z',
        })
      ).statusCode,
      201,
    );
    assert.equal((await channel(AFFILIATE)).title, '', 'a new user, a new channel');
  });
});
