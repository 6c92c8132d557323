// The admin API's hold on the server clock (development profile, with --admin-token;
// docs/clock.md): GET /admin/clock reads it, POST /admin/clock moves it forward, so that a test
// can expire a token or a report URL, or move a `period` window, without waiting. Never back:
// tokens, report URLs and cursors already issued would go back in time with it.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { type ClockDriver, type ClockMove, ClockMoveError, type ClockReading } from '../../clock.ts';
import { ConfigError, parseDuration } from '../../config.ts';
import type { AppContext } from '../../context.ts';
import { badRequest } from '../../http/errors.ts';
import { parseRfc3339 } from '../../wire/datetime.ts';
import { registerAdmin } from './route.ts';

const clockReply = Type.Object({
  now: Type.String({ description: 'The server clock: RFC 3339, to the millisecond' }),
  real_now: Type.String({ description: 'The system clock at the same instant' }),
  offset_ms: Type.Integer({ description: '`now` minus `real_now`, in milliseconds' }),
  speed: Type.Number({
    description: 'How many times faster than real time the server clock runs (`--clock-speed`)',
  }),
});

const answer = (at: ClockReading) => ({
  now: new Date(at.nowMs).toISOString(),
  real_now: new Date(at.realMs).toISOString(),
  offset_ms: Math.round(at.nowMs - at.realMs),
  speed: at.speed,
});

const SHAPE = '{"advance": "10m"} or {"to": "2026-06-01T00:00:00Z"}';

/** The move a POST body asks for; a 400 naming the field and the rule otherwise. */
function moveOf(body: unknown): ClockMove {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest(`body: must be a JSON object, ${SHAPE}`);
  const fields = body as Record<string, unknown>;
  const extra = Object.keys(fields).find((k) => k !== 'advance' && k !== 'to');
  if (extra !== undefined) throw badRequest(`body: "${extra}" is not a field (advance, to)`);
  const { advance, to } = fields;
  if ((advance === undefined) === (to === undefined))
    throw badRequest(`body: must give one of advance and to: ${SHAPE}`);
  if (to !== undefined) {
    const seconds = typeof to === 'string' ? parseRfc3339(to) : undefined;
    if (seconds === undefined)
      throw badRequest('to: must be an RFC 3339 date-time such as 2026-06-01T00:00:00Z');
    return { toMs: seconds * 1000 };
  }
  if (typeof advance !== 'string')
    throw badRequest('advance: must be a duration in a string (examples: 90s, 15m, 4h, 60d)');
  try {
    return { advanceMs: parseDuration(advance, 'advance') * 1000 };
  } catch (e) {
    if (e instanceof ConfigError) throw badRequest(e.message);
    throw e;
  }
}

/**
 * GET and POST /admin/clock, outside the production profile: `driver` moves the clock of every
 * process serving.
 */
export function clockRoutes(app: FastifyInstance, ctx: AppContext, driver: ClockDriver): void {
  if (ctx.config.profile === 'production') return;
  registerAdmin(app, ctx, {
    method: 'GET',
    path: '/clock',
    tag: 'admin',
    summary: 'Read the server clock',
    description:
      'The server clock that token expiry, report URLs and date rules read (`--now`, `--clock-speed`, moved by POST /admin/clock), beside the system clock.',
    status: 200,
    response: clockReply,
    handler: async () => answer(driver.clock.reading),
  });
  registerAdmin(app, ctx, {
    method: 'POST',
    path: '/clock',
    tag: 'admin',
    summary: 'Move the server clock forward',
    description:
      'Moves the server clock forward by a duration (`{"advance": "10m"}`: `90s`, `15m`, `4h`, `60d`) or to an instant (`{"to": "2026-06-01T00:00:00Z"}`); it then runs on at its speed. Never back: tokens, report URLs and cursors already issued would go back in time. Under `--workers`, every worker reads the moved clock when this answers.',
    body: Type.Object({
      advance: Type.Optional(Type.String({ description: 'a duration: 90s, 15m, 4h, 60d' })),
      to: Type.Optional(Type.String({ description: 'an RFC 3339 date-time, not before the clock' })),
    }),
    status: 200,
    response: clockReply,
    async handler(req) {
      const move = moveOf(req.body);
      let at: ClockReading;
      try {
        at = await driver.move(move);
      } catch (e) {
        if (e instanceof ClockMoveError) throw badRequest(e.message);
        throw e;
      }
      const moved = answer(at);
      req.log.warn({ clock: moved.now, offsetMs: moved.offset_ms }, 'server clock moved');
      return moved;
    },
  });
}
