// The Node.js versions helixd runs on (package.json engines): 22.14 and later. An older Node would
// install with no more than a warning, then crash in better-sqlite3 (it needs Node-API 10, new in
// 22.14) or fail on a missing API: say so plainly instead, before anything else loads.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 14)) {
  process.stderr.write(
    `helixd: needs Node.js 22.14 or later (22 or 24); this is Node.js ${process.versions.node}\n`,
  );
  process.exit(1);
}
