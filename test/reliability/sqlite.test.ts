// A SQLite store whose file goes away or stops taking writes under a running helixd: deleted,
// replaced, made read-only, on a full disk, or locked by another process. /readyz says so, naming the
// store and why, and writes (token mints, admin writes) are refused with a 503 (never a 500, never
// written into a deleted file); a file that can take writes again is served again without a restart.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { unavailability } from '../../src/store/unavailable.ts';
import { assertNotReady, assertReady, assertUnavailable, Helixd, waitFor } from './processes.ts';

const isRoot = process.getuid?.() === 0;

/** Every kind of write is refused with a 503, while reads still answer from the open file. */
async function writesRefused(h: Helixd, token: string, what: string) {
  assertUnavailable(await h.mint(), `${what}: token mint`);
  assertUnavailable(await h.adminWrite(11), `${what}: admin write`);
  assert.equal((await h.read(token)).status, 200, `${what}: read`);
}

async function writesServed(h: Helixd, token: string) {
  await assertReady(h);
  assert.equal((await h.mint()).status, 200);
  assert.equal((await h.adminWrite(12)).status, 200);
  assert.equal((await h.read(token)).status, 200);
}

describe('a SQLite file that goes away or stops taking writes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'helixd-sqlite-'));
  const db = join(dir, 'helixd.db');
  let helixd: Helixd | undefined;
  let token: string;

  /** A new helixd on a new store. The cases below share one, in order: the last two leave it unusable. */
  async function serve(file = db) {
    await helixd?.stop();
    for (const f of ['', '-wal', '-shm']) rmSync(file + f, { force: true });
    helixd = new Helixd(['--db', file]);
    await helixd.start();
    token = await helixd.token();
    return helixd;
  }
  after(async () => {
    await helixd?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('made read-only: not ready, writes refused; writable again: served again', async () => {
    const h = await serve();
    await writesServed(h, token);
    // root writes to files whatever their mode: for root, read-only is the immutable attribute.
    const files = [db, `${db}-wal`];
    const readOnly = (on: boolean) => {
      if (isRoot) execFileSync('chattr', [on ? '+i' : '-i', ...files]);
      else execFileSync('chmod', [on ? 'a-w' : 'u+w', ...files]);
    };
    readOnly(true);
    try {
      await assertNotReady(h, 'store', /read-only/);
      await writesRefused(h, token, 'read-only');
      // The write itself failed (SQLite's own error, mapped to a 503): the file was still there.
      assert.match(h.output(), /store unavailable: (I\/O error|is read-only)/);
    } finally {
      readOnly(false);
    }
    await writesServed(h, token);
  });

  it('a lock held by another process: writes wait for the deadline, then 503', async () => {
    const h = helixd as Helixd;
    // Another process takes the write lock and keeps it until told to stop.
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `const db = new (require('better-sqlite3'))(${JSON.stringify(db)});
         db.exec('begin exclusive'); console.log('locked');
         process.stdin.resume().on('end', () => process.exit(0));`,
      ],
      { stdio: ['pipe', 'pipe', 'inherit'], cwd: join(import.meta.dirname, '..', '..') },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        holder.stdout?.once('data', () => resolve());
        holder.once('exit', (code) => reject(new Error(`the lock holder exited ${code}`)));
      });
      assertUnavailable(await h.mint(), 'token mint while locked');
      assert.equal((await h.read(token)).status, 200, 'reads are not blocked (WAL)');
      // The log line comes through the child's stdout pipe, which may lag the answer under load.
      await waitFor('the lock logged', async () =>
        /store unavailable: is locked by another process/.test(h.output()),
      );
    } finally {
      holder.stdin?.end();
      await new Promise((r) => holder.once('exit', r));
    }
    await writesServed(h, token);
  });

  it('replaced by a copy: not ready, writes refused', async () => {
    const h = helixd as Helixd;
    copyFileSync(db, `${db}.copy`);
    renameSync(`${db}.copy`, db);
    await assertNotReady(h, 'store', /file was replaced/);
    await writesRefused(h, token, 'replaced');
  });

  it('deleted: not ready, writes refused', async () => {
    const h = helixd as Helixd;
    for (const f of ['', '-wal', '-shm']) rmSync(db + f, { force: true });
    await assertNotReady(h, 'store', /file was deleted/);
    await writesRefused(h, token, 'deleted');
    assert.match(h.output(), /store unavailable: file was deleted/);
  });

  describe('on a full disk', { skip: isRoot ? false : 'mounting a small file system needs root' }, () => {
    const disk = join(dir, 'disk');
    before(() => {
      mkdirSync(disk);
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', disk]);
    });
    after(async () => {
      await helixd?.stop();
      helixd = undefined;
      execFileSync('umount', ['-l', disk]);
    });

    it('not ready, writes refused; room again: served again', async () => {
      const h = await serve(join(disk, 'helixd.db'));
      const filler = join(disk, 'filler');
      const fd = openSync(filler, 'w');
      try {
        const chunk = Buffer.alloc(256 * 1024);
        for (;;) writeSync(fd, chunk);
      } catch (err) {
        assert.equal((err as NodeJS.ErrnoException).code, 'ENOSPC');
      } finally {
        closeSync(fd);
      }
      try {
        await assertNotReady(h, 'store', /disk is full/);
        await writesRefused(h, token, 'full disk');
        assert.match(h.output(), /store unavailable: disk is full/);
      } finally {
        unlinkSync(filler);
      }
      await writesServed(h, token);
    });
  });
});

describe('which failures mean the store cannot serve (503) rather than a fault (500)', () => {
  const error = (code: string, message = code) => Object.assign(new Error(message), { code });
  it('reads SQLite result codes, PostgreSQL SQLSTATEs and connection errors', () => {
    const cases: [Error, string | undefined][] = [
      [error('SQLITE_FULL'), 'disk is full'],
      [error('SQLITE_IOERR_WRITE'), 'I/O error'],
      [error('SQLITE_READONLY_DBMOVED'), 'is read-only'],
      [error('SQLITE_CANTOPEN'), 'file cannot be opened'],
      [error('SQLITE_BUSY'), 'is locked by another process'],
      [error('53100'), 'disk is full'],
      [error('08006'), 'cannot be reached'],
      [error('57P01'), 'is shutting down or starting'],
      [error('ECONNREFUSED'), 'cannot be reached'],
      [new Error('Connection terminated unexpectedly'), 'cannot be reached'],
      // faults of helixd or of the query: a 500
      [error('SQLITE_CONSTRAINT_UNIQUE'), undefined],
      [error('SQLITE_ERROR'), undefined],
      [error('23505'), undefined],
      [error('42P01'), undefined],
      [new Error('something else'), undefined],
    ];
    for (const [err, reason] of cases)
      assert.equal(unavailability(err)?.reason, reason, (err as { code?: string }).code ?? err.message);
  });
});
