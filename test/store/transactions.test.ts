// Transactions against concurrent queries, on the store itself: no HTTP request can hold a
// transaction open at a chosen moment. On SQLite one connection serves everything, so the driver
// (src/store/sqlite-driver.ts) must keep other queries out of an open transaction; on PostgreSQL
// each runs on its own connection. Either way the same rules hold.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { forEachStore } from '../support/apps.ts';
import { type TempStore, tempStore } from '../support/stores.ts';

forEachStore('transactions', (kind) => {
  let temp: TempStore;
  before(async () => {
    temp = await tempStore(kind);
  });
  after(() => temp.drop());

  const settingValue = async (key: string) =>
    (await temp.store.db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst())
      ?.value;

  it('a query from outside an open transaction never sees its writes before the commit', async () => {
    let wrote!: () => void;
    const written = new Promise<void>((r) => {
      wrote = r;
    });
    let committed = false;
    const trx = temp.store.db.transaction().execute(async (t) => {
      await t.insertInto('settings').values({ key: 'in-trx', value: 'v' }).execute();
      wrote();
      await sleep(50);
      committed = true;
    });
    await written;
    const seen = await settingValue('in-trx');
    // SQLite waits for the commit and then sees the row; PostgreSQL answers at once, without it.
    if (committed) assert.equal(seen, 'v');
    else assert.equal(seen, undefined);
    await trx;
    assert.equal(await settingValue('in-trx'), 'v');
  });

  it('a transaction that fails leaves nothing behind, and the store goes on answering', async () => {
    await assert.rejects(
      temp.store.db.transaction().execute(async (t) => {
        await t.insertInto('settings').values({ key: 'rolled-back', value: 'v' }).execute();
        throw new Error('boom');
      }),
      /boom/,
    );
    assert.equal(await settingValue('rolled-back'), undefined);
    await temp.store.db.insertInto('settings').values({ key: 'after', value: 'ok' }).execute();
    assert.equal(await settingValue('after'), 'ok');
  });

  it('transactions started together each commit whole, one after the other', async () => {
    const run = (n: number) =>
      temp.store.db.transaction().execute(async (t) => {
        await t
          .insertInto('settings')
          .values({ key: `both-${n}-a`, value: 'a' })
          .execute();
        await sleep(10);
        await t
          .insertInto('settings')
          .values({ key: `both-${n}-b`, value: 'b' })
          .execute();
      });
    await Promise.all([run(1), run(2), run(3)]);
    for (const n of [1, 2, 3]) {
      assert.equal(await settingValue(`both-${n}-a`), 'a');
      assert.equal(await settingValue(`both-${n}-b`), 'b');
    }
  });
});
