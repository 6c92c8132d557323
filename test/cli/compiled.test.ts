// The compiled command (dist/, which `npm install` builds; bin/helixd.js runs it) through the real
// command line. Staleness: this file builds dist/ itself first (`npm run build`), so it never runs
// a dist/ older than the sources; every other test that starts helixd as a process runs the
// sources through tsx (HELIXD_DEV_BIN, test/support/process.ts).
//
// The commands run from a copy of an install without dev dependencies: bin/, dist/ and
// package.json beside a node_modules that links every installed package except tsx and the other
// dev dependencies. helixd's own modules resolve packages from there, so any import of tsx, by the
// main thread or by a worker thread (the seed generator's, the import's), fails the command.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { serveHelixd } from '../support/process.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  devDependencies: Record<string, string>;
};
const run = promisify(execFile);
/** The seed generator runs in a worker thread from this many users (src/seed/index.ts). */
const SEED_WORKER_USERS = 10_000;
/** `helixd import` reads a file of this size or more in a worker thread (src/cli/import.ts). */
const IMPORT_WORKER_BYTES = 1_000_000;

/** `dir`/node_modules: a link to each package of `from` but the `left` ones (scoped ones too). */
function linkPackages(from: string, dir: string, left: ReadonlySet<string>): void {
  mkdirSync(dir, { recursive: true });
  for (const name of readdirSync(from)) {
    if (name.startsWith('.')) continue; // .bin, .package-lock.json
    if (name.startsWith('@')) {
      for (const sub of readdirSync(join(from, name)))
        if (!left.has(`${name}/${sub}`)) {
          mkdirSync(join(dir, name), { recursive: true });
          symlinkSync(join(from, name, sub), join(dir, name, sub));
        }
    } else if (!left.has(name)) symlinkSync(join(from, name), join(dir, name));
  }
}

describe('the compiled command (dist/), run without tsx', () => {
  const dir = mkdtempSync(join(tmpdir(), 'helixd-compiled-'));
  const app = join(dir, 'app');
  const bin = join(app, 'bin', 'helixd.js');
  // NODE_OPTIONS could carry `--import tsx` into the commands: they run without it.
  const env = { ...process.env, NODE_OPTIONS: '' };
  const helixd = (...args: string[]) =>
    run(process.execPath, [bin, ...args], { env, maxBuffer: 64 * 1024 * 1024 });

  before(async () => {
    await run('npm', ['run', '-s', 'build'], { cwd: ROOT });
    for (const part of ['bin', 'dist', 'package.json'])
      cpSync(join(ROOT, part), join(app, part), { recursive: true });
    const devOnly = new Set([...Object.keys(PACKAGE.devDependencies), 'tsx', 'typescript']);
    linkPackages(join(ROOT, 'node_modules'), join(app, 'node_modules'), devOnly);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('--version and -V print the version of package.json', async () => {
    for (const flag of ['--version', '-V']) {
      const { stdout } = await run(process.execPath, [join(ROOT, 'bin', 'helixd.js'), flag], { env });
      assert.equal(stdout, `${PACKAGE.version}\n`);
      assert.equal((await helixd(flag)).stdout, `${PACKAGE.version}\n`);
    }
  });

  it('serve on a fresh SQLite file answers /readyz and a Helix request', async () => {
    const served = await serveHelixd(['--db', join(dir, 'serve.db'), '--log-level', 'warn', '--drain', '0'], {
      bin,
      env,
    });
    try {
      assert.equal((await fetch(`${served.url}/readyz`)).status, 200);
      const headers = {
        authorization: `Bearer ${/Bearer (\w+)/.exec(served.curl)?.[1]}`,
        'client-id': /Client-Id: (\w+)/.exec(served.curl)?.[1] as string,
      };
      const top = await fetch(`${served.url}/helix/games/top?first=5`, { headers });
      assert.equal(top.status, 200);
      assert.equal((await top.json()).data.length, 5);

      // Swagger UI is bundled, its files copied beside the bundle (scripts/build.js): the page,
      // a file it loads and the document it shows.
      const page = await fetch(`${served.url}/docs`);
      assert.equal(page.status, 200);
      assert.match(await page.text(), /swagger-ui/);
      const css = await fetch(`${served.url}/docs/static/swagger-ui.css`);
      assert.equal(css.status, 200);
      assert.match(css.headers.get('content-type') ?? '', /^text\/css/);
      assert.ok((await css.text()).length > 10_000);
      const spec = await fetch(`${served.url}/docs/json`);
      assert.equal((await spec.json()).paths['/helix/games/top'].get.operationId, 'get-games-top');
    } finally {
      assert.equal((await served.stop('SIGINT')).code, 0);
    }
  });

  it('seed runs its generator worker, import of a large file its worker', async () => {
    const seeded = join(dir, 'seeded.db');
    const seed = await helixd('seed', '--db', seeded, '--users', String(SEED_WORKER_USERS));
    assert.match(seed.stdout, new RegExp(`^seeded .* users ${SEED_WORKER_USERS},`));

    const file = join(dir, 'users.ndjson');
    await helixd('export', '--db', seeded, '--kind', 'user', '--out', file);
    assert.ok(statSync(file).size >= IMPORT_WORKER_BYTES, `${file} is large enough for the import worker`);
    const imported = join(dir, 'imported.db');
    const { stdout } = await helixd('import', file, '--db', imported, '--json');
    assert.equal(JSON.parse(stdout).records.user, SEED_WORKER_USERS);
    const again = await helixd('export', '--db', imported, '--kind', 'user');
    assert.equal(again.stdout, readFileSync(file, 'utf8'));
  });

  it('import of a file of many pieces names the line of an error far into it, and imports nothing', async () => {
    // Users then their follows (~15 per user): about 30 pieces of 5,000 lines (src/io/worker.ts),
    // most of them prepared by the worker threads, which compiled start in well under a piece's time.
    const seeded = join(dir, 'seeded.db');
    const file = join(dir, 'users-follows.ndjson');
    await helixd('export', '--db', seeded, '--kind', 'user', 'follow', '--out', file);
    const lines = readFileSync(file, 'utf8').split('\n');
    const bad = lines.length - 1_000; // a follow, in one of the last pieces
    const record = JSON.parse(lines[bad - 1] ?? '') as { kind: string; data: Record<string, unknown> };
    assert.equal(record.kind, 'follow');
    record.data.followed_at = '2026-13-01T00:00:00Z';
    lines[bad - 1] = JSON.stringify(record);
    const broken = join(dir, 'broken.ndjson');
    writeFileSync(broken, lines.join('\n'));

    const into = join(dir, 'refused.db');
    await assert.rejects(helixd('import', broken, '--db', into), (error: { stderr: string }) => {
      assert.match(error.stderr, new RegExp(`line ${bad}: follow followed_at: .*\\(nothing was imported\\)`));
      return true;
    });
    const left = await helixd('export', '--db', into);
    assert.equal(left.stdout, '');
  });
});
