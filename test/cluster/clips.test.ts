// POST /clips under `helixd serve --workers 2`, through the real program, on both stores: the worker
// that answered the request is killed (SIGKILL: no stop, no hand-over) before the clip is due, and
// the other worker makes the clip from the row the request left in the store; GET /clips lists it
// once, created by the token's user, whichever worker answers. The server clock runs at real speed:
// the clip is due CLIP_DELAY_MS after the request.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { CLIP_DELAY_MS } from '../../src/records/clip-jobs.ts';
import { forEachStore } from '../support/apps.ts';
import { request } from '../support/http.ts';
import type { StoreKind } from '../support/stores.ts';
import { pidsOf, serveOnTempStore, sleep, spread } from './served.ts';

forEachStore('POST /clips under serve --workers 2', (kind: StoreKind) => {
  let s: Awaited<ReturnType<typeof serveOnTempStore>>;
  let auth: Record<string, string>;
  let demo: string;

  before(async () => {
    s = await serveOnTempStore(kind, ['--workers', '2', '--drain', '0s'], 2);
    // The banner's user token (every operation's scopes, clips:edit among them) of the demo
    // broadcaster, who is live.
    auth = { authorization: `Bearer ${s.banner('user token')}`, 'client-id': s.clientId };
    demo = /\(\w+, id (\d+);/.exec(s.out())?.[1] ?? '';
    assert.ok(demo, 'the banner names the demo broadcaster');
  });
  after(() => s?.stop());

  it('a clip asked for through a worker killed at once is made by the other, once', async () => {
    const started = Date.now();
    const res = await request(s.port, `/helix/clips?broadcaster_id=${demo}`, {
      method: 'POST',
      headers: { ...auth, 'x-request-id': 'clip-asked' },
    });
    assert.equal(res.status, 202, res.body);
    const id = JSON.parse(res.body).data[0].id as string;
    const asked = (await pidsOf(s, /^clip-asked$/, 1)).get('clip-asked') as number;
    assert.ok(asked, 'the log names the worker that answered');
    process.kill(asked, 'SIGKILL');
    assert.ok(Date.now() - started < CLIP_DELAY_MS, 'killed before the clip was due');

    const byId = `/helix/clips?id=${encodeURIComponent(id)}`;
    const first = await request(s.port, byId, { headers: auth });
    assert.deepEqual(JSON.parse(first.body).data, [], 'not listed before its delay');
    let found: { id: string; creator_id: string; broadcaster_id: string }[] = [];
    for (let i = 0; i < 300 && found.length === 0; i++) {
      await sleep(100);
      const a = await request(s.port, byId, { headers: auth });
      if (a.status === 200) found = JSON.parse(a.body).data;
    }
    assert.equal(found.length, 1, 'listed within 30 s');
    assert.ok(Date.now() - started >= CLIP_DELAY_MS, 'not before its delay');
    assert.equal(found[0]?.creator_id, demo);
    assert.equal(found[0]?.broadcaster_id, demo);
    // Every worker now serving (the other, and the one in place of the killed) lists it, once.
    const { answers, pids } = await spread(s, byId, { headers: auth });
    assert.ok(!pids.has(asked));
    for (const a of answers) assert.equal(JSON.parse(a.body).data.length, 1, a.body);
  });
});
