// Every answer a test app sends is checked against the OpenAPI document the app serves
// (/openapi.json): a documented route must answer a documented status, with a body its schema
// accepts. startTestApp checks in an onSend hook, so answers to raw sockets, fetch and the client
// libraries are checked as well as those of its `get`/`inject`. The document is the one `@fastify/swagger` generates
// from the routes' declarations, so this holds the declarations to what the code actually sends.
import assert from 'node:assert/strict';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { OPERATION_PREFIXES } from '../../src/http/operation.ts';

interface MediaType {
  schema?: object;
}
interface ResponseObject {
  content?: Record<string, MediaType>;
}
interface OpenApiDocument {
  paths: Record<string, Record<string, { responses: Record<string, ResponseObject> }>>;
}

/** What the check reads of an answer. */
export interface Answer {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}

export interface OpenApiChecker {
  /** Throws an AssertionError naming the route and status when `res` is not what the document says. */
  check(method: string, url: string, res: Answer): void;
  /** the documented paths (for tests that walk them) */
  document: OpenApiDocument;
}

// One checker per distinct document: most apps of a test file serve the same one.
const checkers = new Map<string, OpenApiChecker>();

export async function openApiChecker(app: FastifyInstance): Promise<OpenApiChecker> {
  const res = await app.inject({ method: 'GET', url: '/openapi.json' });
  assert.equal(res.statusCode, 200, 'GET /openapi.json');
  const cached = checkers.get(res.body);
  if (cached) return cached;
  const checker = makeChecker(JSON.parse(res.body) as OpenApiDocument);
  checkers.set(res.body, checker);
  return checker;
}

function makeChecker(doc: OpenApiDocument): OpenApiChecker {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  const validators = new Map<object, ValidateFunction>();
  const validatorOf = (schema: object) => {
    let v = validators.get(schema);
    if (!v) {
      v = ajv.compile(schema);
      validators.set(schema, v);
    }
    return v;
  };
  // Paths with parameters (`/reports/games/{file}`) as patterns.
  const templates = Object.keys(doc.paths).map((p) => ({
    path: p,
    re: new RegExp(`^${p.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }));
  const [documented, ...others] = OPERATION_PREFIXES;
  return {
    document: doc,
    check(method, url, res) {
      const m = method.toLowerCase();
      if (m === 'head' || m === 'options') return;
      let path = new URL(url, 'http://x').pathname.replace(/\/$/, '') || '/';
      // The other prefixes serve the documented operations (docs/design.md).
      for (const p of others) if (path.startsWith(`${p}/`)) path = documented + path.slice(p.length);
      const template = templates.find((t) => t.re.test(path));
      const op = template && doc.paths[template.path]?.[m];
      if (!op) return; // not a documented route (an unknown path, a 405 of an operation's path)
      const where = `${method.toUpperCase()} ${template.path} answered ${res.statusCode}`;
      const response = op.responses[String(res.statusCode)] ?? op.responses.default;
      assert.ok(response, `${where}: that status is not in /openapi.json (body ${res.body.slice(0, 200)})`);
      if (!response.content) {
        assert.equal(res.body, '', `${where}: /openapi.json says no body, but one was sent`);
        return;
      }
      const mediaType =
        String(res.headers['content-type'] ?? '')
          .split(';')[0]
          ?.trim() ?? '';
      const media = response.content[mediaType];
      assert.ok(media, `${where}: ${mediaType} is not among ${Object.keys(response.content).join(', ')}`);
      if (!media.schema || mediaType !== 'application/json') return;
      const validate = validatorOf(media.schema);
      const body = JSON.parse(res.body) as unknown;
      assert.ok(
        validate(body),
        `${where}: the body does not match /openapi.json: ${ajv.errorsText(validate.errors)}; body ${res.body.slice(0, 300)}`,
      );
    },
  };
}
