import type { FastifyInstance } from 'fastify';
import { rfc3339 } from '../clock.ts';
import type { AppContext } from '../context.ts';
import type { Principal } from '../http/access.ts';
import { badRequest } from '../http/errors.ts';
import { readNumericIds } from '../http/ids.ts';
import { registerOperation } from '../http/operation.ts';
import { dataResponseSchema, stringList, valuesTogether } from '../http/params.ts';
import type { Links } from '../links.ts';
import type { UserRow } from '../store/schema.ts';
import { usersByIdsOrLogins } from '../store/users.ts';

export interface User {
  id: string;
  login: string;
  display_name: string;
  type: string;
  broadcaster_type: string;
  description: string;
  profile_image_url: string;
  offline_image_url: string;
  view_count: number;
  email?: string;
  created_at: string;
}

/** The scope that lets a user's own token read the user's email address. */
export const EMAIL_SCOPE = 'user:read:email';

/**
 * Whether `principal` may read the email address of user `userId`: only a user token of that very
 * user, with user:read:email. Anyone else gets no `email` key at all (not an empty one).
 */
export function mayReadEmail(principal: Principal, userId: number): boolean {
  return principal.kind === 'user' && principal.userId === userId && principal.scopes.has(EMAIL_SCOPE);
}

export function userRowToUser(row: UserRow, links: Links, withEmail: boolean): User {
  return {
    id: String(row.id),
    login: row.login,
    display_name: row.display_name,
    // helixd keeps no staff, admin or global-moderator roles: every user is a normal user.
    type: '',
    broadcaster_type: row.broadcaster_type,
    description: row.description,
    profile_image_url: links.profileImage(row.id),
    offline_image_url: links.offlineImage(row.id),
    // Production deprecated the channel view count and no longer counts it: it answers 0.
    view_count: 0,
    ...(withEmail ? { email: row.email } : {}),
    created_at: rfc3339(row.created_at),
  };
}

const userSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    login: { type: 'string' },
    display_name: { type: 'string' },
    type: { type: 'string' },
    broadcaster_type: { type: 'string' },
    description: { type: 'string' },
    profile_image_url: { type: 'string' },
    offline_image_url: { type: 'string' },
    view_count: { type: 'integer' },
    email: { type: 'string' },
    created_at: { type: 'string' },
  },
  required: [
    'id',
    'login',
    'display_name',
    'type',
    'broadcaster_type',
    'description',
    'profile_image_url',
    'offline_image_url',
    'view_count',
    'created_at',
  ],
} as const;

/** Production: up to 100 users per request, ids and logins together. */
const MAX_USERS = 100;
const SELECTORS = ['id', 'login'] as const;

interface UsersQuery {
  id?: string[];
  login?: string[];
}

/** GET /users: users by id and/or login; without either, the user token's own user. */
export function usersRoutes(app: FastifyInstance, ctx: AppContext): void {
  registerOperation<UsersQuery>(app, ctx, {
    path: '/users',
    access: { token: 'any' },
    schema: {
      querystring: {
        type: 'object',
        properties: { id: stringList(MAX_USERS), login: stringList(MAX_USERS) },
      },
      response: dataResponseSchema(userSchema),
    },
    async handler(ctx, { query, principal }) {
      const given = valuesTogether(query, SELECTORS, MAX_USERS);
      let ids: number[];
      if (given > 0) ids = readNumericIds('id', query.id ?? []);
      else if (principal.kind === 'user') ids = [principal.userId];
      // An app token stands for no user: production asks for an id or a login.
      else
        throw badRequest(
          'Missing required parameter: "id" or "login" must be given unless the token is a user access token',
        );
      const rows = await usersByIdsOrLogins(ctx.store.db, ids, query.login ?? []);
      return { data: rows.map((r) => userRowToUser(r, ctx.links, mayReadEmail(principal, r.id))) };
    },
  });
}
