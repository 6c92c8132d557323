// Errors everywhere in the Helix body: unknown paths, wrong methods, bad URLs, bodies sent where
// none is read, malformed HTTP on the raw socket, and a failing store; never a stack trace or SQL in
// a response. (Oversized, unparsable and unknown-type bodies of the token service: oauth.test.ts.)
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';

function assertHelixError(res: LightMyRequestResponse, status: number, message?: string | RegExp) {
  assert.equal(res.statusCode, status, res.body);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const body = res.json();
  assert.deepEqual(Object.keys(body).sort(), ['error', 'message', 'status']);
  assert.equal(body.status, status);
  if (typeof message === 'string') assert.equal(body.message, message);
  else if (message) assert.match(body.message, message);
}

/** Sends raw bytes to a listening server and returns what comes back before it closes. */
function rawExchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const s = connect(port, '127.0.0.1', () => s.write(request));
    s.on('data', (d) => {
      out += d;
    });
    s.on('end', () => resolve(out));
    s.on('close', () => resolve(out));
    s.on('error', reject);
  });
}

forEachStore('errors in the Helix body', (kind: StoreKind) => {
  let t: TestApp;
  let token: string;
  let port: number;
  before(async () => {
    t = await startTestApp(kind, { users: 20 });
    token = await t.appToken();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const addr = t.app.server.address();
    port = typeof addr === 'object' && addr ? addr.port : 0;
  });
  after(() => t.close());

  it('answers unknown paths with 404 under every prefix and method', async () => {
    for (const [method, url] of [
      ['GET', '/helix/nope'],
      ['POST', '/nope'],
      ['GET', '/oauth2/nope'],
      ['DELETE', '/units/users'],
      ['GET', '/auth/nope'],
    ] as const) {
      assertHelixError(await t.inject({ method, url }), 404, 'Not Found');
    }
  });

  it('answers other methods on an operation path with 405 and Allow: GET, HEAD', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      for (const prefix of ['/helix', '/mock']) {
        const res = await t.inject({ method, url: `${prefix}/games/top`, headers: bearer(token) });
        assertHelixError(res, 405, 'Method Not Allowed');
        assert.equal(res.headers.allow, 'GET, HEAD');
      }
    }
  });

  it('answers every method an operation path does not serve with 405, before the token, naming those it serves', async () => {
    // The writes are exactly those /openapi.json describes (test/http/openapi.test.ts lists them);
    // every other method of every operation's path, under both prefixes, is a 405.
    const doc = JSON.parse((await t.get('/openapi.json')).body) as { paths: Record<string, object> };
    const paths = Object.keys(doc.paths).filter((p) => p.startsWith('/helix/'));
    assert.ok(paths.length >= 18, `${paths.length} operation paths`);
    for (const path of paths) {
      const served = Object.keys(doc.paths[path] as object).map((m) => m.toUpperCase());
      const allow = served.flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m])).sort();
      for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const) {
        if (served.includes(method)) continue;
        for (const prefix of ['/helix', '/mock']) {
          const url = prefix + path.slice('/helix'.length);
          const res = await t.inject({ method, url });
          assertHelixError(res, 405, 'Method Not Allowed');
          assert.deepEqual(String(res.headers.allow).split(', ').sort(), allow, `${method} ${url}`);
        }
      }
    }
  });

  it('answers a URL with bad percent-encoding with 400', async () => {
    assertHelixError(await t.get('/helix/%zz', bearer(token)), 400, /not a valid url/);
  });

  it('refuses another method with 405 before reading its body (size or type cannot make it a 413/415)', async () => {
    const bodies = [
      { 'content-type': 'application/json', payload: JSON.stringify({ x: 'y'.repeat(70_000) }) },
      { 'content-type': 'application/json', payload: '{"x":' },
      { 'content-type': 'application/xml', payload: '<x/>' },
      { 'content-type': 'application/x-www-form-urlencoded', payload: 'a=b' },
    ];
    for (const { payload, ...headers } of bodies) {
      const res = await t.inject({ method: 'POST', url: '/helix/games/top', headers, payload });
      assertHelixError(res, 405, 'Method Not Allowed');
    }
  });

  it('ignores a body sent with a GET', async () => {
    const res = await t.inject({
      method: 'GET',
      url: '/helix/games/top?first=1',
      headers: {
        ...bearer(token),
        'client-id': t.seed?.demoClientId as string,
        'content-type': 'application/json',
      },
      payload: '{"broken":',
    });
    assert.equal(res.statusCode, 200);
  });

  it('answers malformed HTTP on the raw socket with the Helix body', async () => {
    const bad = await rawExchange(port, 'GET /helix/games/top HTTP/1.1\r\nHost: x\r\nNot a header\r\n\r\n');
    assert.match(bad, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.deepEqual(JSON.parse(bad.slice(bad.indexOf('\r\n\r\n') + 4)), {
      error: 'Bad Request',
      status: 400,
      message: 'Bad Request',
    });
    const huge = await rawExchange(port, `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    assert.match(huge, /^HTTP\/1\.1 431 /);
    assert.equal(JSON.parse(huge.slice(huge.indexOf('\r\n\r\n') + 4)).status, 431);
  });

  // Destructive: runs last. A store whose table is gone fails every query of the operation.
  it('answers a failing query with 500 Internal Server Error, no SQL, no stack trace', async () => {
    await t.store.db.schema.dropTable('games').execute();
    const res = await t.get('/helix/games/top', bearer(token));
    assertHelixError(res, 500, 'Internal Server Error');
    assert.doesNotMatch(res.body, /select|games|sqlite|relation|\bat\s/i);
  });
});
