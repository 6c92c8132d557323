// `npm run bench:workers`: req/s of `helixd serve --workers 1` against `--workers 2` (or other
// counts) on this machine: the same store, the same request mix, the same load, the runs
// interleaved (1, 2, 2, 1, 1, 2, ...) so that a change in the machine's load hits every setting.
//
//   npm run bench:workers                  2,000 users, 3 rounds, 10 s per run, 64 connections
//   other flags: --users N --rounds N --seconds N --warmup N --connections N
//                --workers 1,2 (the counts compared; the first is the baseline)
//                --generator wrk|autocannon
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { readSeedInfo } from '../src/seed/index.ts';
import { openStore } from '../src/store/db.ts';
import { BIN, ROOT, runTimed, startHelixd, stopChild } from './child.ts';
import { benchTokens, printHelp } from './harness.ts';
import { type BenchRequest, chooseGenerator, type LoadResult, runLoad } from './load.ts';
import { getJson, type MixContext, OPERATIONS } from './queries.ts';

/** Bench data is generated relative to a fixed day, so a kept store stays the same store. */
const ANCHOR_ISO = '2026-11-21T00:00:00Z';

const { values: args } = parseArgs({
  options: {
    users: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '64' },
    workers: { type: 'string', default: '1,2' },
    generator: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) printHelp(import.meta.url);
const users = Number(args.users);
const rounds = Number(args.rounds);
const seconds = Number(args.seconds);
const warmup = Number(args.warmup);
const connections = Number(args.connections);
const counts = args.workers.split(',').map(Number);
for (const [k, v] of Object.entries({ users, rounds, seconds, warmup, connections }))
  if (!Number.isInteger(v) || v < 0) throw new Error(`--${k}: a whole number is needed`);
if (!counts.every((n) => Number.isInteger(n) && n > 0))
  throw new Error('--workers: process counts separated by commas, such as 1,2');

const say = (line = '') => process.stdout.write(`${line}\n`);
const fmt = (n: number, digits = 0) => n.toFixed(digits);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

async function main(): Promise<void> {
  const generator = chooseGenerator(args.generator);
  const scratch = await mkdtemp(join(tmpdir(), 'helixd-bench-workers-'));
  say(`helixd workers bench - ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), node ${process.version}`);
  say(
    `load average at start: ${loadavg()
      .map((l) => fmt(l, 2))
      .join(' ')}`,
  );
  say(
    `load generator: ${generator}; ${connections} connections, ${seconds} s per run after ${warmup} s of warm-up, ${rounds} rounds of --workers ${counts.join(', ')}`,
  );

  // 1. the store, seeded once and kept (bench/data is gitignored)
  const db = join(ROOT, 'bench', 'data', `workers-u${users}-s1.db`);
  await mkdir(join(ROOT, 'bench', 'data'), { recursive: true });
  if (!existsSync(db)) {
    say(`seeding ${db}: ${users} users ...`);
    await runTimed(process.execPath, [
      BIN,
      'seed',
      '--db',
      db,
      '--users',
      String(users),
      '--now',
      ANCHOR_ISO,
    ]);
  }
  const store = openStore({ url: db });
  const info = await readSeedInfo(store);
  if (!info) throw new Error(`${db} holds no demo data: delete it to seed it again`);

  // 2. tokens in the store, then the mix: the first pages of every operation (bench/queries.ts)
  const { appToken, tokenFor } = await benchTokens(store.db, info.demoClientId);
  const builder = await startHelixd(db, 1);
  const mix: BenchRequest[] = [];
  try {
    const ctx: MixContext = {
      base: builder.base,
      db: store.db,
      anchor: info.anchor,
      appToken,
      clientId: info.demoClientId,
      tokenFor,
      walkPages: 20,
      spread: 200,
      log: () => {},
    };
    const lists: BenchRequest[][] = [];
    for (const op of OPERATIONS)
      for (const kind of await op.build(ctx))
        if (kind.cls === 'first') {
          const ok: BenchRequest[] = [];
          for (const r of kind.requests)
            if ((await getJson(builder.base, r, info.demoClientId)).status === 200) ok.push(r);
          lists.push(ok);
        }
    // Interleaved, so that every stretch of the list mixes the operations.
    for (let i = 0; lists.some((l) => i < l.length); i++)
      for (const l of lists) if (i < l.length) mix.push(l[i] as BenchRequest);
    say(`mix: ${mix.length} first-page requests of ${lists.length} query kinds, every one answered 200`);
  } finally {
    await stopChild(builder.child);
    await store.close();
  }

  // 3. the runs, interleaved: the order of the counts turns around every round
  const results = new Map<number, LoadResult[]>(counts.map((n) => [n, []]));
  for (let round = 1; round <= rounds; round++) {
    const order = round % 2 ? counts : [...counts].reverse();
    for (const n of order) {
      const { child, base } = await startHelixd(db, n);
      try {
        const load = (s: number) =>
          runLoad(generator, {
            base,
            requests: mix,
            clientId: info.demoClientId,
            connections,
            seconds: s,
            scratch,
          });
        if (warmup > 0) await load(warmup);
        const r = await load(seconds);
        results.get(n)?.push(r);
        say(
          `round ${round}, --workers ${n}: ${fmt(r.rps)} req/s, p50 ${fmt(r.p50, 2)} ms, p99 ${fmt(r.p99, 2)} ms${r.errors ? `, ${r.errors} errors` : ''} (load average ${fmt(loadavg()[0] ?? 0, 2)})`,
        );
      } finally {
        await stopChild(child);
      }
    }
  }

  // 4. the report
  say();
  const base = median((results.get(counts[0] as number) ?? []).map((r) => r.rps));
  for (const n of counts) {
    const rs = results.get(n) ?? [];
    const m = median(rs.map((r) => r.rps));
    say(
      `--workers ${n}: median ${fmt(m)} req/s (runs ${rs.map((r) => fmt(r.rps)).join(', ')}), median p99 ${fmt(median(rs.map((r) => r.p99)), 2)} ms, ${fmt(m / base, 2)} x --workers ${counts[0]}`,
    );
  }
  // Each round's runs are a minute apart at most: their ratio is less exposed to the machine's drift.
  const baseRuns = results.get(counts[0] as number) ?? [];
  for (const n of counts.slice(1)) {
    const ratios = (results.get(n) ?? []).map((r, i) => r.rps / (baseRuns[i]?.rps ?? Number.NaN));
    say(
      `--workers ${n} / --workers ${counts[0]} round by round: ${ratios.map((x) => fmt(x, 2)).join(', ')} (median ${fmt(median(ratios), 2)})`,
    );
  }
  const end = loadavg().map((l) => fmt(l, 2));
  say(`load average at end: ${end.join(' ')}`);
}

await main();
