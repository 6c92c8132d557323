// The access matrix: each of the nine operations, of the reads beside them (/streams/followed,
// /subscriptions/user, /moderation/moderators, the two searches, GET /channels) and of the writes
// (PUT /users, PATCH /channels, POST /streams/markers, DELETE /videos, POST /clips) against each
// kind of caller, every cell with its expected
// status and message (docs/auth.md, "Who may call what"). The decommissioned operations
// answer 410 before any token check unless the app runs with --legacy, so the matrix runs on a
// legacy app, and a default app shows the 410 for every caller.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SPEC_SCOPES } from '../../src/auth/scopes.ts';
import type { SeedInfo } from '../../src/seed/index.ts';
import { forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { archiveOfLiveStream } from '../support/archive.ts';
import type { StoreKind } from '../support/stores.ts';

interface Outcome {
  status: number;
  /** exact message, or a pattern where the operation's engineer words it */
  message?: string | RegExp;
}

const OK: Outcome = { status: 200 };
/** A write that answers no body (PATCH /channels). */
const DONE: Outcome = { status: 204 };
/** A write done later (POST /clips). */
const ACCEPTED: Outcome = { status: 202 };
const MISSING: Outcome = { status: 401, message: 'OAuth token is missing' };
const INVALID: Outcome = { status: 401, message: 'Invalid OAuth token' };
const USER_ONLY: Outcome = {
  status: 401,
  message: 'This operation requires a user access token; an app access token was given',
};
const MISMATCH: Outcome = { status: 401, message: 'Client ID and OAuth token do not match' };
const NOT_BROADCASTER: Outcome = {
  status: 401,
  message: "The ID in broadcaster_id must match the user ID found in the request's OAuth token.",
};
const NOT_THE_USER: Outcome = {
  status: 401,
  message: "The ID in user_id must match the user ID found in the request's OAuth token.",
};
// docs/api.md: "markers of a video the token user does not own: 403, explains the ownership rule".
const NOT_OWNER: Outcome = { status: 403, message: /only if they own the video/ };
const GONE: Outcome = { status: 410, message: 'This API is not available.' };
const scope = (s: string): Outcome => ({ status: 401, message: `Missing scope: ${s}` });

const CALLERS = [
  'no token',
  'a garbage token',
  'an expired token',
  'a revoked token',
  'an app token',
  'a user token without the scope',
  'a user token with the scope',
  "another user's token",
  'a mismatched Client-Id',
] as const;
type Caller = (typeof CALLERS)[number];

interface Operation {
  /** GET unless said */
  method?: 'PUT' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  /** the request's path and query (called for each request: a write may need a fresh target) */
  url: (s: SeedInfo) => string;
  /** a JSON body (POST /streams/markers, PATCH /channels) */
  body?: (s: SeedInfo) => unknown;
  /** the scope the operation needs, if any */
  scope?: string;
  /** one outcome per caller, in the order of CALLERS */
  cells: readonly Outcome[];
}

/** A channel the demo broadcaster subscribes to (read from the store before the matrix runs). */
let demoSubscribesTo = 0;
/** The demo broadcaster's videos, one for each DELETE that may delete (read before the matrix runs). */
let demoVideos: number[] = [];
const NOT_YOUR_VIDEO: Outcome = {
  status: 401,
  message: 'The caller is not authorized to delete the specified video.',
};
const NOT_AN_EDITOR: Outcome = { status: 403, message: /not authorized to create video markers/ };

const OPERATIONS: Operation[] = [
  {
    path: '/subscriptions',
    url: (s) => `/subscriptions?broadcaster_id=${s.demoUserId}`,
    scope: 'channel:read:subscriptions',
    cells: [
      MISSING,
      INVALID,
      INVALID,
      INVALID,
      USER_ONLY,
      scope('channel:read:subscriptions'),
      OK,
      NOT_BROADCASTER,
      MISMATCH,
    ],
  },
  {
    path: '/streams/followed',
    url: (s) => `/streams/followed?user_id=${s.demoUserId}`,
    scope: 'user:read:follows',
    cells: [
      MISSING,
      INVALID,
      INVALID,
      INVALID,
      USER_ONLY,
      scope('user:read:follows'),
      OK,
      NOT_THE_USER,
      MISMATCH,
    ],
  },
  {
    path: '/subscriptions/user',
    url: (s) => `/subscriptions/user?broadcaster_id=${demoSubscribesTo}&user_id=${s.demoUserId}`,
    scope: 'user:read:subscriptions',
    cells: [
      MISSING,
      INVALID,
      INVALID,
      INVALID,
      USER_ONLY,
      scope('user:read:subscriptions'),
      OK,
      NOT_THE_USER,
      MISMATCH,
    ],
  },
  {
    path: '/moderation/moderators',
    url: (s) => `/moderation/moderators?broadcaster_id=${s.demoUserId}`,
    scope: 'moderation:read',
    cells: [
      MISSING,
      INVALID,
      INVALID,
      INVALID,
      USER_ONLY,
      // production accepts either scope, and names both
      scope('moderation:read or channel:manage:moderators'),
      OK,
      NOT_BROADCASTER,
      MISMATCH,
    ],
  },
  {
    path: '/clips',
    url: (s) => `/clips?broadcaster_id=${s.demoUserId}`,
    cells: [MISSING, INVALID, INVALID, INVALID, OK, OK, OK, OK, MISMATCH],
  },
  {
    path: '/videos',
    url: (s) => `/videos?user_id=${s.demoUserId}`,
    cells: [MISSING, INVALID, INVALID, INVALID, OK, OK, OK, OK, MISMATCH],
  },
  {
    path: '/streams/markers',
    url: (s) => `/streams/markers?user_id=${s.demoUserId}`,
    scope: 'user:read:broadcast',
    cells: [
      MISSING,
      INVALID,
      INVALID,
      INVALID,
      USER_ONLY,
      // production accepts either scope, and names both
      scope('user:read:broadcast or channel:manage:broadcast'),
      OK,
      NOT_OWNER,
      MISMATCH,
    ],
  },
  {
    path: '/games/top',
    url: () => '/games/top',
    cells: [MISSING, INVALID, INVALID, INVALID, OK, OK, OK, OK, MISMATCH],
  },
  {
    path: '/games',
    url: () => '/games?name=Nothing%20by%20this%20name&id=1',
    cells: [MISSING, INVALID, INVALID, INVALID, OK, OK, OK, OK, MISMATCH],
  },
  {
    path: '/users',
    url: (s) => `/users?login=${s.demoLogin}`,
    cells: [MISSING, INVALID, INVALID, INVALID, OK, OK, OK, OK, MISMATCH],
  },
  {
    method: 'PUT',
    path: '/users',
    url: () => '/users?description=Changed%20by%20the%20access%20matrix',
    scope: 'user:edit',
    // Another user's token changes that user's own description: not an error.
    cells: [MISSING, INVALID, INVALID, INVALID, USER_ONLY, scope('user:edit'), OK, OK, MISMATCH],
  },
  {
    path: '/channels',
    url: (s) => `/channels?broadcaster_id=${s.demoUserId}`,
    cells: [MISSING, INVALID, INVALID, INVALID, OK, OK, OK, OK, MISMATCH],
  },
  {
    method: 'PATCH',
    path: '/channels',
    url: (s) => `/channels?broadcaster_id=${s.demoUserId}`,
    body: () => ({ title: 'Changed by the access matrix' }),
    scope: 'channel:manage:broadcast',
    cells: [
      MISSING,
      INVALID,
      INVALID,
      INVALID,
      USER_ONLY,
      scope('channel:manage:broadcast'),
      DONE,
      NOT_BROADCASTER,
      MISMATCH,
    ],
  },
  {
    method: 'POST',
    path: '/streams/markers',
    url: () => '/streams/markers',
    body: (s) => ({ user_id: String(s.demoUserId), description: 'access matrix' }),
    scope: 'channel:manage:broadcast',
    cells: [
      MISSING,
      INVALID,
      INVALID,
      INVALID,
      USER_ONLY,
      scope('channel:manage:broadcast'),
      OK,
      NOT_AN_EDITOR,
      MISMATCH,
    ],
  },
  {
    method: 'POST',
    path: '/clips',
    url: (s) => `/clips?broadcaster_id=${s.demoUserId}`,
    scope: 'clips:edit',
    // Any user may clip any live channel: another user's token clips the demo broadcaster's too.
    cells: [MISSING, INVALID, INVALID, INVALID, USER_ONLY, scope('clips:edit'), ACCEPTED, ACCEPTED, MISMATCH],
  },
  {
    method: 'DELETE',
    path: '/videos',
    // A video of the demo broadcaster's not yet deleted: the cell that deletes one must not leave
    // the next cells asking for a video that is gone.
    url: () => `/videos?id=${demoVideos.shift()}`,
    scope: 'channel:manage:videos',
    cells: [
      MISSING,
      INVALID,
      INVALID,
      INVALID,
      USER_ONLY,
      scope('channel:manage:videos'),
      OK,
      NOT_YOUR_VIDEO,
      MISMATCH,
    ],
  },
  {
    path: '/search/categories',
    url: () => '/search/categories?query=a',
    cells: [MISSING, INVALID, INVALID, INVALID, OK, OK, OK, OK, MISMATCH],
  },
  {
    path: '/search/channels',
    url: (s) => `/search/channels?query=${s.demoLogin}&live_only=true`,
    cells: [MISSING, INVALID, INVALID, INVALID, OK, OK, OK, OK, MISMATCH],
  },
  {
    path: '/analytics/games',
    url: () => '/analytics/games',
    scope: 'analytics:read:games',
    // Another user's token reads that user's own reports (none or some): not an error.
    cells: [MISSING, INVALID, INVALID, INVALID, USER_ONLY, scope('analytics:read:games'), OK, OK, MISMATCH],
  },
  {
    path: '/analytics/extensions',
    url: () => '/analytics/extensions',
    scope: 'analytics:read:extensions',
    cells: [
      MISSING,
      INVALID,
      INVALID,
      INVALID,
      USER_ONLY,
      scope('analytics:read:extensions'),
      OK,
      OK,
      MISMATCH,
    ],
  },
  {
    path: '/users/follows',
    url: (s) => `/users/follows?from_id=${s.demoUserId}`,
    cells: [MISSING, INVALID, INVALID, INVALID, OK, OK, OK, OK, MISMATCH],
  },
  {
    path: '/tags/streams',
    url: () => '/tags/streams',
    cells: [MISSING, INVALID, INVALID, INVALID, OK, OK, OK, OK, MISMATCH],
  },
];

/**
 * The headers' presence is checked before the token is: no Authorization header is "OAuth token is
 * missing" whether or not Client-Id is sent; with one, no Client-Id is "Client ID is missing" even
 * when the token is garbage. Sent through inject, which adds no Client-Id.
 */
const CLIENT_MISSING: Outcome = { status: 401, message: 'Client ID is missing' };
const HEADER_CASES: {
  caller: string;
  outcome: Outcome;
  headers: (t: TestApp) => Promise<Record<string, string>>;
}[] = [
  { caller: 'no header at all', outcome: MISSING, headers: async () => ({}) },
  {
    caller: 'a Client-Id but no token',
    outcome: MISSING,
    headers: async (t) => ({ 'client-id': t.seed?.demoClientId as string }),
  },
  {
    caller: 'a valid token but no Client-Id',
    outcome: CLIENT_MISSING,
    headers: async (t) => ({ authorization: `Bearer ${await t.userToken([...SPEC_SCOPES])}` }),
  },
  {
    caller: 'an empty Client-Id',
    outcome: CLIENT_MISSING,
    headers: async (t) => ({ authorization: `Bearer ${await t.appToken()}`, 'client-id': '' }),
  },
  {
    caller: 'a garbage token and no Client-Id',
    outcome: CLIENT_MISSING,
    headers: async () => ({ authorization: 'Bearer thisisnotatokenthisisnotatoken' }),
  },
];

const DECOMMISSIONED = new Set(['/users/follows', '/tags/streams']);

/** Mints what a caller sends: its request headers. Runs just before the request. */
async function headersFor(
  t: TestApp,
  caller: Caller,
  op: Operation,
  otherUserId: number,
): Promise<Record<string, string>> {
  const withScope = op.scope ? [op.scope] : [...SPEC_SCOPES];
  const bearer = (tok: string) => ({ authorization: `Bearer ${tok}` });
  switch (caller) {
    case 'no token':
      return {};
    case 'a garbage token':
      return bearer('thisisnotatokenthisisnotatoken');
    case 'an expired token': {
      const tok = await t.userToken(withScope, undefined, 60);
      t.clock.advance(61_000);
      return bearer(tok);
    }
    case 'a revoked token': {
      const tok = await t.userToken(withScope);
      const res = await t.inject({
        method: 'POST',
        url: '/oauth2/revoke',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ client_id: t.seed?.demoClientId as string, token: tok }).toString(),
      });
      assert.equal(res.statusCode, 200, 'revoked through /oauth2/revoke');
      return bearer(tok);
    }
    case 'an app token':
      return bearer(await t.appToken());
    case 'a user token without the scope':
      return bearer(await t.userToken([]));
    case 'a user token with the scope':
      return bearer(await t.userToken(withScope));
    case "another user's token":
      return bearer(await t.userToken(withScope, otherUserId));
    case 'a mismatched Client-Id':
      return { ...bearer(await t.userToken(withScope)), 'client-id': 'notthetokensclient000000000000' };
  }
}

