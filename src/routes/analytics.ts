import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { nowSeconds } from '../clock.ts';
import type { AppContext } from '../context.ts';
import { tokenUser } from '../http/access.ts';
import { badRequest, forbidden, notFound } from '../http/errors.ts';
import { registerOperation } from '../http/operation.ts';
import {
  dateTime,
  listResponse,
  pagingParams,
  singleString,
  stringEnum,
  withDefault,
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

/** The two operations (docs/api.md, GET /analytics/...): where they differ. */
const OPERATIONS = {
  games: {
    path: '/analytics/games',
    summary: 'Get Game Analytics',
    idParam: 'game_id',
    noun: 'game',
    scope: 'analytics:read:games',
  },
  extensions: {
    path: '/analytics/extensions',
    summary: 'Get Extension Analytics',
    idParam: 'extension_id',
    noun: 'extension',
    scope: 'analytics:read:extensions',
  },
} as const satisfies Record<
  ReportKind,
  { path: string; summary: string; idParam: string; noun: string; scope: string }
>;

type IdParam = (typeof OPERATIONS)[ReportKind]['idParam'];

/** The parameters of either operation: `idParam` names one report. */
const analyticsParams = <K extends IdParam>(idParam: K) => ({
  ...pagingParams,
  type: withDefault(stringEnum(REPORT_TYPES), REPORT_TYPES[0]),
  started_at: singleString,
  ended_at: singleString,
  ...({ [idParam]: singleString } as Record<K, typeof singleString>),
});

const reportFields = {
  URL: Type.String({ description: 'The signed, short-lived URL of the CSV report' }),
  type: stringEnum(REPORT_TYPES),
  date_range: Type.Object({ started_at: dateTime, ended_at: dateTime }),
};

/** The wire shape of a report, per kind: the id, `URL` in upper case, `type`, `date_range`. */
const REPORT_SCHEMAS = {
  games: Type.Object({ game_id: Type.String(), ...reportFields }),
  extensions: Type.Object({ extension_id: Type.String(), ...reportFields }),
} as const;
export type AnalyticsReport = Static<(typeof REPORT_SCHEMAS)[ReportKind]>;

function subjectToReport(
  ctx: AppContext,
  kind: ReportKind,
  s: ReportSubject,
  type: ReportType,
  range: { start: string; end: string },
): AnalyticsReport {
  const expires = nowSeconds(ctx.clock) + REPORT_URL_TTL;
  const path = reportPath(ctx.secret, { kind, id: s.id, type, start: range.start, end: range.end, expires });
  // The id's key is the kind's (REPORT_SCHEMAS): TypeScript cannot see it through the computed key.
  return {
    [OPERATIONS[kind].idParam]: s.id,
    URL: ctx.config.publicUrl + path,
    type,
    date_range: { started_at: dayToWire(range.start), ended_at: dayToWire(range.end) },
  } as AnalyticsReport;
}

/** GET /analytics/games and GET /analytics/extensions (docs/api.md). */
export function analyticsRoutes(app: FastifyInstance, ctx: AppContext): void {
  for (const kind of ['games', 'extensions'] as const) {
    const op = OPERATIONS[kind];
    registerOperation(app, ctx, {
      path: op.path,
      summary: op.summary,
      description: `Reports of the ${op.noun}s the token user owns: one CSV download URL per ${op.noun}, or the one ${op.noun} named by ${op.idParam}.`,
      access: { token: 'user', anyScope: [op.scope] },
      query: analyticsParams(op.idParam),
      response: listResponse(REPORT_SCHEMAS[kind]),
      errors: {
        403: `The ${op.noun} in ${op.idParam} does not belong to the token user`,
        404: `The ${op.noun} in ${op.idParam} does not exist`,
      },
      async handler(ctx, { query, principal, pages }) {
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
          // One report; `after` and `first` do not apply (docs/api.md: the id supersedes any cursor).
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
        const paging = pages.read(
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
        return { data, pagination: pages.pagination(paging, page) };
      },
    });
  }
}
