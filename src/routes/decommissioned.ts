// The two decommissioned operations (docs/api.md, Decommissioned). By default they answer 410 Gone as
// production does; with --legacy (HELIXD_LEGACY) they are served from the store under their
// former rules, for old clients and their tests (legacy-follows.ts, legacy-tags.ts).
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { errorBody, helixErrorBody } from '../http/errors.ts';
import { DOCUMENTED_PREFIX, OPERATION_PREFIXES } from '../http/operation.ts';
import { noticeHeaders } from '../http/sunset.ts';
import { FOLLOWS, legacyFollowsRoutes } from './legacy-follows.ts';
import { legacyTagsRoutes, STREAM_TAGS } from './legacy-tags.ts';

export const GONE_MESSAGE = 'This API is not available.';

export function decommissionedRoutes(app: FastifyInstance, ctx: AppContext): void {
  if (ctx.config.legacy) {
    legacyFollowsRoutes(app, ctx);
    legacyTagsRoutes(app, ctx);
    return;
  }
  // Production answers 410 to any request, before looking at the token or the parameters; Gone
  // is about the resource, so every method gets it (RFC 9110 section 15.5.11).
  for (const op of [FOLLOWS, STREAM_TAGS]) {
    for (const prefix of OPERATION_PREFIXES) {
      app.route({
        method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
        url: prefix + op.path,
        // Described once: the GET under the documented prefix (the other methods answer the same).
        schema: {
          hide: prefix !== DOCUMENTED_PREFIX,
          summary: op.summary,
          description: `Decommissioned by production on ${op.sunset}: answers 410 to every request, with \`Sunset\` and a \`Link\` to ${op.successors.map((s) => s.path).join(' and ')}. Served from the store with --legacy.`,
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
}
