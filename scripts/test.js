// `npm test`: every `*.test.ts` under test/, at any depth, through Node's test runner with tsx.
// A shell glob (`test/*/*.test.ts`) finds only one folder deep, and the shell npm runs has no `**`:
// a test file put one folder deeper would never run, silently. Arguments are passed on to
// `node --test` (`npm test -- --test-name-pattern=...`); files named as arguments run alone, and a
// folder named runs the tests under it (`node scripts/test.js test/examples/`).
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const TESTS = join(ROOT, 'test');

const args = process.argv.slice(2);
const isFolder = (a) => !a.startsWith('-') && statSync(a, { throwIfNoEntry: false })?.isDirectory();
/** Every `*.test.ts` under a folder, at any depth, relative to the root. */
const testsUnder = (folder) =>
  readdirSync(folder, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.test.ts') && !f.split(/[\\/]/).includes('node_modules'))
    .map((f) => relative(ROOT, join(folder, f)))
    .sort();
const named = args.flatMap((a) => (a.endsWith('.test.ts') ? [a] : isFolder(a) ? testsUnder(a) : []));
const files = named.length ? named : testsUnder(TESTS);
const options = args.filter((a) => !a.endsWith('.test.ts') && !isFolder(a));

const child = spawn(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', ...options, ...files],
  { cwd: ROOT, stdio: 'inherit' },
);
child.on('exit', (code, signal) => {
  if (signal) process.kill(process.pid, signal);
  else process.exitCode = code ?? 1;
});
