// /openapi.json: generated from the routes' declarations, it describes every operation, its
// parameters with their limits, its answers and error statuses, and who may call it. (That every
// answer of the suite matches it is checked on every request: test/support/openapi-check.ts.)
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { openApiChecker } from '../support/openapi-check.ts';

/** The operations helixd serves (the decommissioned two answer 410 unless --legacy). */
const OPERATIONS = [
  '/analytics/extensions',
  '/analytics/games',
  '/channels',
  '/channels/followed',
  '/channels/followers',
  '/clips',
  '/eventsub/subscriptions',
  '/games',
  '/games/top',
  '/moderation/moderators',
  '/search/categories',
  '/search/channels',
  '/streams',
  '/streams/followed',
  '/streams/markers',
  '/subscriptions',
  '/subscriptions/user',
  '/tags/streams',
  '/users',
  '/users/follows',
  '/videos',
];

/** The writes among them (every other method of their paths is a 405: test/http/errors.test.ts). */
const WRITES = [
  'DELETE /eventsub/subscriptions',
  'DELETE /videos',
  'PATCH /channels',
  'POST /clips',
  'POST /eventsub/subscriptions',
  'POST /streams/markers',
  'PUT /users',
];

interface Param {
  name: string;
  in: string;
  required?: boolean;
  schema: Record<string, unknown>;
}
interface Operation {
  summary?: string;
  deprecated?: boolean;
  parameters?: Param[];
  security?: Record<string, string[]>[];
  'x-token-kind'?: string;
  requestBody?: { content: Record<string, { schema: { properties: Record<string, { enum?: string[] }> } }> };
  responses: Record<string, { content?: Record<string, { schema: { required?: string[] } }> }>;
}
type Doc = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, Record<string, string>> };
};

