// A worker of `helixd serve --workers N` (the primary, and how the two share the store, the clock
// and the fault rules: src/cluster/primary.ts).
import cluster from 'node:cluster';
import { FAULT_STATE } from '../faults/injector.ts';
import { joinClusterMetrics } from '../metrics/registry.ts';
import { startServer } from '../server.ts';
import { workerClockDriver } from './clock.ts';
import type { Message, WorkerMessage } from './messages.ts';
import { stopMessage } from './shutdown.ts';
import { joinClusterState, workerState } from './state.ts';

/**
 * A worker of `--workers N`: serves with what its primary prepared (it writes nothing to the store
 * at start and prints nothing), and stops when the primary says so.
 */
export async function serveWorker(): Promise<void> {
  // Signals are the primary's: a terminal's Ctrl-C reaches every process of the group, and a
  // worker stopping on its own would be replaced.
  const ignore = () => {};
  process.on('SIGINT', ignore);
  process.on('SIGTERM', ignore);
  // Before the primary hears from this worker, so that no ask for its figures, and no change of
  // the clock or the fault rules, finds it deaf.
  joinClusterMetrics();
  joinClusterState();
  try {
    const start = await new Promise<Message>((resolve) => {
      process.once('message', resolve);
      process.send?.({ type: 'ready' } satisfies WorkerMessage);
    });
    if (start.type !== 'start') return;
    const running = await startServer(start.config, () => {}, {
      prepared: start.prepared,
      clock: workerClockDriver(start.clock, start.config.queryTimeout),
      faults: workerState(FAULT_STATE, start.faults, start.config.queryTimeout),
    });
    await new Promise<void>((resolve, reject) => {
      process.on('message', (m: Message) => {
        if (m.type !== 'stop') return;
        running.app.log.info(stopMessage(m.drain ? start.config.drain : 0));
        running.stop({ drain: m.drain }).then(resolve, reject);
      });
    });
  } finally {
    // The IPC channel would keep the process alive.
    cluster.worker?.disconnect();
  }
}
