// The processes the reliability tests break on purpose: a private PostgreSQL cluster and a private
// Redis, each on a free port and started by the test (the shared ones on 5432 and 6379 are never
// frozen or stopped), and helixd itself through its real command line. Each can be frozen (SIGSTOP:
// the process is there, its sockets accept, nothing answers), thawed, stopped and started again.
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { type HelixdProcess, serveHelixd } from '../support/process.ts';

export const FIXTURE = join(import.meta.dirname, '..', '..', 'fixtures', 'example-world.json');
/** The fixture's client: an app token is minted with its id and secret (a write to the store). */
export const CLIENT_ID = 'examplefixtureclient0000000001';
const CLIENT_SECRET = 'example-fixture-secret-0001';
export const ADMIN_TOKEN = 'reliability-admin-token-0123456789abcdef';

/** The deadline the tests give helixd, and how late an answer may be before it counts as hung. */
export const DEADLINE_MS = 500;
export const HUNG_AFTER_MS = DEADLINE_MS + 1000;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const addr = probe.address();
      probe.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Calls `probe` until it returns true, every 100 ms for at most `ms`; fails with `what`. */
export async function waitFor(
  what: string | (() => string),
  probe: () => Promise<boolean>,
  ms = 20_000,
): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    if (await probe().catch(() => false)) return;
    if (Date.now() > until) assert.fail(`${typeof what === 'string' ? what : what()}: not within ${ms} ms`);
    await sleep(100);
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** The processes whose parent is `pid`, from /proc. */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ')'
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) children.push(Number(entry));
    } catch {} // gone meanwhile
  }
  return children;
}

/** A server process, with the processes it starts. */
abstract class Service {
  protected child: ChildProcess | undefined;
  protected log = '';
  protected abstract command(): { file: string; args: string[]; uid?: number; gid?: number };
  protected abstract ready(): Promise<boolean>;

  async start(): Promise<void> {
    const { file, args, uid, gid } = this.command();
    const child = spawn(file, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(uid === undefined ? {} : { uid, gid }),
    });
    child.stdout?.on('data', (d) => {
      this.log += d;
    });
    child.stderr?.on('data', (d) => {
      this.log += d;
    });
    this.child = child;
    await waitFor(
      () => `${file} ready\n${this.log}`,
      async () => {
        if (child.exitCode !== null) assert.fail(`${file} exited ${child.exitCode}:\n${this.log}`);
        return this.ready();
      },
    );
  }

  /**
   * SIGSTOP to the server and every process it started: each stays, with its sockets, and none
   * answers. (Not to a process group: PostgreSQL's backends each make their own.) The server first,
   * so that it starts no other meanwhile.
   */
  freeze(): void {
    const pid = this.child?.pid;
    if (!pid) return;
    process.kill(pid, 'SIGSTOP');
    for (const c of childrenOf(pid)) process.kill(c, 'SIGSTOP');
  }

  thaw(): void {
    const pid = this.child?.pid;
    if (!pid) return;
    for (const c of childrenOf(pid)) process.kill(c, 'SIGCONT');
    process.kill(pid, 'SIGCONT');
  }

  /** A clean, fast stop (the server's own shutdown signal). */
  async stop(signal: NodeJS.Signals = 'SIGINT'): Promise<void> {
    const child = this.child;
    if (!child?.pid) return;
    this.thaw();
    child.kill(signal);
    await exited(child);
    this.child = undefined;
  }

  /** Whatever state it is in: thawed and killed, with the processes it started. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child?.pid) return;
    for (const pid of [child.pid, ...childrenOf(child.pid)]) {
      try {
        process.kill(pid, 'SIGCONT');
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
    await exited(child);
    this.child = undefined;
  }
}

/** Where Debian's packages put the PostgreSQL server programs; undefined when none is installed. */
function postgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')) && existsSync(join(root, v, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

/** initdb and postgres refuse to run as root: as root, they run as this system user. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const passwd = readFileSync('/etc/passwd', 'utf8').split('\n');
  for (const name of ['postgres', 'nobody']) {
    const fields = passwd.find((l) => l.startsWith(`${name}:`))?.split(':');
    if (fields) return { uid: Number(fields[2]), gid: Number(fields[3]) };
  }
  throw new Error('running as root, and neither a postgres nor a nobody user exists to run PostgreSQL');
}

export const POSTGRES_MISSING = postgresBin()
  ? undefined
  : 'PostgreSQL server programs (initdb, postgres) not found under /usr/lib/postgresql/*/bin';

/** A throw-away PostgreSQL cluster in a temporary folder, on a free port, trust authentication. */
export class PrivatePostgres extends Service {
  readonly dir = mkdtempSync(join(tmpdir(), 'helixd-pg-'));
  private readonly bin = postgresBin() as string;
  private readonly user = serverUser();
  port = 0;

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  async init(): Promise<void> {
    if (this.user) chownSync(this.dir, this.user.uid, this.user.gid);
    execFileSync(
      join(this.bin, 'initdb'),
      [
        '-D',
        join(this.dir, 'data'),
        '-U',
        'postgres',
        '-A',
        'trust',
        '-E',
        'UTF8',
        '--locale=C',
        '--no-sync',
      ],
      { stdio: 'pipe', ...(this.user ?? {}) },
    );
    this.port = await freePort();
  }