/**
 * A user other than the demo broadcaster who never created a stream marker: a channel editor (one
 * who marked the broadcaster's video) may read those markers, and this caller must not be one.
 */
async function anotherUser(t: TestApp): Promise<number> {
  const row = await t.store.db
    .selectFrom('users')
    .select('id')
    .where('id', '!=', t.seed?.demoUserId as number)
    .where('id', 'not in', t.store.db.selectFrom('markers').select('creator_id'))
    .orderBy('id')
    .limit(1)
    .executeTakeFirstOrThrow();
  return row.id;
}

/**
 * The request of `op` with `headers` (and the demo client's Client-Id where a token is sent without
 * one, as t.get adds it): its method, its URL under /helix, its body.
 */
function send(t: TestApp, op: Operation, headers: Record<string, string>, url = op.url(t.seed as SeedInfo)) {
  const names = Object.keys(headers).map((k) => k.toLowerCase());
  const clientId =
    names.includes('authorization') && !names.includes('client-id')
      ? { 'client-id': t.seed?.demoClientId as string }
      : {};
  const body = op.body?.(t.seed as SeedInfo);
  return t.inject({
    method: op.method ?? 'GET',
    url: `/helix${url}`,
    headers: { ...headers, ...clientId, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { payload: JSON.stringify(body) } : {}),
  });
}

