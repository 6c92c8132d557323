// An EventSub webhook receiver in plain node:http that checks every message's signature as the
// platform publishes it: HMAC-SHA256, keyed by the subscription's secret, of the message id, the
// timestamp and the raw body. It answers the verification with its challenge, then receives the
// stream.online of a stream that a trigger writes (POST /admin/eventsub/trigger).
//   HELIXD_URL          default http://127.0.0.1:8080 (a development-profile helixd)
//   HELIXD_ADMIN_TOKEN  the server's --admin-token
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

const base = process.env.HELIXD_URL ?? 'http://127.0.0.1:8080';
const secret = 'a-secret-of-10-to-100-characters';

let done;
const notified = new Promise((resolve) => (done = resolve));
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString();
    const id = req.headers['twitch-eventsub-message-id'];
    const timestamp = req.headers['twitch-eventsub-message-timestamp'];
    const expected = `sha256=${createHmac('sha256', secret)
      .update(id + timestamp + body)
      .digest('hex')}`;
    const given = String(req.headers['twitch-eventsub-message-signature']);
    if (given.length !== expected.length || !timingSafeEqual(Buffer.from(given), Buffer.from(expected))) {
      res.writeHead(403).end();
      return;
    }
    const message = JSON.parse(body);
    switch (req.headers['twitch-eventsub-message-type']) {
      case 'webhook_callback_verification':
        res.writeHead(200, { 'content-type': 'text/plain' }).end(message.challenge);
        console.log(`verified: ${message.subscription.type}`);
        return;
      case 'notification':
        res.writeHead(204).end();
        done(message);
        return;
      default:
        res.writeHead(204).end();
    }
  });
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const callback = `http://127.0.0.1:${server.address().port}/eventsub`;

// An app token of the demo client; a user that is not live.
const [demo] = (await (await fetch(`${base}/units/clients`)).json()).data;
const token = await (
  await fetch(`${base}/oauth2/token`, {
    method: 'POST',
    body: new URLSearchParams({
      client_id: demo.ID,
      client_secret: demo.Secret,
      grant_type: 'client_credentials',
    }),
  })
).json();
const helix = { authorization: `Bearer ${token.access_token}`, 'client-id': demo.ID };
const { data: users } = await (await fetch(`${base}/units/users?first=100`)).json();
const { data: live } = await (await fetch(`${base}/helix/streams?first=100`, { headers: helix })).json();
const user = users.find((u) => !live.some((s) => s.user_id === u.id));

const created = await fetch(`${base}/helix/eventsub/subscriptions`, {
  method: 'POST',
  headers: { ...helix, 'content-type': 'application/json' },
  body: JSON.stringify({
    type: 'stream.online',
    version: '1',
    condition: { broadcaster_user_id: user.id },
    transport: { method: 'webhook', callback, secret },
  }),
});
const {
  data: [subscription],
} = await created.json();
// Verified once the callback answered its challenge.
while (
  (
    await (
      await fetch(`${base}/helix/eventsub/subscriptions?subscription_id=${subscription.id}`, {
        headers: helix,
      })
    ).json()
  ).data[0].status !== 'enabled'
)
  await new Promise((resolve) => setTimeout(resolve, 50));

await fetch(`${base}/admin/eventsub/trigger`, {
  method: 'POST',
  headers: { authorization: `Bearer ${process.env.HELIXD_ADMIN_TOKEN}`, 'content-type': 'application/json' },
  body: JSON.stringify({ type: 'stream.online', broadcaster_id: user.id }),
});
const { event } = await notified;
console.log(`notification: ${event.broadcaster_user_login} is live, stream ${event.id}, signature checked`);
server.close();
