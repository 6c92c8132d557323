// The live world (`serve --live`): its events are a function of --live-seed and the store (the same
// seed on the same store writes the same rows), they go through the records' write path (the games'
// live counts and the subscription totals stay true), /metrics counts them, and the admin routes
// that step it refuse what they cannot do.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.ts';
import { rfc3339 } from '../../src/wire/datetime.ts';
import { hms } from '../../src/wire/links.ts';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { assertRefusedInProduction, PRODUCTION } from '../support/cli.ts';
import type { StoreKind } from '../support/stores.ts';

const ADMIN = 'live-admin-token-0123456789abcdefghij';
const admin = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };

const live = (seed: number) => ({ adminToken: ADMIN, live: true, liveRate: 0, liveSeed: seed });

async function step(t: TestApp, events: unknown) {
  return t.inject({
    method: 'POST',
    url: '/admin/live/step',
    headers: admin,
    payload: JSON.stringify({ events }),
  });
}

/** Every record of the kinds the world writes, as GET /admin/<plural> lists them, page by page. */
async function world(t: TestApp): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const plural of ['streams', 'games', 'clips', 'videos', 'subscriptions', 'follows', 'markers']) {
    const rows: unknown[] = [];
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
    out[plural] = rows;
  }
  return out;
}

forEachStore('the live world', (kind: StoreKind) => {
  let a: TestApp;
  let b: TestApp;
  let c: TestApp;

  before(async () => {
    // Three fresh stores with the same demo data; a and b share a seed, c has another.
    [a, b, c] = await Promise.all([
      startTestApp(kind, { config: live(42) }),
      startTestApp(kind, { config: live(42) }),
      startTestApp(kind, { config: live(43) }),
    ]);
  });
  after(async () => {
    await Promise.all([a, b, c].map((t) => t.close()));
  });

  it('the same seed on the same store makes the same events and writes the same rows', async () => {
    const before = await world(a);
    const kinds = [];
    for (const t of [a, b, c]) {
      const res = await step(t, 300);
      assert.equal(res.statusCode, 200, res.body);
      kinds.push(res.json().kinds);
    }
    assert.deepEqual(kinds[0], kinds[1]);
    const [wa, wb, wc] = [await world(a), await world(b), await world(c)];
    assert.deepEqual(wa, wb);
    assert.notDeepEqual(wa, wc, 'another seed makes other events');
    assert.notDeepEqual(wa, before, 'the world moved');
    // Every kind of event happened in 300.
    for (const [k, n] of Object.entries(kinds[0] as Record<string, number>))
      assert.ok(n > 0, `no ${k} event`);
    assert.equal(
      Object.values(kinds[0] as Record<string, number>).reduce((s, n) => s + n, 0),
      300,
    );
  });

  it('the derived data stays true: games live counts and subscription totals', async () => {
    await step(a, 200);
    const db = a.store.db;
    const wrong = await sql<{ id: number }>`
      select g.id from games g
      where g.viewer_count <> coalesce((select sum(s.viewer_count) from streams s where s.game_id = g.id), 0)
         or g.stream_count <> (select count(*) from streams s where s.game_id = g.id)`.execute(db);
    assert.deepEqual(wrong.rows, []);
    const totals = await sql<{ broadcaster_id: number }>`
      select t.broadcaster_id from subscription_totals t
      where t.total <> (select count(*) from subscriptions s where s.broadcaster_id = t.broadcaster_id)`.execute(
      db,
    );
    assert.deepEqual(totals.rows, []);
  });

  it('/metrics counts the events by kind; GET /admin/live says how the world runs', async () => {
    const res = await a.inject({ method: 'GET', url: '/admin/live', headers: admin });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { rate: 0, seed: 42, events: 500 });
    const metrics = (await a.get('/metrics')).body;
    const counted = [...metrics.matchAll(/^helixd_live_events_total\{kind="(\w+)"\} (\d+)$/gm)];
    assert.equal(counted.length, 8);
    assert.equal(
      counted.reduce((s, m) => s + Number(m[2]), 0),
      500,
    );
  });

  it('POST /admin/live/step refuses a body it cannot follow, naming the field', async () => {
    for (const [events, message] of [
      [0, 'events: must be a whole number from 1 to 10000'],
      [10_001, 'events: must be a whole number from 1 to 10000'],
      ['5', 'events: must be a whole number from 1 to 10000'],
    ] as const) {
      const res = await step(a, events);
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().message, message);
    }
    const extra = await a.inject({
      method: 'POST',
      url: '/admin/live/step',
      headers: admin,
      payload: JSON.stringify({ events: 1, kind: 'clip' }),
    });
    assert.equal(extra.statusCode, 400);
    assert.equal(extra.json().message, 'body: "kind" is not a field (events)');
  });
});

