// The two decommissioned operations (docs/api.md, Decommissioned): the notice they give on every
// answer, the 410 and the --legacy one alike (when Helix switched them off and which
// operations replace them), and the 410 Gone they answer, as Helix does, without --legacy
// (with it they are served from the store under their former rules: src/routes/legacy-*.ts).
import type { FastifyInstance, FastifyReply } from 'fastify';
import { errorBody, helixErrorBody } from './errors.ts';
import { DOCUMENTED_PREFIX, OPERATION_PREFIXES } from './operation.ts';

export const GONE_MESSAGE = 'This API is not available.';

export interface Successor {
  path: string;
  title: string;
}

export interface Decommissioned {
  path: string;
  /** Helix's name of the operation */
  summary: string;
  /** the day Helix switched the operation off (docs/api.md, Decommissioned) */
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

/**
 * Serves `op` as Helix does: 410 to any request, before looking at the token or the
 * parameters; Gone is about the resource, so every method gets it (RFC 9110 section 15.5.11).
 */
export function serveGone(app: FastifyInstance, op: Decommissioned): void {
  for (const prefix of OPERATION_PREFIXES) {
    app.route({
      method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
      url: prefix + op.path,
      // Described once: the GET under the documented prefix (the other methods answer the same).
      schema: {
        hide: prefix !== DOCUMENTED_PREFIX,
        summary: op.summary,
        description: `Decommissioned by Helix on ${op.sunset}: answers 410 to every request, with \`Sunset\` and a \`Link\` to ${op.successors.map((s) => s.path).join(' and ')}. Served from the store with --legacy.`,
        deprecated: true,
        response: { 410: { ...helixErrorBody, description: GONE_MESSAGE } },
      },
      handler: (_req, reply) => {
        reply
          .code(410)
          .headers(noticeHeaders(op, prefix))
          .type('application/json; charset=utf-8')
          .send(errorBody(410, GONE_MESSAGE));
      },
    });
  }
}
