// The seeding worker's entry (src/seed/worker.ts): loads TypeScript through tsx, as bin/helixd.js
// does for the main thread, then runs the generator.
import { register } from 'tsx/esm/api';

register();
await import('./worker.ts');
