// The token service through HTTP: the authorization-code flow driven through the consent page like
// a browser would, the implicit flow, validate, revoke, refresh rotation, the mock-server routes,
// and every error of the token service in its own {"status", "message"} shape.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { sha256 } from '../../src/auth/tokens.ts';
import { bearer, forEachStore, postForm, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';

const REDIRECT = 'http://localhost:3000/auth/callback';

interface DemoClient {
  id: string;
  secret: string;
}

/** The consent page's form: its hidden fields, the users offered, and where it posts. */
function parseConsentForm(html: string) {
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
  const hidden: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    hidden[m[1] as string] = (m[2] as string).replace(/&amp;/g, '&').replace(/&quot;/g, '"');
  const users = [...html.matchAll(/<input type="radio" name="user" value="([^"]+)"( checked)?>/g)].map(
    (m) => ({
      login: m[1] as string,
      checked: m[2] !== undefined,
    }),
  );
  return { action, hidden, users };
}

forEachStore('token service', (kind: StoreKind) => {
  let t: TestApp;
  let client: DemoClient;
  let demoLogin: string;

  const form = (url: string, params: Record<string, string>) => postForm(t, url, params);
  const token = (params: Record<string, string>) =>
    form('/oauth2/token', { client_id: client.id, client_secret: client.secret, ...params });
  const authorizeUrl = (params: Record<string, string>) =>
    `/oauth2/authorize?${new URLSearchParams({ client_id: client.id, redirect_uri: REDIRECT, ...params })}`;
  const assertTokenError = (res: LightMyRequestResponse, status: number, message: string) => {
    assert.equal(res.statusCode, status, res.body);
    assert.deepEqual(res.json(), { status, message });
    assert.match(String(res.headers['content-type']), /^application\/json/);
  };

  /** Walks the consent page like a browser: GET the page, submit its form as a person would. */
  async function consent(params: Record<string, string>, choice: Record<string, string> = {}) {
    const page = await t.get(authorizeUrl(params));
    assert.equal(page.statusCode, 200, page.body);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    const f = parseConsentForm(page.body);
    assert.equal(f.action, '/oauth2/authorize');
    const picked = f.users.find((u) => u.checked)?.login as string;
    return form(f.action, { ...f.hidden, user: picked, decision: 'allow', ...choice });
  }

  before(async () => {
    t = await startTestApp(kind);
    const units = (await t.get('/units/clients')).json();
    client = { id: units.data[0].ID, secret: units.data[0].Secret };
    demoLogin = t.seed?.demoLogin as string;
  });
  after(() => t.close());

  it('runs the authorization-code flow: consent page, code, token, call, refresh, call, revoke, 401', async () => {
    const page = await t.get(
      authorizeUrl({ response_type: 'code', scope: 'user:read:broadcast', state: 's-1' }),
    );
    const f = parseConsentForm(page.body);
    assert.ok(f.users.length >= 5, 'the page offers users to pick');
    assert.equal(f.users[0]?.login, demoLogin, 'the demo broadcaster comes first, checked');
    assert.equal(f.users[0]?.checked, true);
    assert.equal(page.headers['x-frame-options'], 'DENY');
    assert.equal(page.headers['cache-control'], 'no-store');

    const posted = await form(f.action as string, { ...f.hidden, user: demoLogin, decision: 'allow' });
    assert.equal(posted.statusCode, 302);
    const back = new URL(String(posted.headers.location));
    assert.equal(`${back.origin}${back.pathname}`, REDIRECT);
    assert.equal(back.searchParams.get('state'), 's-1');
    assert.equal(back.searchParams.get('scope'), 'user:read:broadcast');
    const code = back.searchParams.get('code') as string;
    assert.match(code, /^[a-z0-9]{30}$/);

    const issued = await token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT });
    assert.equal(issued.statusCode, 200, issued.body);
    const first = issued.json();
    assert.deepEqual(Object.keys(first).sort(), [
      'access_token',
      'expires_in',
      'refresh_token',
      'scope',
      'token_type',
    ]);
    assert.deepEqual(first.scope, ['user:read:broadcast']);
    assert.equal(first.token_type, 'bearer');
    assert.equal(first.expires_in, t.config.userTokenTtl);

    assert.equal((await t.get('/helix/games/top?first=1', bearer(first.access_token))).statusCode, 200);
    const info = (await t.get('/oauth2/validate', { authorization: `OAuth ${first.access_token}` })).json();
    assert.deepEqual(info, {
      client_id: client.id,
      login: demoLogin,
      scopes: ['user:read:broadcast'],
      user_id: String(t.seed?.demoUserId),
      expires_in: t.config.userTokenTtl,
    });

    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token });
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    const second = refreshed.json();
    assert.notEqual(second.access_token, first.access_token);
    assert.notEqual(second.refresh_token, first.refresh_token);
    assert.deepEqual(second.scope, ['user:read:broadcast']);
    // Rotation: the spent refresh token is dead.
    assertTokenError(
      await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token }),
      400,
      'Invalid refresh token',
    );
    assert.equal((await t.get('/helix/games/top?first=1', bearer(second.access_token))).statusCode, 200);

    const revoked = await form('/oauth2/revoke', { client_id: client.id, token: second.access_token });
    assert.equal(revoked.statusCode, 200);
    assert.equal(revoked.body, '');
    const after = await t.get('/helix/games/top?first=1', bearer(second.access_token));
    assert.equal(after.statusCode, 401);
    assert.deepEqual(after.json(), { error: 'Unauthorized', status: 401, message: 'Invalid OAuth token' });
    // Revoking the access token ends its refresh token too.
    assertTokenError(
      await token({ grant_type: 'refresh_token', refresh_token: second.refresh_token }),
      400,
      'Invalid refresh token',
    );
  });

  it('lets the person type a login instead of picking one, and re-asks for an unknown login', async () => {
    const users = await t.store.db
      .selectFrom('users')
      .select(['id', 'login'])
      .orderBy('id', 'desc')
      .limit(1)
      .execute();
    const last = users[0] as { id: number; login: string };
    const unknown = await consent({ response_type: 'code' }, { login: 'no_such_login_here' });
    assert.equal(unknown.statusCode, 400);
    assert.match(unknown.body, /There is no user with the login &quot;no_such_login_here&quot;/);
    assert.equal(parseConsentForm(unknown.body).action, '/oauth2/authorize', 'the form is shown again');

    const res = await consent({ response_type: 'code' }, { login: last.login.toUpperCase() });
    assert.equal(res.statusCode, 302);
    const code = new URL(String(res.headers.location)).searchParams.get('code') as string;
    const tok = (await token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT })).json();
    const info = (await t.get('/oauth2/validate', bearer(tok.access_token))).json();
    assert.equal(info.user_id, String(last.id));
    assert.equal(info.login, last.login);
    assert.deepEqual(info.scopes, []);
  });

  it('sends access_denied with the state back when the person cancels', async () => {
    const res = await consent({ response_type: 'code', state: 'abc' }, { decision: 'deny' });
    assert.equal(res.statusCode, 302);
    const back = new URL(String(res.headers.location));
    assert.equal(back.searchParams.get('error'), 'access_denied');
    assert.equal(back.searchParams.get('state'), 'abc');
    assert.equal(back.searchParams.get('code'), null);
  });

  it('runs the implicit flow: the token comes in the URL fragment with the state', async () => {
    const res = await consent({
      response_type: 'token',
      scope: 'analytics:read:games user:read:broadcast',
      state: 'st',
    });
    assert.equal(res.statusCode, 302);
    const back = new URL(String(res.headers.location));
    assert.equal(back.search, '', 'nothing in the query string');
    const frag = new URLSearchParams(back.hash.slice(1));
    assert.equal(frag.get('state'), 'st');
    assert.equal(frag.get('token_type'), 'bearer');
    assert.equal(frag.get('scope'), 'analytics:read:games user:read:broadcast');
    const access = frag.get('access_token') as string;
    const info = (await t.get('/oauth2/validate', bearer(access))).json();
    assert.equal(info.login, demoLogin);
    assert.deepEqual(info.scopes, ['analytics:read:games', 'user:read:broadcast']);
  });

  it('accepts a code once, only for its client and redirect_uri, and only for 10 minutes', async () => {
    const codeOf = async () =>
      new URL(String((await consent({ response_type: 'code' })).headers.location)).searchParams.get(
        'code',
      ) as string;
    const once = await codeOf();
    assert.equal(
      (await token({ grant_type: 'authorization_code', code: once, redirect_uri: REDIRECT })).statusCode,
      200,
    );
    assertTokenError(
      await token({ grant_type: 'authorization_code', code: once, redirect_uri: REDIRECT }),
      400,
      'Invalid authorization code',
    );

    const mismatched = await codeOf();
    assertTokenError(
      await token({
        grant_type: 'authorization_code',
        code: mismatched,
        redirect_uri: 'http://localhost:3000',
      }),
      400,
      'Parameter redirect_uri does not match registered URI',
    );

    const other = await t.store.db
      .insertInto('clients')
      .values({
        id: 'otherclient0000000000000000000',
        name: 'other',
        secret_hash: sha256('othersecret'),
        demo_secret: null,
        redirect_uris: JSON.stringify([REDIRECT]),
        created_at: 0,
      })
      .execute();
    assert.ok(other);
    const foreign = await codeOf();
    assertTokenError(
      await form('/oauth2/token', {
        client_id: 'otherclient0000000000000000000',
        client_secret: 'othersecret',
        grant_type: 'authorization_code',
        code: foreign,
        redirect_uri: REDIRECT,
      }),
      400,
      'Invalid authorization code',
    );

    const late = await codeOf();
    t.clock.advance(601_000);
    assertTokenError(
      await token({ grant_type: 'authorization_code', code: late, redirect_uri: REDIRECT }),
      400,
      'Invalid authorization code',
    );
  });

  it('refuses bad authorization requests: unchecked client or redirect_uri here, the rest via the redirect', async () => {
    const plain = (q: Record<string, string>) => t.get(`/oauth2/authorize?${new URLSearchParams(q)}`);
    assertTokenError(
      await plain({ redirect_uri: REDIRECT, response_type: 'code' }),
      400,
      'missing client id',
    );
    assertTokenError(
      await plain({ client_id: 'nosuchclient', redirect_uri: REDIRECT, response_type: 'code' }),
      400,
      'invalid client',
    );
    assertTokenError(
      await plain({ client_id: client.id, response_type: 'code' }),
      400,
      'missing redirect_uri',
    );
    for (const uri of [
      'http://evil.example/cb',
      `${REDIRECT}/more`,
      'http://localhost:3000/auth/callback?x=1',
    ]) {
      assertTokenError(
        await plain({ client_id: client.id, redirect_uri: uri, response_type: 'code' }),
        400,
        'Parameter redirect_uri does not match registered URI',
      );
    }
    const badScope = await t.get(
      authorizeUrl({ response_type: 'code', scope: 'user:read:broadcast nope:x', state: 'q' }),
    );
    assert.equal(badScope.statusCode, 302);
    const back = new URL(String(badScope.headers.location));
    assert.equal(back.searchParams.get('error'), 'invalid_scope');
    assert.equal(back.searchParams.get('error_description'), "invalid scope requested: 'nope:x'");
    assert.equal(back.searchParams.get('state'), 'q');

    const badType = await t.get(authorizeUrl({ response_type: 'id_token', state: 'q' }));
    assert.equal(badType.statusCode, 302);
    assert.equal(
      new URL(String(badType.headers.location)).searchParams.get('error'),
      'unsupported_response_type',
    );

    // The form post is checked again: a tampered redirect_uri gets no code.
    const tampered = await form('/oauth2/authorize', {
      client_id: client.id,
      redirect_uri: 'http://evil.example/cb',
      response_type: 'code',
      user: demoLogin,
      decision: 'allow',
    });
    assertTokenError(tampered, 400, 'Parameter redirect_uri does not match registered URI');
  });

  it('issues app tokens for client_credentials, with parameters in the query string or the form body', async () => {
    const q = new URLSearchParams({
      client_id: client.id,
      client_secret: client.secret,
      grant_type: 'client_credentials',
    });
    const fromQuery = await t.inject({ method: 'POST', url: `/oauth2/token?${q}` });
    const fromBody = await token({ grant_type: 'client_credentials' });
    for (const res of [fromQuery, fromBody]) {
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.deepEqual(Object.keys(body).sort(), ['access_token', 'expires_in', 'token_type']);
      assert.equal(body.expires_in, t.config.appTokenTtl);
      const info = (await t.get('/oauth2/validate', bearer(body.access_token))).json();
      assert.deepEqual(info, { client_id: client.id, scopes: [], expires_in: t.config.appTokenTtl });
      assert.equal((await t.get('/helix/games/top?first=1', bearer(body.access_token))).statusCode, 200);
    }
  });

  it('answers every token-endpoint error in the token service shape', async () => {
    const cases: [Record<string, string>, number, string][] = [
      [{ grant_type: 'client_credentials' }, 400, 'missing client id'],
      [
        { client_id: 'nosuchclient', client_secret: 'x', grant_type: 'client_credentials' },
        400,
        'invalid client',
      ],
      [{ client_id: client.id, grant_type: 'client_credentials' }, 403, 'invalid client secret'],
      [
        { client_id: client.id, client_secret: 'wrong', grant_type: 'client_credentials' },
        403,
        'invalid client secret',
      ],
      [{ client_id: client.id, client_secret: client.secret }, 400, 'missing grant_type'],
      [
        { client_id: client.id, client_secret: client.secret, grant_type: 'password' },
        400,
        'unsupported grant type',
      ],
      [
        {
          client_id: client.id,
          client_secret: client.secret,
          grant_type: 'client_credentials',
          scope: 'bad:scope',
        },
        400,
        "invalid scope requested: 'bad:scope'",
      ],
      [
        { client_id: client.id, client_secret: client.secret, grant_type: 'authorization_code' },
        400,
        'missing code',
      ],
      [
        {
          client_id: client.id,
          client_secret: client.secret,
          grant_type: 'authorization_code',
          code: 'nope',
          redirect_uri: REDIRECT,
        },
        400,
        'Invalid authorization code',
      ],
      [
        { client_id: client.id, client_secret: client.secret, grant_type: 'refresh_token' },
        400,
        'missing refresh token',
      ],
      [
        {
          client_id: client.id,
          client_secret: client.secret,
          grant_type: 'refresh_token',
          refresh_token: 'nope',
        },
        400,
        'Invalid refresh token',
      ],
    ];
    for (const [params, status, message] of cases)
      assertTokenError(await form('/oauth2/token', params), status, message);

    // An app token has no refresh token: presenting it as one is refused.
    const app = (await token({ grant_type: 'client_credentials' })).json().access_token;
    assertTokenError(
      await token({ grant_type: 'refresh_token', refresh_token: app }),
      400,
      'Invalid refresh token',
    );

    const twice = await t.inject({
      method: 'POST',
      url: `/oauth2/token?grant_type=client_credentials&grant_type=refresh_token&client_id=${client.id}&client_secret=${client.secret}`,
    });
    assertTokenError(twice, 400, 'parameter grant_type may be given only once');

    const badJson = await t.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { 'content-type': 'application/json' },
      payload: '{"client_id":',
    });
    assert.equal(badJson.statusCode, 400);
    assert.deepEqual(Object.keys(badJson.json()).sort(), ['message', 'status']);
    // A JSON body that is not UTF-8 is refused where its first bad byte is, never read as U+FFFD.
    const notUtf8 = await t.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { 'content-type': 'application/json' },
      payload: Buffer.concat([
        Buffer.from(`{"grant_type":"client_credentials","client_id":"${client.id}","client_secret":"`),
        Buffer.from([0xc3, 0x28]),
        Buffer.from('"}'),
      ]),
    });
    assertTokenError(notUtf8, 400, `body: is not valid UTF-8 (byte offset ${67 + client.id.length})`);
    const xml = await t.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { 'content-type': 'application/xml' },
      payload: '<a/>',
    });
    assertTokenError(xml, 415, 'Unsupported Media Type');
    const huge = await form('/oauth2/token', { client_id: 'x'.repeat(70_000) });
    assertTokenError(huge, 413, 'Request body is too large');
  });

  it('validates tokens given as OAuth or Bearer, with expires_in following the clock', async () => {
    const access = await t.userToken(['user:read:broadcast'], undefined, 120);
    for (const scheme of ['OAuth', 'Bearer', 'oauth']) {
      const res = await t.get('/oauth2/validate', { authorization: `${scheme} ${access}` });
      assert.equal(res.statusCode, 200, scheme);
      assert.equal(res.json().expires_in, 120);
    }
    t.clock.advance(100_000);
    assert.equal((await t.get('/oauth2/validate', bearer(access))).json().expires_in, 20);
    t.clock.advance(20_000);
    assertTokenError(await t.get('/oauth2/validate', bearer(access)), 401, 'invalid access token');
    assertTokenError(await t.get('/oauth2/validate'), 401, 'missing authorization token');
    assertTokenError(await t.get('/oauth2/validate', bearer('garbage')), 401, 'invalid access token');
    assertTokenError(
      await t.get('/oauth2/validate', { authorization: `Basic ${access}` }),
      401,
      'invalid access token',
    );
  });

  it('refreshes a user token whose access token has expired', async () => {
    const minted = (
      await form('/auth/authorize', {
        client_id: client.id,
        client_secret: client.secret,
        grant_type: 'user_token',
        user_id: String(t.seed?.demoUserId),
        scope: 'user:read:broadcast',
      })
    ).json();
    t.clock.advance((t.config.userTokenTtl + 1) * 1000);
    assert.equal((await t.get('/helix/games/top', bearer(minted.access_token))).statusCode, 401);
    const res = await token({ grant_type: 'refresh_token', refresh_token: minted.refresh_token });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await t.get('/helix/games/top?first=1', bearer(res.json().access_token))).statusCode, 200);
  });

  it('revokes by access or refresh token, only for the token own client, with its errors', async () => {
    const mint = async () =>
      (
        await form('/auth/authorize', {
          client_id: client.id,
          client_secret: client.secret,
          grant_type: 'user_token',
          user_id: String(t.seed?.demoUserId),
        })
      ).json();
    const a = await mint();
    assertTokenError(await form('/oauth2/revoke', { token: a.access_token }), 400, 'missing client id');
    assertTokenError(
      await form('/oauth2/revoke', { client_id: 'nosuchclient', token: a.access_token }),
      400,
      'invalid client',
    );
    assertTokenError(await form('/oauth2/revoke', { client_id: client.id }), 400, 'missing oauth token');
    assertTokenError(
      await form('/oauth2/revoke', { client_id: client.id, token: 'nope' }),
      400,
      'Invalid token',
    );
    // Another client cannot revoke this client's token.
    await t.store.db
      .insertInto('clients')
      .values({
        id: 'thirdclient',
        name: 'third',
        secret_hash: sha256('s'),
        demo_secret: null,
        redirect_uris: '[]',
        created_at: 0,
      })
      .execute();
    assertTokenError(
      await form('/oauth2/revoke', { client_id: 'thirdclient', token: a.access_token }),
      400,
      'Invalid token',
    );
    assert.equal((await t.get('/helix/games/top?first=1', bearer(a.access_token))).statusCode, 200);

    const b = await mint();
    const byRefresh = await t.inject({
      method: 'POST',
      url: `/oauth2/revoke?client_id=${client.id}&token=${b.refresh_token}`,
    });
    assert.equal(byRefresh.statusCode, 200);
    assert.equal((await t.get('/helix/games/top?first=1', bearer(b.access_token))).statusCode, 401);
  });

  it('serves /auth/token, /auth/validate and /auth/revoke as aliases', async () => {
    const q = new URLSearchParams({
      client_id: client.id,
      client_secret: client.secret,
      grant_type: 'client_credentials',
    });
    const res = await t.inject({ method: 'POST', url: `/auth/token?${q}` });
    assert.equal(res.statusCode, 200);
    const access = res.json().access_token;
    assert.equal(
      (await t.get('/auth/validate', { authorization: `OAuth ${access}` })).json().client_id,
      client.id,
    );
    assertTokenError(await t.get('/auth/validate'), 401, 'missing authorization token');
    const revoked = await t.inject({
      method: 'POST',
      url: `/auth/revoke?client_id=${client.id}&token=${access}`,
    });
    assert.equal(revoked.statusCode, 200);
    assertTokenError(await t.get('/auth/validate', bearer(access)), 401, 'invalid access token');
  });

  it('mints user tokens directly with POST /auth/authorize (grant_type=user_token)', async () => {
    const base = { client_id: client.id, client_secret: client.secret, grant_type: 'user_token' };
    const other = (
      await t.store.db.selectFrom('users').select(['id', 'login']).orderBy('id', 'desc').limit(1).execute()
    )[0];
    const q = new URLSearchParams({
      ...base,
      user_id: String(other?.id),
      scope: 'channel:read:subscriptions user:read:broadcast',
    });
    const res = await t.inject({ method: 'POST', url: `/auth/authorize?${q}` });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), [
      'access_token',
      'expires_in',
      'refresh_token',
      'scope',
      'token_type',
    ]);
    assert.deepEqual(body.scope, ['channel:read:subscriptions', 'user:read:broadcast']);
    const info = (await t.get('/auth/validate', { authorization: `OAuth ${body.access_token}` })).json();
    assert.equal(info.user_id, String(other?.id));
    assert.equal(info.login, other?.login);

    assertTokenError(await form('/auth/authorize', { ...base, user_id: '1' }), 400, 'invalid user_id');
    assertTokenError(await form('/auth/authorize', { ...base, user_id: 'abc' }), 400, 'invalid user_id');
    assertTokenError(await form('/auth/authorize', base), 400, 'missing user_id');
    assertTokenError(
      await form('/auth/authorize', { ...base, user_id: String(other?.id), scope: 'x:y' }),
      400,
      "invalid scope requested: 'x:y'",
    );
    assertTokenError(
      await form('/auth/authorize', {
        ...base,
        grant_type: 'client_credentials',
        user_id: String(other?.id),
      }),
      400,
      'unsupported grant type',
    );
    assertTokenError(
      await form('/auth/authorize', { ...base, client_secret: 'wrong', user_id: String(other?.id) }),
      403,
      'invalid client secret',
    );
  });
});

