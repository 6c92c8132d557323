// Text no store can hold (src/store/text.ts) is a 400 naming the parameter, on both stores: a NUL
// in any text parameter of every operation (PostgreSQL refuses it; SQLite would keep it and answer
// differently), in the token service's parameters from the query string, a form or a JSON body, and
// a lone surrogate where a JSON body can carry one. The admin API's records: test/routes/admin/refusals.test.ts.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { OPERATION_SCOPES } from '../../src/auth/scopes.ts';
import { OPERATION_PREFIXES } from '../../src/http/operation.ts';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';

const NUL_RULE = 'must not contain a NUL character (U+0000)';

interface DocParam {
  name: string;
  in: string;
  schema: { type?: string; items?: { type?: string } };
}
type Doc = { paths: Record<string, Record<string, { parameters?: DocParam[] }>> };

forEachStore('text a store cannot hold', (kind: StoreKind) => {
  let t: TestApp;
  let client: { id: string; secret: string };
  before(async () => {
    t = await startTestApp(kind, { users: 20, config: { legacy: true } });
    const units = (await t.get('/units/clients')).json() as { data: { ID: string; Secret: string }[] };
    client = { id: units.data[0]?.ID as string, secret: units.data[0]?.Secret as string };
  });
  after(() => t.close());

  it('a NUL in any text parameter of any operation (its writes too), under every prefix, is a 400 naming it', async () => {
    const token = await t.userToken(OPERATION_SCOPES);
    const doc = (await t.get('/openapi.json')).json() as Doc;
    let checked = 0;
    for (const [path, ops] of Object.entries(doc.paths)) {
      if (!path.startsWith(OPERATION_PREFIXES[0]) && !path.startsWith('/units/')) continue;
      for (const [method, op] of Object.entries(ops))
        for (const p of op.parameters ?? []) {
          if (p.in !== 'query' || (p.schema.type ?? p.schema.items?.type) !== 'string') continue;
          for (const prefix of path.startsWith('/units/') ? [''] : OPERATION_PREFIXES) {
            const url = `${prefix}${path.slice(prefix ? OPERATION_PREFIXES[0].length : 0)}?${p.name}=a%00b`;
            const res = await t.inject({
              method: method.toUpperCase() as 'GET',
              url,
              headers: { ...bearer(token), 'client-id': t.seed?.demoClientId as string },
            });
            assert.equal(res.statusCode, 400, `${method} ${url}: ${res.body}`);
            assert.equal(
              res.json().message,
              `The parameter "${p.name}" was malformed: the value ${NUL_RULE}`,
              `${method} ${url}`,
            );
            checked++;
          }
        }
    }
    assert.ok(checked > 40, `${checked} parameters checked`);
  });

  it('the token service refuses a NUL in a parameter given in the query string, a form or JSON', async () => {
    const cases: [string, string, Record<string, string>, string][] = [
      ['POST', '/oauth2/token', { client_id: 'a\0b', grant_type: 'client_credentials' }, 'client_id'],
      [
        'POST',
        '/auth/token',
        { client_id: client.id, client_secret: 's\0', grant_type: 'client_credentials' },
        'client_secret',
      ],
      ['POST', '/oauth2/revoke', { client_id: client.id, token: 't\0' }, 'token'],
      ['POST', '/auth/authorize', { client_id: 'a\0b' }, 'client_id'],
      ['GET', '/oauth2/authorize', { client_id: 'a\0b', redirect_uri: 'http://localhost:3000' }, 'client_id'],
      [
        'POST',
        '/oauth2/authorize',
        {
          client_id: client.id,
          redirect_uri: 'http://localhost:3000',
          response_type: 'code',
          decision: 'allow',
          login: 'ada\0',
        },
        'login',
      ],
    ];
    for (const [method, url, params, name] of cases) {
      const query = new URLSearchParams(params).toString();
      const ways = [
        { method, url: `${url}?${query}` },
        ...(method === 'POST'
          ? [
              {
                method,
                url,
                headers: { 'content-type': 'application/x-www-form-urlencoded' },
                payload: query,
              },
              {
                method,
                url,
                headers: { 'content-type': 'application/json' },
                payload: JSON.stringify(params),
              },
            ]
          : []),
      ];
      for (const way of ways) {
        const res = await t.inject(way as Parameters<TestApp['inject']>[0]);
        const label = `${method} ${url} ${JSON.stringify(way)}`;
        assert.equal(res.statusCode, 400, `${label}: ${res.body}`);
        assert.deepEqual(res.json(), { status: 400, message: `parameter ${name} ${NUL_RULE}` }, label);
      }
    }
  });

  it('the token service refuses a lone surrogate in a JSON body', async () => {
    const res = await t.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { 'content-type': 'application/json' },
      payload: '{"client_id": "a\\ud800", "grant_type": "client_credentials"}',
    });
    assert.equal(res.statusCode, 400, res.body);
    assert.match(res.json().message, /^parameter client_id must be well-formed Unicode/);
  });
});
