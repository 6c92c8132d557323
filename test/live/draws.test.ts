// The live world draws users and games uniformly over the rows, whatever their ids: a user or a game
// written far outside the demo data's id ranges (the admin API's example user 900001, an imported
// catalogue) is drawn as often as any other row, and the world keeps moving as on the demo store.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachStore, startTestApp, TEST_NOW, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';

const ADMIN = 'live-admin-token-0123456789abcdefghij';
const admin = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
const live = { adminToken: ADMIN, live: true, liveRate: 0, liveSeed: 7 };

/** Below the demo users' ids (41,000,000 and up), as in docs/admin.md's example. */
const LOW_USER = 900001;
/** Above the demo games' ids (20,000 to about 20,520): the highest id a record may have. */
const HIGH_GAME = 2 ** 53 - 1;
const EVENTS = 400;

type Kinds = Record<string, number>;

async function post(t: TestApp, url: string, body: unknown) {
  const res = await t.inject({ method: 'POST', url, headers: admin, payload: JSON.stringify(body) });
  assert.ok(res.statusCode < 300, `${url}: ${res.statusCode} ${res.body}`);
  return res.json();
}

/** Every record of `plural`, read page by page as GET /admin/<plural> lists them. */
async function listed(t: TestApp, plural: string): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  let cursor: string | undefined;
  do {
    const res = await t.inject({
      method: 'GET',
      url: `/admin/${plural}?first=100${cursor ? `&after=${cursor}` : ''}`,
      headers: admin,
    });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    rows.push(...body.data);
    cursor = body.pagination.cursor;
  } while (cursor !== undefined);
  return rows;
}

forEachStore('the live world draws over the rows, whatever their ids', (kind: StoreKind) => {
  let demo: TestApp;
  let sparse: TestApp;

  before(async () => {
    // Two stores with the same demo data; one of them also holds a user below the demo users' ids
    // and a game above the demo games', written through the admin API. Both worlds have one seed.
    [demo, sparse] = await Promise.all([
      startTestApp(kind, { config: live }),
      startTestApp(kind, { config: live }),
    ]);
    await post(sparse, '/admin/users', {
      id: String(LOW_USER),
      login: 'ada',
      display_name: 'Ada',
      broadcaster_type: '',
      description: '',
      created_at: '2024-01-01T00:00:00Z',
    });
    await post(sparse, '/admin/games', { id: String(HIGH_GAME), name: 'Far Away Game' });
  });
  after(async () => {
    await Promise.all([demo, sparse].map((t) => t.close()));
  });

  it('subscriptions and follows are made and streams stay live as on the demo store', async () => {
    const users = (await listed(demo, 'users')).length;
    const games = (await listed(demo, 'games')).length;
    // Both worlds step at once: each store is its own.
    const ran = await Promise.all(
      [demo, sparse].map(async (t) => {
        const res = await t.inject({
          method: 'POST',
          url: '/admin/live/step',
          headers: admin,
          payload: JSON.stringify({ events: EVENTS }),
        });
        assert.equal(res.statusCode, 200, res.body);
        return { kinds: res.json().kinds as Kinds, streams: await listed(t, 'streams') };
      }),
    );
    const kinds = ran.map((r) => r.kinds);
    const streams = ran.map((r) => r.streams);
    const [onDemo, onSparse] = kinds as [Kinds, Kinds];
    // One more user among 200 and one more game among 40 change the draws only slightly: each kind
    // happens about as often on both stores (half as often at the very least).
    for (const k of ['subscription', 'follow', 'live', 'clip', 'video'])
      assert.ok(
        (onSparse[k] as number) >= (onDemo[k] as number) / 2 && (onDemo[k] as number) > 0,
        `${k}: ${onSparse[k]} on the store with far ids, ${onDemo[k]} on the demo store`,
      );
    // The share of users live stays near the world's 15%: as many streams on both, within a half.
    const [liveDemo, liveSparse] = streams.map((s) => s.length) as [number, number];
    assert.ok(liveDemo >= users * 0.1, `${liveDemo} streams live on the demo store`);
    assert.ok(
      liveSparse >= liveDemo / 2,
      `${liveSparse} streams live, against ${liveDemo} on the demo store`,
    );

    // The far rows are drawn in proportion, as one row among the others (1 in 201 users, 1 in 41
    // games), not for every draw that lands in the id gap beside them: among the clips and streams
    // the world made (at the clock's instant, which stands still), few name them.
    const now = new Date(TEST_NOW).toISOString().replace('.000Z', 'Z');
    const clips = (await listed(sparse, 'clips')).filter((c) => c.created_at === now);
    const newStreams = (streams[1] as Record<string, unknown>[]).filter((s) => s.started_at === now);
    const byGame = [...clips, ...newStreams];
    assert.ok(byGame.length >= 20, `${byGame.length} new clips and streams`);
    const farGame = byGame.filter((r) => r.game_id === String(HIGH_GAME)).length;
    assert.ok(
      farGame <= Math.max(3, (byGame.length * 3) / (games + 1)),
      `${farGame} of ${byGame.length} name the far game`,
    );
    const byUser = [
      ...clips.flatMap((c) => [c.broadcaster_id, c.creator_id]),
      ...newStreams.map((s) => s.user_id),
    ];
    const lowUser = byUser.filter((id) => id === String(LOW_USER)).length;
    assert.ok(
      lowUser <= Math.max(3, (byUser.length * 3) / (users + 1)),
      `${lowUser} of ${byUser.length} name the low user`,
    );
  });
});
