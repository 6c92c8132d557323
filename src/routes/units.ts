// Mock-server "units" (the Twitch CLI mock API's conventions): the demo clients with their
// secrets and the users, so that tests and client libraries in mock mode can find credentials and
// ids without any other configuration. No token: like the mock API, these are for development.
import type { FastifyInstance } from 'fastify';
import { rfc3339 } from '../clock.ts';
import type { AppContext } from '../context.ts';
import { cursorScope, decodeCursor } from '../http/cursor.ts';
import { cursorOf } from '../http/params.ts';
import { compileQuery } from '../http/validate.ts';
import { demoClients } from '../store/clients.ts';
import type { ClientRow, UserRow } from '../store/schema.ts';
import { countUsers, usersById } from '../store/users.ts';

/** The mock API's client unit (Go field names, as its JSON has them). */
export interface ClientUnit {
  ID: string;
  Secret: string;
  Name: string;
  IsExtension: boolean;
}

export interface UserUnit {
  id: string;
  login: string;
  display_name: string;
  type: string;
  broadcaster_type: string;
  description: string;
  created_at: string;
}

export function clientRowToClientUnit(row: ClientRow & { demo_secret: string }): ClientUnit {
  return { ID: row.id, Secret: row.demo_secret, Name: row.name, IsExtension: false };
}

export function userRowToUserUnit(row: UserRow): UserUnit {
  return {
    id: String(row.id),
    login: row.login,
    display_name: row.display_name,
    type: '',
    broadcaster_type: row.broadcaster_type,
    description: row.description,
    created_at: rfc3339(row.created_at),
  };
}

interface UsersQuery {
  first: number;
  after?: string;
}

const usersQuery = compileQuery<UsersQuery>({
  type: 'object',
  properties: {
    first: { type: 'integer', minimum: 1, maximum: 100, default: 100 },
    after: { type: 'string', maxLength: 2048 },
  },
});

const UNITS_USERS_SCOPE = cursorScope('/units/users', {});

export function unitsRoutes(app: FastifyInstance, ctx: AppContext): void {
  const db = ctx.store.db;

  // Only clients whose secret is known are listed: a client made with `helixd client create` keeps
  // only the hash of its secret, and an entry without a usable secret would only mislead.
  app.get('/units/clients', async () => {
    const rows = await demoClients(db);
    const data = rows.flatMap((r) =>
      r.demo_secret === null ? [] : [clientRowToClientUnit({ ...r, demo_secret: r.demo_secret })],
    );
    return { cursor: '', total: data.length, data };
  });

  app.get('/units/users', async (req) => {
    const q = usersQuery(req.query);
    const after = q.after ? decodeCursor(ctx.secret, UNITS_USERS_SCOPE, q.after).last : undefined;
    const page = await usersById(db, { first: q.first, ...(after ? { after } : {}) });
    const total = await countUsers(db);
    const cursor = cursorOf(ctx.secret, UNITS_USERS_SCOPE, page) ?? '';
    return { cursor, total, data: page.rows.map(userRowToUserUnit) };
  });
}
