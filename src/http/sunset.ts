// The notice a decommissioned operation gives on every answer, the 410 and the --legacy one alike:
// when production switched it off and which operations replace it.
import type { FastifyReply } from 'fastify';
import { OPERATION_PREFIXES } from './operation.ts';

export interface Successor {
  path: string;
  title: string;
}

export interface Decommissioned {
  path: string;
  /** production's name of the operation */
  summary: string;
  /** the day production switched the operation off (docs/api.md, Decommissioned) */
  sunset: string;
  successors: readonly Successor[];
}

/**
 * `Sunset` (RFC 8594: an HTTP-date, here the decommission day) and `Link` (RFC 8288) naming the
 * replacement operations with rel="successor-version", under the prefix the request came in on.
 */
export function noticeHeaders(op: Decommissioned, prefix: string): Record<string, string> {
  return {
    sunset: new Date(`${op.sunset}T00:00:00Z`).toUTCString(),
    link: op.successors
      .map((s) => `<${prefix}${s.path}>; rel="successor-version"; title="${s.title}"`)
      .join(', '),
  };
}

function prefixOf(url: string): string {
  return OPERATION_PREFIXES.find((p) => url.startsWith(`${p}/`)) ?? OPERATION_PREFIXES[0];
}

/** The notice headers on a reply, under the prefix its request came in on. */
export function setNotice(reply: FastifyReply, op: Decommissioned): void {
  reply.headers(noticeHeaders(op, prefixOf(reply.request.url)));
}
