// The seeding worker's entry: runs the generator (src/seed/worker.ts), compiled or through tsx
// (src/worker-entry.js says which).
import { loadWorker } from '../worker-entry.js';

await loadWorker(import.meta.url);
