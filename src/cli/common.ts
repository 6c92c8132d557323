// What the commands share: where they read and write, the error a user mistake is, the store a
// command opens, and the summary line of import and export.
import type { Readable, Writable } from 'node:stream';
import type { Config } from '../config.ts';
import type { Summary } from '../io/progress.ts';
import type { Store } from '../store/db.ts';

/**
 * Where a command reads and writes: the process's own streams, or others when the command line runs
 * inside another program (tests run `import` and `export` in-process).
 */
export interface CliIo {
  stdin: Readable;
  stdout: Writable;
  /** the progress line shows only when this is a terminal */
  stderr: Writable & { isTTY?: boolean; columns?: number };
}

/** A mistake of the command line's user: one line on stderr, exit 1, no stack trace. */
export class UsageError extends Error {}

/** Runs `fn` on the store of `config.db`, migrated first, and closes it. */
export async function withStore<T>(config: Config, fn: (store: Store) => Promise<T>): Promise<T> {
  const { openStore } = await import('../store/db.ts');
  const { migrateOrThrow } = await import('../store/migrate.ts');
  const store = openStore({ url: config.db });
  try {
    await migrateOrThrow(store);
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** `1,234 records in 0.8 s (1,543 rows/s): user 200, clip 1,034` */
export function describe(s: Summary): string {
  const n = (v: number) => v.toLocaleString('en-US');
  const kinds = Object.entries(s.records)
    .map(([k, v]) => `${k} ${n(v)}`)
    .join(', ');
  return `${n(s.rows)} records in ${s.seconds.toFixed(1)} s (${n(s.rows_per_second)} rows/s)${kinds ? `: ${kinds}` : ''}`;
}
