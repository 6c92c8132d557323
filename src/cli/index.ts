// The helixd command line. Each command returns an exit code; errors go to stderr as one clear
// line and exit 1, never a stack trace for a user mistake.
import { Readable, Writable } from 'node:stream';
import { Command } from 'commander';
import { ConfigError } from '../config.ts';
import { VERSION } from '../version.ts';
import { clientCommand } from './client.ts';
import { type CliIo, UsageError } from './common.ts';
import { eventCommand } from './event.ts';
import { exportCommand } from './export.ts';
import { importCommand } from './import.ts';
import { migrateCommand } from './migrate.ts';
import { seedCommand } from './seed.ts';
import { serveCommand } from './serve.ts';
import { tokenCommand } from './token.ts';

// One file a command. The modules a command runs with are imported by its action, when it runs:
// `helixd --help` and `--version` load none of them, and `token` no HTTP server (Kysely, TypeBox
// and Fastify are most of a start-up: bench/startup.ts). The modules the command files import
// statically are small and import nothing heavy.

export type { CliIo } from './common.ts';

const PROCESS_IO: CliIo = process;

export function buildCli(io: CliIo = PROCESS_IO): Command {
  const program = new Command('helixd')
    .description('A self-hostable server for a live-streaming platform read API (Twitch Helix wire format)')
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .version(VERSION, '-V, --version', 'print the version')
    .showHelpAfterError()
    .exitOverride();

  serveCommand(program, io);
  seedCommand(program, io);
  migrateCommand(program, io);
  tokenCommand(program, io);
  importCommand(program, io);
  exportCommand(program, io);
  clientCommand(program, io);
  eventCommand(program, io);
  return program;
}

/**
 * Runs the command line inside this process with its output captured: for programs that drive
 * `helixd` (the tests, the import bench) without a process start per command.
 */
export async function runCaptured(
  args: readonly string[],
  stdin = '',
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = { stdout: '', stderr: '' };
  const sink = (name: keyof typeof out) =>
    new Writable({
      write(chunk, _encoding, done) {
        out[name] += String(chunk);
        done();
      },
    });
  const code = await main(['node', 'helixd', ...args], {
    stdin: Readable.from([stdin]),
    stdout: sink('stdout'),
    stderr: sink('stderr'),
  });
  return { code, ...out };
}

export async function main(argv: string[], io: CliIo = PROCESS_IO): Promise<number> {
  const program = buildCli(io);
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (err) {
    const e = err as { code?: string; exitCode?: number; message?: string };
    if (typeof e.code === 'string' && e.code.startsWith('commander.')) return e.exitCode ?? 1;
    if (err instanceof UsageError || err instanceof ConfigError) {
      io.stderr.write(`helixd: ${e.message}\n`);
      return 1;
    }
    io.stderr.write(`helixd: ${e.message ?? String(err)}\n`);
    return 1;
  }
}
