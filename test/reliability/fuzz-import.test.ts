// Fuzzing of `helixd import` on both stores, as test/reliability/fuzz.test.ts fuzzes the routes:
// files made of a seeded store's own export (records in dependency order, so that many import),
// with lines changed: bytes that are not UTF-8 put into a string value (FF FE, an overlong C0 80, an encoded
// surrogate, a code point past U+10FFFF, a sequence cut short), a line cut short, junk JSON, blank
// lines, and a line past the 32 MiB a line may hold (src/wire/text.ts). Files of a megabyte or more
// are read by the import's worker thread (src/cli/import.ts), smaller ones by the command itself: the
// oversize line takes the first path, most cases the second.
//
// Whatever the file: the command exits 0 or 1, never otherwise; a refusal says that nothing was
// imported and names the line when it is a line's fault, and the store's export is then byte for
// byte what it was. HELIXD_FUZZ_RUNS (default 80) scales the cases here too, a quarter of it per
// store; HELIXD_FUZZ_SEED replays a run.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { INPUT_LIMIT } from '../../src/wire/text.ts';
import { forEachStore } from '../support/apps.ts';
import { helixd } from '../support/cli.ts';
import { cliDb, type TempStore, tempStore } from '../support/stores.ts';

const RUNS = Math.max(5, Math.ceil(Number(process.env.HELIXD_FUZZ_RUNS ?? 80) / 4));
const SEED = Number(process.env.HELIXD_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
process.stdout.write(`# import fuzz: ${RUNS} files per store; HELIXD_FUZZ_SEED=${SEED} replays them\n`);

/** Byte sequences no UTF-8 text holds. */
const NOT_UTF8 = [
  [0xff, 0xfe],
  [0xc0, 0x80],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xe2, 0x82],
  [0x80],
].map((b) => Buffer.from(b));

/** A user record whose description runs past the limit of a line: made once, shared by the cases. */
const OVERSIZE = Buffer.concat([
  Buffer.from(
    '{"kind":"user","data":{"id":"123","login":"big","display_name":"Big","broadcaster_type":"","created_at":"2020-01-01T00:00:00Z","description":"',
  ),
  Buffer.alloc(INPUT_LIMIT + 1024, 'x'),
  Buffer.from('"}}'),
]);

type Change =
  | { kind: 'keep' }
  | { kind: 'bytes'; at: number; bytes: number }
  | { kind: 'cut'; at: number }
  | { kind: 'junk'; text: string }
  | { kind: 'blank' }
  | { kind: 'oversize' };

const change: fc.Arbitrary<Change> = fc.oneof(
  { arbitrary: fc.constant({ kind: 'keep' as const }), weight: 240 },
  {
    arbitrary: fc.record({
      kind: fc.constant('bytes' as const),
      at: fc.double({ min: 0, max: 1, noNaN: true }),
      bytes: fc.nat(NOT_UTF8.length - 1),
    }),
    weight: 60,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('cut' as const),
      at: fc.double({ min: 0, max: 1, noNaN: true }),
    }),
    weight: 20,
  },
  { arbitrary: fc.record({ kind: fc.constant('junk' as const), text: fc.json() }), weight: 20 },
  { arbitrary: fc.constant({ kind: 'blank' as const }), weight: 20 },
  { arbitrary: fc.constant({ kind: 'oversize' as const }), weight: 1 },
);

function lineOf(line: Buffer, c: Change): Buffer {
  switch (c.kind) {
    case 'keep':
      return line;
    case 'bytes': {
      // Inside one of the line's string values (after a `":"`), so that the line is JSON in every
      // other respect: only the bytes are wrong.
      const starts = [...line.toString('latin1').matchAll(/":"/g)].map((m) => (m.index as number) + 3);
      const at = starts[Math.floor(c.at * starts.length)] ?? Math.floor(c.at * line.length);
      return Buffer.concat([line.subarray(0, at), NOT_UTF8[c.bytes] as Buffer, line.subarray(at)]);
    }
    case 'cut':
      return line.subarray(0, Math.floor(c.at * line.length));
    case 'junk':
      return Buffer.from(c.text);
    case 'blank':
      return Buffer.alloc(0);
    case 'oversize':
      return OVERSIZE;
  }
}

describe('fuzzing of helixd import', { concurrency: true }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'helixd-fuzz-import-'));
  let corpus: Buffer[] = [];
  before(async () => {
    // The source of the files: a small seeded store's export, one record a line.
    const source = join(dir, 'source.db');
    const seeded = await helixd(['seed', '--db', source, '--users', '10']);
    assert.equal(seeded.code, 0, seeded.stderr);
    const exported = await helixd(['export', '--db', source]);
    corpus = exported.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => Buffer.from(l));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  forEachStore('every file', (kind) => {
    let temp: TempStore;
    let db: string;
    before(async () => {
      temp = await tempStore(kind);
      db = cliDb({ url: temp.url, ...(temp.schema ? { schema: temp.schema } : {}) });
    });
    after(() => temp?.drop());

    it('exits 0 or 1; a refusal imports nothing and names the line at fault', async () => {
      let exportedBefore = (await helixd(['export', '--db', db])).stdout;
      let n = 0;
      const file = fc.record({
        start: fc.double({ min: 0, max: 1, noNaN: true }),
        changes: fc.array(change, { minLength: 1, maxLength: 40 }),
      });
      const property = fc.asyncProperty(file, async ({ start, changes }) => {
        const from = Math.floor(start * corpus.length);
        const lines = changes.map((c, i) => lineOf(corpus[(from + i) % corpus.length] as Buffer, c));
        const path = join(dir, `case-${kind}-${n++}.ndjson`);
        writeFileSync(path, Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')])));
        const r = await helixd(['import', path, '--db', db]);
        rmSync(path);
        assert.ok(r.code === 0 || r.code === 1, `exit ${r.code}: ${r.stderr}`);
        // No file with bytes that are not UTF-8, or a line past the limit, is ever imported.
        if (changes.some((c) => c.kind === 'bytes' || c.kind === 'oversize'))
          assert.equal(r.code, 1, `imported: ${JSON.stringify(changes.map((c) => c.kind))}`);
        const exported = (await helixd(['export', '--db', db])).stdout;
        if (r.code === 1) {
          assert.match(r.stderr, /^helixd: .*\(nothing was imported\)\n$/s, r.stderr.slice(0, 500));
          assert.equal(exported, exportedBefore, 'a refused file changes nothing');
          // A file whose first line is a record reads as NDJSON: whatever is refused is a line's.
          if (changes[0]?.kind === 'keep')
            assert.match(r.stderr, /^helixd: line \d+: /, r.stderr.slice(0, 500));
        } else exportedBefore = exported;
      });
      // Besides the drawn files, always: a line past the limit after a good one, and one with bytes
      // that are not UTF-8.
      const examples: [{ start: number; changes: Change[] }][] = [
        [{ start: 0, changes: [{ kind: 'keep' }, { kind: 'oversize' }, { kind: 'keep' }] }],
        [{ start: 0, changes: [{ kind: 'keep' }, { kind: 'bytes', at: 0.5, bytes: 1 }] }],
      ];
      await fc
        .assert(property, { numRuns: RUNS, seed: SEED, examples, includeErrorInReport: true })
        .catch((err: Error) => {
          throw new Error(`helixd import [${kind}]; HELIXD_FUZZ_SEED=${SEED}\n${err.message}`);
        });
    });
  });
});
