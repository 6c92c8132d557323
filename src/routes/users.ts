import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { type Principal, tokenUser } from '../http/access.ts';
import { badRequest } from '../http/errors.ts';
import { readNumericIds } from '../http/ids.ts';
import { operation, registerOperations } from '../http/operation.ts';
import { dataResponse, stringList, valuesTogether } from '../http/params.ts';
import { type User, userOwnFields, userSchema } from '../http/user-fields.ts';
import { recordKind } from '../records/kinds.ts';
import { patchRecord } from '../records/write.ts';
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

/** Production: a channel description is at most 300 characters (Update User). */
export const MAX_DESCRIPTION = 300;

const updateParams = {
  description: Type.String({
    maxLength: MAX_DESCRIPTION,
    description: `The new description, at most ${MAX_DESCRIPTION} characters; empty removes it; left out, nothing changes`,
  }),
};

/**
 * GET /users: users by id and/or login; without either, the user token's own user. PUT /users: the
 * token user's description.
 */
export function usersRoutes(app: FastifyInstance, ctx: AppContext): void {
  const user = recordKind('user');
  if (!user) throw new Error('no user record kind');
  registerOperations(app, ctx, [
    operation({
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
    }),
    operation({
      method: 'PUT',
      path: '/users',
      summary: 'Update User',
      description:
        "The token user's channel description, changed to `description` (empty removes it); the answer is the user as GET /users shows it to that token. Causes `user.update` for EventSub subscribers when the description changes.",
      access: { token: 'user', anyScope: ['user:edit'] },
      query: updateParams,
      response: dataResponse(userSchema),
      async handler(ctx, { query, principal }) {
        const me = tokenUser(principal);
        // Through the one write path, in one transaction with the user.update it causes
        // (src/records/events.ts). Left out, the description stays: the answer is the user as is.
        const row =
          query.description === undefined
            ? (await usersByIdsOrLogins(ctx.store.db, [me], []))[0]
            : await patchRecord(ctx.store, user, [me], { description: query.description }, 'query');
        // A user token names a user that exists: a deleted user's tokens go with it.
        if (!row) throw new Error(`PUT /users: no user ${me} behind a live token`);
        return { data: [userRowToUser(row as UserRow, ctx.links, mayReadEmail(principal, me))] };
      },
    }),
  ]);
}
