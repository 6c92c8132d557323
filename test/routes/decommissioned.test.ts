import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';

const GONE = '{"error":"Gone","status":410,"message":"This API is not available."}';

const OPERATIONS = [
  {
    path: '/users/follows',
    query: '?from_id=1&to_id=2&first=5',
    sunset: 'Tue, 12 Sep 2023 00:00:00 GMT',
    successors: ['/channels/followers', '/channels/followed'],
  },
  {
    path: '/tags/streams',
    query: '?tag_id=621fb5bf-5498-4d8f-b4ac-db4d40d401bf',
    sunset: 'Thu, 13 Jul 2023 00:00:00 GMT',
    successors: ['/channels'],
  },
] as const;

/** The successor paths named by rel="successor-version" in a Link header. */
function successorPaths(link: string | undefined): string[] {
  assert.ok(link, 'a Link header is present');
  return link.split(/,\s*(?=<)/).map((part) => {
    const m = /^<([^>]+)>(.*)$/.exec(part.trim());
    assert.ok(m, `Link part ${part} is <uri>; params`);
    assert.match(m[2] ?? '', /;\s*rel="successor-version"/);
    return m[1] as string;
  });
}

forEachStore('decommissioned operations without --legacy', (kind: StoreKind) => {
  let t: TestApp;
  let appToken: string;
  let userToken: string;
  before(async () => {
    t = await startTestApp(kind);
    appToken = await t.appToken();
    userToken = await t.userToken();
  });
  after(() => t.close());

  for (const op of OPERATIONS) {
    for (const prefix of ['/helix', '/mock']) {
      const url = `${prefix}${op.path}`;
      const tokens: [string, () => Record<string, string>][] = [
        ['no token', () => ({})],
        ['an app token', () => bearer(appToken)],
        ['a user token', () => bearer(userToken)],
        ['a garbage token', () => bearer('not-a-token')],
        ['a malformed Authorization header', () => ({ authorization: 'Basic' })],
      ];
      for (const [label, headers] of tokens) {
        it(`GET ${url} answers 410 Gone with ${label}, before any token check`, async () => {
          const res = await t.get(url, headers());
          assert.equal(res.statusCode, 410);
          assert.equal(res.body, GONE);
          assert.match(String(res.headers['content-type']), /^application\/json/);
        });
      }

      it(`GET ${url} answers 410 whatever the parameters (${op.query}, first=1000)`, async () => {
        for (const q of [op.query, '?first=1000', '?after=garbage&before=x']) {
          const res = await t.get(`${url}${q}`, bearer(appToken));
          assert.equal(res.statusCode, 410, q);
          assert.equal(res.body, GONE);
        }
      });

      it(`GET ${url} carries Sunset ${op.sunset} and Link rel="successor-version" to ${op.successors.join(', ')}`, async () => {
        const res = await t.get(url);
        assert.equal(res.headers.sunset, op.sunset);
        assert.ok(!Number.isNaN(Date.parse(String(res.headers.sunset))));
        assert.deepEqual(
          successorPaths(res.headers.link as string | undefined),
          op.successors.map((s) => `${prefix}${s}`),
        );
      });
    }
  }

  it('answers 410 to HEAD and to other methods too (Gone is about the resource)', async () => {
    for (const method of ['HEAD', 'POST', 'DELETE'] as const) {
      for (const url of ['/helix/users/follows', '/mock/tags/streams']) {
        const res = await t.inject({ method, url });
        assert.equal(res.statusCode, 410, `${method} ${url}`);
        assert.ok(res.headers.sunset);
        if (method !== 'HEAD') assert.equal(res.body, GONE);
      }
    }
  });

  it('the Sunset dates are the decommission days docs/api.md gives', async () => {
    const follows = await t.get('/helix/users/follows');
    const tags = await t.get('/helix/tags/streams');
    assert.equal(new Date(String(follows.headers.sunset)).toISOString(), '2023-09-12T00:00:00.000Z');
    assert.equal(new Date(String(tags.headers.sunset)).toISOString(), '2023-07-13T00:00:00.000Z');
  });

  it('other paths are unaffected: an unknown path is still 404 and /games/top still needs a token', async () => {
    assert.equal((await t.get('/helix/users/followers')).statusCode, 404);
    assert.equal((await t.get('/helix/tags/all')).statusCode, 404);
    assert.equal((await t.get('/helix/games/top')).statusCode, 401);
  });
});

describe('the legacy switch', () => {
  it('is off by default, on with --legacy or HELIXD_LEGACY=true, and the flag wins over the environment', () => {
    assert.equal(loadConfig({}, {}).legacy, false);
    assert.equal(loadConfig({}, { HELIXD_LEGACY: 'true' }).legacy, true);
    assert.equal(loadConfig({ legacy: true }, {}).legacy, true);
    assert.equal(loadConfig({ legacy: false }, { HELIXD_LEGACY: 'true' }).legacy, false);
  });
});
