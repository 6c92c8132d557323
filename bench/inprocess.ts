// The work of a request, in process, without HTTP: the µs of CPU helixd spends on each request of a
// query kind beyond what the ceiling spends on an answer of the same size (bench/README.md, "The
// work per request"). The bench process builds helixd's app (src/app.ts, the same configuration as
// `serve` in bench/run.ts) on the same store and hands it the kind's very requests through Fastify's
// inject, which runs everything helixd runs for a request (routing, the hooks, the token check, the
// query's validation, the handler and its SQL, the serializer, the reply) on a request and a
// response held in memory: no socket, no HTTP parser, no kernel. The same requests are handed, the
// same way, to the ceiling's handler (bench/ceiling-answer.ts); what that costs is the fake request
// and response and Node's writing of the response head, which helixd's figure holds too and which
// is not helixd's work. The difference is the work.
//
// CPU is the main thread's (Linux /proc schedstat): the thread that serves every request of one
// process, and whose time bounds its rate; the helper threads (the GC's, the JIT compilers') run
// on the other core (bench/README.md, "The work per request"). Per request, over rounds of
// requests of the kind (each round goes on down the kind's list), helixd and the ceiling's handler
// in turn, after untimed passes over the lists; the medians over the rounds. The requests are in
// flight as many at once as the load's connections: a request costs less CPU among many than alone
// (one after another, in process as over HTTP, a /clips first page took more CPU than at 64 at a
// time: bench/README.md, "The work per request"). Nothing else runs in this process meanwhile. On
// PostgreSQL the server's CPU is another process's and is not counted: the wall-clock figure is
// kept beside it.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.ts';
import { clockFor } from '../src/clock.ts';
import { loadConfig } from '../src/config.ts';
import { openStore } from '../src/store/db.ts';
import { resolveSecret } from '../src/store/settings.ts';
import { ceilingAnswer } from './ceiling-answer.ts';
import { threadCpuUs } from './child.ts';
import { median } from './harness.ts';
import type { BenchRequest } from './load.ts';

/** One query kind's list, as the load ran it (every request answered 200 over HTTP). */
export interface InProcessKind {
  key: string;
  requests: readonly BenchRequest[];
}

export interface InProcessFigure {
  /** µs of CPU per request through helixd's app */
  helixd: number;
  /** µs of CPU per request through the ceiling's handler (the in-memory transport) */
  transport: number;
  /** helixd - transport: the work, µs */
  work: number;
  /** the lowest and highest round of `helixd` */
  min: number;
  max: number;
  /** wall-clock µs per request through helixd's app (PostgreSQL: the server's time is in it) */
  wall: number;
  /** requests per round (the list gone through again when shorter), rounds measured */
  perRound: number;
  rounds: number;
  /** requests helixd answered with other than 200 here (should be none) */
  errors: number;
}

type Inject = (
  dispatch: (req: IncomingMessage, res: ServerResponse) => void,
  opts: { method: 'GET'; url: string; headers: Record<string, string>; validate: boolean },
) => Promise<{ statusCode: number }>;

/** light-my-request, the copy Fastify's own inject loads (an app's inject is this on its handler). */
function injector(): Inject {
  const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
  return fromFastify('light-my-request') as Inject;
}

/** µs of CPU of this process's main thread; where /proc is not there, of every thread. */
const cpuNow = () => {
  const t = threadCpuUs('self');
  if (t !== undefined) return t;
  const u = process.cpuUsage();
  return u.user + u.system;
};

