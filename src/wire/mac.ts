// The one rule for the texts helixd signs (cursors, report URLs): an HMAC-SHA256 under the server
// secret over the fields, one per line, written in base64url. A MAC is checked by comparing its
// text with the text expected, never by decoding it: the base64url decoder ignores the last
// character's spare bits and any `=` padding, so several spellings would decode to one MAC and a
// changed cursor or URL would still pass. Each signer starts its fields with its own name, so a
// cursor's MAC is never a report URL's.
import { createHmac, createSecretKey, type KeyObject, timingSafeEqual } from 'node:crypto';

// The secret as a key object, made once: a text key is turned into one on every createHmac, a
// quarter of the MAC's time, and a paged answer signs its cursor on every request.
const keys = new Map<string, KeyObject>();
function keyOf(secret: string): KeyObject {
  let key = keys.get(secret);
  if (key === undefined) {
    if (keys.size >= 16) keys.clear();
    key = createSecretKey(Buffer.from(secret, 'utf8'));
    keys.set(secret, key);
  }
  return key;
}

/** The MAC of `fields` joined by line feeds; `bytes`: only that many leading bytes of it. */
export function signText(secret: string, fields: readonly string[], bytes?: number): string {
  const mac = createHmac('sha256', keyOf(secret)).update(fields.join('\n')).digest();
  return (bytes === undefined ? mac : mac.subarray(0, bytes)).toString('base64url');
}

/** Whether `given` is spelled exactly as `signText` writes the MAC of `fields` (constant time). */
export function verifyText(
  secret: string,
  fields: readonly string[],
  given: string,
  bytes?: number,
): boolean {
  const expected = Buffer.from(signText(secret, fields, bytes));
  const actual = Buffer.from(given);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
