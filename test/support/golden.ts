// Golden answers: expected bodies kept in test/golden/.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import type { StoreKind } from './stores.ts';

/**
 * Golden answers: `test/golden/<file>` holds the expected body, indented for review; the wire body
 * must equal its compact form byte for byte, on every store. UPDATE_GOLDEN=1 rewrites the file from
 * the SQLite run (so the PostgreSQL run is still compared against it).
 */
export function assertGolden(kind: StoreKind, file: string, body: string): void {
  const path = new URL(`../golden/${file}`, import.meta.url);
  if (process.env.UPDATE_GOLDEN === '1' && kind === 'sqlite')
    writeFileSync(path, `${JSON.stringify(JSON.parse(body), null, 2)}\n`);
  assert.equal(body, JSON.stringify(JSON.parse(readFileSync(path, 'utf8'))), `golden ${file}`);
}
