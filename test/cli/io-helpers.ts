// What the tests of `helixd import` and `helixd export` share: NDJSON inputs as they build and read
// them, and a workspace of files and empty stores for the commands.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { helixd } from '../support/cli.ts';
import { cliDb, type StoreKind, tempStore } from '../support/stores.ts';

/** One line: a record envelope. */
export interface Line {
  kind: string;
  data: Record<string, unknown>;
}

/** The records of an NDJSON text. */
export const lines = (ndjson: string): Line[] =>
  ndjson
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));

/** The NDJSON text of records, a line each. */
export const ndjson = (ls: readonly Line[]) => ls.map((l) => `${JSON.stringify(l)}\n`).join('');

/** Files in a temporary folder and fresh, empty, migrated stores, all removed by `close`. */
export function ioWorkspace(kind: StoreKind) {
  const dir = mkdtempSync(join(tmpdir(), 'helixd-io-'));
  const drops: (() => Promise<void>)[] = [];
  return {
    dir,
    /** writes `text` (or bytes) into the file `name`; its path */
    file(name: string, text: string | Uint8Array): string {
      const path = join(dir, name);
      writeFileSync(path, text);
      return path;
    },
    /** a fresh, empty, migrated store: its --db value */
    async emptyStore(): Promise<string> {
      const s = await tempStore(kind);
      drops.push(() => s.drop());
      return cliDb({ url: s.url, ...(s.schema ? { schema: s.schema } : {}) });
    },
    /** `helixd export --db <db> ...more`: its output */
    async exportOf(db: string, ...more: string[]): Promise<string> {
      const r = await helixd(['export', '--db', db, ...more]);
      assert.equal(r.code, 0, r.stderr);
      return r.stdout;
    },
    async close(): Promise<void> {
      for (const drop of drops) await drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
