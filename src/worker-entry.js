// How a worker thread's entry (src/seed/worker-thread.js, src/io/worker-thread.js) loads its worker
// module. A worker starts with no loader hooks (its callers pass execArgv: []), so:
// - run from dist/ (the compiled build bin/helixd.js starts), it loads the compiled worker.js: tsx
//   is a dev dependency, absent from an install without them, and never loaded there;
// - run beside the TypeScript sources (tests, `npm run dev`), it registers tsx first, as
//   bin/helixd-dev.js does for the main thread, then loads worker.ts.
// The module is found by its absolute URL, so that the build (which bundles worker.ts into
// worker.js) leaves the choice as written here. This file and the entries are plain JavaScript:
// nothing runs before them to compile TypeScript; scripts/build.js copies them into dist/ as they are.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Loads worker.ts (through tsx) or else worker.js from the folder of `entryUrl`. */
export async function loadWorker(entryUrl) {
  const source = new URL('./worker.ts', entryUrl);
  if (existsSync(fileURLToPath(source))) {
    const { register } = await import('tsx/esm/api');
    register();
    await import(source.href);
  } else {
    await import(new URL('./worker.js', entryUrl).href);
  }
}
