// Cross-origin access, as Helix serves its API to browsers: any origin may read any
// answer (`Access-Control-Allow-Origin: *`, successes and errors alike: a page must be able to read
// a 401 to know its token is gone), and a preflight is answered before anything else looks at the
// request (no token, no Client-Id: browsers send neither with a preflight). Nothing here depends
// on cookies, so credentials are never allowed and `*` is safe. See docs/auth.md, "Browsers (CORS)".
import type { FastifyCorsOptions } from '@fastify/cors';

export const CORS_OPTIONS: FastifyCorsOptions = {
  origin: '*',
  // The operations are GETs (and HEADs); the token service takes POSTs.
  methods: ['GET', 'HEAD', 'POST'],
  // What a browser client sends: the token, the client id, the body type of a token request, and
  // (a test in a browser, development profile) the faults it asks for (src/faults/injector.ts).
  allowedHeaders: ['Accept', 'Authorization', 'Client-Id', 'Content-Type', 'Helixd-Fault'],
  // Without these a page could not read its rate-limit state (client libraries pace on them).
  exposedHeaders: ['Ratelimit-Limit', 'Ratelimit-Remaining', 'Ratelimit-Reset'],
  // One day (Chromium caps it at two hours, Firefox honours it).
  maxAge: 86400,
  // Every OPTIONS is answered 204 with these headers, also one without Origin (curl -X OPTIONS):
  // never a 400, a 404, or an operation's 405.
  strictPreflight: false,
};

/**
 * The headers of an ordinary (not preflight) answer, for the answers that run no hooks: errors
 * Fastify raises before routing (a URL it cannot decode). Everything else gets them from the plugin.
 */
export const CORS_ANSWER_HEADERS: Record<string, string> = {
  'access-control-allow-origin': String(CORS_OPTIONS.origin),
  'access-control-expose-headers': (CORS_OPTIONS.exposedHeaders as string[]).join(', '),
};
