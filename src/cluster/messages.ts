// What the primary of `--workers N` and its workers say to each other over the IPC channel (besides
// the shared state's messages, src/cluster/state.ts, and the metrics', src/metrics/registry.ts).
import type { ClockReading } from '../clock.ts';
import type { Config } from '../config.ts';
import type { FaultSetting } from '../faults/injector.ts';
import type { Prepared } from '../server.ts';
import type { Versioned } from './state.ts';

/** primary to worker */
export type Message =
  | {
      type: 'start';
      config: Config;
      prepared: Prepared;
      clock: Versioned<ClockReading>;
      faults: Versioned<FaultSetting>;
    }
  | { type: 'stop'; drain: boolean };
/** worker to primary: it listens for messages (and wants its 'start') */
export type WorkerMessage =
  | { type: 'ready' }
  | { type: 'helixd:metrics' }
  | { type: 'helixd:state-change' | 'helixd:state-took' };
