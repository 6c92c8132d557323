// Streams through the admin API: POST goes live, PATCH sets the viewer count, DELETE goes offline,
// and GET /games/top and GET /streams order by the new figures at once (the games' counts follow
// the streams table through its triggers, migration 008).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { ADMIN_TOKEN, bearer, forEachStore, startTestApp, type TestApp } from '../../support/apps.ts';
import type { StoreKind } from '../../support/stores.ts';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

forEachStore('admin API: streams live, offline and viewer counts', (kind: StoreKind) => {
  let t: TestApp;
  let token: string;
  let userId: string;
  const write = (method: 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) =>
    t.inject({
      method,
      url,
      headers: body === undefined ? admin : { ...admin, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
  const topGames = async () =>
    (await t.get('/helix/games/top?first=100', bearer(token))).json().data.map((g: { id: string }) => g.id);
  const streams = async () =>
    (await t.get('/helix/streams?first=100', bearer(token)))
      .json()
      .data.map((s: { id: string; viewer_count: number }) => [s.id, s.viewer_count]);
  /** The store's live games in /games/top order, from the streams table itself. */
  const expectedTop = async () => {
    const rows = await t.store.db.selectFrom('streams').select(['game_id', 'viewer_count']).execute();
    const sums = new Map<number, number>();
    for (const r of rows) sums.set(r.game_id, (sums.get(r.game_id) ?? 0) + r.viewer_count);
    return [...sums]
      .sort((a, b) => b[1] - a[1] || b[0] - a[0])
      .slice(0, 100)
      .map(([id]) => String(id));
  };

  before(async () => {
    t = await startTestApp(kind, { users: 40, config: { adminToken: ADMIN_TOKEN } });
    token = await t.appToken();
    // a user who is not live yet
    userId = '995100';
    const user = await write('POST', '/admin/users', {
      id: userId,
      login: 'launcher',
      display_name: 'Launcher',
      broadcaster_type: '',
      description: '',
      created_at: '2024-01-01T00:00:00Z',
    });
    assert.equal(user.statusCode, 201, user.body);
    const game = await write('POST', '/admin/games', { id: '995001', name: 'Brand New Game' });
    assert.equal(game.statusCode, 201, game.body);
  });
  after(() => t.close());

  it("the seeded counts are the streams table's", async () => {
    assert.deepEqual(await topGames(), await expectedTop());
  });

  it('a stream going live with the most viewers puts its game first in /games/top and itself first in /streams', async () => {
    assert.ok(!(await topGames()).includes('995001'));
    const res = await write('POST', '/admin/streams', {
      id: '96000001',
      user_id: userId,
      game_id: '995001',
      title: 'Launch day',
      tags: [],
      viewer_count: 10_000_000,
      started_at: '2026-06-15T11:00:00Z',
      language: 'en',
      is_mature: false,
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal((await topGames())[0], '995001');
    assert.deepEqual((await streams())[0], ['96000001', 10_000_000]);
    assert.deepEqual(await topGames(), await expectedTop());
  });

  it('PATCH viewer_count reorders both listings', async () => {
    const res = await write('PATCH', '/admin/streams/96000001', { viewer_count: 0 });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual((await streams()).at(-1), ['96000001', 0]);
    assert.deepEqual(await topGames(), await expectedTop());
    assert.notEqual((await topGames())[0], '995001');
  });

  it('DELETE takes the stream offline and its game out of /games/top', async () => {
    const res = await write('DELETE', '/admin/streams/96000001');
    assert.equal(res.statusCode, 204, res.body);
    assert.ok(!(await streams()).some(([id]: [string]) => id === '96000001'));
    assert.ok(!(await topGames()).includes('995001'));
    assert.deepEqual(await topGames(), await expectedTop());
  });
});
