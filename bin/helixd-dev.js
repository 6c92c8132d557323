#!/usr/bin/env node
// The command run from the TypeScript sources through tsx (a dev dependency): `npm run dev`, and
// the tests that start helixd as a process, so that they never run a dist/ older than the sources.
// bin/helixd.js is the compiled command.
import './check-node.js';
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/index.ts');
process.exitCode = await main(process.argv);
