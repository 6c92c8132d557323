// Migration 020_clip_jobs on a store made by the version before it (migrated down to 019_channels):
// `up` adds the table of the clips POST /clips asked for, with its index in the order they fall
// due, and the clip maker reads and deletes its rows; `down` removes both, and nothing else of the
// store changes either way. On both stores.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql } from 'kysely';
import { addClipJob, nextClipJobs, takeClipJob } from '../../src/store/clip-jobs.ts';
import { migrateToLatest } from '../../src/store/migrate.ts';
import { forEachStore } from '../support/apps.ts';
import { type StoreKind, schemaObjects, tempStore } from '../support/stores.ts';

forEachStore('migration 020_clip_jobs', (kind: StoreKind) => {
  it('adds clip_jobs and clip_jobs_due, whose rows are read in the order they fall due, and goes down cleanly', async () => {
    const temp = await tempStore(kind);
    try {
      const db = temp.store.db;
      const objects = () => schemaObjects(kind, db, 'clip_jobs');
      const tables = async () =>
        kind === 'sqlite'
          ? (
              await sql<{ name: string }>`select name from sqlite_master where type = 'table'
                order by name`.execute(db)
            ).rows.map((r) => r.name)
          : (
              await sql<{ name: string }>`select table_name as name from information_schema.tables
                where table_schema = current_schema() order by 1`.execute(db)
            ).rows.map((r) => r.name);
      const latest = await tables();

      const down = await migrateToLatest(temp.store, '019_channels');
      assert.equal(down.error, undefined);
      assert.deepEqual(await objects(), [], 'nothing of 020 before it');
      assert.deepEqual(
        await tables(),
        latest.filter((t) => t !== 'clip_jobs'),
        'every other table as it was',
      );

      const up = await migrateToLatest(temp.store);
      assert.equal(up.error, undefined);
      assert.deepEqual(
        (await objects()).filter((o) => !o.endsWith('_pkey') && !o.startsWith('sqlite_')),
        ['clip_jobs', 'clip_jobs_due'],
      );
      for (const [id, due] of [
        ['B', 2_000],
        ['A', 2_000],
        ['C', 1_000],
      ] as const)
        await addClipJob(db, { id, due_at: due, record: '{}' });
      assert.deepEqual(
        (await nextClipJobs(db, 2)).map((j) => [j.id, j.due_at]),
        [
          ['C', 1_000],
          ['A', 2_000],
        ],
        'by due time, then id',
      );
      assert.equal(await takeClipJob(db, 'C'), true);
      assert.equal(await takeClipJob(db, 'C'), false, 'taken once');
      await assert.rejects(addClipJob(db, { id: 'A', due_at: 3_000, record: '{}' }), 'one row per clip');

      const again = await migrateToLatest(temp.store, '019_channels');
      assert.equal(again.error, undefined);
      assert.deepEqual(await objects(), [], 'nothing of 020 after down, its rows with it');
      const last = await migrateToLatest(temp.store);
      assert.equal(last.error, undefined);
      assert.deepEqual(await nextClipJobs(db, 10), [], 'up again: an empty table');
      assert.deepEqual(await tables(), latest);
    } finally {
      await temp.drop();
    }
  });
});