export async function measureInProcess(o: {
  url: string;
  clientId: string;
  kinds: readonly InProcessKind[];
  /** { "<path?query>": <body bytes> }: what the ceiling answers */
  sizes: Record<string, number>;
  rounds: number;
  perRound: number;
  /** requests in flight at once: the load's connections */
  inFlight: number;
  log: (line: string) => void;
}): Promise<Map<string, InProcessFigure>> {
  const config = loadConfig(
    { db: o.url, logLevel: 'warn', rateLimit: 0, skipSeed: true, host: '127.0.0.1' },
    process.env,
  );
  const store = openStore({ url: config.db, queryTimeout: config.queryTimeout });
  let app: FastifyInstance | undefined;
  const out = new Map<string, InProcessFigure>();
  try {
    const secret = await resolveSecret(store, config.secret);
    app = await buildApp({ config, store, clock: clockFor(config), secret });
    await app.ready();
    const inject = injector();
    // Fastify's handler of requests once ready: what app.inject hands its requests to.
    const helixd = app.routing as unknown as (req: IncomingMessage, res: ServerResponse) => void;
    const ceiling = ceilingAnswer(o.sizes);
    let errors = 0;
    const send = async (dispatch: typeof helixd, r: BenchRequest) => {
      const res = await inject(dispatch, {
        method: 'GET',
        url: r.path,
        headers: { authorization: `Bearer ${r.token}`, 'client-id': o.clientId },
        validate: false,
      });
      if (dispatch === helixd && res.statusCode !== 200) errors++;
    };
    /**
     * Every request of `list` once, `o.inFlight` at a time, as the load's connections send them.
     * Each lane lets the event loop turn after each answer, as a socket's next request would: on
     * SQLite an answer needs no I/O, so without it a whole measurement ran as promise jobs, and the
     * `setImmediate`s each answer leaves (each holding its response) piled up until the end: 1,561
     * of them after 1,500 requests, the heap 2 GB after 36,000, and each request's CPU doubled by
     * the collector's work over it.
     */
    const pass = async (dispatch: typeof helixd, list: readonly BenchRequest[]) => {
      let next = 0;
      const lane = async () => {
        for (let i = next++; i < list.length; i = next++) {
          await send(dispatch, list[i] as BenchRequest);
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
      };
      await Promise.all(Array.from({ length: Math.min(o.inFlight, list.length) }, lane));
    };
    // Warm-up, not counted: every kind's list once, so that the JIT has settled on the code every
    // request shares before the first kind is measured (it takes a few thousand requests).
    for (const k of o.kinds) {
      await pass(helixd, k.requests);
      await pass(ceiling, k.requests);
    }
    for (const k of o.kinds) {
      const n = k.requests.length;
      if (n === 0) continue;
      // A short list (one URL for page 1 of a listing) is gone through again to fill a round: a
      // round of a few requests would be mostly the noise of one collection by the GC.
      const perRound = o.perRound;
      errors = 0;
      // And the kind's own list once more, not counted: its tokens, user names and store pages are
      // then as warm here as in the server, which the load has sent the list many times over.
      await pass(helixd, k.requests);
      const cpu = { helixd: [] as number[], transport: [] as number[] };
      const wall: number[] = [];
      for (let round = 0; round < o.rounds; round++) {
        const slice = Array.from(
          { length: perRound },
          (_, i) => k.requests[(round * perRound + i) % n] as BenchRequest,
        );
        const take = async (dispatch: typeof helixd) => {
          const w0 = performance.now();
          const c0 = cpuNow();
          await pass(dispatch, slice);
          return { cpu: (cpuNow() - c0) / perRound, wall: ((performance.now() - w0) * 1000) / perRound };
        };
        // In turn, the order turning round every round.
        const t1 = round % 2 === 0 ? await take(ceiling) : undefined;
        const h = await take(helixd);
        const t = t1 ?? (await take(ceiling));
        cpu.helixd.push(h.cpu);
        cpu.transport.push(t.cpu);
        wall.push(h.wall);
      }
      out.set(k.key, {
        helixd: median(cpu.helixd),
        transport: median(cpu.transport),
        work: median(cpu.helixd) - median(cpu.transport),
        min: Math.min(...cpu.helixd),
        max: Math.max(...cpu.helixd),
        wall: median(wall),
        perRound,
        rounds: o.rounds,
        errors,
      });
      if (errors) o.log(`  in process: ${k.key}: ${errors} requests not 200`);
    }
  } finally {
    await app?.close();
    await store.close();
  }
  return out;
}
