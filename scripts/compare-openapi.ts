// Compares helixd's own /openapi.json, field by field, with another OpenAPI description of the same
// Helix operations (e.g. a community one), and prints every difference per operation. It never
// fails on a difference: the differences are explained in docs/openapi-comparison.md, and this
// script is how they are found again after either document changes.
//
//   node --import tsx scripts/compare-openapi.ts <other-openapi.json>
//   npm run compare:openapi -- <other-openapi.json>
//
// helixd's document is read from the app itself, built exactly as the tests build it (buildApp on a
// fresh, migrated, empty SQLite store in a temporary directory), so that it is the one a running
// server serves. Exit status 0 whatever the differences; 2 when the inputs cannot be read.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app.ts';
import { systemClock } from '../src/clock.ts';
import { loadConfig } from '../src/config.ts';
import { DOCUMENTED_PREFIX } from '../src/http/operation.ts';
import { openStore } from '../src/store/db.ts';
import { migrateOrThrow } from '../src/store/migrate.ts';

type Json = Record<string, unknown>;
type Doc = { paths?: Record<string, Record<string, Json>>; components?: { schemas?: Record<string, Json> } };

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
/** The parameter and field keywords compared, besides the type. */
const LIMITS = ['minimum', 'maximum', 'minLength', 'maxLength', 'minItems', 'maxItems', 'default'] as const;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** helixd's /openapi.json, with the legacy operations served (`legacy`) or answering 410. */
async function helixdDocument(legacy: boolean): Promise<Doc> {
  const dir = mkdtempSync(join(tmpdir(), 'helixd-openapi-'));
  const url = join(dir, 'helixd.db');
  const store = openStore({ url });
  try {
    await migrateOrThrow(store);
    const secret = 'compare-openapi-secret';
    const config = loadConfig({ db: url, secret, legacy, logLevel: 'silent' }, {});
    const app = await buildApp({ config, store, clock: systemClock, secret, logger: false });
    try {
      const res = await app.inject({ method: 'GET', url: '/openapi.json' });
      if (res.statusCode !== 200) throw new Error(`/openapi.json answered ${res.statusCode}`);
      return res.json() as Doc;
    } finally {
      await app.close();
    }
  } finally {
    await store.close().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `$ref` resolved (local references only), repeatedly, so that the schema itself is returned. */
function deref(doc: Doc, schema: unknown, seen = new Set<string>()): Json {
  if (!isObject(schema)) return {};
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  if (seen.has(ref) || !ref.startsWith('#/')) return {};
  seen.add(ref);
  let target: unknown = doc;
  for (const part of ref.slice(2).split('/'))
    target = isObject(target) ? target[part.replaceAll('~1', '/').replaceAll('~0', '~')] : undefined;
  return deref(doc, target, seen);
}

/** A schema's type as one comparable text: OpenAPI 3.0's `nullable` and 3.1's type lists agree. */
function typeOf(s: Json): string {
  const types = new Set<string>(
    Array.isArray(s.type) ? (s.type as string[]) : s.type ? [String(s.type)] : [],
  );
  if (s.nullable === true) types.add('null');
  if (types.size === 0) return '(none)';
  return [...types].sort().join('|');
}

const show = (v: unknown): string => (v === undefined ? '(none)' : JSON.stringify(v));

/** The keywords of two schemas that differ, as lines; `where` names the parameter or field. */
function compareSchemas(where: string, ours: Json, theirs: Json): string[] {
  const out: string[] = [];
  if (typeOf(ours) !== typeOf(theirs))
    out.push(`${where}: type helixd ${typeOf(ours)}, other ${typeOf(theirs)}`);
  if (ours.format !== theirs.format)
    out.push(`${where}: format helixd ${show(ours.format)}, other ${show(theirs.format)}`);
  const enumOf = (s: Json) =>
    Array.isArray(s.enum) ? [...(s.enum as unknown[])].map(String).sort() : undefined;
  if (show(enumOf(ours)) !== show(enumOf(theirs)))
    out.push(`${where}: enum helixd ${show(enumOf(ours))}, other ${show(enumOf(theirs))}`);
  for (const k of LIMITS)
    if (show(ours[k]) !== show(theirs[k]))
      out.push(`${where}: ${k} helixd ${show(ours[k])}, other ${show(theirs[k])}`);
  return out;
}

interface Param {
  required: boolean;
  schema: Json;
}

function paramsOf(doc: Doc, op: Json): Map<string, Param> {
  const out = new Map<string, Param>();
  for (const raw of (op.parameters as unknown[] | undefined) ?? []) {
    const p = deref(doc, raw);
    out.set(`${String(p.in)} ${String(p.name)}`, {
      required: p.required === true,
      schema: deref(doc, p.schema),
    });
  }
  return out;
}

function compareParams(doc: Doc, other: Doc, ours: Json, theirs: Json): string[] {
  const a = paramsOf(doc, ours);
  const b = paramsOf(other, theirs);
  const out: string[] = [];
  for (const name of a.keys()) if (!b.has(name)) out.push(`parameter ${name}: only in helixd`);
  for (const [name, p] of b) {
    const q = a.get(name);
    if (!q) {
      out.push(`parameter ${name}: only in other`);
      continue;
    }
    if (q.required !== p.required)
      out.push(`parameter ${name}: required helixd ${q.required}, other ${p.required}`);
    const items = (s: Json) => deref(doc, s.items);
    out.push(...compareSchemas(`parameter ${name}`, q.schema, p.schema));
    if (q.schema.items || p.schema.items)
      out.push(...compareSchemas(`parameter ${name} items`, items(q.schema), deref(other, p.schema.items)));
  }
  return out;
}

interface Field {
  schema: Json;
  required: boolean;
}

/** Every field of a schema, by its path (`data[].id`, `pagination.cursor`), `$ref` resolved. */
function fieldsOf(
  doc: Doc,
  schema: unknown,
  prefix = '',
  out = new Map<string, Field>(),
): Map<string, Field> {
  const s = deref(doc, schema);
  if (s.type === 'array' || (Array.isArray(s.type) && s.type.includes('array'))) {
    if (s.items) fieldsOf(doc, s.items, `${prefix}[]`, out);
    return out;
  }
  const required = new Set((s.required as string[] | undefined) ?? []);
  for (const [name, child] of Object.entries((s.properties as Record<string, unknown> | undefined) ?? {})) {
    const path = prefix ? `${prefix}.${name}` : name;
    out.set(path, { schema: deref(doc, child), required: required.has(name) });
    fieldsOf(doc, child, path, out);
  }
  return out;
}

const okSchema = (op: Json): unknown => {
  const ok = (op.responses as Record<string, Json> | undefined)?.['200'];
  return (ok?.content as Record<string, Json> | undefined)?.['application/json']?.schema;
};

function compareAnswers(doc: Doc, other: Doc, ours: Json, theirs: Json): string[] {
  const out: string[] = [];
  const statuses = (op: Json) => Object.keys((op.responses as Json | undefined) ?? {});
  const sa = statuses(ours);
  const sb = statuses(theirs);
  const onlyA = sa.filter((s) => !sb.includes(s));
  const onlyB = sb.filter((s) => !sa.includes(s));
  if (onlyA.length) out.push(`statuses only in helixd: ${onlyA.join(', ')}`);
  if (onlyB.length) out.push(`statuses only in other: ${onlyB.join(', ')}`);
  const a = fieldsOf(doc, okSchema(ours));
  const b = fieldsOf(other, okSchema(theirs));
  for (const path of a.keys()) if (!b.has(path)) out.push(`field ${path}: only in helixd`);
  for (const [path, f] of b) {
    const g = a.get(path);
    if (!g) {
      out.push(`field ${path}: only in other`);
      continue;
    }
    if (g.required !== f.required)
      out.push(`field ${path}: required helixd ${g.required}, other ${f.required}`);
    out.push(...compareSchemas(`field ${path}`, g.schema, f.schema));
  }
  return out;
}

function operations(doc: Doc, prefix: string): Map<string, Json> {
  const out = new Map<string, Json>();
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    if (!path.startsWith(prefix)) continue;
    for (const m of METHODS)
      if (isObject(item[m])) out.set(`${m.toUpperCase()} ${path.slice(prefix.length)}`, item[m]);
  }
  return out;
}

/** Serves a 200 (rather than only its decommissioned 410)? */
const served = (op: Json): boolean => isObject((op.responses as Json | undefined)?.['200']);

async function main(): Promise<number> {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: compare-openapi <other-openapi.json>\n');
    return 2;
  }
  let other: Doc;
  try {
    other = JSON.parse(readFileSync(file, 'utf8')) as Doc;
  } catch (err) {
    process.stderr.write(`cannot read ${file}: ${(err as Error).message}\n`);
    return 2;
  }
  if (!isObject(other.paths)) {
    process.stderr.write(`${file}: no "paths": not an OpenAPI document\n`);
    return 2;
  }
  const byDefault = await helixdDocument(false);
  const withLegacy = await helixdDocument(true);
  const ours = operations(byDefault, DOCUMENTED_PREFIX);
  const legacyOps = operations(withLegacy, DOCUMENTED_PREFIX);
  const theirs = operations(other, '');

  let differences = 0;
  const counts: string[] = [];
  for (const [name, theirOp] of theirs) {
    const defaultOp = ours.get(name);
    if (!defaultOp) {
      process.stdout.write(`\n${name}: only in other\n`);
      differences++;
      counts.push(`${name}: not served`);
      continue;
    }
    // A decommissioned operation is described with its 410 by default: compare what --legacy serves.
    const legacy = !served(defaultOp);
    const op = legacy ? legacyOps.get(name) : defaultOp;
    const lines = op
      ? [...compareParams(legacy ? withLegacy : byDefault, other, op, theirOp)]
      : ['not described with --legacy either'];
    if (op) lines.push(...compareAnswers(legacy ? withLegacy : byDefault, other, op, theirOp));
    if (legacy)
      lines.unshift('helixd answers 410 by default (decommissioned); compared as served with --legacy');
    if (Boolean(defaultOp.deprecated) !== Boolean(theirOp.deprecated))
      lines.push(`deprecated: helixd ${Boolean(defaultOp.deprecated)}, other ${Boolean(theirOp.deprecated)}`);
    process.stdout.write(`\n${name} (${String(theirOp.operationId ?? '')})\n`);
    for (const l of lines) process.stdout.write(`  ${l}\n`);
    const n = lines.length - (legacy ? 1 : 0);
    differences += n;
    counts.push(`${name}: ${n}`);
  }
  const onlyOurs = [...ours.keys()].filter((n) => !theirs.has(n));
  if (onlyOurs.length) {
    process.stdout.write(`\noperations under ${DOCUMENTED_PREFIX} only in helixd:\n`);
    for (const n of onlyOurs) process.stdout.write(`  ${n}\n`);
  }
  process.stdout.write(
    `\nsummary: ${theirs.size} operations in other, ${ours.size} under ${DOCUMENTED_PREFIX} in helixd, ` +
      `${onlyOurs.length} only in helixd; ${differences} differences\n`,
  );
  for (const c of counts) process.stdout.write(`  ${c}\n`);
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`compare-openapi: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 2;
  },
);