forEachStore('mock-server units', (kind: StoreKind) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(kind);
  });
  after(() => t.close());

  it('lists the demo clients with their secrets, in the mock API shape, and no client without a known secret', async () => {
    await t.store.db
      .insertInto('clients')
      .values({
        id: 'createdclient',
        name: 'made by the CLI',
        secret_hash: sha256('s'),
        demo_secret: null,
        redirect_uris: '[]',
        created_at: 0,
      })
      .execute();
    const res = await t.get('/units/clients');
    assert.equal(res.statusCode, 200);
    const body = res.json();
    const demo = await t.store.db
      .selectFrom('clients')
      .selectAll()
      .where('demo_secret', 'is not', null)
      .execute();
    assert.deepEqual(body, {
      cursor: '',
      total: demo.length,
      data: demo.map((c) => ({ ID: c.id, Secret: c.demo_secret, Name: c.name, IsExtension: false })),
    });
    assert.ok(body.data.every((c: { ID: string }) => c.ID !== 'createdclient'));
  });

  it('lists every user once over the pages of /units/users, by id, with a bad cursor a 400', async () => {
    const seen: string[] = [];
    let cursor = '';
    do {
      const res = await t.get(`/units/users?first=60${cursor ? `&after=${encodeURIComponent(cursor)}` : ''}`);
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.equal(body.total, 200);
      for (const u of body.data) seen.push(u.id);
      cursor = body.cursor;
    } while (cursor);
    const ids = (await t.store.db.selectFrom('users').select('id').orderBy('id').execute()).map((r) =>
      String(r.id),
    );
    assert.deepEqual(seen, ids);

    const one = (await t.get('/units/users?first=1')).json().data[0];
    assert.deepEqual(Object.keys(one).sort(), [
      'broadcaster_type',
      'created_at',
      'description',
      'display_name',
      'id',
      'login',
      'type',
    ]);
    assert.equal(one.id, String(t.seed?.demoUserId));
    const bad = await t.get('/units/users?after=garbage');
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json(), { error: 'Bad Request', status: 400, message: 'Invalid cursor.' });
    assert.equal((await t.get('/units/users?first=101')).statusCode, 400);
  });
});
