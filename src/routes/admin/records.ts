// The admin API (docs/admin.md): every record kind listed, read, created, replaced, patched and
// deleted under /admin/<plural>, and POST /admin/batch for records of several kinds in one
// transaction. Every write goes through the one write path (src/records/write.ts), which `helixd
// import` uses too. Off (404) unless an admin token is configured (src/routes/admin/route.ts).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type TSchema, Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { decodeCursor, encodeCursor } from '../../http/cursor.ts';
import { badRequest } from '../../http/errors.ts';
import { cursorParam, firstParam } from '../../http/params.ts';
import { read, ruleOfPattern } from '../../records/fields.ts';
import {
  deleteRecord,
  FieldRule,
  keyFromText,
  RECORD_KINDS,
  RecordError,
  type RecordInput,
  type RecordKind,
  readRecord,
  readRecordPage,
  writeRecords,
} from '../../records/index.ts';
import { registerAdmin } from './route.ts';

const dataOf = (item: TSchema) => Type.Object({ data: Type.Array(item) });
const listOf = (item: TSchema) =>
  Type.Object({
    data: Type.Array(item),
    pagination: Type.Object({
      cursor: Type.Optional(Type.String({ description: 'Give it as `after` for the next page' })),
    }),
  });

const listQuery = Type.Object({ first: firstParam, after: Type.Optional(cursorParam) });

/**
 * The rule a path's key part breaks, as the write path words it for the same field of a body, or
 * undefined: a day that is not one (or before the analytics data), a text id outside its pattern.
 * No record can have such a key, and "not found" would hide the typo: a 400 names it. (Numeric
 * ids and text no store holds are keyFromText's.)
 */
function pathRule(kind: RecordKind, field: string, text: string): string | undefined {
  const schema = kind.schema.properties[field] as { format?: unknown; pattern?: unknown } | undefined;
  if (schema?.format === 'date')
    try {
      read.day(field, text);
    } catch (err) {
      if (err instanceof FieldRule) return err.rule;
      throw err;
    }
  if (typeof schema?.pattern === 'string' && !new RegExp(schema.pattern).test(text))
    return ruleOfPattern(schema.pattern) ?? `must match ${schema.pattern}`;
  return undefined;
}

/** The key of the record the path names, in the kind's key-column order. */
function keyOfPath(kind: RecordKind, req: FastifyRequest) {
  const params = req.params as Record<string, string>;
  const parts = kind.key.map((f) => params[f] ?? '');
  const key = keyFromText(kind, parts, 'path');
  kind.key.forEach((f, i) => {
    if (kind.numericKey.includes(kind.keyColumns[i] as string)) return;
    const rule = pathRule(kind, f, parts[i] as string);
    if (rule !== undefined) throw new RecordError(400, 'path', kind.kind, f, rule);
  });
  return key;
}

/** A body that must be a JSON object (PUT, PATCH). */
function bodyObject(kind: RecordKind, body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new RecordError(400, 'body', kind.kind, 'data', 'must be a JSON object');
  return body as Record<string, unknown>;
}

/** The body's key fields must be those of the path (or absent: the path gives them). */
function withPathKey(kind: RecordKind, req: FastifyRequest, data: Record<string, unknown>) {
  const params = req.params as Record<string, string>;
  const out = { ...data };
  for (const f of kind.key) {
    if (f in data && data[f] !== params[f])
      throw new RecordError(
        400,
        'body',
        kind.kind,
        f,
        `must be the ${f} of the path (${params[f]}), or left out`,
      );
    out[f] = params[f];
  }
  return out;
}

/** A client's secret is given one way: a new one in the patch replaces the kept one. */
function merge(kind: RecordKind, existing: object, patch: Record<string, unknown>): Record<string, unknown> {
  const base: Record<string, unknown> = { ...existing };
  if (kind.kind === 'client' && ('secret' in patch || 'secret_hash' in patch)) {
    delete base.secret;
    delete base.secret_hash;
    delete base.demo;
  }
  return { ...base, ...patch };
}

/** Writes the one record of a PUT or PATCH body over the existing one: its answer. */
async function replaceOne(ctx: AppContext, kind: RecordKind, data: Record<string, unknown>) {
  return {
    data: await writeRecords(ctx.store, [{ kind: kind.kind, data, where: 'body' }], {
      mode: 'replace',
      echo: true,
    }),
  };
}

