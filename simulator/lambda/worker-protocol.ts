/**
 * The messages between a {@link ExecutionEnvironment} and its worker thread (the bootstrap in worker-bootstrap.ts,
 * which is plain JavaScript and must keep to these shapes).
 */
import type { LambdaContextData } from './lambda-context';

/** What the worker is started with (`workerData`). */
export interface WorkerData {
  /** The {@link VirtualClock} buffer: the worker's `Date` reads simulated time from it. */
  readonly clockBuffer: SharedArrayBuffer;
  /** `LAMBDA_TASK_ROOT`: the asset directory. */
  readonly taskRoot: string;
  /** `Handler`, e.g. `index.handler` or `dist/app.handler`. */
  readonly handler: string;
  /**
   * Set when a seeded scheduler decides the run's interleaving: the worker's `Math.random` and `node:crypto`/Web Crypto random sources
   * draw from `seed`, its clocks and timers are virtual, `process.pid` is `pid`, and it reports each time it goes quiet
   * ({@link QuietReport}).
   * @default the worker's own randomness, real clocks and timers, and the simulator's process id
   */
  readonly replay?: { readonly seed: number; readonly pid: number };
  /**
   * The environment's own temporary directory (its `TMPDIR`): a literal `/tmp` path given to node:fs reaches it (see
   * worker-tmp.ts). @default `/tmp` is the machine's
   */
  readonly tmpDirectory?: string;
  /**
   * What `Date` reads until the first invocation arrives: the init of an environment initialized ahead of need sees
   * the time it began at. @default the simulation's clock
   */
  readonly initClockMs?: number;
}

/**
 * Worker → parent, in a replayable worker: the worker has no pending work but HTTP replies and virtual timers. The
 * counts say what it has sent and seen finish so far, so the parent can tell a fresh report from one sent before its
 * latest reply arrived.
 */
export interface QuietReport {
  readonly type: 'quiet';
  /** Invoke messages received so far. */
  readonly invocations: number;
  /** HTTP requests started, in all and to the endpoints whose requests the scheduler holds (DynamoDB's proxy, SQS). */
  readonly started: number;
  readonly scheduledStarted: number;
  /** HTTP requests finished (answered, failed or closed), in all and to the endpoints whose requests the scheduler holds. */
  readonly finished: number;
  readonly scheduledFinished: number;
  /** Virtual timers fired so far (each `fire-timer` message fires one, or none when there is none). */
  readonly timersFired: number;
  /** Virtual timers pending. */
  readonly timers: number;
  /** When the earliest pending timer is due, in ms of virtual time since the invocation began; -1 when none is. */
  readonly nextTimerDue: number;
}

/**
 * The header a replayable worker puts on each request to the DynamoDB endpoint: the request's number within the
 * invocation, in the order the function sent them (1, 2, ...). The DynamoDB proxy reads it (and drops it before
 * forwarding), so a call outside the simulator ({@link OutsideCall}) can be ordered against the invocation's DynamoDB
 * requests whatever order the scheduler forwarded them in.
 */
export const REQUEST_SEQUENCE_HEADER = 'x-ief-simulator-request';

/**
 * An HTTP call of the function to a service outside the simulator (not one of its endpoints), as it started: e.g. the
 * app's payment provider, or the stub a scenario runs for it.
 */
export interface OutsideCall {
  /** `POST`, `GET`... */
  readonly method: string;
  /** `host:port` (the request's `Host`, or the origin's for `fetch`). */
  readonly host: string;
  /** The path, without its query string. */
  readonly path: string;
  /** The query string's values, to tell which event a call was made for (never printed). @default none */
  readonly query?: readonly string[];
  /** How many DynamoDB requests the invocation had sent when the call started ({@link REQUEST_SEQUENCE_HEADER}'s numbers up to it). */
  readonly afterRequest: number;
}

/** Worker → parent, in a replayable worker: an invocation started an {@link OutsideCall}. */
export interface OutsideCallMessage extends OutsideCall {
  readonly type: 'outside-call';
  readonly invocationId: number;
}

/** An error as the runtime reports it. */
export interface ReportedError {
  readonly errorName: string;
  readonly errorMessage: string;
}

/** Parent → worker: run the handler once. */
export interface InvokeMessage {
  readonly type: 'invoke';
  readonly invocationId: number;
  readonly event: unknown;
  readonly context: LambdaContextData;
}

/** Parent → replayable worker: fire the earliest virtual timer. */
export interface FireTimerMessage {
  readonly type: 'fire-timer';
}

/** Worker → parent. */
export type WorkerMessage =
  /** The handler loaded (the init phase ended). */
  | { readonly type: 'ready' }
  /** The handler could not be loaded (`Runtime.ImportModuleError`, `Runtime.HandlerNotFound`, ...). */
  | ({ readonly type: 'init-failed' } & ReportedError)
  /** The handler returned (its response, JSON round-tripped as Lambda serializes it). */
  | { readonly type: 'returned'; readonly invocationId: number; readonly response: unknown }
  /** The handler threw, rejected, or called back with an error. */
  | ({ readonly type: 'threw'; readonly invocationId: number } & ReportedError)
  /** An uncaught exception or unhandled rejection: the runtime process would exit. */
  | ({ readonly type: 'fatal' } & ReportedError)
  /** A replayable worker went quiet. */
  | QuietReport
  /** A replayable worker's invocation started an HTTP call outside the simulator. */
  | OutsideCallMessage;
