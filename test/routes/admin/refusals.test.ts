// Bad input changes nothing: every refusal of the admin API names the record, the field and the
// rule, with the status the rule has (400 shape and rules, 404 unknown key or reference, 409 taken
// key or a record still named), and every /admin listing is the same after it as before.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { RECORD_KINDS } from '../../../src/records/index.ts';
import { ADMIN_TOKEN, forEachStore, startTestApp, type TestApp } from '../../support/apps.ts';
import type { StoreKind } from '../../support/stores.ts';
import { world } from './records.test.ts';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

const clip = (over: Record<string, unknown> = {}) => ({
  ...(world().find((r) => r.kind === 'clip')?.data as Record<string, unknown>),
  id: 'AnotherClip',
  ...over,
});
const user = (over: Record<string, unknown> = {}) => ({
  id: '900100',
  login: 'newcomer',
  display_name: 'Newcomer',
  broadcaster_type: '',
  description: '',
  created_at: '2020-01-01T00:00:00Z',
  ...over,
});

const NOT_A_DAY = (kind: string) => new RegExp(`^path: ${kind} date: must be a day written YYYY-MM-DD$`);

/** [method, url, body (undefined: none; a string: sent as is), status, message pattern] */
type Case = [string, string, unknown, number, RegExp];

const CASES: Case[] = [
  // unknown references: 404
  [
    'POST',
    '/admin/clips',
    clip({ broadcaster_id: '123456' }),
    404,
    /^body: clip broadcaster_id: names no user \(123456\)/,
  ],
  ['POST', '/admin/clips', clip({ video_id: '5' }), 404, /^body: clip video_id: names no video \(5\)/],
  [
    'POST',
    '/admin/game_days',
    { ...(world().at(-2)?.data as object), game_id: '1' },
    404,
    /^body: game_day game_id: names no game/,
  ],
  // duplicate keys and taken unique values: 409
  [
    'POST',
    '/admin/users',
    user({ id: '900001' }),
    409,
    /^body: user id: a user with this key \(900001\) already exists$/,
  ],
  [
    'POST',
    '/admin/users',
    user({ login: 'ada_streams' }),
    409,
    /^body: user login: ada_streams is taken by user 900001$/,
  ],
  ['POST', '/admin/users', [user(), user()], 409, /^body\[1\]: user id: repeats the key of body\[0\]/],
  [
    'POST',
    '/admin/streams',
    { ...(world().find((r) => r.kind === 'stream')?.data as object), id: '1' },
    409,
    /^body: stream user_id: 900001 is taken by stream 77000001$/,
  ],
  [
    'POST',
    '/admin/follows',
    { broadcaster_id: '900001', user_id: '900002', followed_at: '2026-01-01T00:00:00Z' },
    409,
    /^body: follow broadcaster_id\+user_id: a follow with this key \(900001, 900002\) already exists$/,
  ],
  // wrong types, unknown and derived fields: 400
  [
    'POST',
    '/admin/clips',
    clip({ view_count: '3' }),
    400,
    /^body: clip view_count: must be of type integer$/,
  ],
  [
    'POST',
    '/admin/clips',
    clip({ is_featured: 'yes' }),
    400,
    /^body: clip is_featured: must be of type boolean$/,
  ],
  [
    'POST',
    '/admin/clips',
    clip({ broadcaster_name: 'Ada' }),
    400,
    /^body: clip broadcaster_name: is derived by the server/,
  ],
  ['POST', '/admin/subscriptions', { total: 3 }, 400, /^body: subscription total: is derived by the server/],
  [
    'POST',
    '/admin/users',
    user({ favourite: 'x' }),
    400,
    /^body: user favourite: is not a field of a user record$/,
  ],
  ['POST', '/admin/users', user({ login: undefined }), 400, /^body: user login: is required$/],
  [
    'POST',
    '/admin/videos',
    {
      ...(world().find((r) => r.kind === 'video')?.data as object),
      id: '1',
      muted_segments: [{ duration: 1, offset: 2, x: 3 }],
    },
    400,
    /^body: video muted_segments\[0\]\.x: is not a field of this record$/,
  ],
  ['POST', '/admin/users', '[1, 2', 400, /JSON/],
  ['POST', '/admin/users', 'null', 400, /^body: user data: must be a JSON object$/],
  [
    'POST',
    '/admin/batch',
    [{ kind: 'planet', data: {} }],
    400,
    /^body\[0\]: record kind: must be one of user, client/,
  ],
  // a kind is a kind's name as a string: never coerced (String() of ["user"] is "user", and of an
  // object whose toString is not a function a TypeError)
  [
    'POST',
    '/admin/batch',
    [{ kind: { toString: 1 }, data: {} }],
    400,
    /^body\[0\]: record kind: must be one of user, client, .*, as a string: \{"toString":1\} is not$/,
  ],
  [
    'POST',
    '/admin/batch',
    [{ kind: ['user'], data: user() }],
    400,
    /^body\[0\]: record kind: must be one of .*: \["user"\] is not$/,
  ],
  [
    'POST',
    '/admin/batch',
    [{ kind: [['user']], data: user() }],
    400,
    /^body\[0\]: record kind: must be one of .*: \[\["user"\]\] is not$/,
  ],
  ['POST', '/admin/batch', [{ kind: 7, data: user() }], 400, /^body\[0\]: record kind: .*: 7 is not$/],
  ['POST', '/admin/batch', [{ data: user() }], 400, /^body\[0\]: record kind: .*: undefined is not$/],
  [
    'POST',
    '/admin/users',
    user({ broadcaster_type: 'staff' }),
    400,
    /^body: user broadcaster_type: must be one of "", "affiliate", "partner"$/,
  ],
  // text no store can hold (a NUL, a lone surrogate) anywhere in a record, in a key of the path,
  // and text longer than the store indexes: 400 naming the field
  [
    'POST',
    '/admin/users',
    user({ display_name: 'Ne\u0000wcomer' }),
    400,
    /^body: user display_name: must not contain a NUL character \(U\+0000\)$/,
  ],
  [
    'POST',
    '/admin/users',
    user({ description: 'half a pair: \ud83d' }),
    400,
    /^body: user description: must be well-formed Unicode/,
  ],
  [
    'POST',
    '/admin/streams',
    { ...(world().find((r) => r.kind === 'stream')?.data as object), id: '1', tags: ['ok', 'n\u0000'] },
    400,
    // A NUL in a tag is refused by the tag's own rule first (letters and digits only).
    /^body: stream tags\[1\]: must be 1 to 25 letters or digits/,
  ],
  [
    'POST',
    '/admin/tags',
    {
      ...(world().find((r) => r.kind === 'tag')?.data as object),
      tag_id: 'aaaaaaaa-bbbb-4ccc-8ddd-000000000000',
      localization_names: { 'en-us\u0000': 'x' },
    },
    400,
    /^body: tag localization_names: a key must not contain a NUL character/,
  ],
  [
    'POST',
    '/admin/games',
    { id: '990002', name: 'é'.repeat(257) },
    400,
    /^body: game name: must be at most 256 characters$/,
  ],
  [
    'POST',
    '/admin/streams',
    { ...(world().find((r) => r.kind === 'stream')?.data as object), id: '1', language: 'x'.repeat(257) },
    400,
    /^body: stream language: must be at most 256 characters$/,
  ],
  // a clip's title too: the /clips listing indexes hold it (migration 011); counted in characters
  [
    'POST',
    '/admin/clips',
    clip({ title: '\u{1f3ae}'.repeat(257) }),
    400,
    /^body: clip title: must be at most 256 characters$/,
  ],
  [
    'PATCH',
    '/admin/clips/AdminClipOne-abc',
    { title: 'x'.repeat(257) },
    400,
    /^body: clip title: must be at most 256 characters$/,
  ],
  // the text of the listings that are covering indexes on PostgreSQL too (migration 014): the
  // platform's limits for a channel's title and tags and a marker's description, 256 for a plan name
  [
    'POST',
    '/admin/streams',
    {
      ...(world().find((r) => r.kind === 'stream')?.data as object),
      id: '1',
      title: '\u{1f3ae}'.repeat(141),
    },
    400,
    /^body: stream title: must be at most 140 characters$/,
  ],
  [
    'POST',
    '/admin/streams',
    {
      ...(world().find((r) => r.kind === 'stream')?.data as object),
      id: '1',
      tags: Array.from({ length: 11 }, (_, i) => `t${i}`),
    },
    400,
    /^body: stream tags: must hold at most 10 items$/,
  ],
  [
    'POST',
    '/admin/streams',
    { ...(world().find((r) => r.kind === 'stream')?.data as object), id: '1', tags: ['ok', 'é'.repeat(26)] },
    400,
    /^body: stream tags\[1\]: must be 1 to 25 letters or digits, no spaces or other signs$/,
  ],
  [
    'POST',
    '/admin/markers',
    {
      ...(world().find((r) => r.kind === 'marker')?.data as object),
      id: 'm-long',
      description: 'x'.repeat(141),
    },
    400,
    /^body: marker description: must be at most 140 characters$/,
  ],
  [
    'POST',
    '/admin/subscriptions',
    { ...(world().find((r) => r.kind === 'subscription')?.data as object), plan_name: 'x'.repeat(257) },
    400,
    /^body: subscription plan_name: must be at most 256 characters$/,
  ],
  ['GET', '/admin/clips/Ada%00Clip', undefined, 400, /^path: clip id: must not contain a NUL character/],
  ['DELETE', '/admin/markers/m%00', undefined, 400, /^path: marker id: must not contain a NUL character/],
  [
    'GET',
    '/admin/users?after=a%00b',
    undefined,
    400,
    /^The parameter "after" was malformed: the value must not contain a NUL character/,
  ],
  // dates outside what the operations answer: 400
  [
    'POST',
    '/admin/users',
    user({ created_at: '1969-12-31T23:59:59Z' }),
    400,
    /^body: user created_at: must be from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z$/,
  ],
  [
    'POST',
    '/admin/users',
    user({ created_at: '2026-02-30T00:00:00Z' }),
    400,
    /^body: user created_at: must be an RFC 3339 date-time/,
  ],
  [
    'POST',
    '/admin/users',
    user({ created_at: '2026-01-01T00:00:00.5Z' }),
    400,
    /^body: user created_at: must be a whole second/,
  ],
  [
    'POST',
    '/admin/game_days',
    { ...(world().at(-2)?.data as object), date: '2017-12-31' },
    400,
    /^body: game_day date: must not be before 2018-01-31/,
  ],
  // ids that are not digit strings where the wire has them: 400
  ['POST', '/admin/users', user({ id: 'abc' }), 400, /^body: user id: must be a string of digits/],
  ['POST', '/admin/users', user({ id: '0123' }), 400, /^body: user id: must be a string of digits/],
  [
    'POST',
    '/admin/users',
    user({ id: '99999999999999999' }),
    400,
    /^body: user id: must be a string of digits/,
  ],
  ['POST', '/admin/users', user({ id: 900100 }), 400, /^body: user id: must be of type string$/],
  ['GET', '/admin/users/abc', undefined, 400, /^path: user id: must be a numeric id$/],
  // a key in the path that no record can have: 400 naming the path's field and the rule, as for a
  // body; a well-formed key that no record has: 404
  ['GET', '/admin/game_days/990001/2026-13-45', undefined, 400, NOT_A_DAY('game_day')],
  ['DELETE', '/admin/game_days/990001/yesterday', undefined, 400, NOT_A_DAY('game_day')],
  [
    'PUT',
    '/admin/game_days/990001/2026-02-30',
    { ...(world().at(-2)?.data as object), date: undefined },
    400,
    NOT_A_DAY('game_day'),
  ],
  ['PATCH', '/admin/extension_days/adminext0001/2026-6-1', { views: 5 }, 400, NOT_A_DAY('extension_day')],
  [
    'GET',
    '/admin/extension_days/adminext0001/2017-12-31',
    undefined,
    400,
    /^path: extension_day date: must not be before 2018-01-31/,
  ],
  [
    'GET',
    '/admin/extension_days/admin.ext/2026-06-01',
    undefined,
    400,
    /^path: extension_day extension_client_id: must be 1 to 100 letters, digits, "-" or "_"$/,
  ],
  ['GET', '/admin/clips/no.such.clip', undefined, 400, /^path: clip id: must be 1 to 100 letters/],
  ['DELETE', '/admin/tags/NOT-A-UUID', undefined, 400, /^path: tag tag_id: must be a UUID in lower case$/],
  [
    'GET',
    '/admin/game_days/990001/2026-01-01',
    undefined,
    404,
    /^path: game_day game_id\+date: no game_day has this key$/,
  ],
  [
    'GET',
    '/admin/extension_days/adminext0002/2026-06-01',
    undefined,
    404,
    /^path: extension_day .*: no extension_day has this key$/,
  ],
  // the rules of a kind: 400
  [
    'POST',
    '/admin/subscriptions',
    {
      broadcaster_id: '900001',
      user_id: '900001',
      gifter_id: '',
      is_gift: true,
      plan_name: 'x',
      tier: '1000',
      created_at: '2026-01-01T00:00:00Z',
    },
    400,
    /^body: subscription gifter_id: must name the giver/,
  ],
  [
    'POST',
    '/admin/game_days',
    { ...(world().at(-2)?.data as object), date: '2026-06-02', hours_watched: 0.01 },
    400,
    /^body: game_day hours_watched: must be a whole number of minutes/,
  ],
  [
    'POST',
    '/admin/game_days',
    {
      ...(world().at(-2)?.data as object),
      date: '2026-06-02',
      unique_viewers: 2,
      hours_broadcast: 1,
      hours_watched: 2.5,
    },
    400,
    /^body: game_day hours_watched: must not exceed unique_viewers x hours_broadcast$/,
  ],
  [
    'POST',
    '/admin/clips',
    clip({ duration: 1.25 }),
    400,
    /^body: clip duration: must be in seconds to a tenth of a second$/,
  ],
  [
    'POST',
    '/admin/videos',
    { ...(world().find((r) => r.kind === 'video')?.data as object), id: '1', duration: '61s' },
    400,
    /^body: video duration: must be a length written as the wire writes it/,
  ],
  [
    'POST',
    '/admin/clients',
    {
      id: 'c1',
      name: 'x',
      redirect_uris: ['not a url'],
      created_at: '2020-01-01T00:00:00Z',
      secret: 'long enough secret',
    },
    400,
    /^body: client redirect_uris\[0\]: must be an absolute URL$/,
  ],
  [
    'POST',
    '/admin/clients',
    { id: 'c1', name: 'x', redirect_uris: [], created_at: '2020-01-01T00:00:00Z' },
    400,
    /^body: client secret: give exactly one of/,
  ],
  // replace, patch and delete
  [
    'PUT',
    '/admin/users/900555',
    user({ id: undefined }),
    404,
    /^body: user id: no user has this key \(900555\)$/,
  ],
  [
    'PUT',
    '/admin/users/900001',
    user({ id: '900002' }),
    400,
    /^body: user id: must be the id of the path \(900001\), or left out$/,
  ],
  [
    'PATCH',
    '/admin/streams/77000001',
    { viewer_count: -1 },
    400,
    /^body: stream viewer_count: must be >= 0$/,
  ],
  ['PATCH', '/admin/users/900555', { description: 'x' }, 404, /^path: user id: no user has this key$/],
  ['DELETE', '/admin/users/900001', undefined, 409, /^path: user id: is named by /],
  [
    'DELETE',
    '/admin/games/990001',
    undefined,
    409,
    /^path: game id: is named by (channels|streams) \(game_id\)/,
  ],
  ['DELETE', '/admin/clips/NoSuchClip', undefined, 404, /^path: clip id: no clip has this key/],
  ['GET', '/admin/users?after=abc.def', undefined, 400, /^Invalid cursor\.$/],
  ['GET', '/admin/users?first=0', undefined, 400, /"first"/],
  // a batch with one bad record writes nothing
  [
    'POST',
    '/admin/batch',
    [
      { kind: 'user', data: user() },
      {
        kind: 'follow',
        data: { broadcaster_id: '900001', user_id: '900100', followed_at: '2026-01-01T00:00:00Z' },
      },
      { kind: 'clip', data: clip({ creator_id: '424242' }) },
    ],
    404,
    /^body\[2\]: clip creator_id: names no user \(424242\)/,
  ],
  [
    'POST',
    '/admin/clips',
    [clip({ id: 'GoodOne' }), clip({ id: 'BadOne', created_at: 'yesterday' })],
    400,
    /^body\[1\]: clip created_at: must be an RFC 3339 date-time/,
  ],
];

