// The cost of a long game report: the whole CSV of the game with the most clips and of the report
// owner's game with the most clips, from the first day analytics exist to the day before the data's
// anchor, read straight from a store that is already seeded (bench/data/*.db, a `helixd seed` store
// or a PostgreSQL URL). Clips Created is counted from the clips when a report is read (migration 009
// says why): this shows what that count costs on a big store.
//
//   node --import tsx bench/report.ts --db <path or postgres:// URL> [--end 2026-11-20] [--runs 7]
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { reportCsv } from '../src/reports/csv.ts';
import { ANALYTICS_FIRST_DAY } from '../src/reports/dates.ts';
import { openStore } from '../src/store/db.ts';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string' },
    // the bench stores' anchor is 2026-11-21 (run.ts): their last day of data is the day before
    end: { type: 'string', default: '2026-11-20' },
    runs: { type: 'string', default: '7' },
  },
});
if (!args.db) throw new Error('--db <path or postgres:// URL> is required');
const runs = Number(args.runs);

const store = openStore({ url: args.db });
try {
  const count = (where: ReturnType<typeof sql>) =>
    sql<{ id: number | string; n: number | string }>`
      select g.id as id, (select count(*) from clips c where c.game_id = g.id) as n
      from games g ${where} order by n desc limit 1`.execute(store.db);
  const games = [
    ['most clips', (await count(sql``)).rows[0]],
    ['owned, most clips', (await count(sql`where g.owner_id is not null`)).rows[0]],
  ] as const;
  for (const [label, g] of games) {
    if (!g) continue;
    const id = String(g.id);
    const spec = {
      kind: 'games',
      id,
      type: 'overview_v2',
      start: ANALYTICS_FIRST_DAY,
      end: args.end,
    } as const;
    const subject = { id, name: 'bench', ownerId: null, firstDay: null, hasYesterday: false };
    const times: number[] = [];
    let bytes = 0;
    for (let i = 0; i < runs; i++) {
      const started = performance.now();
      bytes = 0;
      for await (const chunk of reportCsv(store.db, spec, subject)) bytes += chunk.length;
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    const ms = (q: number) => (times[Math.floor(q * (times.length - 1))] as number).toFixed(1);
    process.stdout.write(
      `${label}: game ${id}, ${g.n} clips, ${spec.start} to ${spec.end}, ${bytes} bytes: ` +
        `median ${ms(0.5)} ms, min ${ms(0)} ms, max ${ms(1)} ms (${runs} runs)\n`,
    );
  }
} finally {
  await store.close();
}
