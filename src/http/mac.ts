// The one rule for the texts helixd signs (cursors, report URLs): an HMAC-SHA256 under the server
// secret over the fields, one per line, written in base64url. A MAC is checked by comparing its
// text with the text expected, never by decoding it: the base64url decoder ignores the last
// character's spare bits and any `=` padding, so several spellings would decode to one MAC and a
// changed cursor or URL would still pass. Each signer starts its fields with its own name, so a
// cursor's MAC is never a report URL's.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The MAC of `fields` joined by line feeds; `bytes`: only that many leading bytes of it. */
export function signText(secret: string, fields: readonly string[], bytes?: number): string {
  const mac = createHmac('sha256', secret).update(fields.join('\n')).digest();
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
