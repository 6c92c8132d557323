// A webhook receiver for the EventSub tests: a plain node:http server that checks every message's
// signature with the published algorithm (HMAC-SHA256, keyed by the subscription's secret, of
// message id + timestamp + raw body), keeps the messages, and answers as the test says.

import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { eventType } from '../../src/eventsub/types.ts';

export const SECRET = 'webhook-secret-0123456789';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  json: {
    challenge?: string;
    subscription: { id: string; status: string; type: string };
    event?: Record<string, unknown>;
  };
}

/** What a receiver does with a message: its status and body (a promise: the answer is held until it settles). */
export type Answer = (
  m: Received,
) => { status: number; body?: string } | Promise<{ status: number; body?: string }>;

/** A webhook receiver on a free port: it checks each signature, keeps the messages and answers as told. */
export async function receiver(answer: Answer) {
  const messages: Received[] = [];
  const waiters: (() => void)[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      const h = req.headers;
      const expected = `sha256=${createHmac('sha256', SECRET)
        .update(`${h['twitch-eventsub-message-id']}${h['twitch-eventsub-message-timestamp']}${body}`)
        .digest('hex')}`;
      const given = String(h['twitch-eventsub-message-signature'] ?? '');
      if (given.length !== expected.length || !timingSafeEqual(Buffer.from(given), Buffer.from(expected))) {
        res.writeHead(403).end('bad signature');
        return;
      }
      const m = { path: req.url ?? '', headers: h, body, json: JSON.parse(body) };
      messages.push(m);
      for (const w of waiters.splice(0)) w();
      void Promise.resolve(answer(m)).then((a) =>
        res.writeHead(a.status, { 'content-type': 'text/plain' }).end(a.body ?? ''),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    messages,
    /** resolves with the messages once `n` have come to `path` (all of them, in order) */
    async wait(path: string, n: number, ms = 10_000): Promise<Received[]> {
      const deadline = Date.now() + ms;
      for (;;) {
        const mine = messages.filter((m) => m.path === path);
        if (mine.length >= n) return mine;
        if (Date.now() > deadline) assert.fail(`${path}: ${mine.length} of ${n} messages came`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 100);
        });
      }
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** Answers a verification with its challenge and every other message with `status`. */
export const verifyingThen =
  (status: number): Answer =>
  (m) =>
    m.json.challenge !== undefined ? { status: 200, body: m.json.challenge } : { status };

/** The helpers below drive a test app (test/support/apps.ts). */
type App = import('./apps.ts').TestApp;

/**
 * POST /helix/eventsub/subscriptions of a webhook subscription with the demo client's `appToken`
 * (the version the catalogue serves: src/eventsub/types.ts).
 */
export const postWebhookSubscription = (
  t: App,
  appToken: string,
  type: string,
  condition: Record<string, string>,
  callback: string,
) =>
  t.inject({
    method: 'POST',
    url: '/helix/eventsub/subscriptions',
    headers: {
      authorization: `Bearer ${appToken}`,
      'client-id': t.seed?.demoClientId ?? '',
      'content-type': 'application/json',
    },
    payload: JSON.stringify({
      type,
      version: eventType(type)?.version ?? '1',
      condition,
      transport: { method: 'webhook', callback, secret: SECRET },
    }),
  });

/** The status of subscription `id`, as GET /helix/eventsub/subscriptions shows it to `appToken`. */
export async function subscriptionStatus(t: App, appToken: string, id: string): Promise<string | undefined> {
  const res = await t.get(`/helix/eventsub/subscriptions?subscription_id=${id}`, {
    authorization: `Bearer ${appToken}`,
  });
  return res.json().data[0]?.status;
}
