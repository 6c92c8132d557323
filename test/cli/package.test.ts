// The package a user installs: `npm pack` of the tracked tree, installed with npm into an empty
// folder, then run with npx as the README's quick start prints it: `npx helixd --version`, and
// `npx helixd serve` until /readyz answers and the banner's curl, run as printed by a shell,
// answers the operation. The tarball's dependencies are installed by npm as on a user's machine,
// from npm's cache when it holds them (better-sqlite3's native binary with them: its package carries
// one built for Node-API, which every supported Node.js loads, so nothing is compiled or downloaded).
//
// The tree is packed from a copy of the files git tracks (with node_modules linked for the build
// the `prepare` script runs), so that the package holds what a fresh clone packs, and the build
// never writes into this checkout's dist/ while other tests read it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { type HelixdProcess, serveHelixd } from '../support/process.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
};
// npm and npx run with the repository's own settings out of the way: no NODE_OPTIONS (the test
// runner's tsx), and the commands run where a user would, outside the checkout.
const env = { ...process.env, NODE_OPTIONS: '' };
const MINUTES = 60_000;

describe('the package: npm pack, installed into an empty folder, run with npx', {
  timeout: 20 * MINUTES,
}, () => {
  const dir = mkdtempSync(join(tmpdir(), 'helixd-package-'));
  const tree = join(dir, 'tree');
  const app = join(dir, 'app');
  let tarball = '';
  let files: string[] = [];
  let server: HelixdProcess | undefined;
  /** what `npm install` of the tarball printed */
  let installed = '';

  before(async () => {
    const { stdout: tracked } = await run('git', ['ls-files', '-z'], { cwd: ROOT, maxBuffer: 1 << 24 });
    for (const file of tracked.split('\0').filter(Boolean)) {
      mkdirSync(join(tree, dirname(file)), { recursive: true });
      cpSync(join(ROOT, file), join(tree, file));
    }
    symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'));
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], {
      cwd: tree,
      env,
      maxBuffer: 1 << 24,
    });
    const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as {
      filename: string;
      files: { path: string }[];
    }[];
    tarball = join(dir, packed?.filename as string);
    files = (packed?.files ?? []).map((f) => f.path);
    mkdirSync(app);
    const install = await run('npm', ['install', tarball, '--no-audit', '--no-fund', '--prefer-offline'], {
      cwd: app,
      env,
      maxBuffer: 1 << 24,
    });
    installed = install.stdout + install.stderr;
  });
  after(async () => {
    await server?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('carries the compiled command and what it reads, and nothing of the development tree', () => {
    for (const needed of ['package.json', 'bin/helixd.js', 'dist/cli.js', 'README.md'])
      assert.ok(files.includes(needed), `${needed} is in the package`);
    assert.ok(
      files.some((f) => f.startsWith('fixtures/')),
      'the example fixture the docs name',
    );
    const tops = new Set(files.map((f) => f.split('/')[0]));
    for (const left of ['src', 'test', 'bench', 'scripts', 'node_modules', 'bin/helixd-dev.js'])
      assert.ok(!tops.has(left) && !files.includes(left), `${left} is not in the package`);
  });

  it('installs on this Node.js without an engine warning, for helixd or any package it brings', () => {
    assert.doesNotMatch(installed, /EBADENGINE|Unsupported engine/, installed);
  });

  it('npx helixd --version prints the version', async () => {
    const { stdout } = await run('npx', ['--no-install', 'helixd', '--version'], { cwd: app, env });
    assert.equal(stdout.trim(), PACKAGE.version);
  });

  it("npx helixd serve answers /readyz, and the banner's curl works as printed", async () => {
    server = await serveHelixd(['--users', '20'], {
      command: ['npx', '--no-install', 'helixd'],
      cwd: app,
      env,
      detached: true,
      timeoutMs: 2 * MINUTES,
    });
    const { url, curl } = server;
    const ready = await fetch(`${url}/readyz`);
    assert.equal(ready.status, 200, await ready.text());
    const { stdout } = await run('sh', ['-c', `${curl} --silent --show-error --fail`], { cwd: app });
    const games = JSON.parse(stdout) as { data: { id: string; name: string }[] };
    assert.equal(games.data.length, 5, stdout);
    // npx runs helixd as its child: the group is stopped, as Ctrl-C in a terminal would.
    await server.stop('SIGINT');
  });
});
