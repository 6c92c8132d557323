// `npm run bench:import`: how fast `helixd import` writes records, against how fast `helixd seed`
// writes the demo data, in rows per second, on SQLite and PostgreSQL. See bench/README.md.
//
//   npm run bench:import                 100,000 users: 1,000,000 clips (~10 min for both stores)
//   npm run bench:import -- --quick      2,000 users: 20,000 clips, checks the harness (< 1 min)
//   other flags: --users N --store sqlite|postgres (default both) --pg-url postgres://...
//
// Per store: `helixd seed --users N` into a fresh store (timed: every table's rows), `helixd export`
// of it (every kind, so that the import writes the same rows as the seed: like against like), then
// `helixd import` of that file into another fresh store (timed). The three are the commands as an
// operator runs them, compiled (dist/, which `npm run bench:import` builds first, as bin/helixd.js
// runs it), run in this process (no process start in the figures). Both the seed and the import
// run compiled, like against like: through tsx, each of their worker threads would compile the
// sources again at its start, and tsx's wrappers add to the import's preparing
// (docs/perf/2026-11-22-import-speed.md, step 6).
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import type { runCaptured as RunCaptured } from '../src/cli/index.ts';
import type { Summary } from '../src/io/progress.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'dist', 'cli.js');
if (!existsSync(CLI)) throw new Error('dist/ is not built: run `npm run build` (npm run bench:import does)');
const { runCaptured } = (await import(pathToFileURL(CLI).href)) as { runCaptured: typeof RunCaptured };
/** Data is generated relative to a fixed day, so that runs compare. */
const ANCHOR_ISO = '2026-11-21T00:00:00Z';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    users: { type: 'string' },
    store: { type: 'string', multiple: true },
    'pg-url': {
      type: 'string',
      default: process.env.HELIXD_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    },
  },
});
const users = Number(args.users ?? (args.quick ? 2_000 : 100_000));
if (!Number.isInteger(users) || users < 10) throw new Error('--users: a whole number from 10 is needed');
const stores = args.store ?? ['sqlite', 'postgres'];
const say = (line = '') => process.stdout.write(`${line}\n`);

/** Runs `helixd <args>` in this process; its stdout, or an error with its stderr. */
async function helixd(...argv: string[]): Promise<string> {
  const r = await runCaptured(argv);
  if (r.code !== 0) throw new Error(`helixd ${argv.join(' ')}: exit ${r.code}: ${r.stderr}`);
  return r.stdout;
}

/** Fresh stores of a kind: SQLite files in a temporary folder, or schemas of the PostgreSQL database. */
async function freshStores(kind: string, dir: string) {
  const made: string[] = [];
  const fresh = async (name: string): Promise<string> => {
    if (kind === 'sqlite') return join(dir, `${name}.db`);
    const schema = `bench_import_${name}_${randomBytes(4).toString('hex')}`;
    await admin(`create schema ${schema}`);
    made.push(schema);
    return `${args['pg-url']}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  };
  const admin = async (text: string) => {
    const c = new pg.Client({ connectionString: args['pg-url'] });
    await c.connect();
    try {
      await c.query(text);
    } finally {
      await c.end();
    }
  };
  const drop = async () => {
    for (const s of made) await admin(`drop schema if exists ${s} cascade`);
  };
  return { fresh, drop };
}

interface Figures {
  store: string;
  users: number;
  seed: { rows: number; clips: number; seconds: number; rows_per_second: number; clips_per_second: number };
  export: Summary;
  import: Summary;
  file_bytes: number;
}

async function measure(kind: string): Promise<Figures> {
  const dir = mkdtempSync(join(tmpdir(), 'helixd-bench-import-'));
  const { fresh, drop } = await freshStores(kind, dir);
  try {
    const seeded = await fresh('seeded');
    const seedOut = await helixd('seed', '--db', seeded, '--users', String(users), '--now', ANCHOR_ISO);
    // "seeded <where> in 12.3 s: users 100000, clients 1, ...": both commands time themselves, from
    // the first row to the commit.
    const seedSeconds = Number(/ in ([\d.]+) s: /.exec(seedOut)?.[1]);
    const counts: Record<string, number> = Object.fromEntries(
      [...(/: (.*)$/m.exec(seedOut)?.[1] ?? '').matchAll(/(\w+) (\d+)/g)].map((m) => [m[1], Number(m[2])]),
    );
    const seedRows = Object.values(counts).reduce((a, b) => a + b, 0);

    const file = join(dir, 'world.ndjson');
    const exported = JSON.parse(await helixd('export', '--db', seeded, '--out', file, '--json')) as Summary;

    const target = await fresh('imported');
    await helixd('migrate', '--db', target);
    const imported = JSON.parse(await helixd('import', file, '--db', target, '--json')) as Summary;
    return {
      store: kind,
      users,
      seed: {
        rows: seedRows,
        clips: counts.clips ?? 0,
        seconds: Math.round(seedSeconds * 10) / 10,
        rows_per_second: Math.round(seedRows / seedSeconds),
        clips_per_second: Math.round((counts.clips ?? 0) / seedSeconds),
      },
      export: exported,
      import: imported,
      file_bytes: statSync(file).size,
    };
  } finally {
    await drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const n = (v: number) => v.toLocaleString('en-US');
const results: Figures[] = [];
for (const kind of stores) {
  say(`${kind}: seeding ${n(users)} users, exporting every kind, importing ...`);
  const f = await measure(kind);
  results.push(f);
  say(
    `  seed    ${n(f.seed.rows)} rows (${n(f.seed.clips)} clips) in ${f.seed.seconds} s: ${n(f.seed.rows_per_second)} rows/s, ${n(f.seed.clips_per_second)} clips/s`,
  );
  say(`  export  ${n(f.export.rows)} rows in ${f.export.seconds} s: ${n(f.export.rows_per_second)} rows/s`);
  const clipsPerSecond = Math.round((f.import.records.clip ?? 0) / f.import.seconds);
  say(
    `  import  ${n(f.import.rows)} rows (${n(f.import.records.clip ?? 0)} clips, ${n(Math.round(f.file_bytes / 1e6))} MB) in ${f.import.seconds} s: ${n(f.import.rows_per_second)} rows/s, ${n(clipsPerSecond)} clips/s` +
      `  (${(f.import.rows_per_second / f.seed.rows_per_second).toFixed(2)}x seeding)`,
  );
}
const out = join(ROOT, 'bench', 'results', `${new Date().toISOString().slice(0, 10)}-import.json`);
await mkdir(dirname(out), { recursive: true });
await writeFile(out, `${JSON.stringify(results, null, 2)}\n`);
say(`report: ${out}`);
