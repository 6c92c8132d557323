// Real clients' requests, replayed byte for byte over TCP, and the rules behind them: the token
// service takes its parameters from the query string, a form body or a JSON object body; an empty
// body is no body whatever its Content-Type; any other body type is a 415; a JSON value that is not
// a string is a 400 naming the parameter. And CORS as a browser meets it: a Chromium preflight, the
// Access-Control-Allow-Origin header on successes and errors, on every path.
// The pyTwitchAPI requests are built as it builds them and written as aiohttp writes them
// (test/aiohttp.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, forEachStore, portOf, startTestApp, type TestApp } from '../support/apps.ts';
import { type RawResponse, rawRequest } from '../support/http.ts';
import type { StoreKind } from '../support/stores.ts';
import { aiohttpBytes, buildUrl } from './aiohttp.ts';

const CHROMIUM_UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const REDIRECT = 'http://localhost:3000/auth/callback';

const json = (r: RawResponse) => JSON.parse(r.body);

function assertTokenError(r: RawResponse, status: number, message: string) {
  assert.equal(r.status, status, r.body);
  assert.match(r.headers['content-type'] ?? '', /^application\/json/);
  assert.deepEqual(json(r), { status, message });
}

/** The consent page's form fields, submitted like a person who picks the checked user. */
async function consent(t: TestApp, authorizeUrl: string): Promise<URL> {
  const page = await t.get(authorizeUrl);
  assert.equal(page.statusCode, 200, page.body);
  const fields: Record<string, string> = {};
  for (const m of page.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields[m[1] as string] = (m[2] as string).replace(/&amp;/g, '&').replace(/&quot;/g, '"');
  const user = /<input type="radio" name="user" value="([^"]+)" checked>/.exec(page.body)?.[1] as string;
  const res = await t.inject({
    method: 'POST',
    url: '/oauth2/authorize',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ ...fields, user, decision: 'allow' }).toString(),
  });
  assert.equal(res.statusCode, 302, res.body);
  return new URL(String(res.headers.location));
}

