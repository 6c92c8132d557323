// A server stopping with an EventSub WebSocket open (src/server.ts, src/cluster/shutdown.ts): the
// session is closed (1001) once the drain is over, before the listener closes, so the stop waits
// for no socket; its row goes and its subscriptions end, before the store closes.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import WebSocket from 'ws';
import { loadConfig } from '../../src/config.ts';
import { startServer } from '../../src/server.ts';
import { forEachStore } from '../support/apps.ts';
import { cliDb, type StoreKind, tempStore } from '../support/stores.ts';

forEachStore('EventSub WebSocket when the server stops', (kind: StoreKind) => {
  it('closes the session with 1001 and ends its row before the stop resolves', async () => {
    const temp = await tempStore(kind);
    try {
      const db = cliDb({ url: temp.url, ...(temp.schema ? { schema: temp.schema } : {}) });
      const config = loadConfig(
        { db, port: 0, host: '127.0.0.1', logLevel: 'silent', users: 20, secret: 'test-secret-0123456789' },
        {},
      );
      const server = await startServer(config, () => {});
      const ws = new WebSocket(`${server.url.replace(/^http/, 'ws')}/ws`);
      const events: string[] = [];
      const closed = new Promise<number>((resolve) =>
        ws.on('close', (code) => {
          events.push('closed');
          resolve(code);
        }),
      );
      const welcome = await new Promise<{ payload: { session: { id: string } } }>((resolve) =>
        ws.once('message', (d) => resolve(JSON.parse(String(d)))),
      );
      const id = welcome.payload.session.id;
      const row = () =>
        temp.store.db.selectFrom('eventsub_sessions').select('id').where('id', '=', id).executeTakeFirst();
      assert.ok(await row());
      await server.stop();
      events.push('stopped');
      assert.equal(await closed, 1001);
      assert.deepEqual(events, ['closed', 'stopped']);
      assert.equal(await row(), undefined);
    } finally {
      await temp.drop();
    }
  });
});
