// `helixd import` of a large input, which is cut into pieces at line ends and prepared on several
// threads (src/io/worker.ts): whichever thread finds a refusal, it names the line of the file
// (blank lines and CRLF line ends counted), the first one in the file wins, text no store can hold
// is refused in any piece, and nothing is imported. Also the date-times and days the records'
// schemas read by character codes (src/records/fields.ts): every RFC 3339 form is read as before.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CHUNK } from '../../src/io/import.ts';
import { type RecordKind, recordKind } from '../../src/records/index.ts';
import { forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { helixd } from '../support/cli.ts';
import { cliDb, type StoreKind } from '../support/stores.ts';
import { ioWorkspace, type Line, lines, ndjson } from './io-helpers.ts';

forEachStore('helixd import in pieces, on several threads', (kind: StoreKind) => {
  let t: TestApp;
  let exported: string;
  let all: Line[];
  let db: string;
  const { file, emptyStore, exportOf, close } = ioWorkspace(kind);

  before(async () => {
    t = await startTestApp(kind, { users: 20 });
    exported = await exportOf(cliDb(t.storeOptions));
    all = lines(exported);
    assert.ok(all.length > 4 * CHUNK, 'the input spans several pieces');
    db = await emptyStore();
  });
  after(async () => {
    await t.close();
    await close();
  });

  /** Imports `text` from a file (or stdin); asserts the refusal's message and an empty store. */
  const refused = async (text: string, message: RegExp, via: 'file' | 'stdin' = 'file') => {
    const r =
      via === 'file'
        ? await helixd(['import', file('bad.ndjson', text), '--db', db])
        : await helixd(['import', '-', '--db', db], text);
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stderr, message);
    assert.match(r.stderr, /\(nothing was imported\)\n$/);
    assert.equal(await exportOf(db), '', 'the store is still empty');
  };

  /** The index of the first record from `from` on with a field of this JS type, and the field. */
  const fieldAt = (records: readonly Line[], from: number, type: 'number' | 'string') => {
    for (let i = from; i < records.length; i++) {
      const data = (records[i] as Line).data;
      const field = Object.keys(data).find(
        (k) =>
          typeof data[k] === type && !(recordKind((records[i] as Line).kind) as RecordKind).key.includes(k),
      );
      if (field) return { at: i, field, line: records[i] as Line };
    }
    throw new Error(`no record with a ${type} field after ${from}`);
  };

  describe('refusals', () => {
    it('blank lines and CRLF line ends: a refusal in a later piece names the line of the file', async () => {
      const bad = structuredClone(all);
      const { at, field, line } = fieldAt(bad, 3 * CHUNK + 123, 'number');
      line.data[field] = -1;
      // A blank line (and one of spaces) after every 997th record: the pieces are cut by lines,
      // so the records' line numbers and the pieces' first lines all move.
      let text = '';
      let lineNo = 0;
      let badLine = 0;
      bad.forEach((l, i) => {
        text += `${JSON.stringify(l)}\r\n`;
        lineNo++;
        if (i === at) badLine = lineNo;
        if (i % 997 === 996) {
          text += '\r\n   \n';
          lineNo += 2;
        }
      });
      assert.ok(badLine > at + 1);
      await refused(text, new RegExp(`^helixd: line ${badLine}: ${line.kind} ${field}: must be >= 0`));
      // Through stdin the input comes as text, not bytes: the same line.
      await refused(
        text,
        new RegExp(`^helixd: line ${badLine}: ${line.kind} ${field}: must be >= 0`),
        'stdin',
      );
    });

    it('two refusals in different pieces: the first in the file is named, whichever is found first', async () => {
      const bad = structuredClone(all);
      const early = fieldAt(bad, CHUNK + 7, 'number');
      const late = fieldAt(bad, 4 * CHUNK + 1, 'number');
      early.line.data[early.field] = -1;
      late.line.data[late.field] = -1;
      await refused(
        ndjson(bad),
        new RegExp(`^helixd: line ${early.at + 1}: ${early.line.kind} ${early.field}: `),
      );
    });

    it('text no store can hold in the last piece: a NUL, a lone surrogate, escaped or raw, and in a key', async () => {
      // The demo data's free text is all in the first piece: a new user and a new tag go last.
      const user = structuredClone(all.find((l) => l.kind === 'user') as Line);
      Object.assign(user.data, { id: '999999001', login: 'late_comer' });
      const tag = structuredClone(all.find((l) => l.kind === 'tag') as Line);
      tag.data.tag_id = 'ffffffff-0000-4000-8000-000000000001';
      const withLast = (last: Line) => ndjson([...all, last]);
      const described = (text: string) => withLast({ ...user, data: { ...user.data, description: text } });
      const where = `^helixd: line ${all.length + 1}: `;
      // JSON.stringify writes both as \u escapes.
      await refused(
        described('a\u0000b'),
        new RegExp(`${where}user description: must not contain a NUL character`),
      );
      await refused(
        described('a\ud800b'),
        new RegExp(`${where}user description: must be well-formed Unicode`),
      );
      // A raw lone surrogate can only come as text (stdin here): bytes would decode to U+FFFD.
      const raw = described('a@@b').replace('a@@b', 'a\ud800b');
      assert.ok(!raw.includes('\\ud800'));
      await refused(raw, new RegExp(`${where}user description: must be well-formed Unicode`), 'stdin');
      await refused(
        withLast({ ...tag, data: { ...tag.data, localization_names: { 'en-us\u0000': 'x' } } }),
        new RegExp(`${where}tag localization_names: a key must not contain a NUL`),
      );
    });

    it('the same input with blank lines and CRLF line ends, and no bad line, imports (file and stdin)', async () => {
      const text = all.map((l, i) => `${JSON.stringify(l)}\r\n${i % 997 === 996 ? '\n' : ''}`).join('');
      let r = await helixd(['import', file('good.ndjson', text), '--db', db]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(await exportOf(db), exported);
      // Again through stdin, into a second empty store.
      const other = await emptyStore();
      r = await helixd(['import', '-', '--db', other], text);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(await exportOf(other), exported);
    });
  });

  describe('date-times and days', () => {
    // A small input: users, and a game with its days, in a store of its own.
    let target: string;
    const user = () => structuredClone(all.find((l) => l.kind === 'user') as Line);
    before(async () => {
      target = await emptyStore();
    });
    const importOne = (l: Line) =>
      helixd(['import', file('one.ndjson', `${JSON.stringify(l)}\n`), '--db', target]);

    it('every RFC 3339 form of an instant is read as the instant, and written back as helixd writes it', async () => {
      const forms: [string, string][] = [
        ['2026-06-01T02:30:00+02:00', '2026-06-01T00:30:00Z'],
        ['2026-06-01t00:30:00z', '2026-06-01T00:30:00Z'],
        ['2026-06-01T00:30:00.000Z', '2026-06-01T00:30:00Z'],
        ['2026-05-31T22:30:00-01:30', '2026-06-01T00:00:00Z'],
        // A leap second (only at 23:59:60 UTC) is read as the second before.
        ['2016-12-31T23:59:60Z', '2016-12-31T23:59:59Z'],
      ];
      for (const [i, [given, written]] of forms.entries()) {
        const u = user();
        u.data.id = String(900_000_000 + i);
        u.data.login = `dt_form_${i}`;
        u.data.created_at = given;
        const r = await importOne(u);
        assert.equal(r.code, 0, `${given}: ${r.stderr}`);
        const back = lines(await exportOf(target)).find((l) => l.data.id === u.data.id) as Line;
        assert.equal(back.data.created_at, written, given);
      }
    });

    it('what is not one is refused with the rule', async () => {
      const rfc = 'must be an RFC 3339 date-time such as 2026-06-01T00:00:00Z';
      const cases: [string, string][] = [
        ['2026-02-30T00:00:00Z', rfc],
        ['2026-06-01T24:00:00Z', rfc],
        ['2026-06-01T12:00:60Z', rfc],
        ['2026-06-01 00:00:00Z', rfc],
        ['2026-06-01T00:00:00', rfc],
        ['2026-6-01T00:00:00Z', rfc],
        ['2026-06-01T00:00:00.5Z', 'must be a whole second'],
        ['1969-12-31T23:59:59Z', 'must be from 1970-01-01T00:00:00Z'],
      ];
      for (const [given, rule] of cases) {
        const u = user();
        u.data.created_at = given;
        const r = await importOne(u);
        assert.equal(r.code, 1, given);
        assert.match(
          r.stderr,
          new RegExp(`^helixd: line 1: user created_at: ${rule.replace(/[.()]/g, '\\$&')}`),
          given,
        );
      }
    });

    it('a day must be written YYYY-MM-DD and be one the calendar has', async () => {
      const days = all.filter((l) => l.kind === 'game_day');
      const day = structuredClone(days[0] as Line);
      const game = all.find((l) => l.kind === 'game' && l.data.id === day.data.game_id) as Line;
      const owner = all.find((l) => l.kind === 'user' && l.data.id === game.data.owner_id);
      const head = [...(owner ? [owner] : []), game].map((l) => `${JSON.stringify(l)}\n`).join('');
      const n = head.split('\n').length;
      for (const given of [
        '2026-02-29',
        '2026-13-01',
        '2026-1-01',
        '2026-01-01T00:00:00Z',
        '２０２６-01-01',
      ]) {
        day.data.date = given;
        const r = await helixd([
          'import',
          file('day.ndjson', `${head}${JSON.stringify(day)}\n`),
          '--db',
          target,
        ]);
        assert.equal(r.code, 1, given);
        assert.match(
          r.stderr,
          new RegExp(`^helixd: line ${n}: game_day date: must be a day written YYYY-MM-DD`),
          given,
        );
      }
    });
  });
});
