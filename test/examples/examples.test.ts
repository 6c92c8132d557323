// The examples of examples/, run as printed against a started `helixd serve`, and quoted byte for byte
// by the README and docs/: a block of code that names an example file (on the line just before its
// fence) must be that file's content, so that what a reader copies is what this test runs.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type HelixdProcess, serveHelixd } from '../support/process.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const EXAMPLES = join(ROOT, 'examples');
const ADMIN_TOKEN = 'examples-admin-token-0123456789abcdef';

/**
 * Every example, the server it runs against and a line its output must hold. `demo`: the demo data
 * with the admin API and a moving world (`--live`); `fixtures`: fixtures/example-world.json with the
 * admin API, nothing moving. In this order: the ones that move the clock come last.
 */
const RUNS: { file: string; server: 'demo' | 'fixtures'; out: RegExp }[] = [
  { file: 'quick-start.sh', server: 'demo', out: /^\{"data":\[\{"id":"\d+","name":/m },
  { file: 'faults-header.sh', server: 'demo', out: /^curl exit 56: connection reset$/m },
  { file: 'faults-rules.sh', server: 'demo', out: /^\{"faults":"429:30%, latency:200ms:10%","seed":7\}$/m },
  { file: 'retry-on-429.mjs', server: 'demo', out: /^top games: [1-9]\d*; 429s waited out: [1-9]/m },
  { file: 'retry-on-429-twurple.mjs', server: 'demo', out: /^top games: [1-9]\d*$/m },
  { file: 'twurple-mock.mjs', server: 'demo', out: /^top games: \S/m },
  {
    file: 'eventsub-twurple.mjs',
    server: 'demo',
    out: /^channel\.follow: \w+ follows \w+; listed: true$/m,
  },
  {
    file: 'eventsub-webhook.mjs',
    server: 'demo',
    out: /^verified: stream\.online\nnotification: \w+ is live, stream \d+, signature checked$/m,
  },
  { file: 'live-step.sh', server: 'demo', out: /^\{"events":100,"kinds":\{"viewers":\d+/m },
  { file: 'paging-live.mjs', server: 'demo', out: /^[1-9]\d* streams in [2-9]\d* pages, none twice$/m },
  { file: 'token-refresh.mjs', server: 'demo', out: /^\w+: answered after a 401 and a refresh$/m },
  { file: 'token-refresh-twurple.mjs', server: 'demo', out: /^refreshed: a new token true\n\w+: answered$/m },
  {
    file: 'clock.sh',
    server: 'demo',
    out: /"message":"to: 2020-01-01T00:00:00.000Z is before the server clock/,
  },
  { file: 'fixtures.sh', server: 'fixtures', out: /^\{"total":3,"users":\["dave","carol","bob"\]\}$/m },
  {
    file: 'admin-records.sh',
    server: 'fixtures',
    // the stream changed and read; deleted; its channel kept the stream's title and game; the rest deleted
    out: /"viewer_count":99,[^\n]*\n[^\n]*\n\n\{"data":\[\{"broadcaster_id":"900001","title":"Hello","game_id":"990001"[^\n]*\n\n\ndeleted$/m,
  },
];

/** The pages that may quote examples: the README and docs/. */
function pages(): { name: string; text: string }[] {
  const docs = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md'));
  return [
    { name: 'README.md', text: readFileSync(join(ROOT, 'README.md'), 'utf8') },
    ...docs.map((f) => ({ name: `docs/${f}`, text: readFileSync(join(ROOT, 'docs', f), 'utf8') })),
  ];
}

/** Each fenced block whose preceding non-blank line names an example file: the file and the block. */
function quotes(text: string): { file: string; block: string }[] {
  const lines = text.split('\n');
  const found: { file: string; block: string }[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```/.test(lines[i] ?? '')) continue;
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
    assert.ok(end > i, `an unclosed fence at line ${i + 1}`);
    let k = i - 1;
    while (k >= 0 && (lines[k] ?? '').trim() === '') k--;
    const named = /examples\/([\w.-]+\.(?:mjs|sh))/.exec(lines[k] ?? '')?.[1];
    if (named) found.push({ file: named, block: `${lines.slice(i + 1, end).join('\n')}\n` });
    i = end;
  }
  return found;
}

const hasJq = (() => {
  try {
    execFileSync('jq', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const skip = hasJq ? false : 'the shell examples need jq (Debian package jq)';
if (skip && process.env.CI === 'true') throw new Error(`CI=true: ${skip}`);

describe('examples/', () => {
  it('every file in examples/ is run by this test', () => {
    assert.deepEqual(readdirSync(EXAMPLES).sort(), RUNS.map((r) => r.file).sort());
  });

  it('every quoted example is byte for byte its file, and every example is quoted', () => {
    const quoted = new Set<string>();
    for (const { name, text } of pages())
      for (const { file, block } of quotes(text)) {
        const content = readFileSync(join(EXAMPLES, file), 'utf8');
        assert.equal(block, content, `${name} quotes examples/${file} other than it is`);
        quoted.add(file);
      }
    assert.deepEqual([...quoted].sort(), RUNS.map((r) => r.file).sort());
  });

  describe('each runs as printed against helixd serve', { skip }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'helixd-examples-'));
    const servers: Partial<Record<'demo' | 'fixtures', HelixdProcess>> = {};
    // No drain: the servers are stopped at once. A --fixtures start prints no curl line: it is
    // ready when it names its URL.
    const serve = (db: string, more: readonly string[]) =>
      serveHelixd(
        ['--db', join(dir, db), '--log-level', 'warn', '--drain', '0', '--admin-token', ADMIN_TOKEN, ...more],
        {
          ready: 'serving',
        },
      );
    before(async () => {
      [servers.demo, servers.fixtures] = await Promise.all([
        serve('demo.db', ['--live', '--live-rate', '50']),
        serve('fixtures.db', ['--fixtures', join(ROOT, 'fixtures', 'example-world.json')]),
      ]);
    });
    after(async () => {
      for (const s of Object.values(servers)) if (s) await s.kill();
      rmSync(dir, { recursive: true, force: true });
    });

    for (const { file, server, out } of RUNS)
      it(file, async () => {
        const url = servers[server]?.url;
        assert.ok(url);
        // Only what the examples document, beside PATH and HOME: nothing of this test's own.
        const env = {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          HELIXD_URL: url,
          HELIXD_ADMIN_TOKEN: ADMIN_TOKEN,
        };
        const command = file.endsWith('.sh') ? 'sh' : process.execPath;
        const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>(
          (resolve) => {
            execFile(
              command,
              [join(EXAMPLES, file)],
              { cwd: ROOT, env, timeout: 20_000 },
              (err, stdout, stderr) =>
                resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
            );
          },
        );
        assert.equal(code, 0, `${file} exited ${code}:\n${stdout}\n${stderr}`);
        assert.match(stdout, out, stderr);
      });
  });
});
