import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import type { Principal } from '../http/access.ts';
import { badRequest } from '../http/errors.ts';
import { readNumericIds } from '../http/ids.ts';
import { registerOperation } from '../http/operation.ts';
import { dataResponse, stringList, valuesTogether } from '../http/params.ts';
import { type User, userOwnFields, userSchema } from '../http/user-fields.ts';
import type { UserRow } from '../store/schema.ts';
import { usersByIdsOrLogins } from '../store/users.ts';
import type { Links } from '../wire/links.ts';

/** The scope that lets a user's own token read the user's email address. */
export const EMAIL_SCOPE = 'user:read:email';

/**
 * Whether `principal` may read the email address of user `userId`: only a user token of that very
 * user, with user:read:email. Anyone else gets no `email` key at all (not an empty one).
 */
export function mayReadEmail(principal: Principal, userId: number): boolean {
  return principal.kind === 'user' && principal.userId === userId && principal.scopes.has(EMAIL_SCOPE);
}

// The key order on the wire is the schema's (the serializer follows it), not this object's.
export function userRowToUser(row: UserRow, links: Links, withEmail: boolean): User {
  return {
    ...userOwnFields(row),
    profile_image_url: links.profileImage(row.id),
    offline_image_url: links.offlineImage(row.id),
    // Production deprecated the channel view count and no longer counts it: it answers 0.
    view_count: 0,
    ...(withEmail ? { email: row.email } : {}),
  };
}

/** Production: up to 100 users per request, ids and logins together. */
const MAX_USERS = 100;
const SELECTORS = ['id', 'login'] as const;

const usersParams = { id: stringList(MAX_USERS), login: stringList(MAX_USERS) };

/** GET /users: users by id and/or login; without either, the user token's own user. */
export function usersRoutes(app: FastifyInstance, ctx: AppContext): void {
  registerOperation(app, ctx, {
    path: '/users',
    summary: 'Get Users',
    description: "Users by id and/or login, at most 100 together; with neither, the user token's own user.",
    access: { token: 'any' },
    query: usersParams,
    response: dataResponse(userSchema),
    async handler(ctx, { query, principal }) {
      const given = valuesTogether(query, SELECTORS, MAX_USERS);
      let ids: number[];
      if (given > 0) ids = readNumericIds('id', query.id ?? []);
      else if (principal.kind === 'user') ids = [principal.userId];
      // An app token stands for no user: Helix asks for an id or a login.
      else
        throw badRequest(
          'Missing required parameter: "id" or "login" must be given unless the token is a user access token',
        );
      const rows = await usersByIdsOrLogins(ctx.store.db, ids, query.login ?? []);
      return { data: rows.map((r) => userRowToUser(r, ctx.links, mayReadEmail(principal, r.id))) };
    },
  });
}
