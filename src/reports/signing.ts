// Signed report URLs (docs/api.md, Report URLs: valid for 5 minutes). The URL carries every
// report parameter and its expiry; an HMAC-SHA256 under the server secret over all of them is the
// permission to download, so no token is needed and any instance with the same secret serves it.
// The origin is not signed: the same URL works behind any address of the same deployment.

import { forbidden } from '../http/errors.ts';
import type { ReportKind } from '../store/analytics.ts';
import { rfc3339 } from '../wire/datetime.ts';
import { signText, verifyText } from '../wire/mac.ts';

/** Lifetime of a report URL, seconds (docs/api.md, Report URLs). */
export const REPORT_URL_TTL = 300;

export const REPORT_TYPES = ['overview_v2'] as const;
export type ReportType = (typeof REPORT_TYPES)[number];

/** What a report URL names: one report over whole days, `start` to `end` inclusive. */
export interface ReportSpec {
  kind: ReportKind;
  id: string;
  type: ReportType;
  start: string;
  end: string;
}

export interface SignedReport extends ReportSpec {
  /** Unix seconds; the URL is refused from this instant on */
  expires: number;
}

/**
 * The signed text of a report URL: every field as the URL spells it, so that a URL passes only
 * with each field spelled exactly as issued (`expires=0<n>` names the same instant as `expires=<n>`
 * but is not what was signed).
 */
const signed = (kind: ReportKind, id: string, type: string, start: string, end: string, expires: string) => [
  'helixd-report-url-v1',
  kind,
  id,
  type,
  start,
  end,
  expires,
];

/** The path and query of a report URL (the caller puts its public origin in front). */
export function reportPath(secret: string, r: SignedReport): string {
  const expires = String(r.expires);
  const q = new URLSearchParams({
    type: r.type,
    started_at: r.start,
    ended_at: r.end,
    expires,
    signature: signText(secret, signed(r.kind, r.id, r.type, r.start, r.end, expires)),
  });
  return `/reports/${r.kind}/${encodeURIComponent(r.id)}.csv?${q.toString()}`;
}

/**
 * Checks a report URL's signature, then its expiry. Any change to any parameter (or a missing or
 * repeated one) fails the signature: 403, as does an expired URL, each with its own message.
 */
export function verifyReport(
  secret: string,
  kind: ReportKind,
  id: string,
  query: Record<string, unknown>,
  nowSeconds: number,
): ReportSpec {
  const one = (k: string) => (typeof query[k] === 'string' ? (query[k] as string) : undefined);
  const type = one('type');
  const start = one('started_at');
  const end = one('ended_at');
  const expiresText = one('expires');
  const given = one('signature');
  const invalid = forbidden(
    'The report URL is not valid: its signature does not match its parameters. Request a new URL from the analytics operation.',
  );
  if (
    !REPORT_TYPES.includes(type as ReportType) ||
    start === undefined ||
    end === undefined ||
    expiresText === undefined ||
    given === undefined ||
    !verifyText(secret, signed(kind, id, type as ReportType, start, end, expiresText), given)
  )
    throw invalid;
  // Signed as written: the text is the decimal number reportPath wrote, and no other spelling.
  const r: SignedReport = { kind, id, type: type as ReportType, start, end, expires: Number(expiresText) };
  if (nowSeconds >= r.expires)
    throw forbidden(
      `The report URL expired at ${rfc3339(r.expires)} (report URLs are valid for 5 minutes). Request a new URL from the analytics operation.`,
    );
  return { kind, id, type: r.type, start, end };
}
