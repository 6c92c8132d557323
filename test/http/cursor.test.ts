// Cursors (src/http/cursor.ts, src/wire/mac.ts): a cursor is accepted only spelled exactly as it was
// issued. base64url decoding is lenient (the last character's spare bits, `=` padding), so a check
// that decoded the MAC before comparing would accept several spellings of one cursor.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** The same bytes spelled otherwise (the last character's spare bits changed), if it has spare bits. */
function otherSpelling(text: string): string | undefined {
  if ((text.length * 6) % 8 === 0) return undefined;
  const last = ALPHABET.indexOf(text.slice(-1));
  const other = `${text.slice(0, -1)}${ALPHABET[last ^ 1]}`;
  assert.deepEqual(Buffer.from(other, 'base64url'), Buffer.from(text, 'base64url'), 'the same bytes');
  return other;
}

/** Spellings of `cursor` that decode to the same payload and MAC bytes but are not the text issued. */
function respellings(cursor: string): [string, string][] {
  const [payload, mac] = cursor.split('.') as [string, string];
  const out: [string, string][] = [
    ['MAC padded with =', `${payload}.${mac}=`],
    ['MAC padded with ==', `${payload}.${mac}==`],
    ['payload padded with =', `${payload}=.${mac}`],
  ];
  const macSpelling = otherSpelling(mac);
  assert.ok(macSpelling, 'a 16-byte MAC has 4 spare bits in its last character');
  out.push(['MAC with other spare bits', `${payload}.${macSpelling}`]);
  const payloadSpelling = otherSpelling(payload);
  if (payloadSpelling) out.push(['payload with other spare bits', `${payloadSpelling}.${mac}`]);
  for (const [, c] of out) assert.notEqual(c, cursor);
  return out;
}

forEachStore('cursors: only the spelling issued is accepted', (kind: StoreKind) => {
  let t: TestApp;
  let token: string;
  let demo: number;
  before(async () => {
    t = await startTestApp(kind);
    token = await t.appToken();
    demo = t.seed?.demoUserId as number;
  });
  after(() => t.close());

  const operations = () => [
    ['/helix/games/top', '?first=2'],
    ['/helix/clips', `?broadcaster_id=${demo}&first=2`],
  ];

  it('a cursor whose MAC or payload is spelled otherwise than issued is a 400 Invalid cursor., after and before', async () => {
    for (const [path, query] of operations()) {
      const first = await t.get(`${path}${query}`, bearer(token));
      assert.equal(first.statusCode, 200, path);
      const cursor = first.json().pagination.cursor as string;
      assert.equal(typeof cursor, 'string', path);
      for (const param of ['after', 'before']) {
        const ok = await t.get(`${path}${query}&${param}=${encodeURIComponent(cursor)}`, bearer(token));
        assert.equal(ok.statusCode, 200, `${path} ${param} as issued`);
        for (const [what, respelled] of respellings(cursor)) {
          const res = await t.get(`${path}${query}&${param}=${encodeURIComponent(respelled)}`, bearer(token));
          assert.equal(res.statusCode, 400, `${path} ${param}: ${what}`);
          assert.deepEqual(res.json(), { error: 'Bad Request', status: 400, message: 'Invalid cursor.' });
        }
      }
    }
  });
});
