// `helixd serve --fixtures <file>` (HELIXD_FIXTURES): the server starts from exactly the world a
// file describes, for tests that need one ("this broadcaster has exactly these three subscribers").
//
// What the store may hold when the server starts:
// - nothing: the file is written through `helixd import`'s path, all or nothing, and its SHA-256 is
//   recorded in the settings table in the same transaction;
// - that same file (same digest): the store is served as it is, so a restart of the same command
//   works (and keeps whatever was written since through the admin API);
// - anything else (demo data, other records, another fixture or an edited file): the start is
//   refused with a message that says so. A fixture never mixes with other data.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { RECORD_KINDS } from '../records/index.ts';
import { holdsData } from '../store/bulk.ts';
import type { Store } from '../store/db.ts';
import { getSetting, setSetting } from '../store/settings.ts';
import { importItems, prepared } from './import.ts';
import { readItems } from './input.ts';
import type { Summary } from './progress.ts';

export class FixtureError extends Error {}

/** What the settings table records about the fixture a store was started from. */
interface FixtureInfo {
  file: string;
  sha256: string;
}

const SETTING = 'fixture';

/**
 * Makes the store hold the fixture in `file`: writes it into a store that holds no data, accepts a
 * store that was started from the same file, refuses anything else. Returns the import's counts,
 * or undefined when the store already held the fixture.
 */
export async function startFromFixture(store: Store, file: string): Promise<Summary | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (err) {
    throw new FixtureError(`--fixtures / HELIXD_FIXTURES: cannot read ${file}: ${(err as Error).message}`);
  }
  const wanted: FixtureInfo = {
    file: basename(file),
    sha256: createHash('sha256').update(bytes).digest('hex'),
  };
  const state = await stateOf(store, wanted);
  if (state === 'held') return undefined;
  if (state !== 'empty') throw new FixtureError(state.refused);
  try {
    return await importItems(store, prepared(readItems(Readable.from([bytes]), RECORD_KINDS)), {
      finish: (trx) => setSetting(trx, SETTING, JSON.stringify(wanted)),
    });
  } catch (err) {
    // Another instance started from the same file at the same moment and wrote it first.
    if ((await stateOf(store, wanted)) === 'held') return undefined;
    throw new FixtureError(`fixture ${file}: ${(err as Error).message}`, { cause: err });
  }
}

/** Whether the store holds this fixture, nothing at all, or something else (and what to do). */
async function stateOf(store: Store, wanted: FixtureInfo): Promise<'held' | 'empty' | { refused: string }> {
  const kept = await getSetting(store.db, SETTING);
  const fresh = 'start from a fresh store (another --db, or delete this one)';
  if (kept) {
    const info = JSON.parse(kept) as FixtureInfo;
    if (info.sha256 === wanted.sha256) return 'held';
    return {
      refused:
        info.file === wanted.file
          ? `the store was started from another version of ${wanted.file} (the file changed since): ${fresh}`
          : `the store was started from the fixture ${info.file}, not ${wanted.file}: ${fresh}`,
    };
  }
  if (await holdsData(store.db))
    return {
      refused: `the store already holds data; --fixtures starts from exactly the fixture's world: ${fresh}`,
    };
  return 'empty';
}
