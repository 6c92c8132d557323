// `npm run bench:eventsub`: EventSub's WebSocket transport on this machine, against the compiled
// `helixd serve` in its own process (docs/eventsub-design.md, "The benchmark"):
//   1. the memory of an idle session: the server's VmRSS before and after 1,000 sockets are opened,
//      each with one subscription (so that it is not closed as unused), over 1,000;
//   2. the read operations with those sessions idle against none: the first-page mix of
//      `bench:workers`, wrk, runs interleaved (idle, none, none, idle, ...), with each run's CPU:
//      helixd's per request (its main thread's too), this process's (it holds the sessions'
//      sockets), and the rest of the machine's;
//   3. the latency of a notification: 1,000 sessions with 10 subscriptions each (10,000), one user
//      per session, then channel.follow triggers (POST /admin/eventsub/trigger) at a steady rate;
//      for each notification, its receipt minus the time its write was sent and minus the time the
//      write's answer arrived (the commit lies between the two), and every expected one counted.
//
//   npm run bench:eventsub                     SQLite (2,000 users, seeded once, copied per run)
//   npm run bench:eventsub -- --quick          100 sessions, 2 s of writes, 2 s per read run (~25 s)
//   npm run bench:eventsub -- --db postgres://user@host/db   the same on PostgreSQL (seeded when empty)
//   other flags: --sessions N --rate N (writes/s) --seconds N (of writes) --read-seconds N
//                --rounds N (of read runs) --connections N --generator wrk|autocannon
//                --keepalive N   the sessions' keepalive_timeout_seconds (600: none in a run)
//                --cpu-prof   a CPU profile of helixd over each read run (through its inspector),
//                             written beside the report, with the GC's and the timers' share
//                             printed (the profiler costs CPU: compare the runs of one such bench)

import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { mintToken } from '../src/auth/tokens.ts';
import { readSeedInfo } from '../src/seed/index.ts';
import { openStore } from '../src/store/db.ts';
import { BIN, cpuSeconds, procStatus, ROOT, runTimed, startHelixd, stopChild, threadCpuUs } from './child.ts';
import { benchTokens, printHelp } from './harness.ts';
import { type BenchRequest, chooseGenerator, type LoadResult, runLoad } from './load.ts';
import { getJson, type MixContext, OPERATIONS } from './queries.ts';

/** Bench data is generated relative to a fixed day, so a kept store stays the same store. */
const ANCHOR_ISO = '2026-11-21T00:00:00Z';
const USERS = 2000;
const ADMIN = randomBytes(24).toString('hex');
/** The scopes the ten subscriptions of a session ask for. */
const SCOPES = [
  'channel:read:subscriptions',
  'moderator:read:followers',
  'moderation:read',
  'user:read:email',
];

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    db: { type: 'string' },
    sessions: { type: 'string' },
    rate: { type: 'string', default: '100' },
    seconds: { type: 'string' },
    'read-seconds': { type: 'string' },
    keepalive: { type: 'string', default: '600' },
    rounds: { type: 'string' },
    connections: { type: 'string', default: '64' },
    generator: { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) printHelp(import.meta.url);
