import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SPEC_SCOPES } from '../src/auth/scopes.ts';
import { dayStart } from '../src/seed/generate.ts';
import { seedStore } from '../src/seed/index.ts';
import { DATA_TABLES } from '../src/store/bulk.ts';
import { bearer, STORE_KINDS, startTestApp, TEST_NOW, type TestApp, tempStore } from './helpers.ts';

// One query of each operation, filled in with the demo broadcaster's ids (the same on every store
// seeded alike). Report URLs carry a signature and expiry, so analytics are compared without them.
const QUERIES = (demo: number) => [
  '/helix/games/top?first=100',
  `/helix/clips?broadcaster_id=${demo}&first=100`,
  `/helix/videos?user_id=${demo}&first=100&sort=views`,
  `/helix/subscriptions?broadcaster_id=${demo}&first=100`,
  `/helix/streams/markers?user_id=${demo}&first=100`,
  '/helix/analytics/extensions?first=100',
];

describe('demo data', () => {
  const apps: TestApp[] = [];
  before(async () => {
    // two SQLite stores, and PostgreSQL when it is there: same seed, same size. The first SQLite
    // store is generated in the seeding thread, PostgreSQL and the second SQLite store in a worker
    // thread (as large stores are).
    for (const { kind, skip } of STORE_KINDS)
      if (!skip)
        apps.push(await startTestApp(kind, { seed: 7, users: 150, seedThreads: kind === 'sqlite' ? 1 : 2 }));
    apps.push(await startTestApp('sqlite', { seed: 7, users: 150, seedThreads: 2 }));
  });
  after(async () => {
    for (const a of apps) await a.close();
  });

  it('gives byte-identical answers on every store seeded with the same options', async () => {
    const demo = apps[0]?.seed?.demoUserId as number;
    for (const a of apps) assert.equal(a.seed?.demoUserId, demo);
    for (const q of QUERIES(demo)) {
      const bodies: string[] = [];
      for (const a of apps) {
        const res = await a.get(q, bearer(await a.userToken(SPEC_SCOPES)));
        assert.equal(res.statusCode, 200, `${q}: ${res.body}`);
        assert.ok(res.json().data.length > 0, q);
        bodies.push(res.body.replace(/"URL":"[^"]*"/g, '"URL":""'));
      }
      for (const b of bodies.slice(1)) assert.equal(b, bodies[0], q);
    }
  });

  it('holds the very same rows whether generated in a worker thread or in the seeding thread', async () => {
    const [inThread, inWorker] = apps.filter((a) => a.store.dialect === 'sqlite');
    assert.ok(inThread && inWorker);
    // Every table of demo data; clients hold a secret drawn at random each time.
    for (const table of DATA_TABLES.filter((t) => !['clients', 'tokens', 'auth_codes'].includes(t))) {
      const rows = (a: TestApp): Promise<unknown[]> => a.store.db.selectFrom(table).selectAll().execute();
      const x = await rows(inThread);
      const y = await rows(inWorker);
      assert.ok(x.length > 0, table);
      assert.deepEqual(y, x, table);
    }
  });

  it('differs with another seed', async () => {
    const other = await startTestApp('sqlite', { seed: 8, users: 150 });
    try {
      const a = await other.get('/helix/games/top?first=100', bearer(await other.appToken()));
      const b = await apps[0]?.get(
        '/helix/games/top?first=100',
        bearer(await (apps[0] as TestApp).appToken()),
      );
      assert.notEqual(a.body, b?.body);
    } finally {
      await other.close();
    }
  });

  it('refuses to seed a store that holds data, unless forced', async () => {
    const temp = await tempStore('sqlite');
    try {
      const o = { seed: 1, users: 20, anchor: dayStart(TEST_NOW) };
      await seedStore(temp.store, o);
      await assert.rejects(seedStore(temp.store, o), /already holds data/);
      const s = await seedStore(temp.store, { ...o, seed: 2 }, { force: true });
      assert.equal(s.counts.users, 20);
    } finally {
      await temp.drop();
    }
  });

  it('scales every table with --users', async () => {
    const temp = await tempStore('sqlite');
    try {
      const s = await seedStore(temp.store, { seed: 1, users: 1000, anchor: dayStart(TEST_NOW) });
      assert.equal(s.counts.users, 1000);
      assert.equal(s.counts.clips, 10_000);
      assert.ok((s.counts.subscriptions ?? 0) > 5000);
      const types = await temp.store.db.selectFrom('videos').select('type').distinct().execute();
      assert.deepEqual(types.map((t) => t.type).sort(), ['archive', 'highlight', 'upload']);
      const tiers = await temp.store.db
        .selectFrom('subscriptions')
        .select(['tier', 'is_gift'])
        .distinct()
        .execute();
      assert.equal(tiers.length, 6);
    } finally {
      await temp.drop();
    }
  });
});
