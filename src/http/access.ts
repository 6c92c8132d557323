import type { FastifyRequest } from 'fastify';
import { nowSeconds } from '../clock.ts';
import type { AppContext } from '../context.ts';
import type { TokenKind } from '../store/schema.ts';
import { unauthorized } from './errors.ts';

/** Who is calling: the token's kind, client, user and scopes. */
export interface Principal {
  kind: TokenKind;
  clientId: string;
  userId: number | null;
  scopes: ReadonlySet<string>;
  expiresAt: number;
}

export interface AccessRule {
  /** 'user': only user access tokens; 'any': app or user tokens */
  token: 'any' | 'user';
  /** the token must carry one of these scopes (none: no scope needed) */
  anyScope?: readonly string[];
}

/** Reads the raw token from `Authorization: Bearer <t>` (or `OAuth <t>`, which /validate accepts). */
export function bearerToken(header: string | undefined, schemes: readonly string[] = ['bearer']): string {
  const m = /^(\S+)\s+(\S+)\s*$/.exec(authorizationHeader(header));
  if (!m || !schemes.includes((m[1] ?? '').toLowerCase())) throw unauthorized('Invalid OAuth token');
  return m[2] as string;
}

/** The `Authorization` header's value; none (or an empty one) is "OAuth token is missing". */
function authorizationHeader(header: string | undefined): string {
  if (header === undefined || header.trim() === '') throw unauthorized('OAuth token is missing');
  return header;
}

/**
 * The `Client-Id` header: the client the caller says it is. Production requires it on every operation;
 * an empty value counts as missing. A repeated header (Node joins them with ", ") never matches.
 */
export function clientIdHeader(req: FastifyRequest): string {
  const v = req.headers['client-id'];
  const id = Array.isArray(v) ? v.join(', ') : v;
  if (id === undefined || id.trim() === '') throw unauthorized('Client ID is missing');
  return id;
}

/**
 * Applies the access rules in the order production does. The headers' presence is checked first,
 * before any store lookup: no `Authorization` header at all is "OAuth token is missing" (also when
 * `Client-Id` is missing too), then no `Client-Id` is "Client ID is missing". Then the token
 * (malformed, unknown, expired or revoked), the client it was issued to, its kind, its scopes.
 */
export async function authorize(ctx: AppContext, req: FastifyRequest, rule: AccessRule): Promise<Principal> {
  authorizationHeader(req.headers.authorization);
  const clientId = clientIdHeader(req);
  const raw = bearerToken(req.headers.authorization);
  const live = await ctx.tokens.find(raw, nowSeconds(ctx.clock));
  if (!live) throw unauthorized('Invalid OAuth token');
  const { row, scopes } = live;
  if (clientId !== row.client_id) throw unauthorized('Client ID and OAuth token do not match');
  if (rule.token === 'user' && row.kind !== 'user')
    throw unauthorized('This operation requires a user access token; an app access token was given');
  if (rule.anyScope?.length && !rule.anyScope.some((s) => scopes.has(s)))
    throw unauthorized(`Missing scope: ${rule.anyScope.join(' or ')}`);
  return { kind: row.kind, clientId: row.client_id, userId: row.user_id, scopes, expiresAt: row.expires_at };
}
