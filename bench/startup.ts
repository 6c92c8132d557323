// `npm run bench:startup`: how long helixd takes to start, compiled (bin/helixd.js, dist/, built
// just before by the prebench:startup script) against the sources through tsx (bin/helixd-dev.js):
// - `serve` on the demo store (200 users, seeded once into bench/data/), spawn to the first 200
//   from /readyz; also the CPU time the process had used by then, less sensitive to the machine's
//   load than the wall clock;
// - `helixd --help`, spawn to exit.
// The median of several runs of each, the two builds in turn so that a change in the machine's
// load hits both. Printed, never asserted; the budget and the figures are in bench/README.md.
//
//   npm run bench:startup                 7 runs of each (and one not counted, to warm the caches)
//   npm run bench:startup -- --runs 15
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { cpuSeconds, freePort, stopChild, waitReady } from './child.ts';
import { median } from './harness.ts';

const ROOT = resolve(import.meta.dirname, '..');
const BUILDS = [
  { name: 'compiled', bin: join(ROOT, 'bin', 'helixd.js') },
  { name: 'tsx', bin: join(ROOT, 'bin', 'helixd-dev.js') },
] as const;
/** The budget on an idle machine (the production issue's start-up item). */
const BUDGET_MS = { readyz: 500, help: 300 };
/** The demo data is generated relative to a fixed day, so a kept store stays the same store. */
const ANCHOR_ISO = '2026-11-21T00:00:00Z';

const { values: args } = parseArgs({ options: { runs: { type: 'string', default: '7' } } });
const runs = Number(args.runs);
if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs: a whole number of at least 1 is needed');

const say = (line = '') => process.stdout.write(`${line}\n`);

/** Runs `node <argv>` to completion; its wall time in ms. */
function timedRun(argv: string[]): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => {
    output += d;
  });
  child.stderr.on('data', (d) => {
    output += d;
  });
  return new Promise((res, rej) => {
    child.on('error', rej);
    child.on('close', (code) => {
      if (code === 0) res(performance.now() - started);
      else rej(new Error(`node ${argv.join(' ')} exited ${code}:\n${output}`));
    });
  });
}

/** `serve` on `db`: ms from spawn to the first 200 from /readyz, and the CPU ms used by then. */
async function serveUntilReady(bin: string, db: string): Promise<{ ms: number; cpuMs: number | undefined }> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [bin, 'serve', '--db', db, '--port', String(port), '--host', '127.0.0.1', '--log-level', 'warn'],
    { cwd: ROOT, stdio: 'ignore' },
  );
  try {
    await waitReady(`http://127.0.0.1:${port}`, child, 60_000);
    const ms = performance.now() - started;
    const cpu = child.pid === undefined ? undefined : cpuSeconds(child.pid);
    return { ms, cpuMs: cpu === undefined ? undefined : cpu * 1000 };
  } finally {
    await stopChild(child);
  }
}

/** Per build: ms to /readyz, CPU ms used by then, ms of --help. */
interface Figures {
  readyz: number[];
  cpu: number[];
  help: number[];
}

const ms = (v: number) => `${Math.round(v)} ms`;
const load = () =>
  loadavg()
    .map((v) => v.toFixed(2))
    .join(' ');

async function main(): Promise<void> {
  const dataDir = join(ROOT, 'bench', 'data');
  await mkdir(dataDir, { recursive: true });
  const db = join(dataDir, 'startup-demo.db');
  if (!existsSync(db)) {
    say(`seeding the demo store ${db}`);
    await timedRun([BUILDS[0].bin, 'seed', '--db', db, '--now', ANCHOR_ISO]);
  }
  say(`helixd start-up, ${runs} runs of each; ${cpus().length} CPUs, load average ${load()} at start`);

  const figures = new Map<string, Figures>(BUILDS.map((b) => [b.name, { readyz: [], cpu: [], help: [] }]));
  for (let run = 0; run <= runs; run++) {
    for (const build of BUILDS) {
      const ready = await serveUntilReady(build.bin, db);
      const help = await timedRun([build.bin, '--help']);
      if (run === 0) continue; // warms the file cache and this process's fetch
      const f = figures.get(build.name) as Figures;
      f.readyz.push(ready.ms);
      if (ready.cpuMs !== undefined) f.cpu.push(ready.cpuMs);
      f.help.push(help);
    }
  }

  say(`load average ${load()} at end`);
  say();
  const widths = [10, 15, 9, 16];
  const row = (cells: string[]) =>
    say(
      cells
        .map((c, i) => c.padEnd(widths[i] ?? 0))
        .join('')
        .trimEnd(),
    );
  row(['build', 'start', 'median', 'min-max', 'CPU used by /readyz (median)']);
  for (const build of BUILDS) {
    const f = figures.get(build.name) as Figures;
    const range = (xs: number[]) => `${Math.round(Math.min(...xs))}-${ms(Math.max(...xs))}`;
    row([
      build.name,
      'serve /readyz',
      ms(median(f.readyz)),
      range(f.readyz),
      f.cpu.length ? ms(median(f.cpu)) : '?',
    ]);
    row([build.name, '--help', ms(median(f.help)), range(f.help)]);
  }
  const compiled = figures.get('compiled') as Figures;
  const verdict = (v: number, budget: number) => `${ms(v)}: ${v < budget ? 'met' : 'missed'}`;
  say();
  say(
    `budget (idle machine): /readyz under ${ms(BUDGET_MS.readyz)}, compiled median ${verdict(median(compiled.readyz), BUDGET_MS.readyz)}`,
  );
  say(
    `budget (idle machine): --help under ${ms(BUDGET_MS.help)}, compiled median ${verdict(median(compiled.help), BUDGET_MS.help)}`,
  );
}

await main();
