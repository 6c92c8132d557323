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
  if (header === undefined || header.trim() === '') throw unauthorized('OAuth token is missing');
  const m = /^(\S+)\s+(\S+)\s*$/.exec(header);
  if (!m || !schemes.includes((m[1] ?? '').toLowerCase())) throw unauthorized('Invalid OAuth token');
  return m[2] as string;
}

/** Applies the access rules of spec section 5 in the order production does: token, client, kind, scope. */
export async function authorize(ctx: AppContext, req: FastifyRequest, rule: AccessRule): Promise<Principal> {
  const raw = bearerToken(req.headers.authorization);
  const live = await ctx.tokens.find(raw, nowSeconds(ctx.clock));
  if (!live) throw unauthorized('Invalid OAuth token');
  const { row, scopes } = live;
  const clientHeader = req.headers['client-id'];
  if (clientHeader !== undefined && clientHeader !== row.client_id)
    throw unauthorized('Client ID and OAuth token do not match');
  if (rule.token === 'user' && row.kind !== 'user')
    throw unauthorized('This operation requires a user access token; an app access token was given');
  if (rule.anyScope?.length && !rule.anyScope.some((s) => scopes.has(s)))
    throw unauthorized(`Missing scope: ${rule.anyScope.join(' or ')}`);
  return { kind: row.kind, clientId: row.client_id, userId: row.user_id, scopes, expiresAt: row.expires_at };
}
