// Signed report URLs (spec 2.2: "valid for 5 minutes"; DESIGN decision 6). The URL carries every
// report parameter and its expiry; an HMAC-SHA256 under the server secret over all of them is the
// permission to download, so no token is needed and any instance with the same secret serves it.
// The origin is not signed: the same URL works behind any address of the same deployment.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { forbidden } from '../http/errors.ts';
import type { ReportKind } from '../store/analytics.ts';

/** Lifetime of a report URL, seconds (spec 8). */
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

function signature(secret: string, r: SignedReport): Buffer {
  // Domain-separated from cursor MACs (which start with "cursor\n"), one field per line.
  return createHmac('sha256', secret)
    .update(['helixd-report-url-v1', r.kind, r.id, r.type, r.start, r.end, String(r.expires)].join('\n'))
    .digest();
}

/** The path and query of a report URL (the caller puts its public origin in front). */
export function reportPath(secret: string, r: SignedReport): string {
  const q = new URLSearchParams({
    type: r.type,
    started_at: r.start,
    ended_at: r.end,
    expires: String(r.expires),
    signature: signature(secret, r).toString('base64url'),
  });
  return `/reports/${r.kind}/${encodeURIComponent(r.id)}.csv?${q.toString()}`;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

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
    !DAY.test(start) ||
    end === undefined ||
    !DAY.test(end) ||
    expiresText === undefined ||
    !/^\d{1,12}$/.test(expiresText) ||
    given === undefined
  )
    throw invalid;
  const r: SignedReport = { kind, id, type: type as ReportType, start, end, expires: Number(expiresText) };
  // Compared as text: base64 decoding ignores the last character's spare bits, so two spellings
  // would decode to the same MAC and a changed URL would still pass.
  const expected = Buffer.from(signature(secret, r).toString('base64url'));
  const actual = Buffer.from(given);
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) throw invalid;
  if (nowSeconds >= r.expires)
    throw forbidden(
      `The report URL expired at ${new Date(r.expires * 1000).toISOString().replace('.000Z', 'Z')} (report URLs are valid for 5 minutes). Request a new URL from the analytics operation.`,
    );
  return { kind, id, type: r.type, start, end };
}
