// A Node.js older than helixd supports (package.json engines) is told so in one line, by the
// compiled command and by the sources' alike (bin/check-node.js), instead of a crash inside
// better-sqlite3. Run with an older `node` when this machine has one: `HELIXD_OLD_NODE`, else the
// system's /usr/bin/node when it is older than 22.14.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = join(import.meta.dirname, '..', '..');
const ENGINES = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }
).engines.node;

/** `major.minor` of the node at `path`, or undefined when there is none. */
function versionOf(path: string): string | undefined {
  if (!existsSync(path)) return undefined;
  return execFileSync(path, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
}
const older = (v: string) => {
  const [major = 0, minor = 0] = v.split('.').map(Number);
  return major < 22 || (major === 22 && minor < 14);
};
const candidate = process.env.HELIXD_OLD_NODE ?? '/usr/bin/node';
const version = versionOf(candidate);
const skip = version && older(version) ? false : `no Node.js older than 22.14 here (${candidate})`;

describe('an unsupported Node.js', { skip }, () => {
  it('package.json names the versions the check applies', () => {
    assert.equal(ENGINES, '>=22.14');
  });
  for (const bin of ['helixd.js', 'helixd-dev.js'])
    it(`bin/${bin} says which versions it needs and exits 1, before loading anything`, () => {
      const r = spawnSync(candidate, [join(ROOT, 'bin', bin), '--version'], { encoding: 'utf8' });
      assert.equal(r.status, 1);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr, `helixd: needs Node.js 22.14 or later (22 or 24); this is Node.js ${version}\n`);
    });
});
