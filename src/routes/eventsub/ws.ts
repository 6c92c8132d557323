// `/ws`: the EventSub WebSocket (docs/eventsub-design.md, section 4), on the serving port through
// `@fastify/websocket`, so that the app's close and its hooks see it. The session itself lives in
// src/eventsub/sessions.ts; this file checks the upgrade request and hands the socket over.
import type { WebsocketPluginOptions } from '@fastify/websocket';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { EventSubService } from '../../eventsub/service.ts';
import { badRequest, HelixError } from '../../http/errors.ts';

export const WS_PATH = '/ws';

/** The keepalive timeout's bounds and default, in seconds (the platform's). */
const KEEPALIVE_MIN = 10;
const KEEPALIVE_MAX = 600;

/**
 * The `keepalive_timeout_seconds` parameter: a whole number, brought to 10..600 as the platform
 * does ("an invalid, but numeric value will return the nearest acceptable value"); default 10.
 * Anything else is refused before the upgrade, naming the parameter.
 */
export function keepaliveSeconds(query: unknown): number {
  const value = (query as Record<string, unknown> | undefined)?.keepalive_timeout_seconds;
  if (value === undefined) return KEEPALIVE_MIN;
  if (typeof value !== 'string')
    throw badRequest('The parameter "keepalive_timeout_seconds" may be given only once');
  if (!/^[+-]?\d+$/.test(value))
    throw badRequest('The parameter "keepalive_timeout_seconds" was malformed: the value must be an integer');
  return Math.min(KEEPALIVE_MAX, Math.max(KEEPALIVE_MIN, Number(value)));
}

/**
 * The plugin's options: frames of at most 4 KiB (nothing a client sends is read, and a larger one is
 * refused before it is buffered), a closing handshake cut after 2 s, the sessions closed with their
 * code when the app closes, and a socket's errors left to the session (they are a client's).
 */
/**
 * The `reconnect` parameter: the token of a `session_reconnect`'s URL (src/eventsub/service.ts
 * checks it on the open socket, as the platform answers 4007 there); given twice, a 400.
 */
export function reconnectToken(query: unknown): string | undefined {
  const value = (query as Record<string, unknown> | undefined)?.reconnect;
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw badRequest('The parameter "reconnect" may be given only once');
  return value;
}

export function websocketOptions(eventsub: EventSubService): WebsocketPluginOptions {
  return {
    // closeTimeout is an option of ws 8.18's server its types do not list yet.
    options: { maxPayload: 4096, ...{ closeTimeout: 2000 } },
    preClose: async function (this: FastifyInstance) {
      await eventsub.closeSessions();
      this.websocketServer.close();
    },
    errorHandler: () => {},
  };
}

export function wsRoutes(app: FastifyInstance, eventsub: EventSubService): void {
  app.route({
    method: 'GET',
    url: WS_PATH,
    schema: { hide: true },
    preValidation: async (req: FastifyRequest) => {
      keepaliveSeconds(req.query);
      reconnectToken(req.query);
    },
    // A plain GET: the path only speaks WebSocket.
    handler: async () => {
      throw new HelixError(426, 'This path expects a WebSocket upgrade (Upgrade: websocket)', {
        headers: { upgrade: 'websocket' },
      });
    },
    wsHandler: (socket, req) =>
      eventsub.accept(socket, keepaliveSeconds(req.query), reconnectToken(req.query)),
  });
}
