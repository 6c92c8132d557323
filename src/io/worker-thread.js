// The import worker's entry: prepares the records (src/io/worker.ts), compiled or through tsx
// (src/worker-entry.js says which).
import { loadWorker } from '../worker-entry.js';

await loadWorker(import.meta.url);
