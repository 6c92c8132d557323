// The one way helixd reads a JSON body (the admin API's and the operations' that take one): UTF-8
// only, since other bytes are a 400 naming the first bad one, never text with U+FFFD in their
// place; then Fastify's own JSON reading (its refusal of __proto__ and constructor keys).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { decodeUtf8, type InvalidUtf8 } from '../wire/text.ts';
import { badRequest } from './errors.ts';

/**
 * Installs on `scope` the parser of `application/json` bodies; a body that `ignored` says is none
 * (empty, or a request that reads no body) is handed on as undefined.
 */
export function strictJsonBodies(
  scope: FastifyInstance,
  ignored: (req: FastifyRequest, bytes: Buffer) => boolean,
): void {
  const parseJson = scope.getDefaultJsonParser('error', 'error');
  scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body, done) => {
    const bytes = body as Buffer;
    if (ignored(req, bytes)) return done(null, undefined);
    let text: string;
    try {
      text = decodeUtf8(bytes);
    } catch (err) {
      return done(badRequest(`body: is ${(err as InvalidUtf8).message}`), undefined);
    }
    parseJson(req, text, done);
  });
}
