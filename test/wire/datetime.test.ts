// Instants on the wire: every instant an answer carries is RFC 3339 in UTC, to the second, with
// `Z` (src/clock.ts `rfc3339`). Written through the admin API and read back through GET /clips, an
// instant comes back exactly as it went in, whatever its day and time: the first and last second
// of a day, of a month, of a leap day, of the Unix epoch and of year 9999, and instants drawn at
// random over those ten thousand years.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import fc from 'fast-check';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';

const ADMIN_TOKEN = 'admin-token-0123456789-0123456789-abcdef';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };

const EDGES = [
  '1970-01-01T00:00:00Z',
  '1970-01-01T00:00:01Z',
  '1970-01-01T23:59:59Z',
  '1999-12-31T23:59:59Z',
  '2000-01-01T00:00:00Z',
  '2000-02-29T12:34:56Z',
  '2024-02-29T23:59:59Z',
  '2026-06-15T09:05:07Z',
  '2100-03-01T00:00:00Z',
  '9999-12-31T23:59:59Z',
];
const LAST_SECOND = Date.UTC(9999, 11, 31, 23, 59, 59) / 1000;
const RANDOM = fc
  .sample(fc.integer({ min: 0, max: LAST_SECOND }), { numRuns: 60, seed: 20261123 })
  .map((s) => new Date(s * 1000).toISOString().replace('.000Z', 'Z'));

forEachStore('instants on the wire', (kind: StoreKind) => {
  let t: TestApp;
  let token: string;
  const post = async (plural: string, data: Record<string, unknown>) => {
    const res = await t.inject({
      method: 'POST',
      url: `/admin/${plural}`,
      headers: admin,
      payload: JSON.stringify(data),
    });
    assert.equal(res.statusCode, 201, `${plural}: ${res.body}`);
  };

  before(async () => {
    t = await startTestApp(kind, { users: 20, config: { adminToken: ADMIN_TOKEN } });
    token = await t.appToken();
    await post('users', {
      id: '910001',
      login: 'instants',
      display_name: 'Instants',
      broadcaster_type: '',
      description: '',
      created_at: '2015-03-01T10:00:00Z',
    });
    await post('games', { id: '991001', name: 'Instant Quest', igdb_id: '', owner_id: '910001' });
  });
  after(() => t.close());

  it('reads back every instant exactly as it was written', async () => {
    const instants = [...EDGES, ...RANDOM];
    const ids = instants.map((_, i) => `InstantClip-${i}`);
    for (const [i, created_at] of instants.entries())
      await post('clips', {
        id: ids[i],
        broadcaster_id: '910001',
        creator_id: '910001',
        video_id: '',
        game_id: '991001',
        language: 'en',
        title: `clip ${i}`,
        view_count: i,
        created_at,
        duration: 10,
        vod_offset: null,
        is_featured: false,
      });
    const res = await t.get(`/helix/clips?${ids.map((id) => `id=${id}`).join('&')}`, bearer(token));
    assert.equal(res.statusCode, 200, res.body);
    const got = new Map(
      (res.json().data as { id: string; created_at: string }[]).map((c) => [c.id, c.created_at]),
    );
    for (const [i, created_at] of instants.entries())
      assert.equal(got.get(ids[i] as string), created_at, ids[i]);
  });
});
