// Events on demand: POST /admin/eventsub/trigger and `helixd event trigger` make an event by writing
// the change that causes it, so the notification and the read API agree (a follow trigger writes a
// follow, which GET /channels/followers lists). Received here through a webhook; the command writes
// to the store from outside the serving app, which finds the event in its outbox.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { ADMIN_TOKEN, bearer, forEachStore, startTestApp, type TestApp } from '../support/apps.ts';
import { helixd } from '../support/cli.ts';
import { cliDb, type StoreKind } from '../support/stores.ts';
import { postWebhookSubscription, receiver, subscriptionStatus, verifyingThen } from '../support/webhooks.ts';

const CASTER = '996200';
const GIFTER = '996201';

forEachStore('EventSub triggers', (kind: StoreKind) => {
  let t: TestApp;
  let appToken: string;
  let hooks: Awaited<ReturnType<typeof receiver>>;
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
  const triggered = (body: unknown) =>
    t.inject({
      method: 'POST',
      url: '/admin/eventsub/trigger',
      headers: admin,
      payload: JSON.stringify(body),
    });
  /** the notifications `path` received, once there are `n` (verifications left out) */
  const events = async (path: string, n: number) => {
    const notes = () =>
      hooks.messages.filter(
        (m) => m.path === path && m.headers['twitch-eventsub-message-type'] === 'notification',
      );
    for (let i = 0; i < 400 && notes().length < n; i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal(notes().length, n, `${path}: notifications`);
    return notes().map((m) => ({
      type: m.headers['twitch-eventsub-subscription-type'],
      event: m.json.event as Record<string, unknown>,
    }));
  };
  const subscribe = async (type: string, condition: Record<string, string>, path: string) => {
    const res = await postWebhookSubscription(t, appToken, type, condition, hooks.url(path));
    assert.equal(res.statusCode, 202, res.body);
    const id = res.json().data[0].id;
    for (let i = 0; i < 200; i++) {
      if ((await subscriptionStatus(t, appToken, id)) === 'enabled') return;
      await new Promise((r) => setTimeout(r, 25));
    }
    assert.fail(`${type} was not verified`);
  };

  before(async () => {
    t = await startTestApp(kind, { users: 20, config: { adminToken: ADMIN_TOKEN } });
    appToken = await t.appToken();
    hooks = await receiver(verifyingThen(204));
    for (const [id, login] of [
      [CASTER, 'triggered'],
      [GIFTER, 'giver'],
    ]) {
      const res = await t.inject({
        method: 'POST',
        url: '/admin/users',
        headers: admin,
        payload: JSON.stringify({
          id,
          login,
          display_name: login,
          broadcaster_type: '',
          description: '',
          created_at: '2024-01-01T00:00:00Z',
          email: `${login}@example.com`,
        }),
      });
      assert.equal(res.statusCode, 201, res.body);
    }
    // The channel authorized the client for its subscriptions and followers (the 403 otherwise).
    await t.userToken(['channel:read:subscriptions', 'moderator:read:followers'], Number(CASTER));
    await subscribe('channel.follow', { broadcaster_user_id: CASTER, moderator_user_id: CASTER }, '/follow');
    await subscribe('stream.online', { broadcaster_user_id: CASTER }, '/stream');
    await subscribe('stream.offline', { broadcaster_user_id: CASTER }, '/stream');
    await subscribe('channel.subscription.gift', { broadcaster_user_id: CASTER }, '/subs');
    await subscribe('channel.subscribe', { broadcaster_user_id: CASTER }, '/subs');
    await subscribe('user.update', { user_id: GIFTER }, '/user');
    await subscribe('channel.update', { broadcaster_user_id: CASTER }, '/channel');
  });
  after(async () => {
    await t.close();
    await hooks.close();
  });

  it('a channel.follow trigger writes a follow of a drawn user, which the notification and GET /channels/followers agree on', async () => {
    const res = await triggered({ type: 'channel.follow', broadcaster_id: CASTER });
    assert.equal(res.statusCode, 201, res.body);
    const written = res.json().written;
    assert.equal(written.length, 1);
    assert.equal(written[0].kind, 'follow');
    const follower = written[0].data.user_id;
    const [got] = await events('/follow', 1);
    assert.equal(got?.event.user_id, follower);
    assert.equal(got?.event.broadcaster_user_id, CASTER);
    const token = await t.userToken(['moderator:read:followers'], Number(CASTER));
    const list = await t.get(`/helix/channels/followers?broadcaster_id=${CASTER}`, bearer(token));
    assert.deepEqual(
      list.json().data.map((f: { user_id: string }) => f.user_id),
      [follower],
    );
  });

  it('stream.online writes a stream and stream.offline deletes it; GET /streams follows', async () => {
    const on = await triggered({ type: 'stream.online', broadcaster_id: CASTER });
    assert.equal(on.statusCode, 201, on.body);
    const streamId = on.json().written[0].data.id;
    const live = await t.get(`/helix/streams?user_id=${CASTER}`, bearer(appToken));
    assert.deepEqual(
      live.json().data.map((s: { id: string }) => s.id),
      [streamId],
    );
    const off = await triggered({ type: 'stream.offline', broadcaster_id: CASTER });
    assert.equal(off.statusCode, 201, off.body);
    assert.deepEqual(off.json().deleted, [{ kind: 'stream', key: [streamId] }]);
    const got = await events('/stream', 2);
    assert.deepEqual(
      got.map((g) => [g.type, g.event.id ?? null]),
      [
        ['stream.online', streamId],
        ['stream.offline', null],
      ],
    );
    assert.deepEqual((await t.get(`/helix/streams?user_id=${CASTER}`, bearer(appToken))).json().data, []);
    // Nothing to end now: a 404 that says so, and nothing is sent.
    const again = await triggered({ type: 'stream.offline', broadcaster_id: CASTER });
    assert.equal(again.statusCode, 404);
    assert.match(again.json().message, /^broadcaster_id: 996200 is not live$/);
  });

  it("channel.update writes the channel's new title, which the notification and GET /channels agree on; a stream.online then goes live with it", async () => {
    const sent = () =>
      hooks.messages.filter(
        (m) => m.path === '/channel' && m.headers['twitch-eventsub-message-type'] === 'notification',
      ).length;
    // A stream that went live earlier gave the channel its game: that change was an event too.
    for (let i = 0; i < 40 && sent() === 0; i++) await new Promise((r) => setTimeout(r, 25));
    const before = sent();
    const res = await triggered({ type: 'channel.update', broadcaster_id: CASTER, title: 'Triggered title' });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().written[0].kind, 'channel');
    const got = (await events('/channel', before + 1)).at(-1);
    assert.equal(got?.type, 'channel.update');
    assert.equal(got?.event.title, 'Triggered title');
    assert.equal(got?.event.broadcaster_user_id, CASTER);
    const channel = (await t.get(`/helix/channels?broadcaster_id=${CASTER}`, bearer(appToken))).json()
      .data[0];
    assert.deepEqual([channel.title, channel.game_id], ['Triggered title', got?.event.category_id]);
    const on = await triggered({ type: 'stream.online', broadcaster_id: CASTER });
    assert.equal(on.statusCode, 201, on.body);
    const stream = (await t.get(`/helix/streams?user_id=${CASTER}`, bearer(appToken))).json().data[0];
    assert.deepEqual([stream.title, stream.game_id], ['Triggered title', channel.game_id]);
    assert.equal((await triggered({ type: 'stream.offline', broadcaster_id: CASTER })).statusCode, 201);
    const bad = await triggered({ type: 'channel.update', broadcaster_id: CASTER, title: '' });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json().message, /^title: must be a string of 1 to 140 characters$/);
  });

  it('a gift of 3 is one channel.subscription.gift with its totals, then a channel.subscribe per subscription', async () => {
    const res = await triggered({
      type: 'channel.subscription.gift',
      broadcaster_id: CASTER,
      gifter_id: GIFTER,
      count: 3,
      tier: '2000',
    });
    assert.equal(res.statusCode, 201, res.body);
    const got = await events('/subs', 4);
    // Each subscription's messages in order; the two subscriptions' side by side.
    const gifts = got.filter((g) => g.type === 'channel.subscription.gift');
    const subscribes = got.filter((g) => g.type === 'channel.subscribe');
    assert.equal(gifts.length, 1);
    assert.deepEqual(gifts[0]?.event, {
      user_id: GIFTER,
      user_login: 'giver',
      user_name: 'giver',
      broadcaster_user_id: CASTER,
      broadcaster_user_login: 'triggered',
      broadcaster_user_name: 'triggered',
      total: 3,
      tier: '2000',
      cumulative_total: 3,
      is_anonymous: false,
    });
    const subscribers = res.json().written.map((w: { data: { user_id: string } }) => w.data.user_id);
    assert.deepEqual(
      subscribes.map((g) => g.event.user_id),
      subscribers,
    );
    assert.ok(subscribes.every((g) => g.event.is_gift === true && g.event.tier === '2000'));
  });

  it('user.update: the description changes, and the email is blanked for a client the user did not grant user:read:email', async () => {
    const res = await triggered({ type: 'user.update', user_id: GIFTER, description: 'New bio' });
    assert.equal(res.statusCode, 201, res.body);
    const [got] = await events('/user', 1);
    assert.deepEqual(got?.event, {
      user_id: GIFTER,
      user_login: 'giver',
      user_name: 'giver',
      email: '',
      email_verified: true,
      description: 'New bio',
    });
    // Once the user grants user:read:email, the email is sent.
    await t.userToken(['user:read:email'], Number(GIFTER));
    await triggered({ type: 'user.update', user_id: GIFTER, description: 'Newer bio' });
    const second = (await events('/user', 2))[1];
    assert.equal(second?.event.email, 'giver@example.com');
  });

  it('refuses what it cannot make, naming the field, and writes nothing', async () => {
    const token = await t.userToken(['moderator:read:followers'], Number(CASTER));
    const followers = async () =>
      (await t.get(`/helix/channels/followers?broadcaster_id=${CASTER}`, bearer(token))).json().total;
    const before = await followers();
    for (const [body, status, message] of [
      [{ type: 'channel.cheer', broadcaster_id: CASTER }, 400, /^type: must be one of stream\.online, /],
      [{ type: 'channel.follow' }, 400, /^broadcaster_id: is required for channel\.follow$/],
      [{ type: 'channel.follow', broadcaster_id: 'x' }, 400, /^broadcaster_id: must be a numeric id/],
      [
        { type: 'channel.follow', broadcaster_id: CASTER, colour: 'red' },
        400,
        /^colour: is not a field of a trigger/,
      ],
      [
        { type: 'channel.subscription.end', broadcaster_id: GIFTER },
        404,
        /^user_id: 996201 has no subscriptions to remove$/,
      ],
    ] as const) {
      const res = await triggered(body);
      assert.equal(res.statusCode, status, res.body);
      assert.match(res.json().message, message);
    }
    assert.equal(await followers(), before);
    assert.equal((await events('/follow', 1)).length, 1);
  });

  it('helixd event trigger writes the change to the store; the serving app delivers it', async () => {
    const db = cliDb(t.storeOptions);
    const out = await helixd([
      'event',
      'trigger',
      'channel.follow',
      '--broadcaster',
      CASTER,
      '--db',
      db,
      '--json',
    ]);
    assert.equal(out.code, 0, out.stderr);
    const follower = JSON.parse(out.stdout).written[0].data.user_id;
    const got = await events('/follow', 2);
    assert.equal(got[1]?.event.user_id, follower);
    const bad = await helixd(['event', 'trigger', 'channel.follow', '--db', db]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /--broadcaster: is required for channel\.follow/);
  });
});
