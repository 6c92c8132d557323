// A node:test reporter that prints nothing while the suite runs and, when it ends, each failed test:
// its file and line, its name under its suites' names, and its error. CI's log is read from its end,
// and TAP puts a failure where the test ran, thousands of lines up; this puts them after the
// summary. Used beside the TAP reporter by .ci/run (two `--test-reporter`s, each with its
// `--test-reporter-destination`). Node's own spec reporter lists failures at the end too, but with
// every passing test before them.
import { inspect } from 'node:util';

/** @param {AsyncIterable<{type: string, data: any}>} source */
export default async function* failures(source) {
  const failed = [];
  /** The names of the tests and suites started and not yet ended, per file: a failure's path. */
  const open = new Map();
  for await (const { type, data } of source) {
    if (type === 'test:start') {
      const stack = open.get(data.file) ?? [];
      stack[data.nesting] = data.name;
      stack.length = data.nesting + 1;
      open.set(data.file, stack);
    } else if (type === 'test:fail') {
      const error = data.details?.error;
      // A suite fails when one of its tests does: that test is already listed.
      if (error?.failureType === 'subtestsFailed') continue;
      const path = (open.get(data.file) ?? []).slice(0, data.nesting).concat(data.name);
      failed.push({ where: `${data.file ?? '?'}:${data.line ?? '?'}`, path, error });
    }
  }
  if (!failed.length) return;
  yield `\n# ${failed.length} failed:\n`;
  for (const { where, path, error } of failed) {
    const shown = inspect(error?.cause ?? error, { depth: 4 })
      .split('\n')
      .slice(0, 40);
    yield `#\n# ${path.join(' > ')}\n#   at ${where}\n${shown.map((l) => `#   ${l}`).join('\n')}\n`;
  }
}
