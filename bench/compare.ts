// `npm run bench:compare -- --against <checkout>`: this checkout's helixd against another's (a
// commit before a change, in a `git worktree`), on the same kept store, with the same requests, the
// runs interleaved (A B, B A, A B ...) so that a change in the machine's load hits both: req/s and
// CPU µs per request of each one's main thread, per query kind, and their ratios round by round.
// How docs/perf/ measures what one step of work saved: the whole bench's figures move between runs
// by more than one step saves.
//
//   git worktree add /tmp/before <commit> && (cd /tmp/before && npm ci && npm run build)
//   npm run bench:compare -- --against /tmp/before --only /clips
//   other flags: --db <store> (default: the bench's 100,000-user SQLite store, which npm run bench
//                seeds; or a postgres:// URL of a seeded database: helixd seed --db <url>)
//                --only <path> (repeatable) --kinds first,deep (the classes of bench/queries.ts
//                run: first, deep, ids, filter) --rounds N (3) --seconds N (5) --warmup N (1)
//                --connections N (64) --generator wrk|autocannon
//                --match <text> (only the kinds whose name holds it, e.g. 'first page by broadcaster')
//                --profile (a CPU profile of each server over the run: its busy time by step of the
//                request path, side by side, and each one's self time by function)
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { readSeedInfo } from '../src/seed/index.ts';
import { isPostgresUrl, openStore } from '../src/store/db.ts';
import { BIN, ROOT, startHelixd, stopChild, threadCpuUs } from './child.ts';
import { benchTokens, median, printHelp } from './harness.ts';
import { chooseGenerator, runLoad } from './load.ts';
import { mainProfile, profileSteps, summariseProfile } from './profile.ts';
import { getJson, type MixContext, OPERATIONS, type QueryKind } from './queries.ts';

