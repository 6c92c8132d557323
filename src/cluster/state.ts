// State that the admin API changes at run time, made one across the processes of `serve --workers
// N`: the server clock (src/cluster/clock.ts) and the fault rules (src/faults/injector.ts). The primary
// holds each value; a worker starts from the primary's and never changes its own. A change asked of
// any worker goes to the primary, which makes it, sends the new value to every worker and answers
// the asking worker once each has taken it: when the admin call returns, every worker holds the new
// value. A worker that starts later (a replacement) gets the value of its start. Values carry a
// version, so that a worker keeps the newest whatever order it hears them in. Values and changes
// are plain data: they cross the IPC channel.
import type { Worker } from 'node:cluster';
import { deadlineReason, UnavailableError } from '../store/unavailable.ts';

/** A value and its version (each change adds one). */
export interface Versioned<T> {
  version: number;
  value: T;
}

/**
 * A value the admin API changes, as one process sees it: the newest it holds, and `change`, which
 * resolves with the new value once every process serving holds it. A change refused (the value
 * stays) rejects with the error `apply` threw.
 */
export interface SharedState<T, C> {
  readonly value: T;
  /** `hear` gets the value now, and every newer one from then on */
  listen(hear: (value: T) => void): void;
  change(change: C): Promise<T>;
}

/**
 * Makes the change `change` to `current`, or throws a `Refusal` (a 400 naming the field) to leave
 * it as it is; any other error is a bug.
 */
export type Apply<T, C> = (current: T, change: C) => T;

/** A change refused; the message names the field and the rule. */
export class Refusal extends Error {}

/** State in this process alone (a single process, a test app). */
export function localState<T, C>(initial: T, apply: Apply<T, C>): SharedState<T, C> {
  let value = initial;
  const listeners: ((value: T) => void)[] = [];
  return {
    get value() {
      return value;
    },
    listen(hear) {
      listeners.push(hear);
      hear(value);
    },
    async change(change) {
      value = apply(value, change);
      for (const hear of listeners) hear(value);
      return value;
    },
  };
}

const CHANGE = 'helixd:state-change';
const CHANGED = 'helixd:state-changed';
const SET = 'helixd:state-set';
const TOOK = 'helixd:state-took';

/** worker to primary: change state `name` */
interface ChangeAsk {
  type: typeof CHANGE;
  name: string;
  id: number;
  change: unknown;
}
/** primary to the asking worker: every worker holds `value`, or the change failed */
type ChangeAnswer = { type: typeof CHANGED; id: number } & (
  | { value: unknown }
  | { refused: string }
  | { unavailable: string }
);
/** primary to every worker: hold this from now on */
interface SetState extends Versioned<unknown> {
  type: typeof SET;
  name: string;
}
/** worker to primary: it holds version `version` of `name` (or a later one) */
interface Took {
  type: typeof TOOK;
  name: string;
  version: number;
}

/** The messages of this relay, as a worker sends them (src/cluster/primary.ts routes them here). */
export const STATE_MESSAGES: readonly string[] = [CHANGE, TOOK];

const isType = <M>(m: unknown, type: string): m is M =>
  typeof m === 'object' && m !== null && (m as { type?: unknown }).type === type;

/** The primary's side of one state: its value, and the workers that hear its changes. */
export class PrimaryState<T, C> {
  #version = 0;
  #value: T;
  /** workers that have asked for their start: they hear every change */
  readonly #joined = new Set<Worker>();
  /** changes waiting for workers to take them */
  readonly #waits = new Set<{ version: number; left: Set<Worker>; done: () => void }>();

  constructor(
    readonly name: string,
    initial: T,
    private readonly apply: Apply<T, C>,
    /** how long a change waits for every worker to take it, then answers 503 */
    private readonly deadlineMs: number,
  ) {
    this.#value = initial;
  }

