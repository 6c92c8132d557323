// The log: JSON lines on stdout (Fastify's pino logger), one per request, and no secret in any of
// them. Clients send secrets where a log would copy them: pyTwitchAPI puts `client_secret` in the
// token calls' query string, a revocation names its `token`, an implicit-flow redirect carries an
// `access_token`, and any error message may quote a URL or a header.
import { type FastifyReply, type FastifyRequest, type FastifyServerOptions, LogController } from 'fastify';
import type {} from '../faults/injector.ts';

/**
 * The parameters whose values are secrets, wherever a URL or a form names them. A report URL's
 * `signature` is one too: for the five minutes it lives, the URL is a bearer capability for the CSV.
 */
export const SECRET_PARAMS = [
  'client_secret',
  'code',
  'refresh_token',
  'token',
  'access_token',
  'signature',
] as const;

export const REDACTED = '[REDACTED]';

const SECRET_NAMES: ReadonlySet<string> = new Set(SECRET_PARAMS);

// What a parameter's text runs to: the next separator, or the end of the JSON string it sits in
// (every line is JSON text by then: a quote the text holds is escaped, `\"`, and read through).
const PARAM_TEXT = '(?:[^&#;"\\s\\\\]|\\\\.)*';

// One pattern, so that a line is scanned once (every line is, and two scans cost twice as much):
// - `name=value` after `?`, `&`, `#` or `;` with a secret's name spelled plainly (the common case,
//   redacted as it is, nothing to decode);
// - any parameter whose name holds a `%`: the server decodes parameter names, so `client_%73ecret`
//   is `client_secret` to it, and a malformed `client_secret%3D<secret>` a parameter whose decoded
//   name holds the secret. Those are decoded here as the server does and judged by the decoded
//   name (see `judge`). A name without a `%` reads as it is spelled: the first case has it;
// - an Authorization value quoted in a message, at least 8 characters long, so that prose such as
//   "OAuth token is missing" keeps its words (tokens have 30, the admin token 32 or more).
const SECRET = new RegExp(
  `([?&#;](?:${SECRET_PARAMS.join('|')})=)${PARAM_TEXT}` +
    `|([?&#;])([^=&#;"\\s\\\\]*%${PARAM_TEXT})` +
    '|\\b((?:Bearer|OAuth)\\s+)[A-Za-z0-9._~+/-]{8,}=*',
  'gi',
);

/**
 * A parameter holding a `%`, judged by its decoded name: kept when that name is not a secret's;
 * its value redacted when it is; and redacted whole when its name cannot be decoded, or decodes to
 * text holding `=` (then the name itself may carry a secret).
 */
function judge(separator: string, param: string): string {
  const eq = param.indexOf('=');
  const rawName = eq === -1 ? param : param.slice(0, eq);
  let name: string;
  try {
    name = decodeURIComponent(rawName.replaceAll('+', ' '));
  } catch {
    return `${separator}${REDACTED}`;
  }
  if (name.includes('=')) return `${separator}${REDACTED}`;
  if (eq !== -1 && SECRET_NAMES.has(name.toLowerCase())) return `${separator}${rawName}=${REDACTED}`;
  return separator + param;
}

/** `text` with every secret parameter's value and every quoted bearer token replaced. */
export function redact(text: string): string {
  return text.replace(
    SECRET,
    (match, plain?: string, separator?: string, encoded?: string, scheme?: string) => {
      if (plain !== undefined) return plain + REDACTED;
      if (separator !== undefined) return judge(separator, encoded as string);
      return scheme === undefined ? match : `${scheme}${REDACTED}`;
    },
  );
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
      // A fault injected on purpose (src/faults/injector.ts) says so: the line is not the server's own failure.
      ...req.injectedFault,
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
