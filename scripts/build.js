// `npm run build` (and `npm install`, through `prepare`): src/ into dist/ as bundles, so that a start
// reads a handful of files instead of about 1,300 (most of a start-up was resolving and loading
// modules: bench/README.md, "Start-up"). Types are checked by `npm run typecheck`, not here.
//
// dist/ holds:
// - cli.js, what bin/helixd.js imports: src/cli/index.ts and everything it imports, the packages
//   included; the modules a command imports when it runs (src/cli/) are split into chunks beside
//   it, so that `--help` loads none of them;
// - seed/worker.js and io/worker.js, the modules of the two worker threads, each one bundle, with
//   the threads' entries (seed/worker-thread.js, io/worker-thread.js) and worker-entry.js copied as
//   they are: the entries choose between worker.ts (tsx, beside the sources) and worker.js.
//
// Left out of the bundles (loaded from node_modules when used): packages with native code
// (better-sqlite3; pg, whose optional pg-native is native) and the ones helixd loads with
// createRequire when first used (pg, ioredis), which a bundler does not follow.
//
// A bundled package that reads files of its own folder at run time (@fastify/swagger-ui serves
// Swagger UI's files and reads its logo) has those files copied into dist/<package>/, and its
// `__dirname` (which an ES module has not) rewritten to name its folder's mirror there.
//
// A module's `new URL('./file', import.meta.url)` names a file beside that module in src/; once the
// module is inside a bundle, import.meta.url is the bundle's, so the path is rewritten here to name
// the same file in dist/ (which mirrors src/) from the bundle's folder.
import { copyFileSync, cpSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { build } from 'esbuild';

const ROOT = resolve(import.meta.dirname, '..');
const SRC = join(ROOT, 'src');
const DIST = join(ROOT, 'dist');

const EXTERNAL = ['better-sqlite3', 'pg', 'pg-native', 'ioredis', 'tsx'];

/** Bundled packages that read files of their own folder: the folders copied into dist/<package>/. */
const OWN_FILES = { '@fastify/swagger-ui': ['static'] };

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

/**
 * Rewrites `__dirname` in the modules of the OWN_FILES packages, for bundles written into `outDir`:
 * the module's folder within its package, under dist/<package>/.
 */
function ownFiles(outDir) {
  return {
    name: 'own-files',
    setup(b) {
      b.onLoad({ filter: /\.js$/ }, (args) => {
        const pkg = Object.keys(OWN_FILES).find((name) =>
          args.path.includes(`${sep}node_modules${sep}${name.split('/').join(sep)}${sep}`),
        );
        if (pkg === undefined) return undefined;
        const root = args.path.slice(0, args.path.lastIndexOf(`${sep}node_modules${sep}`));
        const inPackage = relative(join(root, 'node_modules', pkg), dirname(args.path));
        const mirror = relative(outDir, join(DIST, pkg, inPackage))
          .split(sep)
          .join('/');
        // through the banner's helper: import.meta in a CommonJS module would make esbuild read
        // it as an ES module
        const dir = `__helixdBeside(${JSON.stringify(`./${mirror}/`)})`;
        const text = readFileSync(args.path, 'utf8');
        return { contents: text.replace(/\b__dirname\b/g, dir), loader: 'js' };
      });
    },
  };
}

// Bundled CommonJS packages call require(); an ES module has none, so the bundle makes one.
// __helixdBeside: the path of a file or folder named relative to the bundle (see ownFiles).
const BANNER = [
  "import { createRequire as __helixdCreateRequire } from 'node:module';",
  "import { fileURLToPath as __helixdFileURLToPath } from 'node:url';",
  'const require = __helixdCreateRequire(import.meta.url);',
  'const __helixdBeside = (path) => __helixdFileURLToPath(new URL(path, import.meta.url));',
].join('\n');

/** esbuild options shared by every bundle. */
const COMMON = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  external: EXTERNAL,
  banner: { js: BANNER },
  logLevel: 'warning',
  legalComments: 'none',
};

rmSync(DIST, { recursive: true, force: true });

await build({
  ...COMMON,
  entryPoints: { cli: join(SRC, 'cli', 'index.ts') },
  outdir: DIST,
  splitting: true,
  chunkNames: '[name]-[hash]',
  plugins: [urlsBeside(DIST), ownFiles(DIST)],
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

for (const [pkg, folders] of Object.entries(OWN_FILES)) {
  const from = dirname(createRequire(import.meta.url).resolve(`${pkg}/package.json`));
  for (const folder of folders) cpSync(join(from, folder), join(DIST, pkg, folder), { recursive: true });
}

for (const file of COPIED) {
  mkdirSync(dirname(join(DIST, file)), { recursive: true });
  copyFileSync(join(SRC, file), join(DIST, file));
}
