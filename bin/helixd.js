#!/usr/bin/env node
// The command: the compiled JavaScript in dist/, which `npm install` (and `npm ci`) build from src/
// through the `prepare` script (`npm run build`: scripts/build.js, esbuild bundles). Nothing is
// compiled at start-up. After changing the sources, `npm run build` again, or run them directly with
// bin/helixd-dev.js (`npm run dev`).
import './check-node.js';
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('helixd: dist/ is not built: run `npm install` (or `npm run build`) first\n');
  process.exit(1);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv);
