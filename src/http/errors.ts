import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import { unavailability } from '../store/unavailable.ts';

/** The one error type of the request path: a status and a message for the Helix error body. */
export class HelixError extends Error {
  constructor(
    readonly status: number,
    message: string,
    options?: ErrorOptions & { headers?: Record<string, string> },
  ) {
    super(message, options);
    this.headers = options?.headers;
  }
  readonly headers: Record<string, string> | undefined;
}

export const badRequest = (message: string) => new HelixError(400, message);
export const unauthorized = (message: string) => new HelixError(401, message);
export const forbidden = (message: string) => new HelixError(403, message);
export const notFound = (message = 'Not Found') => new HelixError(404, message);

/** The message of every 503 of a dependency that cannot serve (the log says which and why). */
export const UNAVAILABLE_MESSAGE = 'The service is temporarily unavailable';

/** The error body of every operation: the status's reason phrase, the status, and a message. */
export const helixErrorBody = Type.Object({
  error: Type.String({ description: 'The HTTP reason phrase of the status' }),
  status: Type.Integer(),
  message: Type.String({ description: 'What was wrong: names the parameter and the rule it broke' }),
});
export type HelixErrorBody = Static<typeof helixErrorBody>;

export function errorBody(status: number, message: string): HelixErrorBody {
  return { error: STATUS_CODES[status] ?? 'Error', status, message };
}

interface AjvError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

/** Turns a querystring schema violation into a message that names the parameter and the rule. */
export function validationMessage(errors: AjvError[]): string {
  const e = errors[0];
  if (!e) return 'Invalid request';
  const name =
    e.keyword === 'required'
      ? String(e.params.missingProperty)
      : e.instancePath.replace(/^\//, '').split('/')[0] || 'request';
  switch (e.keyword) {
    case 'required':
      return `Missing required parameter "${name}"`;
    case 'maximum':
      return `The parameter "${name}" was malformed: the value must be less than or equal to ${e.params.limit}`;
    case 'minimum':
      return `The parameter "${name}" was malformed: the value must be greater than or equal to ${e.params.limit}`;
    case 'maxItems':
      return `The parameter "${name}" may be given at most ${e.params.limit} times`;
    // Production's wording (Update User: "The string in the description query parameter is too
    // long"), with the limit.
    case 'maxLength':
      return `The string in the "${name}" query parameter is too long: at most ${e.params.limit} characters`;
    case 'enum':
      return `The parameter "${name}" was malformed: the value must be one of ${(e.params.allowedValues as unknown[]).join(', ')}`;
    case 'type':
      if (e.params.type === 'integer' || e.params.type === 'number')
        return `The parameter "${name}" was malformed: the value must be an integer`;
      if (e.params.type === 'boolean')
        return `The parameter "${name}" was malformed: the value must be true or false`;
      return `The parameter "${name}" may be given only once`;
    case 'pattern':
    case 'format':
      return `The parameter "${name}" was malformed`;
    default:
      return `The parameter "${name}" was malformed: ${e.message ?? 'invalid value'}`;
  }
}

/** An error's status and public message; internals of 5xx never leave (they are logged). */
export function describeError(
  err: FastifyError | HelixError | Error,
  req: FastifyRequest,
): { status: number; message: string; headers?: Record<string, string> } {
  if (err instanceof HelixError) return { status: err.status, message: err.message, headers: err.headers };
  if ((err as FastifyError).validation)
    return { status: 400, message: validationMessage((err as FastifyError).validation as AjvError[]) };
  const s = (err as FastifyError).statusCode;
  // Fastify's own client errors (bad content type, body too large, malformed JSON, bad URL encoding
  // ...): their messages describe the request, never the server. First: a body the client stopped
  // sending ("aborted", ECONNRESET) is the client's doing, not a store that went away.
  if (typeof s === 'number' && s >= 400 && s < 500)
    return { status: s, message: s === 415 ? 'Unsupported Media Type' : err.message };
  // The store or Redis cannot serve now (src/store/unavailable.ts): the caller may try again; which one
  // and why is logged, and /readyz says it, but the answer names nothing inside.
  const unavailable = unavailability(err);
  if (unavailable) {
    const { dependency, reason } = unavailable;
    req.log.error({ err, dependency, reason }, `${dependency} unavailable: ${reason}`);
    return { status: 503, message: UNAVAILABLE_MESSAGE };
  }
  req.log.error({ err }, 'unhandled error');
  return { status: 500, message: 'Internal Server Error' };
}

/** The one error handler: any error becomes the Helix body. */
export function handleError(
  err: FastifyError | HelixError | Error,
  req: FastifyRequest,
  reply: FastifyReply,
) {
  const { status, message, headers } = describeError(err, req);
  if (headers) reply.headers(headers);
  reply.code(status).type('application/json; charset=utf-8').send(errorBody(status, message));
}

/**
 * Errors the HTTP parser raises before there is a request (malformed request line or headers,
 * headers too large, timeouts): answered on the raw socket, still with the Helix body.
 */
export function handleClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const status =
    err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const body = JSON.stringify(errorBody(status, STATUS_CODES[status] ?? 'Bad Request'));
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
