// docs/configuration.md's table of options against `helixd serve --help`: the same options in the
// same order, each with the same environment variables, the same default where the help states
// one, and the same production rule (required, always on, refused).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { helixd } from '../support/cli.ts';

const DOC = join(import.meta.dirname, '..', '..', 'docs', 'configuration.md');

interface Row {
  flag: string;
  env: string[];
  /** the default as stated: the help's `default X`, the doc's first `X` of its default column */
  default: string | undefined;
  /** the production profile's rule as stated: required, always on, refused */
  production: string | undefined;
}

const RULES = {
  help: [
    ['(required in production)', 'required'],
    ['(always on in production)', 'always on'],
    ['(not in production)', 'refused'],
  ],
  doc: [
    ['required in production', 'required'],
    ['always on in production', 'always on'],
    ['refused in production', 'refused'],
  ],
} as const;

const ruleOf = (text: string, rules: (typeof RULES)[keyof typeof RULES]) =>
  rules.find(([said]) => text.includes(said))?.[1];

/** The options of a help text, each with its description on one line (commander wraps them). */
function helpRows(help: string): Row[] {
  const options: { flag: string; text: string }[] = [];
  const lines = help.split('\n');
  for (const line of lines.slice(lines.indexOf('Options:') + 1)) {
    const start = /^ {2}(?:-\w, )?(--[a-z-]+)(?: <[^>]+>)? +(.*)$/.exec(line);
    const last = options.at(-1);
    if (start) options.push({ flag: start[1] as string, text: start[2] as string });
    else if (last && /^ {4,}\S/.test(line)) last.text += ` ${line.trim()}`;
  }
  return options
    .filter((o) => o.flag !== '--help')
    .map(({ flag, text }) => {
      const env = /\(env (\w+)\)(?:, also (\w+))?/.exec(text);
      assert.ok(env, `${flag}: the help names its environment variable: ${text}`);
      return {
        flag,
        env: env.slice(1).filter((e) => e !== undefined),
        default: /, default (\S+) \(env /.exec(text)?.[1],
        production: ruleOf(text, RULES.help),
      };
    });
}

/** The rows of the doc's table of options. */
function docRows(doc: string): Row[] {
  const rows: Row[] = [];
  for (const line of doc.split('\n')) {
    const row = /^\| `(--[a-z-]+)` \| (.*?) \| (.*?) \| (.*) \|$/.exec(line);
    if (!row) continue;
    const [, flag, env, dflt, meaning] = row as unknown as [string, string, string, string, string];
    rows.push({
      flag,
      env: [...env.matchAll(/`(\w+)`/g)].map((m) => m[1] as string),
      default: /^`([^`]+)`/.exec(dflt)?.[1],
      production: ruleOf(`${dflt} ${meaning}`, RULES.doc),
    });
  }
  return rows;
}

describe('docs/configuration.md', () => {
  it('lists exactly the options of `helixd serve --help`, with their environment, default and production rule', async () => {
    const help = await helixd(['serve', '--help']);
    assert.equal(help.code, 0, help.stderr);
    const fromHelp = helpRows(help.stdout);
    const fromDoc = docRows(readFileSync(DOC, 'utf8'));
    assert.ok(fromHelp.length > 20, 'the help lists the options');
    assert.deepEqual(
      fromDoc.map((r) => r.flag),
      fromHelp.map((r) => r.flag),
      'the same options in the same order',
    );
    for (const [i, h] of fromHelp.entries()) {
      const d = fromDoc[i] as Row;
      assert.deepEqual(d.env, h.env, `${h.flag}: environment variables`);
      if (h.default !== undefined) assert.equal(d.default, h.default, `${h.flag}: default`);
      assert.equal(d.production, h.production, `${h.flag}: production rule`);
    }
  });
});
