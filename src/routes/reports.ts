import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { nowSeconds } from '../clock.ts';
import type { AppContext } from '../context.ts';
import { helixErrorBody, notFound } from '../http/errors.ts';
import { reportCsv, reportFileName } from '../reports/csv.ts';
import { addDays, dayOfMs } from '../reports/dates.ts';
import { verifyReport } from '../reports/signing.ts';
import { findReportSubject, REPORT_KINDS, type ReportKind } from '../store/analytics.ts';

/**
 * GET /reports/{games|extensions}/{id}.csv: the download behind the analytics operations' URLs.
 * Not an operation (no token: the URL's signature is the permission), but errors keep the Helix
 * body: 403 for a tampered or expired URL.
 */
export function reportsRoutes(app: FastifyInstance, ctx: AppContext): void {
  for (const kind of REPORT_KINDS) {
    const noun = kind === 'games' ? 'game' : 'extension';
    app.get<{ Params: { file: string }; Querystring: Record<string, unknown> }>(
      `/reports/${kind}/:file`,
      {
        schema: {
          summary: `Download a ${noun} report`,
          description: `The CSV file behind a URL of GET /helix/analytics/${kind}: \`<id>.csv\` with the signed parameters of that URL. No token: the signature is the permission, until the URL expires.`,
          tags: ['Reports'],
          response: {
            200: { description: 'The report', content: { 'text/csv': { schema: { type: 'string' } } } },
            403: { ...helixErrorBody, description: 'The URL was altered or has expired' },
            404: { ...helixErrorBody, description: `No such file, or the ${noun} no longer exists` },
          },
        },
      },
      async (req, reply) => {
        const file = req.params.file;
        if (!file.endsWith('.csv')) throw notFound();
        const r = verifyReport(
          ctx.secret,
          kind as ReportKind,
          file.slice(0, -4),
          req.query,
          nowSeconds(ctx.clock),
        );
        const today = dayOfMs(ctx.clock.now());
        const subject = await findReportSubject(ctx.store.db, r.kind, r.id, today, addDays(today, -1));
        if (!subject) throw notFound(`The ${noun} of this report no longer exists`);
        return (
          reply
            .type('text/csv; charset=utf-8')
            .header('content-disposition', `attachment; filename="${reportFileName(r)}"`)
            // The URL is a short-lived permission: no shared cache may keep the report.
            .header('cache-control', 'private, no-store')
            .send(Readable.from(reportCsv(ctx.store.db, r, subject)))
        );
      },
    );
  }
}
