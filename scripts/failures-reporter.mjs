// A node:test reporter that prints nothing while the suite runs and, when it ends, each failed test:
// its name, its file and line, and its error. CI's log is read from its end, and TAP puts a failure
// where the test ran, thousands of lines up; this puts them after the summary. Used beside the TAP
// reporter by .ci/run (two `--test-reporter`s, each with its `--test-reporter-destination`). Node's
// own spec reporter lists failures at the end too, but with every passing test before them. The
// suites' names are left out: the suites of one file may run at once (the tests on both stores), so
// the order of events does not tell which suite a test is in; those tests' messages name the store.
import { inspect } from 'node:util';

/** @param {AsyncIterable<{type: string, data: any}>} source */
export default async function* failures(source) {
  const failed = [];
  for await (const { type, data } of source) {
    if (type === 'test:fail') {
      const error = data.details?.error;
      // A suite fails when one of its tests does: that test is already listed.
      if (error?.failureType === 'subtestsFailed') continue;
      failed.push({ where: `${data.file ?? '?'}:${data.line ?? '?'}`, name: data.name, error });
    }
  }
  if (!failed.length) return;
  yield `\n# ${failed.length} failed:\n`;
  for (const { where, name, error } of failed) {
    const shown = inspect(error?.cause ?? error, { depth: 4 })
      .split('\n')
      .slice(0, 40);
    yield `#\n# ${name}\n#   at ${where}\n${shown.map((l) => `#   ${l}`).join('\n')}\n`;
  }
}
