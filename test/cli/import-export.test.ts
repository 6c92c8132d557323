// `helixd import` and `helixd export` through the real command line, on both stores: every kind
// round-trips byte for byte (NDJSON and fixture documents, from a file or stdin), and an input
// refused anywhere (first, middle or last chunk) names its line and field and leaves the store
// byte-identical.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { main } from '../../src/cli/index.ts';
import { CHUNK } from '../../src/io/import.ts';
import { RECORD_KINDS, type RecordKind, recordKind } from '../../src/records/index.ts';
import { INPUT_LIMIT } from '../../src/wire/text.ts';
import { forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { helixd } from '../support/cli.ts';
import { HELIXD_DEV_BIN } from '../support/process.ts';
import { cliDb, type StoreKind } from '../support/stores.ts';
import { ioWorkspace, type Line, lines, ndjson } from './io-helpers.ts';

const recordKindOf = (l: Line) => recordKind(l.kind) as RecordKind;
/** Text no record of the demo data holds: where a test puts what JSON cannot write. */
const MARK = '<<here>>';

/** Loaded first by a command run as a process: writes its peak RSS (KiB) into $HELIXD_TEST_MAX_RSS. */
const RECORD_MAX_RSS = `data:text/javascript,${encodeURIComponent(
  "import { writeFileSync } from 'node:fs'; process.on('exit', () => writeFileSync(process.env.HELIXD_TEST_MAX_RSS, String(process.resourceUsage().maxRSS)));",
)}`;

forEachStore('helixd import and helixd export (command line)', (kind: StoreKind) => {
  let t: TestApp;
  let source: string;
  let exported: string;
  const { dir, file, emptyStore, exportOf, close } = ioWorkspace(kind);

  before(async () => {
    t = await startTestApp(kind, { users: 20 });
    source = cliDb(t.storeOptions);
    exported = await exportOf(source);
  });
  after(async () => {
    await t.close();
    await close();
  });

  describe('round trips', () => {
    it('exports every kind, kinds in dependency order and each kind in key order', () => {
      const kinds = lines(exported).map((l) => l.kind);
      const order = RECORD_KINDS.map((k) => k.kind);
      assert.deepEqual([...new Set(kinds)], order, 'every kind has records in the demo data, in order');
      const sorted = [...kinds].sort((a, b) => order.indexOf(a) - order.indexOf(b));
      assert.deepEqual(kinds, sorted);
    });

    it('an export imported into an empty store exports again byte for byte, ids kept', async () => {
      const db = await emptyStore();
      const r = await helixd(['import', file('all.ndjson', exported), '--db', db, '--json']);
      assert.equal(r.code, 0, r.stderr);
      const summary = JSON.parse(r.stdout);
      const counts: Record<string, number> = {};
      for (const l of lines(exported)) counts[l.kind] = (counts[l.kind] ?? 0) + 1;
      assert.deepEqual(summary.records, counts);
      assert.equal(summary.rows, lines(exported).length);
      assert.ok(summary.seconds >= 0 && summary.rows_per_second > 0);
      assert.equal(await exportOf(db), exported);
    });

    // The analytics days (most of the demo data's rows) are left out where the point is elsewhere.
    const withoutDays = RECORD_KINDS.map((k) => k.kind).filter((k) => !k.endsWith('_day'));

    it('reads stdin for "-"', async () => {
      const input = await exportOf(source, '--kind', ...withoutDays);
      const db = await emptyStore();
      const r = await helixd(['import', '-', '--db', db], input);
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stdout,
        new RegExp(`^imported ${lines(input).length.toLocaleString('en-US')} records in`),
      );
      assert.equal(await exportOf(db), input);
    });

    it('a fixture document export imports back to the same records', async () => {
      const fixture = await exportOf(source, '--format', 'fixture');
      const doc = JSON.parse(fixture);
      assert.deepEqual(
        Object.keys(doc),
        RECORD_KINDS.map((k) => k.plural),
      );
      const db = await emptyStore();
      const r = await helixd(['import', file('world.json', fixture), '--db', db]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(await exportOf(db), exported);
      assert.equal(await exportOf(db, '--format', 'fixture'), fixture);
    });

    it('a fixture document is written in dependency order whatever the order of its keys', async () => {
      const doc = JSON.parse(await exportOf(source, '--format', 'fixture', '--kind', ...withoutDays));
      const reversed = Object.fromEntries(Object.entries(doc).reverse());
      const db = await emptyStore();
      const r = await helixd(['import', file('reversed.json', JSON.stringify(reversed)), '--db', db]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(await exportOf(db), await exportOf(source, '--kind', ...withoutDays));
    });

    it('--kind exports only the kinds named, in dependency order; --out writes a file', async () => {
      const [first, second] = RECORD_KINDS;
      const out = join(dir, 'two.ndjson');
      const r = await helixd([
        'export',
        '--db',
        source,
        '--kind',
        String(second?.kind),
        String(first?.kind),
        '--out',
        out,
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^exported \d+ records in/);
      const want = lines(exported).filter((l) => l.kind === first?.kind || l.kind === second?.kind);
      assert.equal(readFileSync(out, 'utf8'), ndjson(want));
    });

    it('shows a progress line on a terminal (stderr), and nothing on stderr otherwise', async () => {
      const text = await exportOf(source, '--kind', ...withoutDays);
      const input = file('progress.ndjson', text);
      const n = lines(text).length.toLocaleString('en-US');
      let drawn = '';
      const terminal = new Writable({
        write(chunk, _encoding, done) {
          drawn += String(chunk);
          done();
        },
      });
      const code = await main(['node', 'helixd', 'import', input, '--db', await emptyStore()], {
        stdin: Readable.from([]),
        stdout: new Writable({ write: (_c, _e, done) => done() }),
        stderr: Object.assign(terminal, { isTTY: true, columns: 100 }),
      });
      assert.equal(code, 0, drawn);
      // Redrawn in place; the last drawing has every record and the whole file.
      assert.match(
        drawn,
        new RegExp(`^\\rimporting .*\\rimporting ${n} rows {2}[\\d,]+ rows/s {2}100% {2}\\w+\\x1b\\[K\\n$`),
      );
      const plain = await helixd(['import', input, '--db', await emptyStore()]);
      assert.equal(plain.stderr, '');
    });

    it('refuses an unknown --kind, and --json without --out, with a clear error', async () => {
      const bad = await helixd(['export', '--db', source, '--kind', 'clipz']);
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /^helixd: --kind: unknown kind clipz \(kinds: /);
      const json = await helixd(['export', '--db', source, '--json']);
      assert.equal(json.code, 1);
      assert.match(json.stderr, /--json needs --out/);
    });
  });

  describe('refusals into an empty store leave it empty', () => {
    // Into a store that holds nothing, references are checked against the keys the import wrote
    // before them, and keys and unique values by the store's own constraints: the refusal must
    // still name the line, the field and the rule, on every chunk.
    let db: string;
    let all: Line[];
    before(async () => {
      db = await emptyStore();
      all = lines(exported);
      assert.ok(all.length > 3 * CHUNK, 'the input spans several chunks');
    });

    const refused = async (name: string, input: readonly Line[], message: RegExp) => {
      const r = await helixd(['import', file(name, ndjson(input)), '--db', db]);
      assert.equal(r.code, 1, r.stdout);
      assert.match(r.stderr, message);
      assert.match(r.stderr, /\(nothing was imported\)\n$/);
      assert.equal(await exportOf(db), '', 'the store is still empty');
    };

    it('a reference to a record the file does not hold, in a middle chunk: its line and field', async () => {
      const bad = structuredClone(all);
      const at = bad.findIndex((l, i) => i >= 2 * CHUNK && recordKindOf(l).refs.length > 0);
      assert.ok(at > 0);
      const line = bad[at] as Line;
      const ref = recordKindOf(line).refs[0] as { field: string; kind: string };
      const missing = (recordKind(ref.kind) as RecordKind).numericKey.length
        ? '987654321987'
        : 'nosuchrecord';
      line.data[ref.field] = missing;
      await refused(
        'empty-reference.ndjson',
        bad,
        new RegExp(
          `^helixd: line ${at + 1}: ${line.kind} ${ref.field}: names no ${ref.kind} \\(${missing}\\)`,
        ),
      );
    });

    it('a reference to a record that comes later in the file: the line that names it', async () => {
      // The first user moved to the end: the first line that names it is refused.
      const [first, ...others] = all;
      const id = (first as Line).data.id;
      const at = others.findIndex((l) => recordKindOf(l).refs.some((r) => l.data[r.field] === id));
      assert.ok(at > 0, 'a record names the first user');
      await refused(
        'empty-order.ndjson',
        [...others, first as Line],
        new RegExp(`^helixd: line ${at + 1}: \\w+ \\w+: names no user \\(${id}\\): users must exist before`),
      );
    });

    it('a key that an earlier chunk wrote, repeated on the last line: its line and key', async () => {
      const again = all[1] as Line;
      await refused(
        'empty-duplicate.ndjson',
        [...all, again],
        new RegExp(
          `^helixd: line ${all.length + 1}: user id: a user with this key \\(${again.data.id}\\) already exists`,
        ),
      );
    });

    it('a unique value repeated within a chunk: its line and the line it repeats', async () => {
      const bad = structuredClone(all);
      (bad[3] as Line).data.login = (bad[2] as Line).data.login;
      await refused(
        'empty-login.ndjson',
        bad,
        new RegExp(
          `^helixd: line 4: user login: repeats the login of line 3 \\(${(bad[2] as Line).data.login}\\)`,
        ),
      );
    });

    it('the same input, whole, imports', async () => {
      const r = await helixd(['import', file('empty-good.ndjson', ndjson(all)), '--db', db]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(await exportOf(db), exported);
    });
  });

  describe('refusals change nothing', () => {
    // The target holds the users already; the input is every other record, valid but for one line.
    let db: string;
    let snapshot: string;
    let rest: Line[];
    const firstKind = RECORD_KINDS[0]?.kind;

    before(async () => {
      db = await emptyStore();
      const users = lines(exported).filter((l) => l.kind === firstKind);
      rest = lines(exported).filter((l) => l.kind !== firstKind);
      assert.ok(rest.length > 3 * CHUNK, 'the input spans several chunks');
      const r = await helixd(['import', file('users.ndjson', ndjson(users)), '--db', db]);
      assert.equal(r.code, 0, r.stderr);
      snapshot = await exportOf(db);
    });

    /** Imports `text`; asserts the exit code 1, the message, and an unchanged store. */
    const refused = async (name: string, text: string | Uint8Array, message: RegExp) => {
      const r = await helixd(['import', file(name, text), '--db', db]);
      assert.equal(r.code, 1, r.stdout);
      assert.match(r.stderr, message);
      assert.match(r.stderr, /\(nothing was imported\)\n$/);
      assert.equal(r.stdout, '');
      assert.equal(await exportOf(db), snapshot, 'the store is byte-identical');
    };

    it('a field of the wrong type on the first line: its line and field', async () => {
      const bad = structuredClone(rest);
      const line0 = bad[0] as Line;
      const field = Object.keys(line0.data).find((k) => typeof line0.data[k] === 'string') as string;
      line0.data[field] = 12345;
      await refused('first.ndjson', ndjson(bad), new RegExp(`^helixd: line 1: ${line0.kind} ${field}: `));
    });

    it('a line that is not JSON in a middle chunk: its line', async () => {
      const at = 2 * CHUNK + 17;
      const text = ndjson(rest).split('\n');
      text[at - 1] = '{"kind": "clip", "data": {';
      await refused('middle.ndjson', text.join('\n'), new RegExp(`^helixd: line ${at}: not JSON`));
    });

    // Bytes that are not UTF-8 would be read as U+FFFD and stored so, without a word.
    it('a line that is not UTF-8 (FF FE, an overlong C0 80): its line and the byte, in any form of input', async () => {
      /** `text` with `bytes` in place of its MARK, and where they are in their line. */
      const withBytes = (text: string, bytes: number[]) => {
        const at = text.indexOf(MARK);
        const lineStart = text.lastIndexOf('\n', at) + 1;
        const offset = Buffer.byteLength(text.slice(lineStart, at));
        return {
          input: Buffer.concat([
            Buffer.from(text.slice(0, at)),
            Buffer.from(bytes),
            Buffer.from(text.slice(at + MARK.length)),
          ]),
          offset,
        };
      };
      /** The records, the one at line `at` with MARK in its first string field. */
      const marked = (records: readonly Line[], at: number) => {
        const bad = structuredClone(records) as Line[];
        const line = bad[at - 1] as Line;
        const field = Object.keys(line.data).find((k) => typeof line.data[k] === 'string') as string;
        line.data[field] = `a${MARK}b`;
        return bad;
      };
      const message = (line: number, offset: number) =>
        new RegExp(`^helixd: line ${line}: not valid UTF-8 \\(byte offset ${offset} in the line\\) `);
      // A large file, read in pieces on several threads: a middle piece.
      const middle = 2 * CHUNK + 17;
      let bad = withBytes(ndjson(marked(rest, middle)), [0xff, 0xfe]);
      await refused('not-utf8-middle.ndjson', bad.input, message(middle, bad.offset));
      // A small file, read in this thread.
      bad = withBytes(ndjson(marked(rest.slice(0, 10), 5)), [0xc0, 0x80]);
      await refused('not-utf8-small.ndjson', bad.input, message(5, bad.offset));
      // A fixture document, read whole.
      const first = marked(rest, 1)[0] as Line;
      const plural = recordKindOf(first).plural;
      const doc = `{\n  "${plural}": [\n    ${JSON.stringify(first.data)}\n  ]\n}\n`;
      bad = withBytes(doc, [0xc0, 0x80]);
      await refused('not-utf8.json', bad.input, message(3, bad.offset));
    });

    it('a line of more than 32 MiB from stdin: refused by its number, memory bounded, nothing imported', async () => {
      // A process of its own, so that its peak memory is its own; the line, three times the limit,
      // is streamed into its stdin (never held here either). The import must refuse it having held
      // at most the limit of it: parsing it, as before, took over a gigabyte.
      const rssFile = join(dir, 'max-rss');
      const child = spawn(
        process.execPath,
        ['--import', RECORD_MAX_RSS, HELIXD_DEV_BIN, 'import', '-', '--db', db],
        {
          env: { ...process.env, HELIXD_TEST_MAX_RSS: rssFile },
        },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c) => (stdout += c));
      child.stderr.on('data', (c) => (stderr += c));
      const exited = once(child, 'close');
      child.stdin.on('error', () => {}); // EPIPE: it stopped reading, as it should
      const write = async (b: string | Buffer) => {
        if (!child.stdin.write(b))
          await Promise.race([new Promise((r) => child.stdin.once('drain', r)), exited]);
      };
      const user = {
        ...(lines(exported).find((l) => l.kind === 'user') as Line).data,
        id: '999999123',
        login: 'longwinded',
      };
      const [head, tail, ...more] = JSON.stringify({
        kind: 'user',
        data: { ...user, description: MARK },
      }).split(MARK);
      assert.equal(more.length, 0);
      await write(ndjson(rest.slice(0, 3)));
      await write(head as string);
      const block = Buffer.alloc(1 << 20, 'x');
      for (let i = 0; i < (3 * INPUT_LIMIT) / block.length && child.exitCode === null; i++)
        await write(block);
      child.stdin.end(`${tail}\n`);
      const [code] = await exited;
      assert.equal(code, 1, stdout);
      assert.equal(
        stderr,
        `helixd: line 4: longer than ${INPUT_LIMIT} bytes (32 MiB), the most a line may hold (nothing was imported)\n`,
      );
      // About 200 MB on either store (the process alone takes most of it); over 1 GB before.
      const maxRss = Number(readFileSync(rssFile, 'utf8')) * 1024;
      assert.ok(maxRss < 400 * 2 ** 20, `peak RSS ${maxRss} bytes`);
      assert.equal(await exportOf(db), snapshot, 'the store is byte-identical');
    });

    it('a first line of more than 32 MiB in a file: refused by its number (one of exactly 32 MiB is not too long)', async () => {
      const tooLong = `helixd: line 1: longer than ${INPUT_LIMIT} bytes (32 MiB), the most a line may hold`;
      const x = Buffer.alloc(INPUT_LIMIT + 1, 'x');
      await refused('long-first.ndjson', x, new RegExp(`^${tooLong.replace(/[()]/g, '\\$&')} `));
      // The limit is the line's bytes before its line end: exactly that many is not too long.
      const r = await helixd([
        'import',
        file('limit.ndjson', Buffer.concat([x.subarray(1), Buffer.from('\n')])),
        '--db',
        db,
      ]);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /^helixd: not JSON \(/, 'read whole, as a fixture document');
    });

    it('a count out of range in a middle chunk: its line and field', async () => {
      const bad = structuredClone(rest);
      const at = 3 * CHUNK + 250;
      const line = bad[at - 1] as Line;
      const field = Object.keys(line.data).find((k) => typeof line.data[k] === 'number') as string;
      line.data[field] = -1;
      await refused(
        'middle-field.ndjson',
        ndjson(bad),
        new RegExp(`^helixd: line ${at}: ${line.kind} ${field}: `),
      );
    });

    it('a clip title longer than 256 characters: its line, field and rule', async () => {
      const bad = structuredClone(rest);
      const at = bad.map((l) => l.kind).lastIndexOf('clip') + 1;
      assert.ok(at > 1, 'the input holds clips after its first line');
      (bad[at - 1] as Line).data.title = 'x'.repeat(257);
      await refused(
        'long-title.ndjson',
        ndjson(bad),
        new RegExp(`^helixd: line ${at}: clip title: must be at most 256 characters `),
      );
    });

    // The text the covering listings of migration 014 hold: the platform's limits, or 256.
    for (const [kind, field, value, rule] of [
      ['stream', 'title', 'x'.repeat(141), 'must be at most 140 characters'],
      ['stream', 'tags', Array.from({ length: 11 }, (_, i) => `t${i}`), 'must hold at most 10 items'],
      [
        'stream',
        'tags',
        ['ok', 'x'.repeat(26)],
        'must be 1 to 25 letters or digits, no spaces or other signs',
      ],
      ['stream', 'tags', ['ok', 'speed run'], 'must be 1 to 25 letters or digits, no spaces or other signs'],
      ['marker', 'description', '\u{1F3AF}'.repeat(141), 'must be at most 140 characters'],
      ['subscription', 'plan_name', 'x'.repeat(257), 'must be at most 256 characters'],
    ] as const)
      it(`a ${kind} ${field} past its limit (${rule}): its line, field and rule`, async () => {
        const bad = structuredClone(rest);
        const at = bad.map((l) => l.kind).lastIndexOf(kind) + 1;
        assert.ok(at > 1, `the input holds ${kind}s after its first line`);
        (bad[at - 1] as Line).data[field] = value;
        const name = Array.isArray(value) && value.length === 2 ? `${field}\\[1\\]` : field;
        await refused(
          `long-${kind}.ndjson`,
          ndjson(bad),
          new RegExp(`^helixd: line ${at}: ${kind} ${name}: ${rule} `),
        );
      });

    it('a duplicate record on the last line: its line', async () => {
      const bad = [...rest, rest[rest.length - 1] as Line];
      await refused('last.ndjson', ndjson(bad), new RegExp(`^helixd: line ${bad.length}: `));
    });

    it('a record naming a record the store does not hold, on the last line: its line and field', async () => {
      const bad = structuredClone(rest);
      const last = bad[bad.length - 1] as Line;
      assert.equal(last.kind, 'extension_day');
      last.data.extension_client_id = 'nosuchextension';
      await refused(
        'reference.ndjson',
        ndjson(bad),
        new RegExp(`^helixd: line ${bad.length}: extension_day extension_client_id: `),
      );
    });

    it('a line that is not a record envelope, or of an unknown kind: its line', async () => {
      await refused(
        'envelope.ndjson',
        `${ndjson(rest.slice(0, 3))}{"kind": "clip", "record": {}}\n`,
        /^helixd: line 4: unknown field "record"/,
      );
      await refused(
        'kind.ndjson',
        `${ndjson(rest.slice(0, 3))}{"kind": "clipz", "data": {}}\n`,
        /^helixd: line 4: kind: "clipz" is not a record kind/,
      );
    });

    it('a fixture document with an unknown key: the key', async () => {
      await refused(
        'unknown-key.json',
        '{"clipz": []}',
        /^helixd: fixture: unknown key "clipz" \(the keys are /,
      );
    });

    it('a file that does not exist: a clear error', async () => {
      const r = await helixd(['import', join(dir, 'nope.ndjson'), '--db', db]);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /^helixd: cannot read .*nope\.ndjson: ENOENT/);
    });

    it('the same input without its bad line imports', async () => {
      const r = await helixd(['import', file('good.ndjson', ndjson(rest)), '--db', db]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(await exportOf(db), exported);
    });
  });
});
