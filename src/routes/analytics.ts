import type { FastifyInstance } from 'fastify';
import { nowSeconds } from '../clock.ts';
import type { AppContext } from '../context.ts';
import { tokenUser } from '../http/access.ts';
import { badRequest, forbidden, notFound } from '../http/errors.ts';
import { registerOperation } from '../http/operation.ts';
import {
  cursorParamSchema,
  firstSchema,
  listResponseSchema,
  paginationOf,
  readPaging,
  singleString,
} from '../http/params.ts';
import { addDays, dayOfMs, dayToWire, effectiveRange, readRequestedRange } from '../reports/dates.ts';
import { REPORT_TYPES, REPORT_URL_TTL, type ReportType, reportPath } from '../reports/signing.ts';
import {
  findReportSubject,
  ownedReportSubjects,
  type ReportKind,
  type ReportSubject,
  reportSubjectRowToReportSubject,
} from '../store/analytics.ts';

/** The two operations (spec 4.6, 4.7): where they differ. */
const OPERATIONS = {
  games: { path: '/analytics/games', idParam: 'game_id', noun: 'game', scope: 'analytics:read:games' },
  extensions: {
    path: '/analytics/extensions',
    idParam: 'extension_id',
    noun: 'extension',
    scope: 'analytics:read:extensions',
  },
} as const satisfies Record<ReportKind, { path: string; idParam: string; noun: string; scope: string }>;

type IdParam = (typeof OPERATIONS)[ReportKind]['idParam'];

type AnalyticsQuery = {
  first: number;
  after?: string;
  before?: string;
  type: ReportType;
  started_at?: string;
  ended_at?: string;
} & Partial<Record<IdParam, string>>;

/** A report element on the wire: the id, `URL` in upper case, `type`, `date_range`. */
export interface AnalyticsReport {
  game_id?: string;
  extension_id?: string;
  URL: string;
  type: ReportType;
  date_range: { started_at: string; ended_at: string };
}

function subjectToReport(
  ctx: AppContext,
  kind: ReportKind,
  s: ReportSubject,
  type: ReportType,
  range: { start: string; end: string },
): AnalyticsReport {
  const expires = nowSeconds(ctx.clock) + REPORT_URL_TTL;
  const path = reportPath(ctx.secret, { kind, id: s.id, type, start: range.start, end: range.end, expires });
  return {
    [OPERATIONS[kind].idParam]: s.id,
    URL: ctx.config.publicUrl + path,
    type,
    date_range: { started_at: dayToWire(range.start), ended_at: dayToWire(range.end) },
  };
}

function reportSchema(idParam: IdParam) {
  return {
    type: 'object',
    properties: {
      [idParam]: { type: 'string' },
      URL: { type: 'string' },
      type: { type: 'string' },
      date_range: {
        type: 'object',
        properties: { started_at: { type: 'string' }, ended_at: { type: 'string' } },
        required: ['started_at', 'ended_at'],
      },
    },
    required: [idParam, 'URL', 'type', 'date_range'],
  } as const;
}

/** GET /analytics/games and GET /analytics/extensions (spec 4.6 to 4.8). */
export function analyticsRoutes(app: FastifyInstance, ctx: AppContext): void {
  for (const kind of ['games', 'extensions'] as const) {
    const op = OPERATIONS[kind];
    registerOperation<AnalyticsQuery>(app, ctx, {
      path: op.path,
      access: { token: 'user', anyScope: [op.scope] },
      schema: {
        querystring: {
          type: 'object',
          properties: {
            first: firstSchema,
            after: cursorParamSchema,
            before: cursorParamSchema,
            type: { type: 'string', enum: REPORT_TYPES, default: REPORT_TYPES[0] },
            started_at: singleString,
            ended_at: singleString,
            [op.idParam]: singleString,
          },
        },
        response: listResponseSchema(reportSchema(op.idParam)),
      },
      async handler(ctx, { query, principal }) {
        // Production pages these forward only.
        if (query.before !== undefined)
          throw badRequest(
            'The parameter "before" is not supported: this operation pages forward only, with "after"',
          );
        const today = dayOfMs(ctx.clock.now());
        const yesterday = addDays(today, -1);
        const requested = readRequestedRange(query.started_at, query.ended_at, today);
        const userId = tokenUser(principal);
        const id = query[op.idParam];

        if (id !== undefined) {
          // One report; `after` and `first` do not apply (spec 4.7: the id supersedes any cursor).
          const s = await findReportSubject(ctx.store.db, kind, id, today, yesterday);
          if (!s)
            throw notFound(`The ${op.noun} specified in the ${op.idParam} query parameter was not found`);
          if (s.ownerId !== userId)
            throw forbidden(
              `The ${op.noun} specified in the ${op.idParam} query parameter does not belong to the user of the OAuth token; only its owner can read its analytics`,
            );
          const range = effectiveRange(requested, s, today);
          return { data: [subjectToReport(ctx, kind, s, query.type, range)], pagination: {} };
        }

        // One report per game or extension of the user, each over its range (a report without data
        // in the window is still a report: its days are zeros).
        const paging = readPaging(
          ctx,
          op.path,
          { first: query.first, after: query.after },
          { user: userId, type: query.type, started_at: requested.start, ended_at: requested.end },
        );
        const page = await ownedReportSubjects(
          ctx.store.db,
          kind,
          { ownerId: userId, today, yesterday },
          paging,
        );
        const data = page.rows.map((row) => {
          const s = reportSubjectRowToReportSubject(row);
          return subjectToReport(ctx, kind, s, query.type, effectiveRange(requested, s, today));
        });
        return { data, pagination: paginationOf(ctx, paging, page) };
      },
    });
  }
}
