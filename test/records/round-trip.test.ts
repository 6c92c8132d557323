// The read path gives back exactly what the write path takes: every record of a seeded store, read
// with readRecords and written with writeRecords into an empty store, reads back identical, and the
// derived data the triggers keep (subscription totals, the games' live counts) comes out the same.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { RECORD_KINDS, type RecordInput, readRecords, writeRecords } from '../../src/records/index.ts';
import type { Store } from '../../src/store/db.ts';
import { forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { type StoreKind, type TempStore, tempStore } from '../support/stores.ts';

async function dump(store: Store): Promise<string[]> {
  const lines: string[] = [];
  for (const k of RECORD_KINDS)
    for await (const data of readRecords(store, k.kind)) lines.push(JSON.stringify({ kind: k.kind, data }));
  return lines;
}

const derived = async (store: Store) => ({
  totals: await store.db.selectFrom('subscription_totals').selectAll().orderBy('broadcaster_id').execute(),
  games: await store.db
    .selectFrom('games')
    .select(['id', 'viewer_count', 'stream_count'])
    .orderBy('id')
    .execute(),
});

forEachStore('records: read -> write -> read', (kind: StoreKind) => {
  let t: TestApp;
  let empty: TempStore;
  before(async () => {
    t = await startTestApp(kind, { users: 60 });
    empty = await tempStore(kind);
  });
  after(async () => {
    await empty.drop();
    await t.close();
  });

  it('every record of a seeded store is written into an empty one and reads back identical', async () => {
    const lines = await dump(t.store);
    const kinds = new Set(lines.map((l) => JSON.parse(l).kind));
    assert.deepEqual(
      [...kinds],
      RECORD_KINDS.map((k) => k.kind),
      'the demo data has records of every kind',
    );
    const items: RecordInput[] = lines.map((l, i) => ({ ...JSON.parse(l), where: `line ${i + 1}` }));
    // as an import does it: chunks, one transaction
    await empty.store.db.transaction().execute(async (trx) => {
      for (let i = 0; i < items.length; i += 1000)
        await writeRecords(empty.store, items.slice(i, i + 1000), { mode: 'create', trx });
    });
    assert.deepEqual(await dump(empty.store), lines);
    assert.deepEqual(await derived(empty.store), await derived(t.store));
  });

  it('a chunk with one bad record at its end writes nothing', async () => {
    const before = await dump(empty.store);
    const user = JSON.parse(before[0] as string).data;
    await assert.rejects(
      writeRecords(
        empty.store,
        [
          { kind: 'user', data: { ...user, id: '123456789', login: 'fresh_login' }, where: 'line 1' },
          {
            kind: 'follow',
            data: { broadcaster_id: user.id, user_id: '123456789', followed_at: '2026-01-01T00:00:00Z' },
            where: 'line 2',
          },
          { kind: 'user', data: { ...user, id: '123456790' }, where: 'line 3' },
        ],
        { mode: 'create' },
      ),
      { status: 409, message: `line 3: user login: ${user.login} is taken by user ${user.id}` },
    );
    assert.deepEqual(await dump(empty.store), before);
  });

  it('upsert replaces records that exist and creates the others, keeping the derived data true', async () => {
    const subs = [];
    for await (const s of readRecords(empty.store, 'subscription', { first: 3 }))
      subs.push(s as { tier: string });
    const changed = subs.map((s, i) => ({
      kind: 'subscription',
      data: { ...s, tier: '3000' },
      where: `item ${i}`,
    }));
    await writeRecords(empty.store, changed, { mode: 'upsert' });
    const totals = (await derived(empty.store)).totals;
    const rows = await empty.store.db
      .selectFrom('subscriptions')
      .select(['broadcaster_id', 'tier'])
      .execute();
    const points = { '1000': 1, '2000': 2, '3000': 6 } as const;
    for (const tot of totals) {
      const mine = rows.filter((r) => r.broadcaster_id === tot.broadcaster_id);
      assert.equal(tot.total, mine.length);
      assert.equal(
        tot.points,
        mine.reduce((a, r) => a + points[r.tier], 0),
      );
    }
  });
});
