// Child processes of the benchmarks: a free port, a process's CPU time and memory, a command run
// to completion and timed, waiting for helixd's /readyz, `helixd serve --workers n` started and
// ready, and stopping a child as Ctrl-C would.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The compiled command, as an operator runs it (`dist/`, which the bench scripts build first). */
export const BIN = resolve(ROOT, 'bin', 'helixd.js');

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

/**
 * CPU time of one thread of a process so far, µs: by default its main thread, the one that runs a
 * Node server's requests (Linux /proc schedstat, kept in ns; its helper threads, the GC's and the
 * JIT compilers', are left out).
 */
export function threadCpuUs(
  pid: number | 'self',
  tid: number = pid === 'self' ? process.pid : pid,
): number | undefined {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1000;
  } catch {
    return undefined;
  }
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
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((res) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(kill);
      res();
    });
    child.kill('SIGINT');
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

/**
 * `helixd serve --workers n` on `db`, ready once the primary says every worker serves; `extra`: more
 * flags of `serve` (such as `--admin-token`); `nodeFlags`: flags of node itself (such as
 * `--inspect`). `output()`: the last 20,000 characters it printed. `bin`: the program of another
 * checkout (bench/compare.ts), this one's by default.
 */
export async function startHelixd(
  db: string,
  workers: number,
  extra: string[] = [],
  nodeFlags: string[] = [],
  bin = BIN,
): Promise<{ child: ChildProcess; base: string; output: () => string }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(
    process.execPath,
    [...nodeFlags, bin, 'serve', '--db', db, '--port', String(port), '--workers', String(workers)].concat([
      '--log-level',
      'warn',
      '--rate-limit',
      '0',
      '--skip-seed',
      '--drain',
      '0',
      ...extra,
    ]),
    { cwd: resolve(dirname(bin), '..'), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  try {
    await waitReady(base, child, 120_000);
    // /readyz answers as soon as one worker listens; the primary prints once all of them do.
    while (workers > 1 && !out.includes('worker processes')) {
      if (child.exitCode !== null) throw new Error(`helixd exited: ${out}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  } catch (err) {
    await stopChild(child);
    throw new Error(`${(err as Error).message}\n${out}`);
  }
  return { child, base, output: () => out };
}
