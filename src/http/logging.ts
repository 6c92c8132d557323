// The log: JSON lines on stdout (Fastify's pino logger), one per request, and no secret in any of
// them. Clients send secrets where a log would copy them: pyTwitchAPI puts `client_secret` in the
// token calls' query string, a revocation names its `token`, an implicit-flow redirect carries an
// `access_token`, and any error message may quote a URL or a header.
import { type FastifyReply, type FastifyRequest, type FastifyServerOptions, LogController } from 'fastify';
import { injectedFault } from './faults.ts';

/** The parameters whose values are secrets, wherever a URL or a form names them. */
export const SECRET_PARAMS = ['client_secret', 'code', 'refresh_token', 'token', 'access_token'] as const;

export const REDACTED = '[REDACTED]';

// One pattern, so that a line is scanned once (every line is, and two scans cost twice as much):
// - `name=value` after `?`, `&`, `#` or `;`, the name also with its underscore percent-encoded (a
//   server decodes `client%5Fsecret` to `client_secret`); the value runs to the next separator or
//   to the end of the JSON string it sits in.
// - an Authorization value quoted in a message, at least 8 characters long, so that prose such as
//   "OAuth token is missing" keeps its words (tokens have 30, the admin token 32 or more).
const SECRET = new RegExp(
  `([?&#;](?:${SECRET_PARAMS.map((p) => p.replace('_', '(?:_|%5F)')).join('|')})=)[^&#;"\\s\\\\]*` +
    '|\\b((?:Bearer|OAuth)\\s+)[A-Za-z0-9._~+/-]{8,}=*',
  'gi',
);

/** `text` with every secret parameter's value and every quoted bearer token replaced. */
export function redact(text: string): string {
  return text.replace(SECRET, (_match, param?: string, scheme?: string) => `${param ?? scheme}${REDACTED}`);
}

/**
 * One line per request, written when it ends: its id (`reqId`, Fastify's, or the load balancer's
 * `X-Request-Id`), the method, the operation's route, the URL, the status and the time taken. The
 * line Fastify writes when a request arrives says nothing the last one does not, and doubles the cost.
 */
class RequestLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, req: FastifyRequest, reply: FastifyReply): void {
    const line = {
      method: req.method,
      route: req.routeOptions.url ?? null,
      url: req.url,
      statusCode: reply.statusCode,
      responseTime: Math.round(reply.elapsedTime * 100) / 100,
      // A fault injected on purpose (faults.ts) says so: the line is not the server's own failure.
      ...injectedFault(req),
    };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request completed');
  }
}

/**
 * Fastify's logger options. Every line passes through `redact` as text just before it is written
 * (messages, stacks, URLs, whatever a caller logged), and an `Authorization` header logged as an
 * object is censored by path.
 */
export function loggerOptions(
  level: string,
  stream?: NodeJS.WritableStream,
): Pick<FastifyServerOptions, 'logger' | 'logController'> {
  return {
    logger: {
      level,
      ...(stream ? { stream } : {}),
      redact: {
        paths: ['req.headers.authorization', 'headers.authorization', 'authorization'],
        censor: REDACTED,
      },
      hooks: { streamWrite: redact },
    },
    logController: new RequestLog(),
  };
}
