// The log, on both stores: one JSON line per request with its id, route, status and time; no secret
// in any line, neither the ones clients put in query strings (pyTwitchAPI's token calls, a
// revocation's token) nor an Authorization header, nor one an error message quotes; and from the
// real command line, stdout carries nothing but those JSON lines while the banner goes to stderr.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, it } from 'node:test';
import { forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { type HelixdProcess, serveHelixd } from '../support/process.ts';
import { cliDb, tempStore } from '../support/stores.ts';

type Line = Record<string, unknown>;

/** A stream that keeps every log line written to it. */
function logSink() {
  let text = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return {
    stream,
    text: () => text,
    lines: (): Line[] =>
      text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Line),
  };
}

forEachStore('the request log', (kind) => {
  const logs = logSink();
  let t: TestApp;
  let client: { ID: string; Secret: string };
  before(async () => {
    t = await startTestApp(kind, { users: 10, logs: logs.stream });
    [client] = (await t.get('/units/clients')).json().data;
  });
  after(() => t.close());

  const post = (url: string, headers: Record<string, string> = {}) =>
    t.inject({ method: 'POST', url, headers: { 'content-type': 'application/octet-stream', ...headers } });
  const query = (p: Record<string, string>) => new URLSearchParams(p).toString();

  it('token requests with secrets in the query and an Authorization header log none of them', async () => {
    const bearer = await t.appToken();
    const creds = { client_id: client.ID, client_secret: client.Secret };
    // pyTwitchAPI's app token call: every parameter in the query string of a POST with an empty body.
    const app = await post(`/auth/token?${query({ ...creds, grant_type: 'client_credentials' })}`, {
      authorization: `Bearer ${bearer}`,
    });
    assert.equal(app.statusCode, 200);
    const user = await post(
      `/auth/authorize?${query({ ...creds, grant_type: 'user_token', user_id: String(t.seed?.demoUserId), scope: '' })}`,
    );
    const { access_token, refresh_token } = user.json();
    const refreshed = await post(
      `/oauth2/token?${query({ ...creds, grant_type: 'refresh_token', refresh_token })}`,
    );
    assert.equal(refreshed.statusCode, 200);
    const renewed = refreshed.json().access_token;
    // The secret's name with its underscore percent-encoded reads the same to the server.
    const encoded = await post(
      `/oauth2/token?client_id=${client.ID}&client%5Fsecret=${client.Secret}&grant_type=client_credentials`,
    );
    assert.equal(encoded.statusCode, 200);
    const code = await post(
      `/oauth2/token?${query({ ...creds, grant_type: 'authorization_code', code: 'c0de'.repeat(8) })}`,
    );
    assert.equal(code.statusCode, 400);
    const validated = await t.inject({
      method: 'GET',
      url: '/oauth2/validate',
      headers: { authorization: `OAuth ${renewed}` },
    });
    assert.equal(validated.statusCode, 200);
    const revoked = await post(`/oauth2/revoke?${query({ client_id: client.ID, token: renewed })}`);
    assert.equal(revoked.statusCode, 200);
    await t.get(`/nowhere?access_token=${access_token}&token_type=bearer&codes=1`);

    const text = logs.text();
    for (const secret of [client.Secret, bearer, access_token, refresh_token, renewed, 'c0de'.repeat(8)])
      assert.ok(!text.includes(secret), `a secret was logged: ${secret}`);
    const urls = logs.lines().map((l) => l.url);
    assert.ok(
      urls.includes(
        `/auth/token?client_id=${client.ID}&client_secret=[REDACTED]&grant_type=client_credentials`,
      ),
    );
    assert.ok(urls.includes(`/oauth2/revoke?client_id=${client.ID}&token=[REDACTED]`));
    assert.ok(urls.includes('/nowhere?access_token=[REDACTED]&token_type=bearer&codes=1'), 'only secrets go');
  });

  it('one line per request: its id, method, route, URL, status and time', async () => {
    const token = await t.appToken();
    const headers = { authorization: `Bearer ${token}`, 'x-request-id': `lb-${kind}-1` };
    assert.equal((await t.get('/helix/games/top?first=2', headers)).statusCode, 200);
    assert.equal((await t.get('/nowhere', { 'x-request-id': `lb-${kind}-2` })).statusCode, 404);
    const of = (id: string) => logs.lines().filter((l) => l.reqId === id);
    const [ok, ...moreOk] = of(`lb-${kind}-1`);
    assert.deepEqual(moreOk, [], 'one line for the request');
    assert.equal(ok?.msg, 'request completed');
    assert.equal(ok?.method, 'GET');
    assert.equal(ok?.route, '/helix/games/top');
    assert.equal(ok?.url, '/helix/games/top?first=2');
    assert.equal(ok?.statusCode, 200);
    assert.equal(typeof ok?.responseTime, 'number');
    const [missing, ...moreMissing] = of(`lb-${kind}-2`);
    assert.deepEqual(moreMissing, []);
    assert.equal(missing?.route, null);
    assert.equal(missing?.statusCode, 404);
  });

  it('an error that quotes a URL or a header is logged without the secret', () => {
    const token = 'q'.repeat(30);
    const err = new Error(`POST /oauth2/token?client_id=x&client_secret=${client.Secret} failed`);
    t.app.log.error({ err, headers: { authorization: `Bearer ${token}` } }, `failed with OAuth ${token}`);
    const line = logs.lines().at(-1) as Line & { err: { message: string; stack: string } };
    assert.equal(line.msg, 'failed with OAuth [REDACTED]');
    assert.equal(line.err.message, 'POST /oauth2/token?client_id=x&client_secret=[REDACTED] failed');
    assert.doesNotMatch(line.err.stack, new RegExp(client.Secret));
    assert.deepEqual(line.headers, { authorization: '[REDACTED]' });
    // A message about a token, not quoting one, keeps its words.
    t.app.log.warn('OAuth token is missing');
    assert.equal(logs.lines().at(-1)?.msg, 'OAuth token is missing');
  });
});

