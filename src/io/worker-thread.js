// The import worker's entry (src/io/worker.ts): loads TypeScript through tsx, as bin/helixd.js
// does for the main thread, then prepares the records.
import { register } from 'tsx/esm/api';

register();
await import('./worker.ts');
