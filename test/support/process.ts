// helixd as a process: the one way a test starts `helixd serve` through its real command line.
// startHelixd spawns it (from the sources through tsx, bin/helixd-dev.js, unless a test names
// another bin or command), keeps what it prints (stdout, stderr and both in order), waits until it
// is ready (its banner, its "serving" line, a 200 from /readyz, or a pattern of the test's own),
// reads the banner back (URL, port, demo client, tokens, curl line, worker pids), sends signals and
// stops it within a deadline, then runs the clean-ups the test gave it (temporary folders, stores).
// A process a test left running is killed when the test file's process exits.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

/**
 * The command run from the sources through tsx (bin/helixd-dev.js): the tests that start helixd
 * never run a dist/ older than the sources. Only test/cli/compiled.test.ts runs the compiled
 * bin/helixd.js, after building dist/ itself.
 */
export const HELIXD_DEV_BIN = join(ROOT, 'bin', 'helixd-dev.js');

/** Starting under a loaded machine compiles the sources first: generous, never a measurement. */
const START_TIMEOUT_MS = 60_000;
/** How long `stop` waits for the exit its signal asks for before it kills. */
const STOP_DEADLINE_MS = 30_000;

/**
 * What "ready" means:
 * - 'banner': the whole development banner is out, up to its curl line (the default);
 * - 'serving': the "helixd: serving <url>" line is out (a fixture or production banner has no curl);
 * - 'workers': under --workers N, the line naming the worker pids;
 * - 'readyz': the "serving" line, then GET /readyz answers 200;
 * - a RegExp: it matches what was printed (stdout and stderr);
 * - false: at once (the test waits itself, with `waitFor`).
 */
export type Readiness = 'banner' | 'serving' | 'workers' | 'readyz' | RegExp | false;

const SERVING = /serving (http:\/\/\S+)/;
const PATTERNS = {
  banner: /^\s*curl .*'\n/m,
  serving: SERVING,
  workers: /worker processes \(pids ([\d, ]+)\)/,
  readyz: SERVING,
} as const;

export interface StartOptions {
  /** the script node runs (default HELIXD_DEV_BIN) */
  bin?: string;
  /** a command run instead of `node <bin>` (e.g. ['npx', '--no-install', 'helixd']) */
  command?: readonly string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** its own process group: signals go to the group (a command that runs helixd as its child) */
  detached?: boolean;
  ready?: Readiness;
  /** how long to wait for readiness (default 60 s) */
  timeoutMs?: number;
  /** run after the process has exited, by `stop` and `kill` (temporary folders, stores) */
  cleanup?: () => void | Promise<void>;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Date.now() when it exited */
  at: number;
}

export interface LogLine {
  pid: number;
  reqId?: string;
  msg: string;
  res?: { statusCode: number };
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) {
    try {
      child.kill('SIGKILL');
    } catch {}
  }
});

export class HelixdProcess {
  readonly child: ChildProcess;
  /** the exit code (or signal) and when it came */
  readonly exited: Promise<Exit>;
  #out = '';
  #stdout = '';
  #stderr = '';
  readonly #waiters = new Set<() => void>();
  readonly #detached: boolean;
  readonly #cleanups: (() => void | Promise<void>)[] = [];
  #workerPids: number[] | undefined;

