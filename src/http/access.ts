import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { nowSeconds } from '../clock.ts';
import type { AppContext } from '../context.ts';
import { unauthorized } from './errors.ts';

interface Caller {
  clientId: string;
  scopes: ReadonlySet<string>;
  expiresAt: number;
}

/** Who is calling: a user token acts for its user, an app token for its client alone. */
export type Principal = (Caller & { kind: 'user'; userId: number }) | (Caller & { kind: 'app' });

const USER_TOKEN_REQUIRED = 'This operation requires a user access token; an app access token was given';

/**
 * The user of an operation whose access rule asks for a user token (`token: 'user'`). authorize
 * lets no app token through to such an operation; were one to reach it, it gets the rule's own 401.
 */
export function tokenUser(p: Principal): number {
  if (p.kind !== 'user') throw unauthorized(USER_TOKEN_REQUIRED);
  return p.userId;
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

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * Whether `token` is `expected`, one of helixd's own bearer tokens (the admin token, the metrics
 * token; never set: no token is), in time that does not depend on where they differ: both are
 * hashed first, so the comparison is of two equal-length digests whatever the token's length.
 */
export function isSecretToken(token: string, expected: string | undefined): boolean {
  if (expected === undefined) return false;
  return timingSafeEqual(digest(token), digest(expected));
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
 * Applies the access rules in the order Helix does. The headers' presence is checked first,
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
  if (rule.token === 'user' && row.kind !== 'user') throw unauthorized(USER_TOKEN_REQUIRED);
  if (rule.anyScope?.length && !rule.anyScope.some((s) => scopes.has(s)))
    throw unauthorized(`Missing scope: ${rule.anyScope.join(' or ')}`);
  const caller: Caller = { clientId: row.client_id, scopes, expiresAt: row.expires_at };
  if (row.kind === 'app') return { kind: 'app', ...caller };
  // Every user token is minted for a user; a row without one could act for nobody.
  if (row.user_id === null) throw unauthorized('Invalid OAuth token');
  return { kind: 'user', userId: row.user_id, ...caller };
}
