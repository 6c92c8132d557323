// The main job through the real command line: `helixd serve` on an empty SQLite file seeds, prints
// a curl command that works as printed, stops on SIGINT with exit code 0, and serves the same data
// after a restart.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { HELIXD_DEV_BIN as BIN, type HelixdProcess, serveHelixd } from '../support/process.ts';

const run = promisify(execFile);
/** No drain: the test stops its server at once (test/cluster/shutdown.test.ts tests the drain). */
const startServe = (db: string) => serveHelixd(['--db', db, '--log-level', 'warn', '--drain', '0']);
/** Stops it as Ctrl-C does; its exit code. */
const stop = async (p: HelixdProcess) => (await p.stop('SIGINT')).code;

describe('helixd serve', () => {
  const dir = mkdtempSync(join(tmpdir(), 'helixd-serve-'));
  const db = join(dir, 'helixd.db');
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('seeds an empty store, prints a working curl, exits 0 on SIGINT and keeps its data', async () => {
    const first = await startServe(db);
    // The printed command, run exactly as printed (through a shell).
    const { stdout } = await run('sh', ['-c', `${first.curl} -s -w '\\n%{http_code}'`]);
    const [body, code] = stdout.trim().split('\n');
    assert.equal(code, '200');
    const games = JSON.parse(body as string);
    assert.ok(games.data.length > 0);
    const health = await fetch(`${first.url}/readyz`);
    assert.equal(health.status, 200);
    // With --port 0 the report URLs name the port actually served, and they download.
    const token = /Bearer (\w+)/.exec(first.curl)?.[1];
    const headers = {
      authorization: `Bearer ${token}`,
      'client-id': /Client-Id: (\w+)/.exec(first.curl)?.[1] as string,
    };
    const reports = await fetch(`${first.url}/helix/analytics/games`, { headers });
    assert.equal(reports.status, 200);
    const url = (await reports.json()).data[0].URL as string;
    assert.ok(url.startsWith(`${first.url}/reports/`), url);
    assert.equal((await fetch(url)).status, 200);
    // The banner's user token carries every scope the operations read: the user's own email, the
    // channel's follower list (not just its total) and the channels the user follows.
    const me = (await (await fetch(`${first.url}/helix/users`, { headers })).json()).data[0];
    assert.match(me.email, /@/);
    const followers = await fetch(`${first.url}/helix/channels/followers?broadcaster_id=${me.id}`, {
      headers,
    });
    assert.ok((await followers.json()).data.length > 0);
    const followed = await fetch(`${first.url}/helix/channels/followed?user_id=${me.id}`, { headers });
    assert.equal(followed.status, 200);
    assert.equal(await stop(first), 0);

    const second = await startServe(db);
    assert.doesNotMatch(second.out(), /seeding/);
    const { stdout: again } = await run('sh', ['-c', `${second.curl} -s`]);
    assert.deepEqual(JSON.parse(again).data, games.data);
    assert.equal(await stop(second), 0);
  });

  it('token prints a working token and fails clearly on an unknown user or scope', async () => {
    const { stdout } = await run(process.execPath, [BIN, 'token', '--db', db, '--app']);
    assert.match(stdout.trim(), /^[a-z0-9]{30}$/);
    await assert.rejects(
      run(process.execPath, [BIN, 'token', '--db', db, '--user', 'nobody_here']),
      (e: { code: number; stderr: string }) => e.code === 1 && /unknown user: nobody_here/.test(e.stderr),
    );
    await assert.rejects(
      run(process.execPath, [BIN, 'token', '--db', db, '--user', '41000021', '--scope', 'not:a:scope']),
      (e: { code: number; stderr: string }) => e.code === 1 && /unknown scope: not:a:scope/.test(e.stderr),
    );
  });
});
