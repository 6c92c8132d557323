// The access rules answer a write before its body is read (src/http/operation.ts: every method but
// GET keeps the access hook): a request without a token, or with one that is not valid, is a 401
// whatever body it carries (not JSON, JSON that does not parse, more than the body limit), never the
// 415, 400 or 413 the body would have earned, on every write the Helix API serves, whether or not
// its operation reads a body. GETs run the same rules as one step of their handler, before the
// query's validation (each route's tests check that order).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';

const WRITES = [
  ['PATCH', '/helix/channels?broadcaster_id=1'],
  ['POST', '/helix/streams/markers'],
  ['PUT', '/helix/users?description=x'],
  ['DELETE', '/helix/videos?id=1'],
  ['POST', '/helix/clips?broadcaster_id=1'],
] as const;

/** Bodies that would each be refused on their own, before any token check if the body came first. */
const BODIES = [
  { type: 'application/xml', payload: '<title>x</title>' },
  { type: 'application/json', payload: '{"title":' },
  { type: 'application/json', payload: `{"title":"${'x'.repeat(33 * 1024 * 1024)}"}` },
];

forEachStore('a write without a valid token: 401 before its body is read', (kind: StoreKind) => {
  let t: TestApp;

  before(async () => {
    t = await startTestApp(kind, { users: 20 });
  });
  after(() => t.close());

  for (const [method, url] of WRITES)
    it(`${method} ${url.split('?')[0]}`, async () => {
      const clientId = t.seed?.demoClientId as string;
      for (const auth of [{}, { authorization: 'Bearer not-a-token-of-this-store' }])
        for (const body of BODIES) {
          const res = await t.inject({
            method,
            url,
            headers: { ...auth, 'client-id': clientId, 'content-type': body.type },
            payload: body.payload,
          });
          const what = `${Object.keys(auth).length ? 'an unknown token' : 'no token'}, ${body.type} of ${body.payload.length} bytes`;
          assert.equal(res.statusCode, 401, `${what}: ${res.body.slice(0, 200)}`);
          assert.equal(
            res.json().message,
            Object.keys(auth).length ? 'Invalid OAuth token' : 'OAuth token is missing',
            what,
          );
        }
    });
});
