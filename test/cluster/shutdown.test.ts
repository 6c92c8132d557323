// Stopping `helixd serve` drops nothing it accepted (src/cluster/shutdown.ts), through the real program:
// - under load (one process, and --workers 2), with a load balancer that stops sending once
//   /readyz answers 503: every request is answered 200, /readyz answers 503 (saying it drains)
//   while the server still serves, responses during the drain close their connection, and the
//   process exits 0 within its deadline;
// - with a short drain and clients that ignore /readyz: every request sent on a connection the
//   server kept open is answered 200, none is reset; what fails is new connections to a closed
//   listener;
// - a client sending its body, or its headers, a byte every few seconds gets a 408 at the time limit
//   and does not hold the stop;
// - a request still in progress at the hard deadline is cut, and that is logged.
// The store plays no part in how connections close: SQLite only.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, createServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { REQUEST_TIMEOUT_SECONDS, SHUTDOWN_GRACE_SECONDS, Shutdown } from '../../src/cluster/shutdown.ts';
import { type Answer, request } from '../support/http.ts';
import { type Served, serve, sleep } from './served.ts';

const CONNECTIONS = 200;
/** Slack on top of a deadline for a loaded machine; the deadline itself is what is checked. */
const SLACK_S = 5;

interface Outcome {
  id: string;
  at: number;
  answer?: Answer;
  error?: string;
  /** the request that failed went on a connection that had carried one before */
  reused?: boolean;
}

/**
 * CONNECTIONS clients, each sending requests one after another on its keep-alive connection until
 * `keepGoing` says no or a request fails. Resolves once every client has had one answer.
 */
async function load(s: Served, keepGoing: () => boolean) {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const outcomes: Outcome[] = [];
  const headers = { authorization: `Bearer ${s.appToken}`, 'client-id': s.clientId };
  const client = async (c: number) => {
    for (let n = 0; keepGoing(); n++) {
      const id = `load-${c}-${n}`;
      try {
        const answer = await request(s.port, '/helix/games/top?first=5', {
          agent,
          headers: { ...headers, 'x-request-id': id },
        });
        outcomes.push({ id, at: Date.now(), answer });
      } catch (err) {
        const e = err as NodeJS.ErrnoException & { reusedSocket: boolean };
        outcomes.push({ id, at: Date.now(), error: e.code ?? String(e), reused: e.reusedSocket });
        return;
      }
    }
  };
  const clients = Array.from({ length: CONNECTIONS }, (_, c) => client(c));
  while (new Set(outcomes.map((o) => o.id.split('-')[1])).size < CONNECTIONS) await sleep(20);
  return {
    outcomes,
    done: async () => {
      await Promise.all(clients);
      agent.destroy();
    },
  };
}

/** A connection that sends `head`, then `drip` every 2 s; resolves with what it received once closed. */
function dripping(port: number, head: string, drip: string): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.on('data', (d) => {
    received += d;
  });
  socket.on('error', () => {});
  socket.write(head);
  const timer = setInterval(() => socket.writable && socket.write(drip), 2000);
  return new Promise((resolve) =>
    socket.once('close', () => {
      clearInterval(timer);
      resolve(received);
    }),
  );
}

/** The ids of the requests the server answered (its log has a line for each when it ends). */
const answeredByServer = (s: Served) =>
  new Set(
    s
      .logs()
      .filter((l) => l.msg === 'request completed' && l.reqId?.startsWith('load-'))
      .map((l) => l.reqId as string),
  );

