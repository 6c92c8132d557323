// `npm run build` (and `npm install`, through `prepare`): src/ into dist/ as bundles, so that a start
// reads a handful of files instead of about 1,300 (most of a start-up was resolving and loading
// modules: bench/README.md, "Start-up"). Types are checked by `npm run typecheck`, not here.
//
// dist/ holds:
// - cli.js, what bin/helixd.js imports: src/cli.ts and everything it imports, the packages
//   included; the modules a command imports when it runs (src/cli.ts) are split into chunks beside
//   it, so that `--help` loads none of them;
// - seed/worker.js and io/worker.js, the modules of the two worker threads, each one bundle, with
//   the threads' entries (seed/worker-thread.js, io/worker-thread.js) and worker-entry.js copied as
//   they are: the entries choose between worker.ts (tsx, beside the sources) and worker.js.
//
// Left out of the bundles (loaded from node_modules when used): packages with native code
// (better-sqlite3; pg, whose optional pg-native is native), packages that read files of their own
// folder at run time (@fastify/swagger-ui serves Swagger UI's files from there), and the ones
// helixd loads with createRequire when first used (pg, ioredis), which a bundler does not follow.
//
// A module's `new URL('./file', import.meta.url)` names a file beside that module in src/; once the
// module is inside a bundle, import.meta.url is the bundle's, so the path is rewritten here to name
// the same file in dist/ (which mirrors src/) from the bundle's folder.
import { copyFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { build } from 'esbuild';

const ROOT = resolve(import.meta.dirname, '..');
const SRC = join(ROOT, 'src');
const DIST = join(ROOT, 'dist');

const EXTERNAL = ['better-sqlite3', 'pg', 'pg-native', 'ioredis', '@fastify/swagger-ui', 'tsx'];

/** Files copied unchanged: plain JavaScript that runs before anything is bundled or compiled. */
const COPIED = ['worker-entry.js', 'seed/worker-thread.js', 'io/worker-thread.js'];

const URL_BESIDE = /new URL\((['"])(\.{1,2}\/[^'"]+)\1,\s*import\.meta\.url\)/g;

/** Rewrites `new URL('./x', import.meta.url)` of src/ modules for bundles written into `outDir`. */
function urlsBeside(outDir) {
  return {
    name: 'urls-beside',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, (args) => {
        const text = readFileSync(args.path, 'utf8');
        if (!args.path.startsWith(SRC + sep) || !text.match(URL_BESIDE)) return undefined;
        const mirror = join(DIST, relative(SRC, dirname(args.path)));
        const contents = text.replace(URL_BESIDE, (_all, q, rel) => {
          let path = relative(outDir, join(mirror, rel)).split(sep).join('/');
          if (!path.startsWith('.')) path = `./${path}`;
          return `new URL(${q}${path}${q}, import.meta.url)`;
        });
        return { contents, loader: 'ts' };
      });
    },
  };
}

// Bundled CommonJS packages call require(); an ES module has none, so the bundle makes one.
const BANNER = [
  "import { createRequire as __helixdCreateRequire } from 'node:module';",
  'const require = __helixdCreateRequire(import.meta.url);',
].join('\n');

/** esbuild options shared by every bundle. */
const COMMON = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: EXTERNAL,
  banner: { js: BANNER },
  logLevel: 'warning',
  legalComments: 'none',
};

rmSync(DIST, { recursive: true, force: true });

await build({
  ...COMMON,
  entryPoints: { cli: join(SRC, 'cli.ts') },
  outdir: DIST,
  splitting: true,
  chunkNames: '[name]-[hash]',
  plugins: [urlsBeside(DIST)],
});

for (const folder of ['seed', 'io']) {
  const outDir = join(DIST, folder);
  await build({
    ...COMMON,
    entryPoints: { worker: join(SRC, folder, 'worker.ts') },
    outdir: outDir,
    plugins: [urlsBeside(outDir)],
  });
}

for (const file of COPIED) {
  mkdirSync(dirname(join(DIST, file)), { recursive: true });
  copyFileSync(join(SRC, file), join(DIST, file));
}