  constructor(args: readonly string[], o: StartOptions = {}) {
    const [file, ...pre] = o.command ?? [process.execPath, o.bin ?? HELIXD_DEV_BIN];
    this.#detached = o.detached ?? false;
    if (o.cleanup) this.#cleanups.push(o.cleanup);
    const child = spawn(file as string, [...pre, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(o.env ? { env: o.env } : {}),
      ...(o.cwd ? { cwd: o.cwd } : {}),
      detached: this.#detached,
    });
    this.child = child;
    running.add(child);
    const take = (into: 'stdout' | 'stderr') => (d: Buffer) => {
      this.#out += d;
      if (into === 'stdout') this.#stdout += d;
      else this.#stderr += d;
      for (const w of this.#waiters) w();
    };
    child.stdout?.on('data', take('stdout'));
    child.stderr?.on('data', take('stderr'));
    this.exited = new Promise<Exit>((resolve) =>
      child.once('exit', (code, signal) => {
        running.delete(child);
        resolve({ code, signal, at: Date.now() });
      }),
    );
  }

  /** everything printed so far, stdout and stderr as they came */
  out(): string {
    return this.#out;
  }

  /** stdout alone: the JSON log lines */
  stdout(): string {
    return this.#stdout;
  }

  /** stderr alone: the banner and the messages for a person */
  stderr(): string {
    return this.#stderr;
  }

  /** the JSON log lines printed so far */
  logs(): LogLine[] {
    return this.#out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as LogLine);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Whether it has exited (or been killed by a signal). */
  get done(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** The URL of the "serving" line ('' before it). */
  get url(): string {
    return SERVING.exec(this.#out)?.[1] ?? '';
  }

  get port(): number {
    return Number(/serving http:\/\/[^:]+:(\d+)/.exec(this.#out)?.[1]);
  }

  /** The banner's curl command, as printed ('' when none). */
  get curl(): string {
    return /^\s*(curl .*)$/m.exec(this.#out)?.[1] ?? '';
  }

  /** A figure of the banner by its label: 'demo client id', 'demo client secret', 'app token'. */
  banner(label: string): string {
    return new RegExp(`${label}\\s+(\\w+)`).exec(this.#out)?.[1] ?? '';
  }

  /** The banner's demo client and app token ('' when none was printed). */
  get clientId(): string {
    return this.banner('demo client id');
  }

  get clientSecret(): string {
    return this.banner('demo client secret');
  }

  get appToken(): string {
    return this.banner('app token');
  }

  /**
   * Under --workers N: the workers' pids, in the order printed; a test that saw one replaced sets
   * the pids it now knows.
   */
  get workerPids(): number[] {
    if (this.#workerPids) return this.#workerPids;
    const m = PATTERNS.workers.exec(this.#out);
    return m ? (m[1] as string).split(', ').map(Number) : [];
  }

  set workerPids(pids: number[]) {
    this.#workerPids = pids;
  }

  /**
   * Resolves when what was printed (`source`: both streams, or one) matches `pattern`; rejects
   * after `ms`, or when the process exits first.
   */
  waitFor(
    pattern: RegExp,
    ms = START_TIMEOUT_MS,
    source: 'out' | 'stdout' | 'stderr' = 'out',
  ): Promise<RegExpExecArray> {
    const text = () => (source === 'out' ? this.#out : source === 'stdout' ? this.#stdout : this.#stderr);
    return new Promise<RegExpExecArray>((resolve, reject) => {
      const check = () => {
        const m = pattern.exec(text());
        if (!m) return;
        this.#waiters.delete(check);
        clearTimeout(timer);
        resolve(m);
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(new Error(`no ${pattern} within ${ms} ms:\n${this.#out}`));
      }, ms);
      this.#waiters.add(check);
      this.exited.then((e) =>
        setImmediate(() => {
          if (!this.#waiters.has(check)) return;
          this.#waiters.delete(check);
          clearTimeout(timer);
          reject(new Error(`exited ${e.code ?? e.signal} before ${pattern}:\n${this.#out}`));
        }),
      );
      check();
    });
  }

  /** Waits until it is `ready` (see Readiness). */
  async ready(ready: Readiness, ms = START_TIMEOUT_MS): Promise<void> {
    if (ready === false) return;
    const until = Date.now() + ms;
    await this.waitFor(ready instanceof RegExp ? ready : PATTERNS[ready], ms);
    if (ready === 'banner') await this.waitFor(SERVING, until - Date.now());
    if (ready !== 'readyz') return;
    for (;;) {
      const status = await fetch(`${this.url}/readyz`, { signal: AbortSignal.timeout(2000) }).then(
        (r) => r.status,
        () => 0,
      );
      if (status === 200) return;
      if (this.done) throw new Error(`exited before /readyz answered 200:\n${this.#out}`);
      if (Date.now() > until) throw new Error(`/readyz not 200 within ${ms} ms:\n${this.#out}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Sends `signal` (to its process group when started detached); nothing once it has exited. */
  signal(signal: NodeJS.Signals): void {
    if (this.done || this.child.pid === undefined) return;
    try {
      if (this.#detached) process.kill(-this.child.pid, signal);
      else this.child.kill(signal);
    } catch {} // exited meanwhile
  }

  /** Runs `fn` once it has been stopped or killed, after the clean-ups given so far. */
  onStop(fn: () => void | Promise<void>): void {
    this.#cleanups.push(fn);
  }

  /**
   * Stops it with `signal` (a stopped process is continued first), killing it when it has not
   * exited within `deadlineMs`; then the clean-ups. Its exit.
   */
  async stop(signal: NodeJS.Signals = 'SIGTERM', deadlineMs = STOP_DEADLINE_MS): Promise<Exit> {
    if (!this.done) {
      this.signal('SIGCONT');
      this.signal(signal);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, deadlineMs);
      });
      await Promise.race([this.exited, late]);
      clearTimeout(timer);
      if (!this.done) this.signal('SIGKILL');
    }
    const exit = await this.exited;
    await this.#cleanUp();
    return exit;
  }

  /** SIGKILL, whatever state it is in; then the clean-ups. */
  async kill(): Promise<Exit> {
    this.signal('SIGCONT');
    this.signal('SIGKILL');
    const exit = await this.exited;
    await this.#cleanUp();
    return exit;
  }

  async #cleanUp(): Promise<void> {
    for (const fn of this.#cleanups.splice(0)) await fn();
  }
}

/**
 * `helixd <args>` as a process (`args` start with the command, e.g. 'serve'), resolved once it is
 * ready (default: its banner is out). A process that exits before, or is not ready in time, is
 * killed, its clean-ups run, and the start rejects with everything it printed.
 */
export async function startHelixd(args: readonly string[], o: StartOptions = {}): Promise<HelixdProcess> {
  const p = new HelixdProcess(args, o);
  try {
    await p.ready(o.ready ?? 'banner', o.timeoutMs);
  } catch (err) {
    await p.kill();
    throw err;
  }
  return p;
}

/**
 * `helixd serve --port 0 <args>`: startHelixd for a server on a free port (a test that gives its
 * own --port, to restart on the same one, keeps it).
 */
export function serveHelixd(args: readonly string[], o: StartOptions = {}): Promise<HelixdProcess> {
  const port = args.includes('--port') ? [] : ['--port', '0'];
  return startHelixd(['serve', ...port, ...args], o);
}