forEachStore('client request shapes', (kind: StoreKind) => {
  let t: TestApp;
  let port: number;
  let id: string;
  let secret: string;
  let demoUser: string;
  const send = (bytes: string) => rawRequest(port, bytes);
  const py = (
    method: 'GET' | 'POST',
    target: string,
    headers?: [string, string][],
    form?: [string, string][],
  ) => send(aiohttpBytes(port, method, target, headers, form));
  /** What pyTwitchAPI's _api_request sends to an operation (Twitch._generate_header). */
  const operation = (target: string, token: string) =>
    py('GET', target, [
      ['Client-ID', id],
      ['Authorization', `Bearer ${token}`],
    ]);

  before(async () => {
    t = await startTestApp(kind, { users: 40 });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = portOf(t.app);
    const units = (await t.get('/units/clients')).json();
    id = units.data[0].ID;
    secret = units.data[0].Secret;
    demoUser = String(t.seed?.demoUserId);
  });
  after(() => t.close());

  describe('pyTwitchAPI', () => {
    it('mock mode (auth_base_url /auth/, base_url /mock/): app token, mock_authenticate, validate, operations', async () => {
      // await Twitch(id, secret, base_url=.../mock/, auth_base_url=.../auth/): Twitch._generate_app_token.
      const appReply = await py(
        'POST',
        buildUrl('/auth/token', [
          ['client_id', id],
          ['client_secret', secret],
          ['grant_type', 'client_credentials'],
          ['scope', ''],
        ]),
      );
      assert.equal(appReply.status, 200, appReply.body);
      const appToken = json(appReply).access_token;
      assert.match(appToken, /^[a-z0-9]{30}$/);

      // twitch.get_top_games(): AuthType.EITHER with only the app token; first page, then the next.
      const top = await operation('/mock/games/top?first=20', appToken);
      assert.equal(top.status, 200, top.body);
      assert.match(top.headers['content-type'] ?? '', /^application\/json/);
      const page1 = json(top);
      assert.equal(page1.data.length, 20);
      const cursor = page1.pagination.cursor as string;
      const next = await operation(
        buildUrl('/mock/games/top', [
          ['after', cursor],
          ['first', '20'],
        ]),
        appToken,
      );
      assert.equal(next.status, 200, next.body);
      assert.notDeepEqual(json(next).data[0], page1.data[0], 'the cursor moved on');

      // UserAuthenticator(twitch, [CHANNEL_READ_SUBSCRIPTIONS], auth_base_url=...).mock_authenticate(user):
      // `code` is None there, so build_url writes it as a bare name.
      const minted = await py(
        'POST',
        buildUrl('/auth/authorize', [
          ['client_id', id],
          ['client_secret', secret],
          ['code', null],
          ['user_id', demoUser],
          ['scope', 'channel:read:subscriptions user:read:broadcast'],
          ['grant_type', 'user_token'],
        ]),
      );
      assert.equal(minted.status, 200, minted.body);
      const userToken = json(minted).access_token;
      assert.match(userToken, /^[a-z0-9]{30}$/);

      // set_user_authentication(token, scopes): validate_token, then the checks it makes.
      const valid = await py('GET', '/auth/validate', [['Authorization', `OAuth ${userToken}`]]);
      assert.equal(valid.status, 200, valid.body);
      const v = json(valid);
      assert.equal(v.status ?? 200, 200);
      assert.ok('login' in v && 'user_id' in v, 'a user token');
      assert.equal(v.client_id, id);
      assert.equal(v.user_id, demoUser);
      assert.deepEqual([...v.scopes].sort(), ['channel:read:subscriptions', 'user:read:broadcast']);

      // twitch.get_broadcaster_subscriptions(user): AuthType.USER.
      const subs = await operation(`/mock/subscriptions?broadcaster_id=${demoUser}&first=20`, userToken);
      assert.equal(subs.status, 200, subs.body);
      assert.ok(json(subs).data.length > 0);
      assert.equal(json(subs).data[0].broadcaster_id, demoUser);
    });

    it('the authorization-code flow at /oauth2/: code exchange, validate, call, refresh, revoke', async () => {
      // UserAuthenticator._build_auth_url: what the browser is sent to (build_url alone, no yarl).
      const state = '7d9a2f6e-8d7c-4c1e-9a55-0c8e3b1f2a64';
      const raw = (v: string) => encodeURIComponent(v).replace(/%2F/g, '/');
      const authorizeUrl =
        `/oauth2/authorize?client_id=${id}&redirect_uri=${raw(REDIRECT)}&response_type=code` +
        `&scope=${raw('channel:read:subscriptions')}&force_verify=false&state=${state}`;
      const back = await consent(t, authorizeUrl);
      assert.equal(back.searchParams.get('state'), state);
      const code = back.searchParams.get('code') as string;

      // authenticate(): the code exchange, parameters in the query string, no body.
      const exchanged = await py(
        'POST',
        buildUrl('/oauth2/token', [
          ['client_id', id],
          ['client_secret', secret],
          ['code', code],
          ['grant_type', 'authorization_code'],
          ['redirect_uri', REDIRECT],
        ]),
      );
      assert.equal(exchanged.status, 200, exchanged.body);
      const first = json(exchanged);
      assert.match(first.access_token, /^[a-z0-9]{30}$/);
      assert.match(first.refresh_token, /^[a-z0-9]{50}$/);

      const valid = json(
        await py('GET', '/oauth2/validate', [['Authorization', `OAuth ${first.access_token}`]]),
      );
      assert.equal(valid.client_id, id);
      assert.equal(valid.user_id, demoUser);
      assert.deepEqual(valid.scopes, ['channel:read:subscriptions']);

      const subs = (token: string) =>
        operation(`/helix/subscriptions?broadcaster_id=${demoUser}&first=20`, token);
      assert.equal((await subs(first.access_token)).status, 200);

      // oauth.refresh_access_token (Twitch.refresh_used_token after a 401): a FORM body, not a query.
      const refresh = (token: string) =>
        py(
          'POST',
          '/oauth2/token',
          [],
          [
            ['refresh_token', token],
            ['client_id', id],
            ['grant_type', 'refresh_token'],
            ['client_secret', secret],
          ],
        );
      const refreshed = await refresh(first.refresh_token);
      assert.equal(refreshed.status, 200, refreshed.body);
      const second = json(refreshed);
      assert.equal(second.status ?? 200, 200);
      assert.match(second.access_token, /^[a-z0-9]{30}$/);
      assert.match(second.refresh_token, /^[a-z0-9]{50}$/);
      assert.notEqual(second.refresh_token, first.refresh_token);
      assert.equal((await subs(second.access_token)).status, 200);
      // The spent refresh token: status 400, which pyTwitchAPI raises as InvalidRefreshTokenException.
      assertTokenError(await refresh(first.refresh_token), 400, 'Invalid refresh token');

      // oauth.revoke_token(client_id, token): query string, empty body; success is a 200.
      const revoked = await py(
        'POST',
        buildUrl('/oauth2/revoke', [
          ['client_id', id],
          ['token', second.access_token],
        ]),
      );
      assert.equal(revoked.status, 200, revoked.body);
      const gone = await subs(second.access_token);
      assert.equal(gone.status, 401);
      assert.equal(json(gone).message, 'Invalid OAuth token');
      // validate_token of the revoked token: status 401, what set_user_authentication refuses.
      assertTokenError(
        await py('GET', '/oauth2/validate', [['Authorization', `OAuth ${second.access_token}`]]),
        401,
        'invalid access token',
      );
    });
  });

  it('answers a client that half-closes its side right after the request, also when the answer waits on the store', async () => {
    const r = await operation(`/helix/games/top?first=1`, await t.appToken());
    assert.equal(r.status, 200, r.body);
    assert.equal(json(r).data.length, 1);
  });

  describe('token service bodies', () => {
    const post = (target: string, headers: string[], body = '') =>
      send(
        `POST ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${headers.map((h) => `${h}\r\n`).join('')}` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    const appQuery = () =>
      `/oauth2/token?${new URLSearchParams({ client_id: id, client_secret: secret, grant_type: 'client_credentials' })}`;
    const assertAppToken = (r: RawResponse) => {
      assert.equal(r.status, 200, r.body);
      assert.deepEqual(Object.keys(json(r)).sort(), ['access_token', 'expires_in', 'token_type']);
    };

    it('treats an empty body as no body whatever its Content-Type says', async () => {
      for (const type of [
        'application/octet-stream',
        'text/plain',
        'text/plain; charset=utf-8',
        'application/json',
        'application/x-www-form-urlencoded',
        'application/xml',
      ])
        assertAppToken(await post(appQuery(), [`Content-Type: ${type}`]));
      assertAppToken(await post(appQuery(), []));
      // An empty chunked body is empty too.
      assertAppToken(
        await send(
          `POST ${appQuery()} HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n` +
            'Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n',
        ),
      );
    });

    it('refuses a non-empty body of another type with 415, text/plain included, even with good query parameters', async () => {
      for (const type of [
        'text/plain',
        'text/plain; charset=utf-8',
        'application/octet-stream',
        'application/xml',
      ])
        assertTokenError(
          await post(appQuery(), [`Content-Type: ${type}`], 'hello'),
          415,
          'Unsupported Media Type',
        );
      assertTokenError(await post(appQuery(), [], 'client_id=x'), 415, 'Unsupported Media Type');
      assertTokenError(
        await post('/oauth2/revoke', ['Content-Type: text/plain'], `client_id=${id}&token=x`),
        415,
        'Unsupported Media Type',
      );
    });

    it('takes a JSON object body, a form body, and query and body together (the body wins)', async () => {
      const all = { client_id: id, client_secret: secret, grant_type: 'client_credentials' };
      assertAppToken(await post('/oauth2/token', ['Content-Type: application/json'], JSON.stringify(all)));
      assertAppToken(
        await post('/oauth2/token', ['Content-Type: application/json; charset=utf-8'], JSON.stringify(all)),
      );
      assertAppToken(
        await post(
          '/oauth2/token',
          ['Content-Type: application/x-www-form-urlencoded'],
          new URLSearchParams(all).toString(),
        ),
      );
      const mixed = `/oauth2/token?client_id=${id}&client_secret=wrong`;
      const rest = { client_secret: secret, grant_type: 'client_credentials' };
      assertAppToken(await post(mixed, ['Content-Type: application/json'], JSON.stringify(rest)));
      assertAppToken(
        await post(
          mixed,
          ['Content-Type: application/x-www-form-urlencoded'],
          new URLSearchParams(rest).toString(),
        ),
      );
      // The query's good secret is not enough when the body names a wrong one.
      assertTokenError(
        await post(
          appQuery(),
          ['Content-Type: application/json'],
          JSON.stringify({ client_secret: 'wrong' }),
        ),
        403,
        'invalid client secret',
      );
    });

    it('refuses a JSON value that is not a string with 400 naming the parameter', async () => {
      for (const value of [12345, true, false, null, ['a'], { a: 'b' }, 1.5]) {
        const body = JSON.stringify({
          client_id: id,
          client_secret: value,
          grant_type: 'client_credentials',
        });
        assertTokenError(
          await post('/oauth2/token', ['Content-Type: application/json'], body),
          400,
          'parameter client_secret must be a string',
        );
      }
      assertTokenError(
        await post('/oauth2/token', ['Content-Type: application/json'], JSON.stringify({ client_id: 42 })),
        400,
        'parameter client_id must be a string',
      );
      const userToken = {
        client_id: id,
        client_secret: secret,
        grant_type: 'user_token',
        user_id: Number(demoUser),
      };
      assertTokenError(
        await post('/auth/authorize', ['Content-Type: application/json'], JSON.stringify(userToken)),
        400,
        'parameter user_id must be a string',
      );
      // A value the request does not read is not looked at; a repeated form parameter reads differently.
      assertAppToken(
        await post(
          '/oauth2/token',
          ['Content-Type: application/json'],
          JSON.stringify({
            client_id: id,
            client_secret: secret,
            grant_type: 'client_credentials',
            extra: [1],
          }),
        ),
      );
      assertTokenError(
        await post(
          '/oauth2/token',
          ['Content-Type: application/x-www-form-urlencoded'],
          `client_id=${id}&client_id=${id}`,
        ),
        400,
        'parameter client_id may be given only once',
      );
    });

    it('refuses a JSON body that is not an object, and one that does not parse, with 400', async () => {
      for (const body of ['[1,2]', '"client_id"', '42', 'null'])
        assertTokenError(
          await post('/oauth2/token', ['Content-Type: application/json'], body),
          400,
          'the JSON body must be an object',
        );
      const broken = await post('/oauth2/token', ['Content-Type: application/json'], '{"client_id":');
      assert.equal(broken.status, 400);
      assert.deepEqual(Object.keys(json(broken)).sort(), ['message', 'status']);
    });
  });

  describe('CORS', () => {
    const chromiumPreflight = (path: string, method: string, requestHeaders: string) =>
      [
        `OPTIONS ${path} HTTP/1.1`,
        `Host: 127.0.0.1:${port}`,
        'Connection: keep-alive',
        'Accept: */*',
        `Access-Control-Request-Method: ${method}`,
        `Access-Control-Request-Headers: ${requestHeaders}`,
        'Origin: http://localhost:3000',
        `User-Agent: ${CHROMIUM_UA}`,
        'Sec-Fetch-Mode: cors',
        'Sec-Fetch-Site: cross-site',
        'Sec-Fetch-Dest: empty',
        'Referer: http://localhost:3000/',
        'Accept-Encoding: gzip, deflate, br, zstd',
        'Accept-Language: en-US,en;q=0.9',
        '',
        '',
      ].join('\r\n');
    const allowed = (r: RawResponse, name: string) =>
      (r.headers[name] ?? '').split(',').map((s) => s.trim().toLowerCase());

    it('answers a Chromium preflight from http://localhost:3000 with 204 and the allow headers', async () => {
      const r = await send(chromiumPreflight('/helix/games/top?first=20', 'GET', 'authorization,client-id'));
      assert.equal(r.status, 204);
      assert.equal(r.body, '');
      assert.equal(r.headers['access-control-allow-origin'], '*');
      assert.ok(allowed(r, 'access-control-allow-methods').includes('get'));
      for (const h of ['authorization', 'client-id', 'content-type'])
        assert.ok(allowed(r, 'access-control-allow-headers').includes(h), h);
      assert.equal(r.headers['access-control-max-age'], '86400');
      assert.equal(r.headers['access-control-allow-credentials'], undefined, 'no credentials with *');

      // A JSON token request from a page preflights too.
      const token = await send(chromiumPreflight('/oauth2/token', 'POST', 'content-type'));
      assert.equal(token.status, 204);
      assert.ok(allowed(token, 'access-control-allow-methods').includes('post'));
      assert.ok(allowed(token, 'access-control-allow-headers').includes('content-type'));
    });

    it('puts Access-Control-Allow-Origin on an operation answer, 200 and 401 alike', async () => {
      const get = (headers: string[]) =>
        send(
          [
            'GET /helix/games/top?first=20 HTTP/1.1',
            `Host: 127.0.0.1:${port}`,
            'Connection: keep-alive',
            ...headers,
            `User-Agent: ${CHROMIUM_UA}`,
            'Accept: */*',
            'Origin: http://localhost:3000',
            'Sec-Fetch-Site: cross-site',
            'Sec-Fetch-Mode: cors',
            'Sec-Fetch-Dest: empty',
            'Referer: http://localhost:3000/',
            'Accept-Encoding: gzip, deflate, br, zstd',
            'Accept-Language: en-US,en;q=0.9',
            '',
            '',
          ].join('\r\n'),
        );
      const ok = await get([`Authorization: Bearer ${await t.appToken()}`, `Client-Id: ${id}`]);
      assert.equal(ok.status, 200, ok.body);
      assert.equal(ok.headers['access-control-allow-origin'], '*');
      assert.deepEqual(allowed(ok, 'access-control-expose-headers'), [
        'ratelimit-limit',
        'ratelimit-remaining',
        'ratelimit-reset',
      ]);
      const denied = await get([`Client-Id: ${id}`]);
      assert.equal(denied.status, 401);
      assert.equal(denied.headers['access-control-allow-origin'], '*');
      assert.equal(json(denied).status, 401);
      for (const url of ['/helix/nope', '/helix/%zz']) {
        const r = await t.inject({ method: 'GET', url, headers: { origin: 'http://localhost:3000' } });
        assert.ok(r.statusCode === 404 || r.statusCode === 400, url);
        assert.equal(r.headers['access-control-allow-origin'], '*', url);
      }
    });

    it('puts it on token service answers and on report downloads', async () => {
      const origin = { origin: 'http://localhost:3000' };
      const ok = await t.inject({
        method: 'POST',
        url: `/oauth2/token?${new URLSearchParams({ client_id: id, client_secret: secret, grant_type: 'client_credentials' })}`,
        headers: origin,
      });
      assert.equal(ok.statusCode, 200);
      assert.equal(ok.headers['access-control-allow-origin'], '*');
      const bad = await t.inject({ method: 'GET', url: '/oauth2/validate', headers: origin });
      assert.equal(bad.statusCode, 401);
      assert.equal(bad.headers['access-control-allow-origin'], '*');

      const token = await t.userToken(['analytics:read:games']);
      const reports = await t.get('/helix/analytics/games', bearer(token));
      assert.equal(reports.statusCode, 200, reports.body);
      const u = new URL(reports.json().data[0].URL);
      const csv = await t.inject({ method: 'GET', url: u.pathname + u.search, headers: origin });
      assert.equal(csv.statusCode, 200);
      assert.match(String(csv.headers['content-type']), /^text\/csv/);
      assert.equal(csv.headers['access-control-allow-origin'], '*');
      const tampered = await t.inject({ method: 'GET', url: `${u.pathname}${u.search}x`, headers: origin });
      assert.equal(tampered.statusCode, 403);
      assert.equal(tampered.headers['access-control-allow-origin'], '*');
    });

    it('answers OPTIONS with 204 on every path: unknown, an operation (never its 405), the token service, with or without a preflight', async () => {
      for (const path of [
        '/nope',
        '/helix/nope',
        '/helix/games/top',
        '/mock/games/top',
        '/oauth2/token',
        '/reports/games/x.csv',
      ]) {
        const preflight = await send(chromiumPreflight(path, 'GET', 'authorization,client-id'));
        assert.equal(preflight.status, 204, path);
        assert.equal(preflight.headers['access-control-allow-origin'], '*', path);
        const bare = await send(`OPTIONS ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
        assert.equal(bare.status, 204, `${path} without Origin`);
        assert.equal(bare.body, '');
      }
    });
  });
});
