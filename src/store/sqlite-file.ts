// Whether a SQLite store's file can still take writes. SQLite keeps its file open: deleted or
// replaced under a running server, the old file goes on answering reads and accepting writes, which
// are lost (a restart opens the new file, or creates an empty one). A file, its WAL or its folder
// made read-only, a file system remounted read-only or a full disk show only when a write fails.
// The store checks this before every write it runs (refused with a 503, never written into the
// void) and /readyz reports it, so a load balancer stops sending traffic to this instance.
import { accessSync, constants, statfsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

/** Below this much free space a write may fail half-way: the store is reported full. */
const MIN_FREE_BYTES = 1024 * 1024;

/**
 * Watches the file `file` as it is now; the function returned tells why it can no longer take
 * writes, or undefined while it can. Undefined for an in-memory database.
 */
export function watchFile(file: string): (() => string | undefined) | undefined {
  if (file === '' || file === ':memory:') return undefined;
  const opened = statSync(file);
  const dir = dirname(file);
  return () => {
    const now = statSync(file, { throwIfNoEntry: false });
    if (now === undefined) return 'file was deleted';
    if (now.ino !== opened.ino || now.dev !== opened.dev) return 'file was replaced';
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
}