const { values: args } = parseArgs({
  options: {
    against: { type: 'string' },
    db: { type: 'string', default: join(ROOT, 'bench', 'data', 'sqlite-u100000-s1.db') },
    only: { type: 'string', multiple: true },
    kinds: { type: 'string', default: 'first,deep' },
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '1' },
    connections: { type: 'string', default: '64' },
    generator: { type: 'string' },
    match: { type: 'string' },
    profile: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) printHelp(import.meta.url);
const rounds = Number(args.rounds);
const seconds = Number(args.seconds);
const warmup = Number(args.warmup);
const connections = Number(args.connections);
for (const [k, v] of Object.entries({ rounds, seconds, warmup, connections }))
  if (!Number.isInteger(v) || v < 0) throw new Error(`--${k}: a whole number is needed`);
if (!args.against) throw new Error('--against <checkout>: the other checkout, built (npm run build there)');
const otherBin = resolve(args.against, 'bin', 'helixd.js');
if (!existsSync(resolve(args.against, 'dist')))
  throw new Error(`${args.against}: not built (run npm run build there)`);
if (!isPostgresUrl(args.db) && !existsSync(args.db))
  throw new Error(`${args.db}: no such store (npm run bench seeds it)`);
const classes = new Set(args.kinds.split(','));

const say = (line = '') => process.stdout.write(`${line}\n`);
const fmt = (n: number, digits = 0) => n.toFixed(digits);

interface Figure {
  rps: number;
  cpu: number;
  p99: number;
}

async function main(): Promise<void> {
  const generator = chooseGenerator(args.generator);
  const scratch = await mkdtemp(join(tmpdir(), 'helixd-bench-compare-'));
  say(`helixd compare - ${cpus().length} CPUs, node ${process.version}, load generator ${generator}`);
  say(`A: ${args.against} (the other checkout); B: ${ROOT} (this one); store ${args.db}`);
  say(
    `load average at start: ${loadavg()
      .map((l) => fmt(l, 2))
      .join(' ')}`,
  );

  const store = openStore({ url: args.db as string });
  const info = await readSeedInfo(store);
  if (!info) throw new Error(`${args.db} holds no demo data`);
  const { appToken, tokenFor } = await benchTokens(store.db, info.demoClientId);
  const profileDir = (name: string) => join(scratch, `profile-${name}`);
  const profiling = (name: string) =>
    args.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir(name)}`] : [];
  const servers = {
    A: await startHelixd(args.db as string, 1, [], profiling('A'), otherBin),
    B: await startHelixd(args.db as string, 1, [], profiling('B'), BIN),
  };
  let stopped = false;
  try {
    // The mixes are made against B; the store's secret signs both servers' cursors alike.
    const ctx: MixContext = {
      base: servers.B.base,
      db: store.db,
      anchor: info.anchor,
      appToken,
      clientId: info.demoClientId,
      tokenFor,
      walkPages: 500,
      spread: 1000,
      log: () => {},
    };
    const kinds: QueryKind[] = [];
    for (const op of OPERATIONS) {
      if (args.only && !args.only.includes(op.path)) continue;
      for (const k of await op.build(ctx))
        if (classes.has(k.cls) && (!args.match || k.kind.includes(args.match))) kinds.push(k);
    }
    for (const k of kinds)
      for (const r of k.requests.slice(0, 5))
        for (const s of Object.values(servers)) {
          const res = await getJson(s.base, r, info.demoClientId);
          if (res.status !== 200) throw new Error(`${r.path}: ${res.status} ${JSON.stringify(res.body)}`);
        }
    say(`${kinds.length} query kinds, ${rounds} rounds of ${seconds} s each, ${connections} connections`);
    say();
    say(
      'kind                                                     A req/s  B req/s  B/A    A CPU µs  B CPU µs  B/A    A p99  B p99',
    );
    for (const k of kinds) {
      const figures: Record<'A' | 'B', Figure[]> = { A: [], B: [] };
      for (let round = 0; round < rounds; round++)
        for (const name of round % 2 ? (['B', 'A'] as const) : (['A', 'B'] as const)) {
          const s = servers[name];
          const pid = s.child.pid as number;
          const load = (sec: number) =>
            runLoad(generator, {
              base: s.base,
              requests: k.requests,
              clientId: info.demoClientId,
              connections,
              seconds: sec,
              scratch,
            });
          if (warmup > 0) await load(warmup);
          const c0 = threadCpuUs(pid) ?? Number.NaN;
          const r = await load(seconds);
          const c1 = threadCpuUs(pid) ?? Number.NaN;
          figures[name].push({ rps: r.rps, cpu: (c1 - c0) / r.requests, p99: r.p99 });
        }
      const m = (name: 'A' | 'B', f: keyof Figure) => median(figures[name].map((x) => x[f]));
      const ratios = (f: keyof Figure) =>
        figures.B.map((b, i) => b[f] / (figures.A[i]?.[f] ?? Number.NaN)).map((x) => fmt(x, 2));
      say(
        `${`${k.op} ${k.kind}`.padEnd(56)} ${fmt(m('A', 'rps')).padStart(7)}  ${fmt(m('B', 'rps')).padStart(7)}  ${fmt(m('B', 'rps') / m('A', 'rps'), 2)}   ${fmt(m('A', 'cpu')).padStart(8)}  ${fmt(m('B', 'cpu')).padStart(8)}  ${fmt(m('B', 'cpu') / m('A', 'cpu'), 2)}  ${fmt(m('A', 'p99'), 1).padStart(5)}  ${fmt(m('B', 'p99'), 1).padStart(5)}`,
      );
      say(
        `${''.padEnd(56)} round by round, B/A: req/s ${ratios('rps').join(' ')}; CPU ${ratios('cpu').join(' ')}`,
      );
    }
    say("medians over the rounds; CPU µs: of the server's main thread under the load, per request");
    say(
      `load average at end: ${loadavg()
        .map((l) => fmt(l, 2))
        .join(' ')}`,
    );
    // The profiles are written when the servers exit.
    await stopChild(servers.A.child);
    await stopChild(servers.B.child);
    stopped = true;
    if (args.profile) printProfiles();
  } finally {
    if (!stopped) {
      await stopChild(servers.A.child);
      await stopChild(servers.B.child);
    }
    await store.close();
  }

  function printProfiles(): void {
    const a = mainProfile(profileDir('A'));
    const b = mainProfile(profileDir('B'));
    if (!a || !b) {
      say('no CPU profile was written');
      return;
    }
    const files = { A: a, B: b };
    const A = profileSteps(a);
    const B = profileSteps(b);
    const busy = (p: typeof A) => `${fmt(p.busyShare * 100)}% busy`;
    say();
    say(`CPU profiles, busy time by step (A: ${busy(A)}, B: ${busy(B)}; ${a} and ${b}):`);
    say(`${'step'.padEnd(64)}  A       B`);
    const pct = (share = 0) => `${fmt(share * 100, 1).padStart(5)}%`;
    for (const [i, [step, share]] of A.steps.entries())
      say(`${step.padEnd(64)}  ${pct(share)}  ${pct(B.steps[i]?.[1])}`);
    for (const [name, file] of Object.entries(files)) {
      say();
      say(`${name}:`);
      for (const l of summariseProfile(file, 15)) say(l);
    }
  }
}

await main();
