// What the benchmark scripts share: a free port, helixd started and stopped, a command timed with
// its CPU time and peak memory (Linux /proc), tokens minted into the store, and `--help` from a
// script's opening comment.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Kysely } from 'kysely';
import { SPEC_SCOPES } from '../src/auth/scopes.ts';
import { mintToken } from '../src/auth/tokens.ts';
import type { Database } from '../src/store/schema.ts';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      s.close(() => res(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
}

export function procStatus(pid: number, field: 'VmHWM' | 'VmRSS'): number | undefined {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** User plus system CPU time of a process so far (Linux /proc, 100 ticks a second). */
export function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** Runs a command to completion; returns its wall time and the peak RSS seen while it ran. */
export async function runTimed(
  cmd: string,
  argv: string[],
): Promise<{ seconds: number; cpuSeconds: number | undefined; peakRss: number | undefined; output: string }> {
  const started = performance.now();
  const child = spawn(cmd, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d) => {
    output += d;
  });
  child.stderr?.on('data', (d) => {
    output += d;
  });
  let peak: number | undefined;
  let cpu: number | undefined;
  const poll = setInterval(() => {
    const hwm = child.pid ? procStatus(child.pid, 'VmHWM') : undefined;
    if (hwm !== undefined) peak = Math.max(peak ?? 0, hwm);
    cpu = (child.pid ? cpuSeconds(child.pid) : undefined) ?? cpu;
  }, 100);
  const code = await new Promise<number | null>((res, rej) => {
    child.on('error', rej);
    child.on('close', res);
  });
  clearInterval(poll);
  if (code !== 0) throw new Error(`${argv.slice(0, 2).join(' ')} failed (${code}):\n${output}`);
  return { seconds: (performance.now() - started) / 1000, cpuSeconds: cpu, peakRss: peak, output };
}

export async function waitReady(base: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`helixd exited with ${child.exitCode} before it was ready`);
    try {
      const res = await fetch(`${base}/readyz`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`helixd was not ready after ${timeoutMs} ms`);
}

export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((res) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(kill);
      res();
    });
    child.kill('SIGINT');
  });
}

/** Prints the opening comment of the script at `url` (its usage) and exits. */
export function printHelp(url: string): never {
  const lines = readFileSync(fileURLToPath(url), 'utf8').split('\n');
  const head = lines.slice(
    0,
    lines.findIndex((l) => !l.startsWith('//')),
  );
  process.stdout.write(`${head.map((l) => l.replace(/^\/\/ ?/, '')).join('\n')}\n`);
  process.exit(0);
}

/**
 * An app token of `clientId` and, on demand, a user token per user carrying every scope the spec
 * names, minted straight into the store (the token command would start a process per user), each
 * living a day.
 */
export async function benchTokens(
  db: Kysely<Database>,
  clientId: string,
): Promise<{ appToken: string; tokenFor(userId: number): Promise<string> }> {
  const now = Math.floor(Date.now() / 1000);
  const ttl = 24 * 3600;
  const app = await mintToken(db, { kind: 'app', clientId, scopes: [], ttl, now });
  const userTokens = new Map<number, Promise<string>>();
  return {
    appToken: app.access_token,
    tokenFor(userId) {
      let t = userTokens.get(userId);
      if (!t) {
        t = mintToken(db, { kind: 'user', clientId, userId, scopes: SPEC_SCOPES, ttl, now }).then(
          (m) => m.access_token,
        );
        userTokens.set(userId, t);
      }
      return t;
    },
  };
}
