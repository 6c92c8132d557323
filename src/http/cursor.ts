import type { Key, PageEnds } from '../store/page.ts';
import { signText, verifyText } from '../wire/mac.ts';
import { badRequest } from './errors.ts';

// A cursor is `base64url(JSON payload).base64url(mac)`. The MAC covers the payload and the
// query's scope (the operation and every parameter but first/after/before), so a tampered cursor
// or one from another query fails the check and is a 400, never a silent restart or a 500.
// `after` reads `last`, `before` reads `first`: page N's cursor with `before` gives page N-1.
// Only a cursor spelled exactly as issued passes (src/wire/mac.ts): the MAC is compared as text, and
// the payload is part of the signed text.
const MAC_BYTES = 16;

const signed = (scope: string, payload: string) => ['cursor', scope, payload];

/**
 * A cursor of a listing whose order moves carries its walk's epoch as a third element
 * (src/store/moves.ts); an epoch of 0 is left out, so such a cursor is spelled as any other.
 */
export function encodeCursor(secret: string, scope: string, page: PageEnds, epoch = 0): string {
  const payload = Buffer.from(
    JSON.stringify(epoch > 0 ? [page.first, page.last, epoch] : [page.first, page.last]),
  ).toString('base64url');
  return `${payload}.${signText(secret, signed(scope, payload), MAC_BYTES)}`;
}

function isKey(v: unknown): v is Key {
  return Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string' || typeof x === 'number');
}

export function decodeCursor(
  secret: string,
  scope: string,
  cursor: string,
): PageEnds & { epoch: number | undefined } {
  // Built only when thrown: an Error captures a stack trace, and most cursors are valid.
  const invalid = () => badRequest('Invalid cursor.');
  const dot = cursor.indexOf('.');
  if (dot <= 0 || cursor.length > 2048) throw invalid();
  const payload = cursor.slice(0, dot);
  if (!verifyText(secret, signed(scope, payload), cursor.slice(dot + 1), MAC_BYTES)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length < 2 ||
    parsed.length > 3 ||
    !isKey(parsed[0]) ||
    !isKey(parsed[1])
  )
    throw invalid();
  const epoch = parsed[2] as unknown;
  if (epoch !== undefined && !(Number.isSafeInteger(epoch) && (epoch as number) > 0)) throw invalid();
  return { first: parsed[0], last: parsed[1], epoch: epoch as number | undefined };
}

/** The scope a cursor is bound to: operation path plus the query's defining parameters. */
export function cursorScope(operation: string, params: Record<string, unknown>): string {
  const parts = Object.keys(params)
    .sort()
    .filter((k) => params[k] !== undefined)
    .map((k) => `${k}=${JSON.stringify(params[k])}`);
  return `${operation}?${parts.join('&')}`;
}