/**
 * What the writes need before the matrix runs: the demo broadcaster's videos (one per DELETE that
 * may delete), and an archive video of its live stream (a marker needs one).
 */
async function prepareWrites(t: TestApp): Promise<void> {
  const demo = t.seed?.demoUserId as number;
  const videos = await t.store.db
    .selectFrom('videos')
    .select('id')
    .where('user_id', '=', demo)
    .orderBy('id')
    .execute();
  demoVideos = videos.map((v) => v.id);
  await archiveOfLiveStream(t, demo, '1999999999');
}

function describeOutcome(o: Outcome): string {
  return o.message === undefined ? String(o.status) : `${o.status} ${String(o.message)}`;
}

forEachStore('access matrix (legacy mode, so all nine operations check tokens)', (kind: StoreKind) => {
  let t: TestApp;
  let otherUserId: number;
  before(async () => {
    t = await startTestApp(kind, { config: { legacy: true } });
    otherUserId = await anotherUser(t);
    demoSubscribesTo = (
      await t.store.db
        .selectFrom('subscriptions')
        .select('broadcaster_id')
        .where('user_id', '=', t.seed?.demoUserId as number)
        .orderBy('broadcaster_id')
        .limit(1)
        .executeTakeFirstOrThrow()
    ).broadcaster_id;
    await prepareWrites(t);
  });
  after(() => t.close());

  for (const op of OPERATIONS) {
    describe(`${op.method ?? 'GET'} /helix${op.path}`, () => {
      CALLERS.forEach((caller, i) => {
        const expected = op.cells[i] as Outcome;
        it(`answers ${caller} with ${describeOutcome(expected)}`, async () => {
          const headers = await headersFor(t, caller, op, otherUserId);
          const res = await send(t, op, headers);
          assert.equal(res.statusCode, expected.status, res.body);
          if (expected.status === 204) {
            assert.equal(res.body, '');
            return;
          }
          const body = res.json();
          if (expected.status < 300) {
            assert.ok(Array.isArray(body.data), res.body);
            return;
          }
          assert.equal(body.status, expected.status);
          assert.equal(typeof body.error, 'string');
          if (typeof expected.message === 'string') assert.equal(body.message, expected.message);
          else if (expected.message) assert.match(body.message, expected.message);
        });
      });
    });
  }

  for (const c of HEADER_CASES) {
    it(`answers ${c.caller} with ${describeOutcome(c.outcome)} on every operation`, async () => {
      for (const op of OPERATIONS) {
        const headers = await c.headers(t);
        const res = await t.inject({
          method: op.method ?? 'GET',
          url: `/helix${op.url(t.seed as SeedInfo)}`,
          headers,
        });
        assert.equal(res.statusCode, c.outcome.status, `${op.path}: ${res.body}`);
        assert.deepEqual(
          res.json(),
          { error: 'Unauthorized', status: 401, message: c.outcome.message },
          op.path,
        );
      }
    });
  }

  it('refuses the OAuth scheme on operations (it is for /oauth2/validate only)', async () => {
    const tok = await t.appToken();
    const res = await t.get('/helix/games/top', { authorization: `OAuth ${tok}` });
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().message, 'Invalid OAuth token');
  });

  it('checks the token before any parameter (a bad request without a token is a 401)', async () => {
    for (const op of OPERATIONS) {
      const res = await send(
        t,
        op,
        {},
        `${op.path}?first=1000&after=garbage&id=x&description=${'x'.repeat(400)}`,
      );
      assert.equal(res.statusCode, 401, op.path);
      assert.equal(res.json().message, 'OAuth token is missing', op.path);
    }
  });
});

forEachStore('access matrix (default mode: decommissioned operations)', (kind: StoreKind) => {
  let t: TestApp;
  let otherUserId: number;
  before(async () => {
    t = await startTestApp(kind);
    otherUserId = await anotherUser(t);
  });
  after(() => t.close());

  for (const op of OPERATIONS.filter((o) => DECOMMISSIONED.has(o.path))) {
    it(`GET /helix${op.path} answers 410 before any token check, for every caller`, async () => {
      for (const caller of CALLERS) {
        const headers = await headersFor(t, caller, op, otherUserId);
        const res = await t.get(`/helix${op.url(t.seed as SeedInfo)}`, headers);
        assert.equal(res.statusCode, GONE.status, `${caller}: ${res.body}`);
        assert.equal(res.json().message, GONE.message, caller);
      }
    });
  }
});