forEachStore(
  'the live world: a stream records into its archive video, which stays when it ends',
  (kind: StoreKind) => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(kind, { config: live(11) });
    });
    after(() => t.close());

    it("goes live with the channel's values and its archive video written with it; the video stays, as long as the stream was live", async () => {
      const db = t.store.db;
      const streams = async () =>
        new Map((await db.selectFrom('streams').selectAll().execute()).map((s) => [s.id, s]));
      const archives = async () => {
        const byStream = new Map<number, { id: number; user_id: number; duration_s: number }[]>();
        for (const v of await db.selectFrom('videos').selectAll().where('type', '=', 'archive').execute()) {
          const list = byStream.get(v.stream_id as number) ?? [];
          list.push(v);
          byStream.set(v.stream_id as number, list);
        }
        return byStream;
      };
      /** The videos as GET /helix/videos shows them, by id. */
      const wire = async (ids: number[]) => {
        const token = await t.appToken();
        const out = new Map<string, Record<string, unknown>>();
        for (let i = 0; i < ids.length; i += 100) {
          const q = ids.slice(i, i + 100).map((id) => `id=${id}`);
          const res = await t.get(`/helix/videos?${q.join('&')}`, bearer(token));
          assert.equal(res.statusCode, 200, res.body);
          for (const v of res.json().data) out.set(v.id, v);
        }
        return out;
      };
      const was = await streams();
      const recorded = await archives();
      const channels = new Map(
        (await db.selectFrom('channels').selectAll().execute()).map((c) => [c.broadcaster_id, c]),
      );
      const t0 = Math.floor(t.clock.now() / 1000);
      assert.equal((await step(t, 200)).statusCode, 200);
      t.clock.advance(600_000);
      assert.equal((await step(t, 200)).statusCode, 200);
      const t1 = t0 + 600;
      const now = await streams();
      const byStream = await archives();

      // Streams the world started, live now: their archive video (nine in ten) as written at the start.
      const fresh = [...now.values()].filter((s) => !was.has(s.id));
      const freshArchives = fresh.flatMap((s) => byStream.get(s.id) ?? []);
      const shown = await wire(freshArchives.map((v) => v.id));
      let withChannel = 0;
      for (const s of fresh) {
        const list = byStream.get(s.id) ?? [];
        assert.ok(list.length <= 1, `stream ${s.id}: ${list.length} archives`);
        const v = list[0] && shown.get(String(list[0].id));
        if (v) {
          const started = rfc3339(s.started_at);
          assert.deepEqual(
            [v.stream_id, v.user_id, v.title, v.language, v.type, v.created_at, v.published_at, v.duration],
            [String(s.id), String(s.user_id), s.title, s.language, 'archive', started, started, '0s'],
            `stream ${s.id}'s archive`,
          );
        }
        const c = channels.get(s.user_id);
        if (c) {
          withChannel++;
          assert.deepEqual(
            [s.title, s.language, s.tags, s.game_id],
            [c.title, c.language, c.tags, c.game_id ?? s.game_id],
            `stream ${s.id}: its channel's values`,
          );
        }
      }
      assert.ok(freshArchives.length > 0, 'a stream the world started records');
      assert.ok(withChannel > 0, 'a user with a channel went live');

      // Streams that ended: the archive video stays, as long as the stream was live.
      const ended = [...was.values()].filter((s) => !now.has(s.id) && recorded.has(s.id));
      assert.ok(ended.length > 0, 'a recorded stream ended');
      const endedShown = await wire(ended.flatMap((s) => (recorded.get(s.id) ?? []).map((v) => v.id)));
      for (const s of ended) {
        const list = byStream.get(s.id) ?? [];
        assert.equal(list.length, 1, `stream ${s.id}`);
        const v = endedShown.get(String(list[0]?.id));
        assert.ok(
          [hms(t0 - s.started_at), hms(t1 - s.started_at)].includes(v?.duration as string),
          `stream ${s.id}: ${v?.duration}`,
        );
      }
      // And so for streams the world both started and ended: live from t0 or t1 to t0 or t1.
      const old = new Set([...recorded.values()].flat().map((v) => v.id));
      for (const [stream, list] of byStream)
        for (const v of list)
          if (!old.has(v.id) && !now.has(stream))
            assert.ok([0, 600].includes(v.duration_s), `stream ${stream}: ${v.duration_s} s`);
    });
  },
);

it('without --live there is no world to step', async () => {
  const t = await startTestApp('sqlite', { config: { adminToken: ADMIN } });
  try {
    assert.equal((await step(t, 1)).statusCode, 404);
    assert.doesNotMatch((await t.get('/metrics')).body, /helixd_live_events_total\{/);
  } finally {
    await t.close();
  }
});

describe('--live configured at start', () => {
  it('production refuses to start with --live, --live-rate or --live-seed, and says why', async () => {
    assert.throws(
      () => loadConfig({ ...PRODUCTION, live: true }, {}),
      /the production profile never moves the world on its own: remove HELIXD_LIVE \/ --live$/,
    );
    assert.throws(
      () => loadConfig(PRODUCTION, { HELIXD_LIVE_RATE: '5', HELIXD_LIVE_SEED: '3' }),
      /remove HELIXD_LIVE_RATE \/ --live-rate and HELIXD_LIVE_SEED \/ --live-seed$/,
    );
    await assertRefusedInProduction(
      ['--live'],
      /the production profile never moves the world on its own: remove HELIXD_LIVE \/ --live/,
    );
  });

  it('reads the rate and the seed, and refuses a bad one naming the option and the rule', () => {
    const c = loadConfig({ live: true, liveRate: '0.5', liveSeed: '9' }, {});
    assert.deepEqual([c.live, c.liveRate, c.liveSeed], [true, 0.5, 9]);
    const d = loadConfig({}, { HELIXD_LIVE: 'true' });
    assert.deepEqual([d.live, d.liveRate, d.liveSeed], [true, 5, undefined]);
    assert.equal(loadConfig({}, {}).live, false);
    for (const rate of ['fast', '-1', '10001', '1e3'])
      assert.throws(
        () => loadConfig({ liveRate: rate }, {}),
        new RegExp(
          `^Error: HELIXD_LIVE_RATE / --live-rate: "${rate}" must be a number of events per second from 0 to 10000$`,
        ),
      );
    assert.throws(
      () => loadConfig({ liveSeed: 'x' }, {}),
      /HELIXD_LIVE_SEED \/ --live-seed: "x" must be a whole number/,
    );
  });
});
