// A server stopping with a drain (src/cluster/shutdown.ts, src/eventsub/service.ts): when the drain
// begins every EventSub session is sent `session_reconnect`, so that its client moves on while this
// server still serves; here the only server left is this one, so the client's new socket is welcomed
// with the same session id, the old one closes 1000, and the new one is closed 1001 when the drain
// ends, before the stop resolves.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import WebSocket from 'ws';
import { loadConfig } from '../../src/config.ts';
import { startServer } from '../../src/server.ts';
import { freePort } from '../clients/twurple.ts';
import { forEachStore } from '../support/apps.ts';
import { cliDb, type StoreKind, tempStore } from '../support/stores.ts';

interface Opened {
  ws: WebSocket;
  messages: { metadata: { message_type: string }; payload: { session: Record<string, unknown> } }[];
  next(): Promise<Opened['messages'][number]>;
  closed: Promise<number>;
}

function open(url: string): Opened {
  const ws = new WebSocket(url);
  const messages: Opened['messages'] = [];
  const waiting: ((m: Opened['messages'][number]) => void)[] = [];
  ws.on('message', (d) => {
    const m = JSON.parse(String(d));
    messages.push(m);
    waiting.shift()?.(m);
  });
  let read = 0;
  return {
    ws,
    messages,
    next: () => {
      const m = messages[read];
      if (m) {
        read++;
        return Promise.resolve(m);
      }
      return new Promise((resolve) =>
        waiting.push((x) => {
          read++;
          resolve(x);
        }),
      );
    },
    closed: new Promise((resolve) => ws.on('close', (code) => resolve(code))),
  };
}

forEachStore('EventSub WebSocket when the server drains', (kind: StoreKind) => {
  it('asks the session to reconnect when the drain begins, then closes what is still open', async () => {
    const temp = await tempStore(kind);
    try {
      const db = cliDb({ url: temp.url, ...(temp.schema ? { schema: temp.schema } : {}) });
      const port = await freePort();
      const config = loadConfig(
        {
          db,
          port,
          host: '127.0.0.1',
          publicUrl: `http://127.0.0.1:${port}`,
          drain: '1s',
          logLevel: 'silent',
          users: 20,
          secret: 'test-secret-0123456789',
        },
        {},
      );
      const server = await startServer(config, () => {});
      const old = open(`ws://127.0.0.1:${port}/ws`);
      const welcome = await old.next();
      const id = String(welcome.payload.session.id);
      const stopped = server.stop({ drain: true });
      const reconnect = await old.next();
      assert.equal(reconnect.metadata.message_type, 'session_reconnect');
      assert.equal(reconnect.payload.session.id, id);
      const fresh = open(String(reconnect.payload.session.reconnect_url));
      const again = await fresh.next();
      assert.equal(again.metadata.message_type, 'session_welcome');
      assert.equal(again.payload.session.id, id);
      assert.equal(await old.closed, 1000);
      await stopped;
      assert.equal(await fresh.closed, 1001);
      const row = await temp.store.db
        .selectFrom('eventsub_sessions')
        .select('id')
        .where('id', '=', id)
        .executeTakeFirst();
      assert.equal(row, undefined);
    } finally {
      await temp.drop();
    }
  });
});