forEachStore('helixd serve: stdout is JSON log lines, the banner is on stderr', (kind) => {
  let served: HelixdProcess;
  before(async () => {
    const temp = await tempStore(kind);
    const db = cliDb({ url: temp.url, ...(temp.schema ? { schema: temp.schema } : {}) });
    served = await serveHelixd(['--db', db, '--users', '10'], { ready: false, cleanup: () => temp.drop() });
  });
  after(() => served.kill());

  it('serves, logs each request and its shutdown as JSON on stdout, and nothing else there', async () => {
    await served.waitFor(/^Try:[\s\S]*curl .*\n/m, 60_000, 'stderr');
    const stderr = served.stderr();
    assert.match(stderr, /^helixd: empty store, seeding demo data/m);
    const url = /serving (http:\/\/\S+)/.exec(stderr)?.[1] as string;
    const id = /demo client id +(\w+)/.exec(stderr)?.[1] as string;
    const secret = /demo client secret +(\w+)/.exec(stderr)?.[1] as string;
    const q = new URLSearchParams({ client_id: id, client_secret: secret, grant_type: 'client_credentials' });
    const res = await fetch(`${url}/auth/token?${q}`, { method: 'POST' });
    assert.equal(res.status, 200);
    // The token service decodes parameter names, so a secret's name may come percent-encoded; and
    // a malformed `name%3Dvalue` has the secret in its name. Each line redacts by the decoded name.
    const userToken = /Bearer ([a-z0-9]+)/.exec(stderr)?.[1] as string;
    const post = async (query: string, status: number) => {
      const r = await fetch(`${url}${query}`, { method: 'POST' });
      assert.equal(r.status, status, `${query}: ${await r.text()}`);
    };
    const refresh = 'r'.repeat(30);
    const code = 'c'.repeat(30);
    await post(`/oauth2/token?client_id=${id}&client_%73ecret=${secret}&grant_type=client_credentials`, 200);
    await post(`/oauth2/token?client_id=${id}&client_secret%3D${secret}&grant_type=client_credentials`, 403);
    await post(
      `/oauth2/token?client_id=${id}&client_secret=${secret}&grant_type=refresh_token&refresh_%74oken=${refresh}`,
      400,
    );
    await post(
      `/oauth2/token?client_id=${id}&client_secret=${secret}&grant_type=authorization_code&%63ode=${code}&redirect_uri=http://localhost`,
      400,
    );
    // A report URL's signature is a capability for the CSV while it lives.
    const auth = { authorization: `Bearer ${userToken}`, 'client-id': id };
    const report = await fetch(`${url}/helix/analytics/games`, { headers: auth });
    assert.equal(report.status, 200);
    const reportUrl = new URL((await report.json()).data[0].URL as string);
    const signature = reportUrl.searchParams.get('signature') as string;
    const csv = await fetch(`${url}${reportUrl.pathname}${reportUrl.search}`);
    assert.equal(csv.status, 200);
    await csv.text();
    await post(`/oauth2/revoke?client_id=${id}&%74oken=${userToken}`, 200);
    assert.equal((await served.stop('SIGTERM')).code, 0);
    const stdout = served.stdout();

    for (const [name, value] of Object.entries({ secret, refresh, code, userToken, signature }))
      assert.ok(
        !stdout.includes(value),
        `the ${name} is not on stdout: ${stdout
          .split('\n')
          .filter((l) => l.includes(value))
          .join('\n')}`,
      );
    const lines = stdout.split('\n').filter(Boolean);
    const parsed = lines.map((l) => JSON.parse(l) as Line);
    assert.ok(!stdout.includes(secret), 'the client secret is not on stdout');
    assert.doesNotMatch(stdout, /helixd is serving|seeding/);
    const token = parsed.find((l) => l.route === '/auth/token');
    assert.equal(
      token?.url,
      `/auth/token?client_id=${id}&client_secret=[REDACTED]&grant_type=client_credentials`,
    );
    assert.equal(token?.statusCode, 200);
    const last = parsed.at(-1);
    assert.equal(last?.signal, 'SIGTERM', lines.slice(-3).join('\n'));
    assert.match(String(last?.msg), /^shutting down/);
  });
});