forEachStore('admin API: refusals change nothing', (kind: StoreKind) => {
  let t: TestApp;
  /** Every record of every kind, as the admin listings give them, page by page. */
  const snapshot = async (): Promise<string> => {
    const out: string[] = [];
    for (const k of RECORD_KINDS) {
      let cursor: string | undefined;
      do {
        const res = await t.inject({
          method: 'GET',
          url: `/admin/${k.plural}?first=100${cursor ? `&after=${cursor}` : ''}`,
          headers: admin,
        });
        assert.equal(res.statusCode, 200, res.body);
        out.push(res.body);
        cursor = res.json().pagination.cursor;
      } while (cursor);
    }
    return out.join('\n');
  };

  before(async () => {
    t = await startTestApp(kind, { empty: true, config: { adminToken: ADMIN_TOKEN } });
    const res = await t.inject({
      method: 'POST',
      url: '/admin/batch',
      headers: { ...admin, 'content-type': 'application/json' },
      payload: JSON.stringify(world().map(({ kind, data }) => ({ kind, data }))),
    });
    assert.equal(res.statusCode, 201, res.body);
  });
  after(() => t.close());

  it('refuses each bad request with its status and a message naming record, field and rule; the store is unchanged', async () => {
    const before = await snapshot();
    const totals = await t.store.db.selectFrom('subscription_totals').selectAll().execute();
    const games = await t.store.db
      .selectFrom('games')
      .select(['id', 'viewer_count', 'stream_count'])
      .execute();
    for (const [method, url, body, status, message] of CASES) {
      const res = await t.inject({
        method: method as 'GET',
        url,
        headers: body === undefined ? admin : { ...admin, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { payload: typeof body === 'string' ? body : JSON.stringify(body) }),
      });
      const label = `${method} ${url} ${typeof body === 'string' ? body : JSON.stringify(body)}`;
      assert.equal(res.statusCode, status, `${label}: ${res.body}`);
      assert.equal(res.json().status, status, label);
      assert.match(res.json().message, message, label);
    }
    assert.equal(await snapshot(), before);
    assert.deepEqual(await t.store.db.selectFrom('subscription_totals').selectAll().execute(), totals);
    assert.deepEqual(
      await t.store.db.selectFrom('games').select(['id', 'viewer_count', 'stream_count']).execute(),
      games,
    );
  });

  // Bytes that are not UTF-8 would be read as U+FFFD and stored so, without a word.
  it('refuses a body that is not UTF-8 (FF FE, an overlong C0 80, a surrogate ED A0 80) naming the body and the byte; the store is unchanged', async () => {
    const before = await snapshot();
    const MARK = '<<here>>';
    const bodies: [string, string, unknown][] = [
      ['POST', '/admin/users', user({ description: MARK })],
      ['POST', '/admin/batch', [{ kind: 'user', data: user({ description: MARK }) }]],
      ['PUT', '/admin/users/900001', user({ id: undefined, login: 'ada_streams', description: MARK })],
      ['PATCH', '/admin/users/900001', { description: MARK }],
    ];
    for (const bytes of [
      [0xff, 0xfe],
      [0xc0, 0x80],
      [0xed, 0xa0, 0x80],
    ])
      for (const [method, url, body] of bodies) {
        const [head, tail] = JSON.stringify(body).split(MARK) as [string, string];
        const res = await t.inject({
          method: method as 'POST',
          url,
          headers: { ...admin, 'content-type': 'application/json' },
          payload: Buffer.concat([Buffer.from(head), Buffer.from(bytes), Buffer.from(tail)]),
        });
        const label = `${method} ${url} ${bytes.map((b) => b.toString(16)).join(' ')}`;
        assert.equal(res.statusCode, 400, `${label}: ${res.body}`);
        assert.equal(
          res.json().message,
          `body: is not valid UTF-8 (byte offset ${Buffer.byteLength(head)})`,
          label,
        );
      }
    assert.equal(await snapshot(), before);
  });

  it('a body that is not JSON (text/plain, XML, a form) is a 415, whatever it holds; the store is unchanged', async () => {
    const before = await snapshot();
    const record = JSON.stringify({ kind: 'user', data: { id: '900777', login: 'plain' } });
    for (const type of [
      'text/plain',
      'text/plain; charset=utf-8',
      'application/xml',
      'application/x-www-form-urlencoded',
    ])
      for (const [method, url] of [
        ['POST', '/admin/batch'],
        ['POST', '/admin/users'],
        ['PATCH', '/admin/users/900001'],
      ]) {
        const res = await t.inject({
          method: method as 'POST',
          url,
          headers: { ...admin, 'content-type': type },
          payload: record,
        });
        assert.equal(res.statusCode, 415, `${type} ${method} ${url}: ${res.body}`);
        assert.deepEqual(res.json(), {
          error: 'Unsupported Media Type',
          status: 415,
          message: 'Unsupported Media Type',
        });
      }
    assert.equal(await snapshot(), before);
  });

  it('an empty body with Content-Type: application/json is no body: each route answers as without one', async () => {
    const before = await snapshot();
    for (const [method, url] of [
      ['POST', '/admin/batch'],
      ['POST', '/admin/users'],
      ['PUT', '/admin/users/900001'],
      ['PATCH', '/admin/users/900001'],
      ['DELETE', '/admin/clips/NoSuchClip'],
    ]) {
      const none = await t.inject({ method: method as 'POST', url, headers: admin });
      const empty = await t.inject({
        method: method as 'POST',
        url,
        // As fetch sends a call without data: the type, and a length of 0.
        headers: { ...admin, 'content-type': 'application/json', 'content-length': '0' },
      });
      assert.ok(none.statusCode >= 400, `${method} ${url}: ${none.body}`);
      assert.equal(empty.statusCode, none.statusCode, `${method} ${url}: ${empty.body}`);
      assert.equal(empty.body, none.body, `${method} ${url}`);
    }
    assert.equal(await snapshot(), before);
  });
});
