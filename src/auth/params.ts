// The parameters of a token-service request as its routes hand them over: the query string and the
// form (or JSON) body together. Each one is checked only when read, so that only a parameter the
// request actually uses is an error, and the error names it.
import { HelixError } from '../http/errors.ts';
import { unstorableText } from '../store/text.ts';

/** An error of the token service; its routes answer it in their own shape, {"status", "message"}. */
export const oauthError = (status: number, message: string) => new HelixError(status, message);

/**
 * A JSON body's value that is not a string (a number, boolean, null, array or object). Kept, not
 * refused while parsing, so that only a parameter the request actually uses is an error, and the
 * error names it: a repeated query or form parameter (an array of strings) reads differently.
 */
export class NotAString {}

export type Params = Record<string, string | string[] | NotAString>;

/** The parameter's one value, or undefined when absent; a 400 when it is not one storable string. */
export function param(p: Params, name: string): string | undefined {
  const v = p[name];
  if (v === undefined) return undefined;
  if (v instanceof NotAString) throw oauthError(400, `parameter ${name} must be a string`);
  if (typeof v !== 'string') throw oauthError(400, `parameter ${name} may be given only once`);
  // Every parameter may reach SQL (a client id, a login): text no store can hold is refused here.
  const rule = unstorableText(v);
  if (rule !== undefined) throw oauthError(400, `parameter ${name} ${rule}`);
  return v;
}

/** The parameter's value; absent or empty, a 400 with `message`. */
export function required(p: Params, name: string, message: string): string {
  const v = param(p, name);
  if (v === undefined || v === '') throw oauthError(400, message);
  return v;
}