const quick = args.quick;
const sessions = Number(args.sessions ?? (quick ? 100 : 1000));
const rate = Number(args.rate);
const writeSeconds = Number(args.seconds ?? (quick ? 2 : 20));
const readSeconds = Number(args['read-seconds'] ?? (quick ? 2 : 10));
const rounds = Number(args.rounds ?? (quick ? 1 : 3));
const connections = Number(args.connections);
const keepalive = Number(args.keepalive);
for (const [k, v] of Object.entries({
  sessions,
  rate,
  seconds: writeSeconds,
  readSeconds,
  rounds,
  connections,
  keepalive,
}))
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${k}: a whole number of at least 1 is needed`);
if (sessions > USERS - 1) throw new Error(`--sessions: at most ${USERS - 1} (one user each)`);

const say = (line = '') => process.stdout.write(`${line}\n`);
const fmt = (n: number, digits = 0) => n.toFixed(digits);
const mb = (bytes: number) => `${fmt(bytes / 1024 / 1024, 1)} MB`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (sorted: number[], p: number) =>
  sorted.length
    ? (sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number)
    : NaN;
const median = (xs: number[]) =>
  pct(
    [...xs].sort((a, b) => a - b),
    50,
  );

/** The machine's CPU time spent so far, every core's but idle and I/O wait (Linux /proc/stat, 100 ticks a second). */
function machineBusySeconds(): number {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] as string)
    .trim()
    .split(/\s+/)
    .slice(1, 9);
  const [user, nice, system, _idle, _iowait, irq, softirq, steal] = fields.map(Number) as number[];
  return ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) / 100;
}

/** This process's CPU time so far (user and system), in seconds. */
const ownCpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

/** A V8 CPU profile (the inspector's Profiler.stop): its call tree and samples. */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * The inspector of a process started with `--inspect=127.0.0.1:0` (its URL read from what it
 * printed): its V8 profiler started and stopped on demand, so that a profile covers one run.
 */
async function profilerOf(output: () => string): Promise<{
  start(): Promise<void>;
  stop(): Promise<CpuProfile>;
  close(): void;
}> {
  const url = /Debugger listening on (ws:\/\/\S+)/.exec(output())?.[1];
  if (!url) throw new Error(`no inspector URL in helixd's output:\n${output()}`);
  const socket = new WebSocket(url);
  await new Promise((res, rej) => {
    socket.once('open', res);
    socket.once('error', rej);
  });
  let id = 0;
  const waiting = new Map<number, (result: unknown) => void>();
  socket.on('message', (data) => {
    const m = JSON.parse(String(data)) as { id?: number; result?: unknown };
    if (m.id !== undefined) waiting.get(m.id)?.(m.result);
  });
  const call = (method: string, params: object = {}) =>
    new Promise<unknown>((res) => {
      waiting.set(++id, res);
      socket.send(JSON.stringify({ id, method, params }));
    });
  await call('Profiler.enable');
  await call('Profiler.setSamplingInterval', { interval: 250 });
  return {
    start: async () => void (await call('Profiler.start')),
    stop: async () => ((await call('Profiler.stop')) as { profile: CpuProfile }).profile,
    close: () => socket.close(),
  };
}

/**
 * A profile's sampled time (µs) in the garbage collector, under Node's timers (`processTimers`
 * and every callback it runs: the sessions' pings and keepalives, and the timers helixd has
 * without sessions too), and in all but idle.
 */
function profileShares(p: CpuProfile): { gc: number; timers: number; total: number } {
  const nodes = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const underTimers = (id: number): boolean => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at))
      if (nodes.get(at)?.callFrame.functionName === 'processTimers') return true;
    return false;
  };
  const t = { gc: 0, timers: 0, total: 0 };
  p.samples.forEach((id, i) => {
    const f = nodes.get(id)?.callFrame;
    const dt = p.timeDeltas[i] ?? 0;
    if (!f || f.functionName === '(idle)') return;
    t.total += dt;
    if (f.functionName === '(garbage collector)') t.gc += dt;
    else if (underTimers(id)) t.timers += dt;
  });
  return t;
}

