// `npm test`: every `*.test.ts` under test/, at any depth, through Node's test runner with tsx.
// A shell glob (`test/*/*.test.ts`) finds only one folder deep, and the shell npm runs has no `**`:
// a test file put one folder deeper would never run, silently. Arguments are passed on to
// `node --test` (`npm test -- --test-name-pattern=...`); files named as arguments run alone, and a
// folder named as an argument stands for the `*.test.ts` files under it (`node --test` of Node 22
// and later takes no folder: it would try to load it as a module and fail).
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const TESTS = join(ROOT, 'test');

/** The `*.test.ts` files under `dir`, at any depth, as paths relative to ROOT, sorted. */
function testsUnder(dir) {
  return readdirSync(dir, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.test.ts') && !f.split(/[\\/]/).includes('node_modules'))
    .map((f) => relative(ROOT, join(dir, f)))
    .sort();
}
const isFolder = (a) =>
  !a.startsWith('-') && (statSync(resolve(ROOT, a), { throwIfNoEntry: false })?.isDirectory() ?? false);

const args = process.argv.slice(2);
const named = args.flatMap((a) =>
  a.endsWith('.test.ts') ? [a] : isFolder(a) ? testsUnder(resolve(ROOT, a)) : [],
);
if (!named.length && args.some(isFolder)) {
  console.error(`no *.test.ts under ${args.filter(isFolder).join(', ')}`);
  process.exit(1);
}
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