  /** What a worker starting now holds. */
  get shared(): Versioned<T> {
    return { version: this.#version, value: this.#value };
  }

  /** `worker` hears every change from now on: call it just before sending the worker `shared`. */
  join(worker: Worker): void {
    this.#joined.add(worker);
    worker.once('exit', () => {
      this.#joined.delete(worker);
      for (const w of this.#waits) this.#took(w, worker);
    });
  }

  /** Answers `message` from `worker` if it is about this state; false otherwise. */
  answer(worker: Worker, message: unknown): boolean {
    if (isType<Took>(message, TOOK) && message.name === this.name) {
      for (const w of this.#waits) if (w.version <= message.version) this.#took(w, worker);
      return true;
    }
    if (!isType<ChangeAsk>(message, CHANGE) || message.name !== this.name) return false;
    const send = (answer: ChangeAnswer) => {
      if (worker.isConnected()) worker.send(answer, undefined, () => {});
    };
    const { id } = message;
    let value: T;
    try {
      value = this.apply(this.#value, message.change as C);
    } catch (e) {
      if (!(e instanceof Refusal)) throw e;
      send({ type: CHANGED, id, refused: e.message });
      return true;
    }
    this.#value = value;
    this.#spread(value).then(
      () => send({ type: CHANGED, id, value }),
      (slow: Worker[]) =>
        send({
          type: CHANGED,
          id,
          unavailable: `did not change the ${this.name} of every worker: ${slow.map((w) => w.process.pid).join(', ')} ${deadlineReason(this.deadlineMs)}`,
        }),
    );
    return true;
  }

  /** Sends `value` to every worker that listens; resolves once all took it (rejects with the others). */
  #spread(value: T): Promise<void> {
    const version = ++this.#version;
    const left = new Set([...this.#joined].filter((w) => w.isConnected()));
    return new Promise((resolve, reject) => {
      const wait = {
        version,
        left,
        done: () => {
          clearTimeout(timer);
          this.#waits.delete(wait);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.#waits.delete(wait);
        reject([...left]);
      }, this.deadlineMs);
      this.#waits.add(wait);
      const set: SetState = { type: SET, name: this.name, version, value };
      for (const w of [...left]) w.send(set, undefined, (err) => err && this.#took(wait, w));
      if (left.size === 0) wait.done();
    });
  }

  #took(wait: { left: Set<Worker>; done: () => void }, worker: Worker): void {
    if (wait.left.delete(worker) && wait.left.size === 0) wait.done();
  }
}

// ---- A worker's side ----

let joined = false;
/** per state: the newest value heard, and who hears the next ones once the worker holds it */
const heard = new Map<string, Versioned<unknown>>();
const listeners = new Map<string, ((value: unknown) => void)[]>();
let asked = 0;
const waiting = new Map<number, (answer: ChangeAnswer) => void>();

/**
 * In a cluster worker: takes the primary's changes of every state and hears its answers. Once per
 * process, before the worker asks for its start: a change sent before the listener would be lost.
 */
export function joinClusterState(): void {
  if (joined) return;
  joined = true;
  process.on('message', (m: unknown) => {
    if (isType<SetState>(m, SET)) {
      const held = heard.get(m.name);
      if (!held || m.version > held.version) {
        heard.set(m.name, { version: m.version, value: m.value });
        for (const hear of listeners.get(m.name) ?? []) hear(m.value);
      }
      const took: Took = { type: TOOK, name: m.name, version: m.version };
      process.send?.(took, undefined, {}, () => {});
    } else if (isType<ChangeAnswer>(m, CHANGED)) waiting.get(m.id)?.(m);
  });
}

/**
 * A worker's hold on state `name`, from the value its start carried (or a newer one heard since).
 * A change waits up to `deadlineMs` for the primary, which itself waits that long for the workers:
 * past it, an UnavailableError (503). A change the primary refused rejects with `refusal(message)`.
 */
export function workerState<T, C>(
  name: string,
  start: Versioned<T>,
  deadlineMs: number,
  refusal: (message: string) => Error = (message) => new Refusal(message),
): SharedState<T, C> {
  const held = heard.get(name);
  if (!held || start.version > held.version) heard.set(name, start);
  return {
    get value() {
      return (heard.get(name) as Versioned<T>).value;
    },
    listen(hear) {
      listeners.set(name, [...(listeners.get(name) ?? []), hear as (value: unknown) => void]);
      hear((heard.get(name) as Versioned<T>).value);
    },
    change: (change) =>
      new Promise((resolve, reject) => {
        const id = ++asked;
        const patience = 2 * deadlineMs;
        const end = () => {
          clearTimeout(timer);
          waiting.delete(id);
        };
        const fail = (err: Error) => {
          end();
          reject(err);
        };
        const timer = setTimeout(
          () => fail(new UnavailableError('primary', deadlineReason(patience))),
          patience,
        );
        waiting.set(id, (answer) => {
          end();
          if ('value' in answer) resolve(answer.value as T);
          else if ('refused' in answer) reject(refusal(answer.refused));
          else reject(new UnavailableError('primary', answer.unavailable));
        });
        const ask: ChangeAsk = { type: CHANGE, name, id, change };
        if (!process.send || !process.connected)
          fail(new UnavailableError('primary', 'cannot be reached (the IPC channel is closed)'));
        else
          process.send(
            ask,
            undefined,
            {},
            (err) => err && fail(new UnavailableError('primary', 'cannot be reached')),
          );
      }),
  };
}