  protected command() {
    return {
      file: join(this.bin, 'postgres'),
      // Durability is not what these tests are about: no fsync keeps start and stop fast.
      args: [
        ...['-D', join(this.dir, 'data'), '-p', String(this.port), '-k', this.dir],
        ...['-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'max_connections=40'],
      ],
      ...(this.user ?? {}),
    };
  }

  protected async ready(): Promise<boolean> {
    const c = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 1000 });
    c.on('error', () => {});
    try {
      await c.connect();
      await c.query('select 1');
      return true;
    } finally {
      await c.end().catch(() => {});
    }
  }

  async remove(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export const REDIS_MISSING = (() => {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'pipe' });
    return undefined;
  } catch {
    return 'redis-server not found on the PATH';
  }
})();

/** A throw-away Redis on a free port that keeps nothing on disk. */
export class PrivateRedis extends Service {
  constructor(readonly port: number) {
    super();
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  protected command() {
    return {
      file: 'redis-server',
      args: ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    };
  }

  protected async ready(): Promise<boolean> {
    return /Ready to accept connections/.test(this.log);
  }

  override async stop(): Promise<void> {
    await super.stop('SIGTERM');
    this.log = '';
  }
}

/** helixd serve through the real command line, on a free port, from the example fixture. */
export class Helixd {
  private served: HelixdProcess | undefined;
  url = '';

  constructor(private readonly args: string[]) {}

  async start(): Promise<void> {
    this.served = await serveHelixd(
      [
        ...['--fixtures', FIXTURE, '--admin-token', ADMIN_TOKEN],
        ...['--query-timeout', `${DEADLINE_MS}ms`, '--log-level', 'warn', ...this.args],
      ],
      { ready: 'serving' },
    );
    this.url = this.served.url;
  }

  /** What helixd has printed so far: its log lines, JSON. */
  output(): string {
    return this.served?.out() ?? '';
  }

  /** Whether helixd is still the process it was (never restarted by a test). */
  get pid(): number | undefined {
    return this.served?.pid;
  }

  async stop(): Promise<void> {
    await this.served?.kill();
  }

  /**
   * One request, as a client with a patience of HUNG_AFTER_MS: `status` is 'hung' when no answer
   * came by then, and `ms` how long the answer took.
   */
  async request(
    path: string,
    init: RequestInit = {},
  ): Promise<{ status: number | 'hung'; ms: number; body: string }> {
    const started = Date.now();
    try {
      const res = await fetch(`${this.url}${path}`, { ...init, signal: AbortSignal.timeout(HUNG_AFTER_MS) });
      const body = await res.text();
      return { status: res.status, ms: Date.now() - started, body };
    } catch (err) {
      if ((err as Error).name === 'TimeoutError')
        return { status: 'hung', ms: Date.now() - started, body: '' };
      throw err;
    }
  }

  /** An app token of the fixture's client: a token mint, which writes to the store. */
  mint(): ReturnType<Helixd['request']> {
    const q = `client_id=${CLIENT_ID}&client_secret=${CLIENT_SECRET}&grant_type=client_credentials`;
    return this.request(`/oauth2/token?${q}`, { method: 'POST' });
  }

  /** An operation that reads the token and the store (and takes a rate-limit point). */
  read(token: string): ReturnType<Helixd['request']> {
    return this.request('/helix/games/top?first=5', {
      headers: { authorization: `Bearer ${token}`, 'client-id': CLIENT_ID },
    });
  }

  /** An admin write: a stream's viewer count. */
  adminWrite(viewers: number): ReturnType<Helixd['request']> {
    return this.request('/admin/streams/3001', {
      method: 'PATCH',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ viewer_count: viewers }),
    });
  }

  async token(): Promise<string> {
    const res = await this.mint();
    assert.equal(res.status, 200, res.body);
    return JSON.parse(res.body).access_token as string;
  }
}

/** The Helix 503 of a dependency that cannot serve. */
export function assertUnavailable(res: { status: number | 'hung'; ms: number; body: string }, what: string) {
  assert.equal(res.status, 503, `${what}: ${res.status} after ${res.ms} ms ${res.body}`);
  const body = JSON.parse(res.body);
  assert.equal(body.status, 503, what);
  assert.equal(typeof body.message, 'string', what);
}

/** /readyz is a 503 whose `checks` name `dependency` as down, with a reason matching `reason`. */
export async function assertNotReady(h: Helixd, dependency: 'store' | 'redis', reason: RegExp) {
  const res = await h.request('/readyz');
  assertUnavailable(res, '/readyz');
  const body = JSON.parse(res.body);
  assert.equal(body.error, 'Service Unavailable');
  assert.match(body.checks[dependency], reason, res.body);
  assert.match(body.message, new RegExp(dependency), res.body);
}

export async function assertReady(h: Helixd) {
  const res = await h.request('/readyz');
  assert.equal(res.status, 200, res.body);
}
