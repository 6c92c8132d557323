// The command line in this process: `helixd <args>` through src/cli/, its output captured.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ConfigError, ENV_NAMES, loadConfig } from '../../src/config.ts';
import type { StoreOptions } from '../../src/store/db.ts';
import { HELIXD_DEV_BIN } from './process.ts';
import { cliDb } from './stores.ts';

/**
 * `helixd <args>` through the real command line (src/cli/), run in this process: a process start
 * per command would cost seconds. `stdin` feeds a `-` input.
 */
export async function helixd(args: readonly string[], stdin = '') {
  const { runCaptured } = await import('../../src/cli/index.ts');
  return runCaptured(args, stdin);
}

/**
 * `helixd export` of a store (a test app's `storeOptions`): every record, as the text it writes. A
 * refused write must leave it byte for byte as it was.
 */
export async function exportOf(store: StoreOptions): Promise<string> {
  const r = await helixd(['export', '--db', cliDb(store)]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

/**
 * One of helixd's own bearer tokens shorter than 32 characters is a configuration error, given as a
 * flag or in the environment, and `helixd serve` stops with a line that says so.
 */
export async function assertTokenTooShort(option: 'adminToken' | 'metricsToken'): Promise<void> {
  const env = ENV_NAMES[option];
  const flag = `--${option.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
  assert.throws(() => loadConfig({ [option]: 'short' }, {}), ConfigError);
  assert.throws(
    () => loadConfig({}, { [env]: 'x'.repeat(31) }),
    new RegExp(`${env} / ${flag}: must be at least 32 characters`),
  );
  assert.equal(loadConfig({}, { [env]: 'x'.repeat(32) })[option], 'x'.repeat(32));
  await assert.rejects(
    promisify(execFile)(process.execPath, [
      HELIXD_DEV_BIN,
      'serve',
      flag,
      'short',
      '--db',
      '/nonexistent/x.db',
    ]),
    (err: { code: number; stderr: string }) => {
      assert.notEqual(err.code, 0);
      assert.match(err.stderr, new RegExp(`${flag}: must be at least 32 characters`));
      return true;
    },
  );
}

/** The production profile's required options, as a test passes them to loadConfig. */
export const PRODUCTION = {
  profile: 'production',
  secret: 'x'.repeat(16),
  publicUrl: 'https://api.example.com',
};

/**
 * `helixd serve --profile production <args>` stops before it opens a store (exit code 1), with a
 * line matching `message`.
 */
export async function assertRefusedInProduction(args: readonly string[], message: RegExp): Promise<void> {
  const run = await helixd([
    'serve',
    '--profile',
    'production',
    '--secret',
    PRODUCTION.secret,
    '--public-url',
    PRODUCTION.publicUrl,
    ...args,
    '--db',
    '/nonexistent/x.db',
  ]);
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, message);
}
