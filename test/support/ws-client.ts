// A raw EventSub WebSocket client for the tests (the `ws` library, nothing of helixd's): every
// message it received, the next one of a type, and how the socket closed. Clients that misbehave
// on purpose (no pong, no reading) are made from its options and its socket.
import assert from 'node:assert/strict';
import WebSocket from 'ws';

// biome-ignore lint/suspicious/noExplicitAny: messages are checked field by field
export type Message = { metadata: Record<string, string>; payload: any };

export interface Client {
  ws: WebSocket;
  /** every message received so far */
  all: Message[];
  /** the next message of `type` (others before it are skipped) */
  next(type: string, timeoutMs?: number): Promise<Message>;
  closed: Promise<{ code: number; reason: string }>;
}

/** Opens `url`; `options` go to `ws` (`{autoPong: false}`: a client that never answers a ping). */
export function connect(url: string, options: WebSocket.ClientOptions = {}): Promise<Client> {
  const ws = new WebSocket(url, options);
  const all: Message[] = [];
  let read = 0;
  const waiters = new Set<() => void>();
  ws.on('message', (data) => {
    all.push(JSON.parse(String(data)) as Message);
    for (const w of waiters) w();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
  );
  const client: Client = {
    ws,
    all,
    closed,
    next(type, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          while (read < all.length) {
            const m = all[read++] as Message;
            if (m.metadata.message_type === type) {
              waiters.delete(check);
              clearTimeout(timer);
              resolve(m);
              return;
            }
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no ${type} within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(client));
    ws.once('error', reject);
  });
}

/** Waits until `ok()` holds, checking every 20 ms for at most `ms`; fails naming `what`. */
export async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 20)))
    if (await ok()) return;
  assert.fail(`${what} within ${ms} ms`);
}
