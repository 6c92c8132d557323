// Tokens and user names are kept in memory once read (src/store/cache.ts). These rules say that
// the copies never outlive the store's data: a revocation or a rename here, and an expiry, take
// effect on the very next request; through another instance or connection on the same store, on
// the first request CHANGE_CHECK_MS after it (src/store/db.ts; `changeSeen` waits that long).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { sql } from 'kysely';
import { buildApp } from '../../src/app.ts';
import { openStore } from '../../src/store/db.ts';
import { bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { parse, value } from '../support/prometheus.ts';
import { changeSeen } from '../support/stores.ts';

forEachStore('in-memory copies of the store', (kind) => {
  let t: TestApp;
  let client: { id: string; secret: string };
  before(async () => {
    t = await startTestApp(kind);
    const units = (await t.get('/units/clients')).json();
    client = { id: units.data[0].ID, secret: units.data[0].Secret };
    assert.equal(client.id, t.seed?.demoClientId);
  });
  after(() => t.close());

  /** An authorized request to `app` (this test's app unless another instance is given). */
  const call = (token: string, app: TestApp['app'] = t.app) =>
    app.inject({
      method: 'GET',
      url: '/helix/games/top?first=1',
      // inject adds no header; every token here is the demo client's (asserted in before())
      headers: { ...bearer(token), 'client-id': client.id },
    });

  /** A user token and its refresh token, minted through the token service. */
  async function mint(): Promise<{ access_token: string; refresh_token: string }> {
    const res = await t.inject({
      method: 'POST',
      url: '/auth/authorize',
      payload: new URLSearchParams({
        client_id: client.id,
        client_secret: client.secret,
        grant_type: 'user_token',
        user_id: String(t.seed?.demoUserId),
      }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  }

  const revoke = (app: TestApp['app'], token: string) =>
    app.inject({ method: 'POST', url: `/oauth2/revoke?client_id=${client.id}&token=${token}` });

  it('a token used and then revoked by its refresh token fails on the next request', async () => {
    const m = await mint();
    assert.equal((await call(m.access_token)).statusCode, 200);
    assert.equal((await call(m.access_token)).statusCode, 200);
    assert.equal((await revoke(t.app, m.refresh_token)).statusCode, 200);
    const res = await call(m.access_token);
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), { error: 'Unauthorized', status: 401, message: 'Invalid OAuth token' });
  });

  it('a write that changes no row keeps the copies; one that changes a row empties them', async () => {
    // The token's lookups, as /metrics counts them: a hit is a token found in memory.
    const lookups = async () => {
      const samples = parse((await t.get('/metrics')).body);
      const of = (result: string) => value(samples, 'helixd_token_cache_lookups_total', { result });
      return { hit: of('hit'), miss: of('miss') };
    };
    const token = await t.appToken();
    assert.equal((await call(token)).statusCode, 200);
    const seen = await lookups();
    // EventSub's housekeeping writes so every 10 s: a transaction whose delete finds nothing.
    await t.store.db
      .transaction()
      .execute((trx) =>
        trx.deleteFrom('eventsub_subscriptions').where('id', '=', 'no-such-subscription').execute(),
      );
    assert.equal((await call(token)).statusCode, 200);
    const kept = await lookups();
    // PostgreSQL keeps no copies: every lookup reads the store.
    const one = kind === 'sqlite' ? { hit: 1, miss: 0 } : { hit: 0, miss: 1 };
    assert.deepEqual({ hit: kept.hit - seen.hit, miss: kept.miss - seen.miss }, one);
    // A row changed (the demo user renamed): the copies go, and the token is read again.
    await rename(t.store.db, 'RenamedForNothing');
    assert.equal((await call(token)).statusCode, 200);
    const emptied = await lookups();
    assert.deepEqual({ hit: emptied.hit - kept.hit, miss: emptied.miss - kept.miss }, { hit: 0, miss: 1 });
  });

  it('a write that fails after writing rows empties the copies', async () => {
    const misses = async () =>
      value(parse((await t.get('/metrics')).body), 'helixd_token_cache_lookups_total', { result: 'miss' });
    const token = await t.appToken();
    assert.equal((await call(token)).statusCode, 200);
    const before = await misses();
    // Two users, the second with the demo user's id: on SQLite, OR FAIL stops at the second row and
    // keeps the first (PostgreSQL has no such clause: its insert writes neither).
    const newcomer = 990_000_002;
    const row = (id: number) => sql`(${id}, ${`newcomer${id}`}, 'Newcomer', '', '', 1700000000, '')`;
    const insert = kind === 'sqlite' ? sql`insert or fail into users` : sql`insert into users`;
    await assert.rejects(
      sql`${insert} (id, login, display_name, broadcaster_type, description, created_at, email)
        values ${row(newcomer)}, ${row(t.seed?.demoUserId as number)}`.execute(t.store.db),
    );
    const kept = await t.store.db.selectFrom('users').select('id').where('id', '=', newcomer).execute();
    assert.equal(kept.length, kind === 'sqlite' ? 1 : 0);
    assert.equal((await call(token)).statusCode, 200);
    assert.equal((await misses()) - before, 1);
  });

  it('a token used before it expires fails once the clock passes its expiry', async () => {
    const token = await t.appToken(60);
    assert.equal((await call(token)).statusCode, 200);
    t.clock.advance(59_000);
    assert.equal((await call(token)).statusCode, 200);
    t.clock.advance(1_000);
    assert.equal((await call(token)).statusCode, 401);
  });

  it('a token revoked through another instance on the same store fails here once the change is seen', async () => {
    const other = openStore(t.storeOptions);
    const second = await buildApp({
      config: t.config,
      store: other,
      clock: t.clock,
      secret: t.config.secret as string,
      logger: false,
    });
    try {
      const m = await mint();
      assert.equal((await call(m.access_token)).statusCode, 200);
      assert.equal((await call(m.access_token, second)).statusCode, 200);
      assert.equal((await revoke(second, m.access_token)).statusCode, 200);
      // the instance that revoked it refuses it at once: its own write
      assert.equal((await call(m.access_token, second)).statusCode, 401);
      await changeSeen();
      assert.equal((await call(m.access_token)).statusCode, 401);
      // and the other way round
      const n = await mint();
      assert.equal((await call(n.access_token, second)).statusCode, 200);
      assert.equal((await call(n.access_token)).statusCode, 200);
      assert.equal((await revoke(t.app, n.access_token)).statusCode, 200);
      await changeSeen();
      assert.equal((await call(n.access_token, second)).statusCode, 401);
    } finally {
      await second.close();
      await other.close();
    }
  });

  it('a token whose row another process deletes fails here once the change is seen', async () => {
    const token = await t.appToken();
    assert.equal((await call(token)).statusCode, 200);
    const other = openStore(t.storeOptions);
    try {
      await other.db.deleteFrom('tokens').execute();
    } finally {
      await other.close();
    }
    await changeSeen();
    assert.equal((await call(token)).statusCode, 401);
  });

  /**
   * The names /clips shows for the demo broadcaster's first clip. The token is minted beforehand:
   * minting is a write of this process, which would itself empty the copies.
   */
  async function clipNames(token: string): Promise<{ broadcaster_name: string; creator_name: string }> {
    const res = await t.get(`/helix/clips?broadcaster_id=${t.seed?.demoUserId}&first=1`, bearer(token));
    assert.equal(res.statusCode, 200, res.body);
    return res.json().data[0];
  }

  const rename = (db: TestApp['store']['db'], name: string) =>
    db
      .updateTable('users')
      .set({ display_name: name })
      .where('id', '=', t.seed?.demoUserId as number)
      .execute();

  it('a user renamed through another connection shows the new name once the change is seen', async () => {
    const token = await t.appToken();
    const before = await clipNames(token);
    assert.notEqual(before.broadcaster_name, 'RenamedElsewhere');
    assert.equal((await clipNames(token)).broadcaster_name, before.broadcaster_name);
    const other = openStore(t.storeOptions);
    try {
      await rename(other.db, 'RenamedElsewhere');
    } finally {
      await other.close();
    }
    await changeSeen();
    assert.equal((await clipNames(token)).broadcaster_name, 'RenamedElsewhere');
  });

  it("a user renamed through this process's own connection shows the new name on the next request", async () => {
    const token = await t.appToken();
    await clipNames(token);
    await rename(t.store.db, 'RenamedHere');
    assert.equal((await clipNames(token)).broadcaster_name, 'RenamedHere');
  });
  it('a user who does not exist yet is named once the change that creates them elsewhere is seen', async () => {
    // Nothing ties a clip's broadcaster to a user row; the name is "" until the user exists. The
    // copy keeps "no such user" too, and must forget it like any other entry.
    const ghost = 990_000_001;
    await t.store.db
      .insertInto('clips')
      .values({
        id: 'GhostBroadcasterClip',
        broadcaster_id: ghost,
        creator_id: ghost,
        video_id: null,
        game_id: 1,
        language: 'en',
        title: 'A clip of nobody yet',
        view_count: 1,
        created_at: 1_700_000_000,
        duration_ds: 300,
        vod_offset: null,
        is_featured: 0,
      })
      .execute();
    const token = await t.appToken();
    const names = async () => {
      const res = await t.get(`/helix/clips?broadcaster_id=${ghost}`, bearer(token));
      assert.equal(res.statusCode, 200, res.body);
      const [clip] = res.json().data;
      return [clip.broadcaster_name, clip.creator_name];
    };
    assert.deepEqual(await names(), ['', '']);
    assert.deepEqual(await names(), ['', '']);
    const other = openStore(t.storeOptions);
    try {
      await other.db
        .insertInto('users')
        .values({
          id: ghost,
          login: 'arrivedlater',
          display_name: 'ArrivedLater',
          broadcaster_type: '',
          description: '',
          created_at: 1_700_000_000,
          email: '',
        })
        .execute();
    } finally {
      await other.close();
    }
    await changeSeen();
    assert.deepEqual(await names(), ['ArrivedLater', 'ArrivedLater']);
  });
});
