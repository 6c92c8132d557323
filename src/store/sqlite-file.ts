// Whether a SQLite store's file can still take writes. SQLite keeps its file open: deleted or
// replaced under a running server, the old file goes on answering reads and accepting writes, which
// are lost (a restart opens the new file, or creates an empty one). A file, its WAL or its folder
// made read-only, a file system remounted read-only or a full disk show only when a write fails
// (SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL: a 503, src/store/unavailable.ts). So the store checks
// before every write it runs that its path still names the file it opened (one stat: a write is
// refused with a 503, never written into the void), and /readyz checks all of it, so that a load
// balancer stops sending traffic to this instance before a write fails.
import { accessSync, constants, statfsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

/** Below this much free space a write may fail half-way: the store is reported full. */
const MIN_FREE_BYTES = 1024 * 1024;

export interface FileWatch {
  /** why the path no longer names the file opened (deleted, replaced), or undefined */
  moved(): string | undefined;
  /** why the file can no longer take writes (moved, read-only, disk full), or undefined */
  problem(): string | undefined;
}

/** Watches the file `file` as it is now. Undefined for an in-memory database. */
export function watchFile(file: string): FileWatch | undefined {
  if (file === '' || file === ':memory:') return undefined;
  const opened = statSync(file);
  const dir = dirname(file);
  const moved = () => {
    const now = statSync(file, { throwIfNoEntry: false });
    if (now === undefined) return 'file was deleted';
    if (now.ino !== opened.ino || now.dev !== opened.dev) return 'file was replaced';
    return undefined;
  };
  const problem = () => {
    const gone = moved();
    if (gone) return gone;
    for (const [path, what] of [
      [file, 'file'],
      [`${file}-wal`, 'WAL file'],
      [dir, 'folder'],
    ] as const) {
      try {
        accessSync(path, constants.W_OK);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') continue; // no WAL file (yet)
        return code === 'EROFS' ? 'file system is read-only' : `${what} is read-only (${code})`;
      }
    }
    const fs = statfsSync(dir);
    // root may use the blocks kept back for it
    const free = (process.geteuid?.() === 0 ? fs.bfree : fs.bavail) * fs.bsize;
    if (free < MIN_FREE_BYTES) return 'disk is full';
    return undefined;
  };
  return { moved, problem };
}
