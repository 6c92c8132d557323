// POST /clips with two instances of helixd on one store (one process each would do the same: their
// clip makers share nothing but the store and the server clock). A clip asked for through one
// instance is made by the other once it is due, also when the first has stopped before; clips asked
// for through both while both run are each made once, none lost to the race. Through HTTP, on both
// stores.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { CLIP_DELAY_MS } from '../../src/records/clip-jobs.ts';
import { openStore, type Store } from '../../src/store/db.ts';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import type { StoreKind } from '../support/stores.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

forEachStore('POST /clips: two instances on one store', (kind: StoreKind) => {
  let t: TestApp;
  let demo: number;
  let token: string;
  const others: { app: FastifyInstance; store: Store }[] = [];

  /** Another instance on the same store and clock. */
  async function another(): Promise<FastifyInstance> {
    const store = openStore(t.storeOptions);
    const app = await buildApp({
      config: t.config,
      store,
      clock: t.clock,
      secret: t.config.secret as string,
      logger: false,
    });
    others.push({ app, store });
    return app;
  }
  const headers = () => ({ ...bearer(token), 'client-id': t.seed?.demoClientId as string });
  const ask = async (app: FastifyInstance): Promise<string> => {
    const res = await app.inject({
      method: 'POST',
      url: `/helix/clips?broadcaster_id=${demo}`,
      headers: headers(),
    });
    assert.equal(res.statusCode, 202, res.body);
    return res.json().data[0].id;
  };
  /** The ids among `ids` that `app` lists. */
  const listedBy = async (app: FastifyInstance, ids: readonly string[]): Promise<string[]> => {
    const q = ids.map((id) => `id=${encodeURIComponent(id)}`).join('&');
    const res = await app.inject({ method: 'GET', url: `/helix/clips?${q}`, headers: headers() });
    assert.equal(res.statusCode, 200, res.body);
    return (res.json().data as { id: string }[]).map((c) => c.id);
  };
  /** Waits (real time: the makers' next looks at the store) until `app` lists every one of `ids`. */
  const allListed = async (app: FastifyInstance, ids: readonly string[]): Promise<void> => {
    for (let i = 0; i < 200; i++) {
      if ((await listedBy(app, ids)).length === ids.length) return;
      await sleep(50);
    }
    assert.deepEqual(await listedBy(app, ids), ids, 'every clip listed after 10 s');
  };

  before(async () => {
    t = await startTestApp(kind, { users: 30 });
    demo = t.seed?.demoUserId as number;
    token = await t.userToken(['clips:edit']);
  });
  after(async () => {
    for (const o of others) {
      await o.app.close();
      await o.store.close();
    }
    await t.close();
  });

  it('a clip asked for through an instance that then stops is made by the other', async () => {
    const first = await another();
    const id = await ask(first);
    // Stopped before its clip is due: its maker never makes it.
    await first.close();
    assert.deepEqual(await listedBy(t.app, [id]), [], 'not due yet');
    t.clock.advance(CLIP_DELAY_MS);
    await allListed(t.app, [id]);
  });

  it('clips asked for through both while both run are each made once, by one or the other', async () => {
    const second = await another();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push(await ask(i % 2 ? second : t.app));
    assert.equal(new Set(ids).size, 10);
    t.clock.advance(CLIP_DELAY_MS);
    await allListed(second, ids);
    assert.deepEqual((await listedBy(t.app, ids)).sort(), [...ids].sort(), 'the same clips in both');
    // Nothing of them waits any more, and no clip was made twice (nor refused for being made twice).
    assert.equal((await t.store.db.selectFrom('clip_jobs').select('id').execute()).length, 0);
    const rows = await t.store.db.selectFrom('clips').select('id').where('id', 'in', ids).execute();
    assert.equal(rows.length, 10);
  });
});