forEachStore('GET /openapi.json', (kind) => {
  let t: TestApp;
  let doc: Doc;
  before(async () => {
    t = await startTestApp(kind, { users: 20 });
    const res = await t.get('/openapi.json');
    assert.equal(res.statusCode, 200);
    doc = JSON.parse(res.body) as Doc;
  });
  after(() => t.close());
  const op = (path: string, method = 'get') => {
    const o = doc.paths[path]?.[method];
    assert.ok(o, `${method.toUpperCase()} ${path} is described`);
    return o;
  };
  const param = (path: string, name: string, method = 'get') => {
    const p = op(path, method).parameters?.find((x) => x.name === name && x.in === 'query');
    assert.ok(p, `${path} has the parameter ${name}`);
    return p;
  };

  test('is OpenAPI 3.1 and describes every operation under /helix, and none under /mock', () => {
    assert.equal(doc.openapi, '3.1.0');
    const helix = Object.keys(doc.paths)
      .filter((p) => p.startsWith('/helix/'))
      .map((p) => p.slice('/helix'.length))
      .sort();
    assert.deepEqual(helix, OPERATIONS);
    assert.deepEqual(
      Object.keys(doc.paths).filter((p) => p.startsWith('/mock/')),
      [],
    );
    for (const p of OPERATIONS) assert.ok(op(`/helix${p}`).summary, `${p} has a summary`);
    // The decommissioned operations answer 410 to every method, and are described so.
    const writes = Object.entries(doc.paths)
      .filter(([p, ops]) => p.startsWith('/helix/') && !ops.get?.deprecated)
      .flatMap(([p, ops]) =>
        Object.keys(ops)
          .filter((m) => m !== 'get')
          .map((m) => `${m.toUpperCase()} ${p.slice('/helix'.length)}`),
      )
      .sort();
    assert.deepEqual(writes, WRITES);
    for (const w of WRITES) {
      const [method, path] = w.split(' ') as [string, string];
      assert.ok(op(`/helix${path}`, method.toLowerCase()).summary, `${w} has a summary`);
    }
  });

  test('the writes: the user token and the scope production asks, their errors', () => {
    const write = (m: string, p: string) => op(`/helix${p}`, m);
    for (const [m, p, scope] of [
      ['put', '/users', 'user:edit'],
      ['post', '/streams/markers', 'channel:manage:broadcast'],
      ['delete', '/videos', 'channel:manage:videos'],
      ['post', '/clips', 'clips:edit'],
    ] as const) {
      assert.deepEqual(write(m, p).security, [{ bearer: [scope], clientId: [] }], `${m} ${p}`);
      assert.equal(write(m, p)['x-token-kind'], 'user', `${m} ${p}`);
      // POST /clips answers 202 Accepted: the clip is made later, as production's.
      for (const s of [p === '/clips' ? '202' : '200', '400', '401', '429', '503'])
        assert.ok(write(m, p).responses[s], `${m} ${p} ${s}`);
    }
    assert.equal(write('post', '/clips').responses['200'], undefined, 'no 200: 202');
    assert.ok(write('post', '/clips').responses['404'], 'an offline channel');
    assert.equal(write('post', '/clips').requestBody, undefined, 'no body: the query string');
    assert.deepEqual(
      write('post', '/clips').parameters?.map((p) => [p.name, p.schema.type]),
      [
        ['broadcaster_id', 'string'],
        ['has_delay', 'boolean'],
      ],
    );
    assert.equal(param('/helix/users', 'description', 'put').schema.maxLength, 300);
    assert.equal(param('/helix/videos', 'id', 'delete').schema.maxItems, 5);
    assert.ok(write('post', '/streams/markers').responses['403'], 'neither broadcaster nor editor');
    assert.ok(write('post', '/streams/markers').responses['404'], 'not live, or no archive video');
    assert.ok(write('post', '/streams/markers').requestBody, 'a JSON body');
  });

  test('the decommissioned operations are deprecated and answer 410 with the Helix error body', () => {
    for (const p of ['/helix/users/follows', '/helix/tags/streams']) {
      assert.equal(op(p).deprecated, true);
      assert.deepEqual(op(p).responses['410']?.content?.['application/json']?.schema.required, [
        'error',
        'status',
        'message',
      ]);
    }
  });

  test('parameters carry their limits, defaults and enums; none is required by the schema', () => {
    assert.deepEqual(param('/helix/clips', 'first').schema, {
      type: 'integer',
      minimum: 1,
      maximum: 100,
      default: 20,
    });
    assert.equal(param('/helix/clips', 'id').schema.maxItems, 100);
    assert.equal(param('/helix/moderation/moderators', 'user_id').schema.maxItems, 100);
    assert.equal(param('/helix/clips', 'is_featured').schema.type, 'boolean');
    assert.deepEqual(param('/helix/streams', 'type').schema.enum, ['all', 'live']);
    assert.deepEqual(param('/helix/videos', 'sort').schema.enum, ['time', 'trending', 'views']);
    assert.equal(param('/helix/videos', 'first').schema.default, undefined, 'no default with id lookups');
    assert.deepEqual(param('/helix/analytics/games', 'type').schema.default, 'overview_v2');
    assert.equal(param('/helix/streams/followed', 'first').schema.default, 100, "production's page of 100");
    assert.equal(param('/helix/search/channels', 'live_only').schema.type, 'boolean');
    assert.equal(param('/helix/search/channels', 'live_only').schema.default, false);
    assert.equal(param('/helix/search/categories', 'query').schema.maxLength, 256);
    for (const p of OPERATIONS.filter((x) => !x.endsWith('/follows') && x !== '/tags/streams'))
      for (const x of op(`/helix${p}`).parameters ?? []) assert.notEqual(x.required, true, `${p} ${x.name}`);
  });

  test('every operation answers 400, 401, 429 and 503 with the Helix error body; 403 and 404 where it has them', () => {
    for (const p of OPERATIONS.filter((x) => x !== '/users/follows' && x !== '/tags/streams')) {
      const r = op(`/helix${p}`).responses;
      for (const s of ['200', '400', '401', '429', '503']) assert.ok(r[s], `${p} ${s}`);
      assert.deepEqual(r['401']?.content?.['application/json']?.schema.required, [
        'error',
        'status',
        'message',
      ]);
    }
    assert.ok(op('/helix/streams/markers').responses['403']);
    assert.ok(op('/helix/videos').responses['404']);
    assert.ok(op('/helix/subscriptions/user').responses['404'], 'Check User Subscription: not a subscriber');
    assert.equal(op('/helix/streams').responses['404'], undefined);
  });

  test('security: the bearer token with Client-Id, the scopes an operation accepts (any one), and the token kind', () => {
    assert.deepEqual(doc.components.securitySchemes.bearer, {
      type: 'http',
      scheme: 'bearer',
      description: doc.components.securitySchemes.bearer?.description,
    });
    assert.equal(doc.components.securitySchemes.clientId?.in, 'header');
    assert.equal(doc.components.securitySchemes.clientId?.name, 'Client-Id');
    assert.deepEqual(op('/helix/clips').security, [{ bearer: [], clientId: [] }]);
    assert.equal(op('/helix/clips')['x-token-kind'], 'app or user');
    for (const p of ['/helix/search/categories', '/helix/search/channels']) {
      assert.deepEqual(op(p).security, [{ bearer: [], clientId: [] }], p);
      assert.equal(op(p)['x-token-kind'], 'app or user', p);
    }
    assert.deepEqual(op('/helix/subscriptions').security, [
      { bearer: ['channel:read:subscriptions'], clientId: [] },
    ]);
    assert.equal(op('/helix/subscriptions')['x-token-kind'], 'user');
    assert.deepEqual(op('/helix/streams/followed').security, [
      { bearer: ['user:read:follows'], clientId: [] },
    ]);
    assert.equal(op('/helix/streams/followed')['x-token-kind'], 'user');
    assert.deepEqual(op('/helix/moderation/moderators').security, [
      { bearer: ['moderation:read'], clientId: [] },
      { bearer: ['channel:manage:moderators'], clientId: [] },
    ]);
    assert.deepEqual(op('/helix/streams/markers').security, [
      { bearer: ['user:read:broadcast'], clientId: [] },
      { bearer: ['channel:manage:broadcast'], clientId: [] },
    ]);
  });

  test('the token service: its parameters, its answers and its own error body', () => {
    const token = op('/oauth2/token', 'post');
    const form = token.requestBody?.content['application/x-www-form-urlencoded']?.schema;
    assert.deepEqual(form?.properties.grant_type?.enum, [
      'client_credentials',
      'authorization_code',
      'refresh_token',
    ]);
    assert.deepEqual(token.responses['200']?.content?.['application/json']?.schema.required, [
      'access_token',
      'expires_in',
      'token_type',
    ]);
    assert.deepEqual(token.responses['403']?.content?.['application/json']?.schema.required, [
      'status',
      'message',
    ]);
    assert.ok(op('/oauth2/validate').responses['401']);
    assert.ok(op('/oauth2/revoke', 'post').responses['200']);
    assert.equal(doc.paths['/auth/token'], undefined, 'the /auth aliases are described once, under /oauth2');
  });

  test('the per-request check refuses an answer that breaks the document, or a status it does not list', async () => {
    const checker = await openApiChecker(t.app);
    const res = await t.get('/helix/games/top', bearer(await t.appToken()));
    assert.equal(res.statusCode, 200);
    checker.check('GET', '/helix/games/top', res);
    const game = (JSON.parse(res.body) as { data: Record<string, unknown>[] }).data[0];
    const { igdb_id: _dropped, ...withoutIgdb } = game ?? {};
    const broken = { ...res, body: JSON.stringify({ data: [withoutIgdb], pagination: {} }) };
    assert.throws(
      () => checker.check('GET', '/mock/games/top', broken as typeof res),
      /GET \/helix\/games\/top answered 200: the body does not match \/openapi.json: .*igdb_id/,
    );
    assert.throws(
      () => checker.check('GET', '/helix/games/top', { ...res, statusCode: 418 } as typeof res),
      /answered 418: that status is not in \/openapi.json/,
    );
  });
});