function kindRoutes(app: FastifyInstance, ctx: AppContext, kind: RecordKind): void {
  const base = `/${kind.plural}`;
  const one = `${base}/${kind.key.map((f) => `:${f}`).join('/')}`;
  const params = Type.Object(Object.fromEntries(kind.key.map((f) => [f, Type.String()])));
  const scope = `/admin${base}`;
  const a = /^[aeiou]/.test(kind.kind) ? 'an' : 'a';
  const tag = kind.plural;
  const notFound = () =>
    new RecordError(404, 'path', kind.kind, kind.key.join('+'), `no ${kind.kind} has this key`);

  registerAdmin(app, ctx, {
    method: 'GET',
    path: base,
    tag,
    summary: `List ${kind.plural}`,
    description: `The ${kind.plural}, in key order, a page at a time.`,
    querystring: listQuery,
    status: 200,
    response: listOf(kind.schema),
    async handler(req) {
      const q = req.query as { first: number; after?: string };
      const after = q.after ? decodeCursor(ctx.secret, scope, q.after).last : undefined;
      const page = await readRecordPage(ctx.store, kind, { first: q.first, after });
      const cursor = page.next && encodeCursor(ctx.secret, scope, { first: page.next, last: page.next });
      return { data: page.records, pagination: cursor ? { cursor } : {} };
    },
  });

  registerAdmin(app, ctx, {
    method: 'GET',
    path: one,
    tag,
    summary: `Get ${a} ${kind.kind}`,
    description: `The ${kind.kind} with this key.`,
    params,
    status: 200,
    response: dataOf(kind.schema),
    async handler(req) {
      const record = await readRecord(ctx.store, kind, keyOfPath(kind, req));
      if (!record) throw notFound();
      return { data: [record] };
    },
  });

  registerAdmin(app, ctx, {
    method: 'POST',
    path: base,
    tag,
    summary: `Create ${kind.plural}`,
    description: `Creates one ${kind.kind}, or an array of them in one transaction (all or none). A key that exists is a 409.`,
    body: Type.Union([kind.schema, Type.Array(kind.schema)]),
    status: 201,
    response: dataOf(kind.schema),
    async handler(req) {
      const body = req.body;
      const items: RecordInput[] = Array.isArray(body)
        ? body.map((data, i) => ({ kind: kind.kind, data, where: `body[${i}]` }))
        : [{ kind: kind.kind, data: body, where: 'body' }];
      return { data: await writeRecords(ctx.store, items, { mode: 'create', echo: true }) };
    },
  });

  registerAdmin(app, ctx, {
    method: 'PUT',
    path: one,
    tag,
    summary: `Replace ${a} ${kind.kind}`,
    description: `Replaces the ${kind.kind} with this key by the record in the body (the key fields may be left out).`,
    params,
    body: kind.schema,
    status: 200,
    response: dataOf(kind.schema),
    async handler(req) {
      keyOfPath(kind, req);
      const data = withPathKey(kind, req, bodyObject(kind, req.body));
      return replaceOne(ctx, kind, data);
    },
  });

  registerAdmin(app, ctx, {
    method: 'PATCH',
    path: one,
    tag,
    summary: `Update ${a} ${kind.kind}`,
    description: `Changes the fields given in the body; the result is checked as a whole record.`,
    params,
    body: Type.Partial(kind.schema),
    status: 200,
    response: dataOf(kind.schema),
    async handler(req) {
      const key = keyOfPath(kind, req);
      const patch = withPathKey(kind, req, bodyObject(kind, req.body));
      // Read and written in one go by the write path's checks: a record deleted meanwhile is a 404.
      const existing = await readRecord(ctx.store, kind, key);
      if (!existing) throw notFound();
      const data = merge(kind, existing, patch);
      return replaceOne(ctx, kind, data);
    },
  });

  registerAdmin(app, ctx, {
    method: 'DELETE',
    path: one,
    tag,
    summary: `Delete ${a} ${kind.kind}`,
    description: `Deletes the ${kind.kind} with this key; a 409 while other records name it.`,
    params,
    status: 204,
    async handler(req) {
      await deleteRecord(ctx.store, kind, keyOfPath(kind, req), 'path');
    },
  });
}

const batchItem = Type.Object(
  {
    kind: Type.Union(RECORD_KINDS.map((k) => Type.Literal(k.kind))),
    data: Type.Object({}, { additionalProperties: true, description: 'A record of that kind' }),
  },
  { additionalProperties: false },
);

export function adminRoutes(app: FastifyInstance, ctx: AppContext): void {
  for (const kind of RECORD_KINDS) kindRoutes(app, ctx, kind);

  registerAdmin(app, ctx, {
    method: 'POST',
    path: '/batch',
    tag: 'admin',
    summary: 'Create records of several kinds',
    description:
      'Creates the records in order, in one transaction (all or none): a record may name records created before it in the batch.',
    body: Type.Array(batchItem),
    status: 201,
    response: Type.Object({ data: Type.Array(batchItem) }),
    async handler(req) {
      const body = req.body;
      if (!Array.isArray(body))
        throw badRequest('body: must be a JSON array of {"kind": ..., "data": {...}}');
      const items: RecordInput[] = body.map((item, i) => {
        const where = `body[${i}]`;
        if (typeof item !== 'object' || item === null || Array.isArray(item))
          throw new RecordError(
            400,
            where,
            'record',
            'item',
            'must be an object {"kind": ..., "data": {...}}',
          );
        const extra = Object.keys(item).find((k) => k !== 'kind' && k !== 'data');
        if (extra !== undefined)
          throw new RecordError(400, where, 'record', extra, 'is not a field of a batch item (kind, data)');
        return {
          // as sent: the write path refuses anything but a kind's name as a string (String() of
          // ["user"] would be "user", and of {"toString": 1} a TypeError)
          kind: (item as { kind?: unknown }).kind,
          data: (item as { data?: unknown }).data,
          where,
        };
      });
      const written = await writeRecords(ctx.store, items, { mode: 'create', echo: true });
      return { data: written.map((data, i) => ({ kind: items[i]?.kind as string, data })) };
    },
  });
}