// Two at a time: the slow client mostly waits, beside one of the others.
describe('helixd serve: stopping drops nothing it accepted', { concurrency: 2 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'helixd-shutdown-'));
  // A store each: servers that start at once would each find an empty store to seed.
  let stores = 0;
  const freshDb = () => join(dir, `helixd-${++stores}.db`);
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('a body, or headers, sent a byte every 2 s get a 408 at the time limit and do not hold SIGTERM', {
    timeout: 90_000,
  }, async () => {
    const drain = 1;
    const s = await serve(['--db', freshDb(), '--drain', `${drain}s`]);
    const slowBody = dripping(
      s.port,
      'POST /oauth2/token HTTP/1.1\r\nHost: helixd\r\nContent-Type: application/x-www-form-urlencoded\r\n' +
        'Content-Length: 100\r\n\r\n',
      'a',
    );
    const slowHeaders = dripping(s.port, 'GET /healthz HTTP/1.1\r\nHost: helixd\r\nX-Slow: ', 'b');
    await sleep(1000);
    const signalled = Date.now();
    s.child.kill('SIGTERM');
    for (const received of await Promise.all([slowBody, slowHeaders])) {
      assert.match(received, /^HTTP\/1\.1 408 /, received);
      assert.match(received, /"status":408/);
    }
    const exit = await s.exited;
    assert.equal(exit.code, 0, s.out().slice(-2000));
    assert.ok(exit.at - signalled < (REQUEST_TIMEOUT_SECONDS + 1 + SLACK_S) * 1000);
    assert.doesNotMatch(s.out(), /"level":50/, 'nothing is logged as an error');
  });

  it('a request still in progress at the deadline is cut, and the cut is logged', {
    timeout: 30_000,
  }, async () => {
    // No route of helixd takes that long: a server of Node's own whose handler never answers.
    let reached = () => {};
    const inProgress = new Promise<void>((resolve) => {
      reached = resolve;
    });
    const server = createServer(() => reached());
    const shutdown = new Shutdown();
    shutdown.attach(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const hanging = request(port, '/').catch((err: NodeJS.ErrnoException) => err.code);
    await inProgress;
    const warned: { cut: number; msg: string }[] = [];
    await shutdown.run(0, 1, { warn: (o, msg) => warned.push({ ...(o as { cut: number }), msg }) });
    assert.deepEqual(warned, [
      { cut: 1, msg: 'shutdown deadline: 1 request(s) still in progress after 1 s were cut' },
    ]);
    assert.equal(await hanging, 'ECONNRESET');
  });

  for (const workers of [1, 2])
    it(`SIGTERM under load, --workers ${workers}: /readyz 503 during the drain, every request answered 200, exit 0`, {
      timeout: 90_000,
    }, async () => {
      const drain = 5;
      const s = await serve(
        ['--db', freshDb(), '--rate-limit', '0', '--drain', `${drain}s`, '--workers', String(workers)],
        workers,
      );
      let sending = true;
      const { outcomes, done } = await load(s, () => sending);
      const signalled = Date.now();
      s.child.kill('SIGTERM');
      // The load balancer: checks /readyz on connections of its own and stops sending shortly after
      // the first 503, well inside the drain.
      let readyz: Answer;
      do {
        readyz = await request(s.port, '/readyz');
        if (readyz.status !== 503) await sleep(50);
      } while (readyz.status !== 503);
      assert.match(JSON.parse(readyz.body).message, /draining/i);
      await sleep(300);
      sending = false;
      await done();
      const exit = await s.exited;

      const failed = outcomes.filter((o) => o.answer?.status !== 200);
      assert.deepEqual(failed.slice(0, 5), [], `${failed.length} of ${outcomes.length} requests failed`);
      const duringDrain = outcomes.filter((o) => o.at > signalled);
      assert.ok(duringDrain.length > 0, 'requests were still served after SIGTERM');
      assert.ok(
        duringDrain.some((o) => o.answer?.headers.connection === 'close'),
        'answers during the drain close their connection',
      );
      // Every answer the server sent arrived.
      assert.equal(answeredByServer(s).size, outcomes.length);
      assert.equal(exit.code, 0, s.out().slice(-2000));
      assert.ok(exit.at - signalled < (drain + SHUTDOWN_GRACE_SECONDS + SLACK_S) * 1000);
    });

  it('a drain of 1 s, clients that ignore /readyz: every request sent on an open connection is answered 200', {
    timeout: 90_000,
  }, async () => {
    // Clients keep sending through the drain and after: some find the listener closed.
    const s = await serve(['--db', freshDb(), '--rate-limit', '0', '--drain', '1s']);
    const { outcomes, done } = await load(s, () => true);
    s.child.kill('SIGTERM');
    await done();
    const exit = await s.exited;
    assert.equal(exit.code, 0, s.out().slice(-2000));

    // An answer means the server read the request: it must be a 200. A request sent on a connection
    // the server had kept open after an answer must be answered too: a reset there is the request
    // the client had already sent when the server closed the connection. What fails is a new
    // connection, opened once the drain had begun: refused by the closed listener, reset in its
    // queue of connections not yet accepted, or closed before its first request arrived; the server
    // never read a request on it.
    const answeredNot200 = outcomes.filter((o) => o.answer && o.answer.status !== 200);
    assert.deepEqual(answeredNot200.slice(0, 5), [], `${answeredNot200.length} answers were not 200`);
    const reset = outcomes.filter((o) => o.error && o.reused);
    assert.deepEqual(reset.slice(0, 5), [], `${reset.length} requests on kept-open connections failed`);
    const answered = answeredByServer(s);
    const lost = outcomes.filter((o) => o.error && answered.has(o.id));
    assert.deepEqual(lost.slice(0, 5), [], `${lost.length} answers the server sent did not arrive`);
    assert.ok(outcomes.length > CONNECTIONS);
  });
});