/** Runs `fn` over `items`, `n` at a time. */
async function pool<T>(items: readonly T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

interface Client {
  socket: WebSocket;
  sessionId: string;
}

type OnNotification = (event: Record<string, unknown>, type: string, at: number) => void;

async function main(): Promise<void> {
  const generator = chooseGenerator(args.generator);
  const pg = args.db?.startsWith('postgres') ?? false;
  const scratch = await mkdtemp(join(tmpdir(), 'helixd-bench-eventsub-'));
  say(`helixd EventSub bench - ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), node ${process.version}`);
  say(
    `load average at start: ${loadavg()
      .map((l) => fmt(l, 2))
      .join(' ')}`,
  );

  // 1. the store: SQLite seeded once (bench/data is gitignored) and copied, since the writes change
  // it; PostgreSQL used as it is, seeded when empty.
  let url: string;
  if (pg) {
    url = args.db as string;
    const probe = openStore({ url });
    const seeded = await readSeedInfo(probe).catch(() => undefined);
    await probe.close();
    if (!seeded) {
      say(`seeding the PostgreSQL store: ${USERS} users ...`);
      await runTimed(process.execPath, [
        BIN,
        'seed',
        '--db',
        url,
        '--users',
        String(USERS),
        '--now',
        ANCHOR_ISO,
      ]);
    }
  } else {
    const kept = join(ROOT, 'bench', 'data', `eventsub-u${USERS}-s1.db`);
    await mkdir(join(ROOT, 'bench', 'data'), { recursive: true });
    if (!existsSync(kept)) {
      say(`seeding ${kept}: ${USERS} users ...`);
      await runTimed(process.execPath, [
        BIN,
        'seed',
        '--db',
        kept,
        '--users',
        String(USERS),
        '--now',
        ANCHOR_ISO,
      ]);
    }
    url = join(scratch, 'store.db');
    await copyFile(kept, url);
  }
  say(`store: ${pg ? 'PostgreSQL' : 'SQLite'}; ${sessions} sessions, one user each`);

  // 2. tokens in the store before helixd starts: one user token per session's user, with the
  // scopes of its subscriptions; every user of the sessions authorized the client, so every
  // subscription costs 0.
  const store = openStore({ url });
  const info = await readSeedInfo(store);
  if (!info) throw new Error('the store holds no demo data');
  const clientId = info.demoClientId;
  const userIds = (
    await store.db
      .selectFrom('users')
      .select('id')
      .orderBy('id')
      .limit(sessions + 1)
      .execute()
  ).map((r) => Number(r.id));
  const now = Math.floor(Date.now() / 1000);
  const tokens: string[] = [];
  for (const userId of userIds)
    tokens.push(
      (await mintToken(store.db, { kind: 'user', clientId, userId, scopes: SCOPES, ttl: 24 * 3600, now }))
        .access_token,
    );
  const reads = await benchTokens(store.db, clientId);

  const { child, base, output } = await startHelixd(
    url,
    1,
    ['--admin-token', ADMIN],
    args['cpu-prof'] ? ['--inspect=127.0.0.1:0'] : [],
  );
  const pid = child.pid as number;
  const profiler = args['cpu-prof'] ? await profilerOf(output) : undefined;
  const results = join(ROOT, 'bench', 'results');
  const day = new Date().toISOString().slice(0, 10);
  // 600 s (the most) by default: an idle session then sends no keepalive in a read run; 10 (the
  // platform's default) sends one every 9 s, which this process receives and parses.
  const wsUrl = `${base.replace('http', 'ws')}/ws?keepalive_timeout_seconds=${keepalive}`;
  const clients: Client[] = [];
  let onNotification: OnNotification = () => {};
  let unexpected = 0;

  const subscribe = async (i: number, sessionId: string, type: string, condition: object) => {
    const res = await fetch(`${base}/helix/eventsub/subscriptions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokens[i]}`,
        'client-id': clientId,
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        type,
        version: type === 'channel.follow' ? '2' : '1',
        condition,
        transport: { method: 'websocket', session_id: sessionId },
      }),
    });
    const text = await res.text();
    if (res.status !== 202)
      throw new Error(`subscription ${type} of user ${userIds[i]}: ${res.status} ${text}`);
  };

  /** Session `i` (user i) opened and welcomed, then `subs` subscriptions made for it. */
  const open = async (i: number, subs: number): Promise<Client> => {
    const socket = new WebSocket(wsUrl);
    const sessionId = await new Promise<string>((res, rej) => {
      socket.once('error', rej);
      socket.once('message', (data) => {
        const m = JSON.parse(String(data));
        if (m.metadata?.message_type !== 'session_welcome') rej(new Error(`no welcome: ${String(data)}`));
        res(m.payload.session.id as string);
      });
    });
    socket.on('message', (data) => {
      const at = performance.now();
      const m = JSON.parse(String(data));
      if (m.metadata?.message_type === 'notification')
        onNotification(m.payload.event, m.payload.subscription.type, at);
      else if (m.metadata?.message_type !== 'session_keepalive') unexpected++;
    });
    socket.on('close', (code) => {
      if (code !== 1000 && code !== 1005) unexpected++;
    });
    const b = String(userIds[i]);
    const own = { broadcaster_user_id: b };
    const all: [string, object][] = [
      ['channel.follow', { broadcaster_user_id: b, moderator_user_id: b }],
      ['stream.online', own],
      ['stream.offline', own],
      ['channel.subscribe', own],
      ['channel.subscription.end', own],
      ['channel.subscription.gift', own],
      ['channel.moderator.add', own],
      ['channel.moderator.remove', own],
      ['user.update', { user_id: b }],
      // the next user's channel: that user authorized the client too, so this costs 0 as well
      ['stream.online', { broadcaster_user_id: String(userIds[i + 1]) }],
    ];
    for (const [type, condition] of all.slice(0, subs)) await subscribe(i, sessionId, type, condition);
    return { socket, sessionId };
  };
  const openAll = async (subs: number): Promise<number> => {
    const started = performance.now();
    await pool(
      Array.from({ length: sessions }, (_, i) => i),
      32,
      async (i) => {
        clients.push(await open(i, subs));
      },
    );
    return (performance.now() - started) / 1000;
  };
  const closeAll = async () => {
    await Promise.all(
      clients.splice(0).map(
        (c) =>
          new Promise<void>((res) => {
            c.socket.once('close', () => res());
            c.socket.close(1000);
          }),
      ),
    );
    // the server ends each session (a row deleted, its subscriptions disabled) after the close
    await sleep(1000);
  };
  const rss = () => procStatus(pid, 'VmRSS') ?? NaN;

  const report: Record<string, unknown> = {};
  try {
    // 3. memory per idle session: the code paths warmed by 50 sessions opened and closed first
    await pool(
      Array.from({ length: Math.min(50, sessions) }, (_, i) => i),
      16,
      async (i) => {
        clients.push(await open(i, 1));
      },
    );
    await closeAll();
    await sleep(1000);
    const before = rss();
    const openIdle = await openAll(1);
    await sleep(2000);
    const after = rss();
    say();
    say(
      `memory: VmRSS ${mb(before)} before, ${mb(after)} with ${sessions} idle sessions (one subscription each, opened in ${fmt(openIdle, 1)} s): ${fmt((after - before) / sessions / 1024, 1)} KB a session`,
    );
    report.memory = { before, after, sessions, perSession: (after - before) / sessions };

    // 4. reads with the sessions idle against none: the first pages of every operation
    const mix: BenchRequest[] = [];
    const ctx: MixContext = {
      base,
      db: store.db,
      anchor: info.anchor,
      appToken: reads.appToken,
      clientId,
      tokenFor: reads.tokenFor,
      walkPages: 20,
      spread: 200,
      log: () => {},
    };
    const lists: BenchRequest[][] = [];
    for (const op of OPERATIONS)
      for (const kind of await op.build(ctx))
        if (kind.cls === 'first') {
          const ok: BenchRequest[] = [];
          for (const r of kind.requests) if ((await getJson(base, r, clientId)).status === 200) ok.push(r);
          lists.push(ok);
        }
    for (let i = 0; lists.some((l) => i < l.length); i++)
      for (const l of lists) if (i < l.length) mix.push(l[i] as BenchRequest);
    say(
      `reads: ${mix.length} first-page requests of ${lists.length} query kinds, ${generator}, ${connections} connections, 2 s warm-up then ${readSeconds} s a run; the sessions' keepalive timeout ${keepalive} s`,
    );
    const load = (s: number) =>
      runLoad(generator, { base, requests: mix, clientId, connections, seconds: s, scratch });
    const runs: Record<'idle' | 'none', LoadResult[]> = { idle: [], none: [] };
    // Where each run's CPU went: helixd's per request (its /proc stat, every thread), this
    // process's (it holds the idle sessions' sockets and answers their pings), and the rest of the
    // machine's (wrk, and any other work on it).
    interface RunCpu {
      helixdUsPerRequest: number;
      /** of which its main thread's, which runs the requests (the rest: the GC's and JIT's threads) */
      mainUsPerRequest: number;
      helixd: number;
      client: number;
      rest: number;
      seconds: number;
    }
    const cpu: Record<'idle' | 'none', RunCpu[]> = { idle: [], none: [] };
    // idle, none, none, idle, ...: a change in the machine's load hits both
    const order: ('idle' | 'none')[] = [];
    for (let r = 0; r < rounds; r++) order.push(r % 2 ? 'none' : 'idle', r % 2 ? 'idle' : 'none');
    for (const which of order) {
      if (which === 'idle' && clients.length === 0) await openAll(1);
      if (which === 'none' && clients.length > 0) await closeAll();
      await load(2);
      const before = {
        helixd: cpuSeconds(pid) ?? NaN,
        main: threadCpuUs(pid) ?? NaN,
        client: ownCpuSeconds(),
        machine: machineBusySeconds(),
      };
      await profiler?.start();
      const r = await load(readSeconds);
      const profile = await profiler?.stop();
      const helixd = (cpuSeconds(pid) ?? NaN) - before.helixd;
      const main = (threadCpuUs(pid) ?? NaN) - before.main;
      const client = ownCpuSeconds() - before.client;
      const c: RunCpu = {
        helixdUsPerRequest: (helixd * 1e6) / r.requests,
        mainUsPerRequest: main / r.requests,
        helixd,
        client,
        rest: machineBusySeconds() - before.machine - helixd - client,
        seconds: r.seconds,
      };
      runs[which].push(r);
      cpu[which].push(c);
      say(
        `  ${which === 'idle' ? `${sessions} idle sessions` : 'no session      '}: ${fmt(r.rps)} req/s, p50 ${fmt(r.p50, 2)} ms, p99 ${fmt(r.p99, 2)} ms${r.errors ? `, ${r.errors} errors` : ''} (load average ${fmt(loadavg()[0] ?? 0, 2)})`,
      );
      const cores = cpus().length;
      say(
        `      CPU: helixd ${fmt(c.helixdUsPerRequest, 1)} us a request (${fmt(c.helixd, 2)} s; its main thread ${fmt(c.mainUsPerRequest, 1)} us a request); the bench process ${fmt(c.client, 2)} s; the rest of the machine ${fmt(c.rest, 2)} s; of ${fmt(c.seconds * cores, 1)} s on ${cores} cores`,
      );
      if (profile) {
        const n = runs.idle.length + runs.none.length;
        const name = join(results, `${day}-eventsub-${pg ? 'postgres' : 'sqlite'}-${n}-${which}.cpuprofile`);
        await mkdir(results, { recursive: true });
        await writeFile(name, JSON.stringify(profile));
        const t = profileShares(profile);
        const per = (us: number) => `${fmt(us / r.requests, 1)} us a request`;
        say(
          `      profile: ${per(t.total)} sampled on the main thread; the GC ${per(t.gc)}, timers and their callbacks ${per(t.timers)} (${name})`,
        );
      }
    }
    const idleRps = median(runs.idle.map((r) => r.rps));
    const noneRps = median(runs.none.map((r) => r.rps));
    say(
      `  medians: idle ${fmt(idleRps)} req/s (p99 ${fmt(median(runs.idle.map((r) => r.p99)), 2)} ms), none ${fmt(noneRps)} req/s (p99 ${fmt(median(runs.none.map((r) => r.p99)), 2)} ms): idle / none = ${fmt(idleRps / noneRps, 3)}`,
    );
    const cpuMedians = (f: (c: RunCpu) => number) => {
      const idle = median(cpu.idle.map(f));
      const none = median(cpu.none.map(f));
      return { idle, none, ratio: idle / none };
    };
    const perRequest = cpuMedians((c) => c.helixdUsPerRequest);
    const mainPerRequest = cpuMedians((c) => c.mainUsPerRequest);
    const clientCpu = cpuMedians((c) => c.client);
    const restCpu = cpuMedians((c) => c.rest);
    say(
      `  CPU medians, idle / none: helixd ${fmt(perRequest.idle, 1)} / ${fmt(perRequest.none, 1)} us a request = ${fmt(perRequest.ratio, 3)} (main thread ${fmt(mainPerRequest.idle, 1)} / ${fmt(mainPerRequest.none, 1)} = ${fmt(mainPerRequest.ratio, 3)}); the bench process ${fmt(clientCpu.idle, 2)} / ${fmt(clientCpu.none, 2)} s a run; the rest of the machine ${fmt(restCpu.idle, 2)} / ${fmt(restCpu.none, 2)} s a run`,
    );
    report.reads = { runs, cpu, idleRps, noneRps, ratio: idleRps / noneRps, perRequest, mainPerRequest };
    await closeAll();

    // 5. latency: every session with ten subscriptions, then follows at a steady rate
    const setup = await openAll(10);
    const setupEnd = performance.now();
    say(
      `latency: ${sessions} sessions, ${sessions * 10} subscriptions made in ${fmt(setup, 1)} s (${fmt((sessions * 10) / setup)} a second); VmRSS ${mb(rss())}`,
    );
    interface Write {
      sent: number;
      answered: number;
    }
    const writes = new Map<string, Write>();
    const received: { key: string; at: number }[] = [];
    onNotification = (event, type, at) => {
      if (type === 'channel.follow')
        received.push({ key: `${event.broadcaster_user_id}/${event.user_id}`, at });
      else unexpected++;
    };
    let refused = 0;
    const total = rate * writeSeconds;
    const started = performance.now();
    const pending: Promise<void>[] = [];
    for (let n = 0; n < total; n++) {
      // open loop: the n-th write is sent at its time whatever the answers before it
      const due = started + (n * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const broadcaster = userIds[Math.floor(Math.random() * sessions)];
      const sent = performance.now();
      pending.push(
        fetch(`${base}/admin/eventsub/trigger`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ type: 'channel.follow', broadcaster_id: String(broadcaster) }),
        }).then(async (res) => {
          const answered = performance.now();
          const body = (await res.json()) as {
            written?: { data: { broadcaster_id: string; user_id: string } }[];
          };
          const d = body.written?.[0]?.data;
          if (res.status !== 201 || !d) {
            refused++;
            if (refused === 1) say(`  the first refused write: ${res.status} ${JSON.stringify(body)}`);
          } else writes.set(`${d.broadcaster_id}/${d.user_id}`, { sent, answered });
        }),
      );
    }
    await Promise.all(pending);
    const elapsed = (performance.now() - started) / 1000;
    const deadline = performance.now() + 10_000;
    while (received.length < writes.size && performance.now() < deadline) await sleep(20);
    const fromSent: number[] = [];
    const fromAnswer: number[] = [];
    let stray = 0;
    const seen = new Set<string>();
    for (const r of received) {
      const w = writes.get(r.key);
      if (!w || seen.has(r.key)) {
        stray++;
        continue;
      }
      seen.add(r.key);
      fromSent.push(r.at - w.sent);
      fromAnswer.push(r.at - w.answered);
    }
    fromSent.sort((a, b) => a - b);
    fromAnswer.sort((a, b) => a - b);
    const missing = writes.size - seen.size;
    say(
      `  ${writes.size} follows written in ${fmt(elapsed, 1)} s (${fmt(writes.size / elapsed)} a second; ${refused} refused), ${seen.size} notifications received, ${missing} missing, ${stray} duplicate or unknown, ${unexpected} other messages or closes`,
    );
    const line = (name: string, xs: number[]) =>
      say(
        `  ${name}: p50 ${fmt(pct(xs, 50), 2)} ms, p99 ${fmt(pct(xs, 99), 2)} ms, max ${fmt(xs[xs.length - 1] ?? NaN, 2)} ms`,
      );
    line('receipt - write sent     (an upper bound of commit to receipt)', fromSent);
    line('receipt - answer arrived (a lower bound of commit to receipt) ', fromAnswer);
    // A lag that grows from the first writes to the last is a delivery slower than the writes.
    const bySent = [...writes.entries()].sort((a, b) => a[1].sent - b[1].sent);
    const tenth = Math.max(1, Math.floor(bySent.length / 10));
    const lagOf = (part: typeof bySent) => {
      const keys = new Set(part.map(([k]) => k));
      const xs = received
        .filter((r) => keys.has(r.key))
        .map((r) => r.at - (writes.get(r.key) as Write).answered);
      return pct(
        xs.sort((a, b) => a - b),
        50,
      );
    };
    const firstLag = lagOf(bySent.slice(0, tenth));
    const lastLag = lagOf(bySent.slice(-tenth));
    say(
      `  receipt - answer arrived, p50 of the first tenth of the writes ${fmt(firstLag, 2)} ms, of the last tenth ${fmt(lastLag, 2)} ms`,
    );
    // The writes start as soon as the last subscription is answered, and do not wait for the tail
    // to be through the subscriptions' control rows (that cost shows in the first tenth). The first
    // write's event comes after all of them: its notification says when the tail was through, and
    // the writes answered after it show the lag without that backlog.
    const firstWrite = bySent[0];
    const caughtUpAt = firstWrite && received.find((r) => r.key === firstWrite[0])?.at;
    let afterCatchUp: { writes: number; p50: number; p99: number } | undefined;
    if (firstWrite && caughtUpAt !== undefined) {
      const later = new Set(bySent.filter(([, w]) => w.answered >= caughtUpAt).map(([k]) => k));
      const xs = received
        .filter((r) => later.has(r.key))
        .map((r) => r.at - (writes.get(r.key) as Write).answered)
        .sort((a, b) => a - b);
      afterCatchUp = { writes: later.size, p50: pct(xs, 50), p99: pct(xs, 99) };
      say(
        `  the tail was through the ${sessions * 10} subscriptions' control rows ${fmt(caughtUpAt - setupEnd)} ms after the last was answered (the first write's notification; that write was sent ${fmt(firstWrite[1].sent - setupEnd)} ms and answered ${fmt(firstWrite[1].answered - setupEnd)} ms after it)`,
      );
      say(
        `  receipt - answer arrived, the ${afterCatchUp.writes} writes answered after that: p50 ${fmt(afterCatchUp.p50, 2)} ms, p99 ${fmt(afterCatchUp.p99, 2)} ms`,
      );
    }
    const answers = [...writes.values()].map((w) => w.answered - w.sent).sort((a, b) => a - b);
    line('the write itself (sent to answered)                           ', answers);
    report.latency = {
      sessions,
      subscriptions: sessions * 10,
      writes: writes.size,
      refused,
      received: seen.size,
      missing,
      stray,
      unexpected,
      fromSent: { p50: pct(fromSent, 50), p99: pct(fromSent, 99) },
      fromAnswer: { p50: pct(fromAnswer, 50), p99: pct(fromAnswer, 99) },
      write: { p50: pct(answers, 50), p99: pct(answers, 99) },
      lagFirstTenth: firstLag,
      lagLastTenth: lastLag,
      caughtUpMs: caughtUpAt === undefined ? undefined : caughtUpAt - setupEnd,
      afterCatchUp,
    };
    if (missing > 0 || refused > 0) process.exitCode = 1;
  } finally {
    profiler?.close();
    for (const c of clients) c.socket.terminate();
    await stopChild(child);
    await store.close();
    await rm(scratch, { recursive: true, force: true });
  }
  await mkdir(results, { recursive: true });
  const file = join(results, `${day}-eventsub-${pg ? 'postgres' : 'sqlite'}.json`);
  await writeFile(file, JSON.stringify({ quick, store: pg ? 'postgres' : 'sqlite', ...report }, null, 2));
  say(
    `load average at end: ${loadavg()
      .map((l) => fmt(l, 2))
      .join(' ')}; report: ${file}`,
  );
}

await main();
