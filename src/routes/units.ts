// Mock-server "units" (the Twitch CLI mock API's conventions): the demo clients with their
// secrets and the users, so that tests and client libraries in mock mode can find credentials and
// ids without any other configuration. No token: like the mock API, these are for development.
import type { FastifyInstance } from 'fastify';
import { type Static, type TSchema, Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { cursorScope, decodeCursor } from '../http/cursor.ts';
import { helixErrorBody } from '../http/errors.ts';
import { cursorOf, cursorParam, type QueryOf, querySchema, withDefault } from '../http/params.ts';
import { USER_OWN_FIELDS, userOwnFields, userSchema } from '../http/user-fields.ts';
import { demoClients } from '../store/clients.ts';
import type { ClientRow } from '../store/schema.ts';
import { countUsers, usersById } from '../store/users.ts';

/** The mock API's client unit (Go field names, as its JSON has them). */
const clientUnitSchema = Type.Object({
  ID: Type.String(),
  Secret: Type.String(),
  Name: Type.String(),
  IsExtension: Type.Boolean(),
});
export type ClientUnit = Static<typeof clientUnitSchema>;

/** The mock API's user unit: the user's own fields, as GET /users has them. */
const userUnitSchema = Type.Pick(userSchema, USER_OWN_FIELDS);
export type UserUnit = Static<typeof userUnitSchema>;

/** The mock API's list of units: a cursor ("" on the last page), how many there are, the page. */
const unitList = <T extends TSchema>(item: T) =>
  Type.Object({ cursor: Type.String(), total: Type.Integer(), data: Type.Array(item) });

export function clientRowToClientUnit(row: ClientRow & { demo_secret: string }): ClientUnit {
  return { ID: row.id, Secret: row.demo_secret, Name: row.name, IsExtension: false };
}

const usersParams = {
  first: withDefault(Type.Integer({ minimum: 1, maximum: 100 }), 100),
  after: cursorParam,
};

const UNITS_USERS_SCOPE = cursorScope('/units/users', {});

/** A unit list's route schema: no token; the answer, or a 400 for a bad parameter. */
function unitsSchema<T extends TSchema>(summary: string, item: T) {
  return { summary, tags: ['Mock units'], response: { 200: unitList(item) } };
}

export function unitsRoutes(app: FastifyInstance, ctx: AppContext): void {
  // A development shortcut (config.ts, devShortcuts): a client's secret for the asking. Without the
  // routes, /units/* is a 404 and /openapi.json lists none of it.
  if (!ctx.config.devShortcuts) return;
  const db = ctx.store.db;

  // Only clients whose secret is known are listed: a client made with `helixd client create` keeps
  // only the hash of its secret, and an entry without a usable secret would only mislead.
  app.get(
    '/units/clients',
    { schema: unitsSchema('The demo clients and their secrets', clientUnitSchema) },
    async () => {
      const rows = await demoClients(db);
      const data = rows.flatMap((r) =>
        r.demo_secret === null ? [] : [clientRowToClientUnit({ ...r, demo_secret: r.demo_secret })],
      );
      return { cursor: '', total: data.length, data };
    },
  );

  app.get(
    '/units/users',
    {
      schema: {
        summary: 'The users, by id',
        tags: ['Mock units'],
        querystring: querySchema(usersParams),
        response: {
          200: unitList(userUnitSchema),
          400: { ...helixErrorBody, description: 'A malformed parameter or cursor' },
        },
      },
    },
    async (req) => {
      // Validated and defaulted by the schema.
      const q = req.query as QueryOf<typeof usersParams>;
      const after = q.after ? decodeCursor(ctx.secret, UNITS_USERS_SCOPE, q.after).last : undefined;
      const page = await usersById(db, { first: q.first, ...(after ? { after } : {}) });
      const total = await countUsers(db);
      const cursor = cursorOf(ctx.secret, UNITS_USERS_SCOPE, page) ?? '';
      return { cursor, total, data: page.rows.map(userOwnFields) };
    },
  );
}
