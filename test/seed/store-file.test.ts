// The SQLite file `helixd seed` leaves. The seed writes through a rollback journal instead of the
// WAL (src/store/bulk.ts, withBulkLoad) and then sets the file back as a served store keeps it: in
// WAL mode, no journal left, sound. A --force seed over a seeded file holds exactly the rows of a
// seed into a new file, and so does one while another connection (a server) has the file open,
// when the seed cannot leave WAL mode and runs in it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import SQLite from 'better-sqlite3';
import { TEST_NOW } from '../support/apps.ts';
import { helixd } from '../support/cli.ts';
import { HELIXD_DEV_BIN } from '../support/process.ts';

const run = promisify(execFile);

const NOW = new Date(TEST_NOW).toISOString();

describe('the SQLite file of a seeded store', () => {
  const dir = mkdtempSync(join(tmpdir(), 'helixd-seed-file-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string) => join(dir, `${name}.db`);

  const seed = async (db: string, ...more: string[]) => {
    const r = await helixd(['seed', '--db', db, '--users', '30', '--now', NOW, ...more]);
    assert.equal(r.code, 0, r.stderr);
  };
  const exportOf = async (db: string) => {
    const r = await helixd(['export', '--db', db]);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout;
  };
  /** What a new connection finds in the file: its journal mode (kept in the file) and its check. */
  const fileState = (db: string) => {
    const journalLeft = existsSync(`${db}-journal`);
    const c = new SQLite(db);
    try {
      return {
        journal_mode: c.pragma('journal_mode', { simple: true }),
        integrity: c.pragma('integrity_check', { simple: true }),
        journalLeft,
      };
    } finally {
      c.close();
    }
  };
  const SERVED = { journal_mode: 'wal', integrity: 'ok', journalLeft: false };

  it('HELIXD_USERS, HELIXD_SEED and HELIXD_NOW size, seed and date the data as --users, --seed and --now do', async () => {
    const flags = file('flags');
    await seed(flags, '--seed', '3');
    const env = file('env');
    const r = await run(process.execPath, [HELIXD_DEV_BIN, 'seed', '--db', env], {
      env: { ...process.env, HELIXD_USERS: '30', HELIXD_SEED: '3', HELIXD_NOW: NOW },
    });
    assert.match(r.stdout, /users 30,/);
    assert.equal(await exportOf(env), await exportOf(flags));
  });

  it('is in WAL mode, with no journal left, and sound', async () => {
    const db = file('new');
    await seed(db);
    assert.deepEqual(fileState(db), SERVED);
  });

  it('seeded again with --force holds exactly the rows of a seed into a new file', async () => {
    const fresh = file('fresh');
    await seed(fresh, '--seed', '2');
    const db = file('forced');
    await seed(db);
    await seed(db, '--seed', '2', '--force');
    assert.deepEqual(fileState(db), SERVED);
    assert.equal(await exportOf(db), await exportOf(fresh));
  });

  it('seeded with --force while another connection has it open: the same rows, which that connection reads', async () => {
    const fresh = file('fresh-3');
    await seed(fresh, '--seed', '3');
    const db = file('open');
    await seed(db);
    const server = new SQLite(db);
    try {
      server.pragma('journal_mode = WAL');
      const users = server.prepare('select login from users order by id').pluck();
      const before = users.all();
      await seed(db, '--seed', '3', '--force');
      const now = users.all();
      assert.equal(now.length, before.length);
      assert.notDeepEqual(now, before);
    } finally {
      server.close();
    }
    assert.deepEqual(fileState(db), SERVED);
    assert.equal(await exportOf(db), await exportOf(fresh));
  });
});
