/**
 * Runs one function of the cloud assembly the way Lambda does: each execution environment is a worker thread with
 * its own `process.env`, module cache and DynamoDB fault proxy (see execution-environment.ts); at most
 * `maxEnvironments` exist at once; an environment runs one invocation at a time and is reused (warm) until it crashes,
 * times out or its runtime dies, and a new one is created on demand (a cold start).
 *
 * The function's AWS calls stay on this machine: DynamoDB goes to the environment's proxy in front of DynamoDB Local,
 * SQS to the simulator's endpoint, and every other service to a loopback port that resets the connection
 * (environment-variables.ts, blocked-endpoint.ts); each blocked call is reported as a stderr line of the function.
 *
 * Not emulated: the memory limit (`memorySizeMb` is only reported to the function), `callbackWaitsForEmptyEventLoop`,
 * freezing between invocations (timers of a warm environment keep running), reserved and provisioned concurrency,
 * Lambda's throttling and its own retries (an event source mapping retries through the queue).
 */
import type { VirtualClock } from '../aws/clock';
import { eventIdOf, eventTimeOf } from '../aws/message-ids';
import type { SenderRegistration, SqsSenders } from '../aws/sqs-senders';
import { shownName } from '../model/find-resource';
import type { ConflictArbiter } from '../aws/transaction-conflicts';
import type { AuthorizeDynamoDbRequest, ProxiedRequest, RequestAnswer, RequestFault } from '../faults/dynamodb-proxy';
import type { FaultKind } from '../faults/fault-plan';
import type { BatchMessage } from '../faults/fault-steering';
import type { FunctionModel } from '../model/flow-model';
import type { InvocationOutcome, SimulationObserver } from '../observation/observer';
import type { SeededScheduler } from '../schedule/seeded-scheduler';
import type { StartHold } from '../schedule/schedule-types';
import { startBlockedEndpoint, type BlockedEndpoint } from './blocked-endpoint';
import { ExecutionEnvironment } from './execution-environment';
import type { LambdaFunctionIdentity } from './lambda-context';
import type { OutsideCall } from './worker-protocol';

/** What a runner needs. */
export interface FunctionRunnerOptions {
  /** The function: asset directory, handler (`index.handler`), timeout, memory size, runtime. */
  readonly fn: FunctionModel;
  /** The function's variables, already resolved to local names. */
  readonly environment: Readonly<Record<string, string>>;
  /** The simulation's clock: the workers' `Date` reads it. */
  readonly clock: VirtualClock;
  /** The real DynamoDB Local; each environment gets a fault proxy in front of it. */
  readonly dynamoDbEndpoint: string;
  /** The simulator's SQS endpoint (`AWS_ENDPOINT_URL_SQS`). */
  readonly sqsEndpoint: string;
  /**
   * The simulator's SNS endpoint (`AWS_ENDPOINT_URL_SNS`, followed by each environment's sender path, so that a
   * scheduler holds its requests as it holds its SQS requests: ../aws/sns-endpoint.ts). @default SNS calls are blocked
   */
  readonly snsEndpoint?: string;
  /**
   * The simulator's S3 endpoint (`AWS_ENDPOINT_URL_S3`, followed by each environment's sender path, so the endpoint
   * knows the invocation of each request: ../aws/s3-endpoint.ts). @default S3 calls are blocked
   */
  readonly s3Endpoint?: string;
  readonly region: string;
  /** How many execution environments may exist at once (a whole number, at least 1). */
  readonly maxEnvironments: number;
  /**
   * Hears each line the function writes (`onFunctionOutput`), and each fault that fires (`onFault`: `crash`,
   * `crash-after-commit`, `throttle`, `lost-response`, `transaction-conflict`, with the function's key as subject and the
   * invocation's key as `invocationKey`).
   * @default nothing is reported
   */
  readonly observer?: SimulationObserver;
  /**
   * Picks each DynamoDB request's fault; `invocationKey` is what {@link FunctionRunner.invoke} was given, `environment`
   * numbers the execution environment the invocation runs in (1, 2, ... in the order environments first took an
   * invocation), `messages` are the SQS messages of the invocation's event, with their receive counts (none for another
   * event). @default no faults
   */
  readonly decideFault?: (invocationKey: string, request: ProxiedRequest, environment: number, messages: readonly BatchMessage[]) => RequestFault;
  /** Hears whether DynamoDB applied each request of an invocation, its reply lost or not. @default not heard */
  readonly onRequestAnswered?: (invocationKey: string, request: ProxiedRequest, answer: RequestAnswer) => void;
  /** Hears each HTTP call an invocation starts to a service outside the simulator (under a scheduler only). @default not heard */
  readonly onOutsideCall?: (invocationKey: string, call: OutsideCall) => void;
  /** `AWS_LAMBDA_FUNCTION_NAME` and the context's `functionName`. @default `<stack name>-<logical id>`, cut to 64 characters */
  readonly functionName?: string;
  /** The account in the context's `invokedFunctionArn`. @default '000000000000' */
  readonly accountId?: string;
  /** Authorizes each DynamoDB request of the function (IAM). @default every request is allowed */
  readonly authorizeDynamoDb?: AuthorizeDynamoDbRequest;
  /**
   * Refuses DynamoDB requests of its environments that meet an ongoing request on the same item, as DynamoDB does:
   * give every runner of a run the same arbiter. @default no transaction conflicts (DynamoDB Local serializes the requests)
   */
  readonly transactionConflicts?: ConflictArbiter;
  /** The `AWS_ACCESS_KEY_ID` of its environments, which names the function to the simulator's SQS endpoint. @default a shared dummy key */
  readonly accessKeyId?: string;
  /**
   * Registers each environment as an SQS sender (its own endpoint path), and the invocation it runs, so the SQS
   * endpoint can tell which function and invocation sent a message. @default sends are not attributed
   */
  readonly sqsSenders?: SqsSenders;
  /**
   * The run's seeded scheduler: it decides when each environment's DynamoDB requests go and its timers fire, and
   * seeds each worker's randomness, so that one seed replays one run at any concurrency (give every runner of a run
   * the same one). @default requests go when they arrive (a concurrent run is not replayable)
   */
  readonly scheduler?: SeededScheduler;
  /**
   * Whether the runner keeps one environment of the function initializing ahead of need (a spare), as Lambda itself
   * occasionally does for on-demand functions ("Lambda might initialize a new execution environment to replace an
   * execution environment that is about to be shut down"; the Lambda developer guide, execution environment lifecycle):
   * when an environment ends (its runtime crashed or exited, it timed out), a replacement starts its init in the
   * background, and the next invocation that needs a new environment takes it. That cold start then costs the
   * invocation only what is left of the init. Only replacements: a spare begun after every cold start cost short runs
   * more than it saved (the replay test's 20 small runs: 63.5 s with, 52.1 s without, 57.4 s with replacements only).
   * The spare's init reads the simulation's time of the moment it began, and its output reaches the observer and the
   * invocation's listener when an invocation takes it, as an init on demand would; a spare whose runtime died while it
   * waited is not given an invocation. {@link FunctionRunner.initializeAhead} starts one for the first invocation too.
   * @default false
   */
  readonly preInitialize?: boolean;
}

/** The envelope ids of an SQS event's records (none for any other event, e.g. a producer command). */
function recordEventIds(event: unknown): string[] {
  const records = (event as { Records?: unknown } | null)?.Records;
  if (!Array.isArray(records)) return [];
  return records.flatMap((record: unknown) => {
    const body = (record as { body?: unknown } | null)?.body;
    const eventId = typeof body === 'string' ? eventIdOf(body) : undefined;
    return eventId === undefined ? [] : [eventId];
  });
}

/** The messages of an event's SQS records (none for an event that is not an SQS batch). */
function recordMessages(event: unknown): BatchMessage[] {
  const records = (event as { Records?: unknown } | null)?.Records;
  if (!Array.isArray(records)) return [];
  return records.flatMap((record: unknown) => {
    const { messageId, body, attributes } = (record ?? {}) as { messageId?: unknown; body?: unknown; attributes?: Record<string, unknown> };
    if (typeof messageId !== 'string') return [];
    const receiveCount = Number(attributes?.ApproximateReceiveCount ?? 1);
    const eventId = typeof body === 'string' ? eventIdOf(body) : undefined;
    const groupId = attributes?.MessageGroupId;
    const eventTime = typeof body === 'string' ? eventTimeOf(body) : undefined;
    return [{
      messageId,
      receiveCount: Number.isInteger(receiveCount) && receiveCount > 0 ? receiveCount : 1,
      ...(eventId === undefined ? {} : { eventId }),
      ...(typeof groupId === 'string' ? { groupId } : {}),
      ...(eventTime === undefined ? {} : { eventTime }),
    }];
  });
}

/** What a runner has done so far. */
export interface FunctionRunnerStats {
  /** Calls of {@link FunctionRunner.invoke}. */
  readonly invocations: number;
  /** Execution environments that took an invocation after their init (started on demand or pre-initialized). */
  readonly coldStarts: number;
  /** Of those, the environments that were pre-initialized (see {@link FunctionRunnerOptions.preInitialize}). */
  readonly preInitialized: number;
  /** Invocations that ended `crashed` (a crash fault at a DynamoDB request). */
  readonly crashes: number;
}

/** The fault kind reported for each request fault. */
const FAULT_KIND_OF: Readonly<Record<Exclude<RequestFault, 'none'>, FaultKind>> = {
  throttle: 'throttle',
  'lose-response': 'lost-response',
  'crash-before': 'crash',
  'crash-after': 'crash-after-commit',
  conflict: 'transaction-conflict',
};

/** The longest function name Lambda accepts. */
const MAX_FUNCTION_NAME_LENGTH = 64;

interface Waiter {
  resolve(environment: ExecutionEnvironment): void;
  reject(error: Error): void;
  /** The scheduler waits for this invocation again once it has an environment. */
  readonly start?: StartHold;
}

/** An environment being started: for an invocation, or a spare (see {@link FunctionRunnerOptions.preInitialize}). */
interface StartingEnvironment {
  readonly environment: Promise<ExecutionEnvironment>;
  /** The environment, once started. */
  readonly started: () => ExecutionEnvironment | undefined;
  /** An invocation takes the spare: its init output goes to that invocation (see `adoptions`). */
  readonly adopt: () => void;
}

/** Runs invocations of one function in a pool of execution environments. */
export class FunctionRunner {
  private readonly identity: LambdaFunctionIdentity;
  private readonly idle: ExecutionEnvironment[] = [];
  private readonly environments = new Set<ExecutionEnvironment>();
  private readonly waiting: Waiter[] = [];
  /** Environments that exist or are being started. */
  private environmentCount = 0;
  private invocations = 0;
  private coldStarts = 0;
  private preInitialized = 0;
  /** Spares taken by an invocation, and how to hand over their init output once its listener is there. */
  private readonly adoptions = new Map<ExecutionEnvironment, () => void>();
  /** Environments created, spares included: each one's number (its label and its worker's seed). */
  private created = 0;
  /** The environment initializing ahead of need, and how to hand its init output over when an invocation takes it. */
  private spare: StartingEnvironment | undefined;
  private crashes = 0;
  /** The code new environments load: the function's asset directory, until {@link FunctionRunner.useCode} replaces it. */
  private code: string;
  /** The code each environment loaded (an environment of older code is not given another invocation). */
  private readonly codeOf = new Map<ExecutionEnvironment, string>();
  private blockedEndpoint: Promise<BlockedEndpoint> | undefined;
  private stopped = false;
  /** Who hears the lines of the invocation each busy environment is running (see {@link FunctionRunner.invoke}). */
  private readonly outputListeners = new Map<ExecutionEnvironment, (line: string, stream: 'stdout' | 'stderr') => void>();
  /** Each environment's registration as an SQS sender. */
  private readonly senders = new Map<ExecutionEnvironment, SenderRegistration>();
  /** Each environment's number, given when it first takes an invocation. */
  private readonly environmentNumbers = new WeakMap<ExecutionEnvironment, number>();
  private numberedEnvironments = 0;

  public constructor(private readonly options: FunctionRunnerOptions) {
    if (!Number.isInteger(options.maxEnvironments) || options.maxEnvironments < 1) {
      throw new RangeError(`maxEnvironments of function ${options.fn.key} must be a whole number of at least 1, got ${options.maxEnvironments}`);
    }
    if (!(options.fn.timeoutSeconds > 0)) {
      throw new RangeError(`timeoutSeconds of function ${options.fn.key} must be more than 0, got ${options.fn.timeoutSeconds}`);
    }
    this.identity = {
      functionName: options.functionName ?? `${options.fn.stackName}-${options.fn.logicalId}`.slice(0, MAX_FUNCTION_NAME_LENGTH),
      region: options.region,
      accountId: options.accountId ?? '000000000000',
      memorySizeMb: options.fn.memorySizeMb,
      timeoutSeconds: options.fn.timeoutSeconds,
    };
    this.code = options.fn.assetDirectory;
  }

  /** The asset directory new environments load their code from. */
  public get codeDirectory(): string {
    return this.code;
  }

  /**
   * New code for the function, as a deployment of a new version does: from now on every new environment loads it from
   * `assetDirectory`; an idle environment of the old code is shut down, a busy one finishes its invocation and is then
   * shut down, a spare of the old code is dropped. So the next invocation that takes an environment runs the new code
   * (`simulate --serve`, after the handler changed on disk and the app was synthesized again).
   */
  public useCode(assetDirectory: string): void {
    if (assetDirectory === this.code) return;
    this.code = assetDirectory;
    for (const environment of this.idle.splice(0)) this.forget(environment);
    const spare = this.spare;
    if (spare !== undefined) {
      this.spare = undefined;
      void spare.environment.then((environment) => environment.dispose(), () => undefined);
      this.startSpare();
    }
  }

  /**
   * Invokes the function with `event` in a free environment (waiting for one when `maxEnvironments` are busy) and
   * resolves with what became of the invocation; it never rejects for the function's own failures.
   * `invocationKey` is passed to `decideFault` to decide the faults of this invocation's DynamoDB requests.
   * `onOutput` hears the lines the environment writes while it runs this invocation (a cold start's init included),
   * and no other invocation's: the per-invocation view of the function's log.
   */
  public async invoke(event: unknown, invocationKey: string, onOutput?: (line: string, stream: 'stdout' | 'stderr') => void): Promise<InvocationOutcome> {
    if (this.stopped) throw new Error(`function ${this.options.fn.key} was stopped; it cannot be invoked`);
    this.invocations += 1;
    const start = this.options.scheduler?.holdStart();
    let environment: ExecutionEnvironment;
    try {
      environment = await this.acquire(start);
    } catch (error) {
      start?.release();
      throw error;
    }
    if (onOutput !== undefined) this.outputListeners.set(environment, onOutput);
    let environmentNumber = this.environmentNumbers.get(environment);
    if (environmentNumber === undefined) {
      this.numberedEnvironments += 1;
      environmentNumber = this.numberedEnvironments;
      this.environmentNumbers.set(environment, environmentNumber);
    }
    // a spare's init output, kept until now: to the observer, and to this invocation's listener
    this.adoptions.get(environment)?.();
    this.adoptions.delete(environment);
    const sender = this.senders.get(environment);
    sender?.begin({ invocation: `${this.options.fn.key}#${this.invocations}`, invocationKey, eventIds: recordEventIds(event) });
    try {
      const { onRequestAnswered, onOutsideCall } = this.options;
      const onAnswered = onRequestAnswered === undefined ? undefined : (request: ProxiedRequest, answer: RequestAnswer) => onRequestAnswered(invocationKey, request, answer);
      const onCall = onOutsideCall === undefined ? undefined : (call: OutsideCall) => onOutsideCall(invocationKey, call);
      const outcome = await environment.invoke(event, this.decider(invocationKey, environmentNumber, recordMessages(event)), () => start?.release(), onAnswered, onCall);
      if (outcome.kind === 'crashed') this.crashes += 1;
      return outcome;
    } finally {
      sender?.end();
      this.outputListeners.delete(environment);
      this.release(environment);
    }
  }

  /**
   * Starts an environment's init now, ahead of the function's first invocation, when the runner keeps a spare (see
   * {@link FunctionRunnerOptions.preInitialize}) and has none: the first invocation then takes it, and waits only for
   * what is left of its init. Lambda initializes a function's first environment on demand; a run calls this while it
   * has nothing else for the machine's other core to do (DynamoDB Local answering the first requests), and the
   * environment is what an on-demand init would make: its init reads the simulation's time of the moment it began (the
   * run's start, before its rounds move the clock), and its output reaches the observer when an invocation takes it.
   * A function the run never invokes costs one init of CPU.
   */
  public initializeAhead(): void {
    this.startSpare();
  }

  /** Counts so far. */
  public stats(): FunctionRunnerStats {
    return { invocations: this.invocations, coldStarts: this.coldStarts, preInitialized: this.preInitialized, crashes: this.crashes };
  }

  /** Disposes every environment (running invocations end as `Runtime.ExitError`); later invocations are refused. */
  public async stop(): Promise<void> {
    this.stopped = true;
    for (const waiter of this.waiting.splice(0)) waiter.reject(new Error(`function ${this.options.fn.key} was stopped while an invocation waited for an environment`));
    const spare = this.spare;
    this.spare = undefined;
    const spareEnvironment = await spare?.environment.catch(() => undefined);
    await Promise.all([...this.environments, ...(spareEnvironment === undefined ? [] : [spareEnvironment])].map((environment) => environment.dispose()));
    this.idle.length = 0;
    const blocked = this.blockedEndpoint;
    this.blockedEndpoint = undefined;
    if (blocked !== undefined) await (await blocked).stop();
  }

  private decider(invocationKey: string, environment: number, messages: readonly BatchMessage[]): (request: ProxiedRequest) => RequestFault {
    const { decideFault, observer, fn } = this.options;
    return (request) => {
      const fault = decideFault?.(invocationKey, request, environment, messages) ?? 'none';
      if (fault !== 'none') observer?.onFault?.(FAULT_KIND_OF[fault], fn.key, { invocationKey });
      return fault;
    };
  }

  private async acquire(start: StartHold | undefined): Promise<ExecutionEnvironment> {
    for (let warm = this.idle.pop(); warm !== undefined; warm = this.idle.pop()) {
      if (warm.alive && this.codeOf.get(warm) === this.code) return warm;
      this.forget(warm);
    }
    if (this.environmentCount < this.options.maxEnvironments) return this.newEnvironment();
    // waiting for another invocation to end: the scheduler must not wait for this one meanwhile
    start?.release();
    return new Promise<ExecutionEnvironment>((resolve, reject) => this.waiting.push({ resolve, reject, ...(start === undefined ? {} : { start }) }));
  }

  private release(environment: ExecutionEnvironment): void {
    if (!environment.alive || this.stopped || this.codeOf.get(environment) !== this.code) {
      this.forget(environment);
      return;
    }
    const next = this.waiting.shift();
    if (next !== undefined) {
      next.start?.hold();
      next.resolve(environment);
    } else this.idle.push(environment);
  }

  /** A disposed environment leaves the pool; a waiting invocation gets a new one in its place. */
  private forget(environment: ExecutionEnvironment): void {
    this.senders.delete(environment);
    this.codeOf.delete(environment);
    if (!this.environments.delete(environment)) return;
    this.environmentCount -= 1;
    void environment.dispose();
    if (this.stopped) return;
    const next = this.waiting.shift();
    if (next !== undefined) {
      next.start?.hold();
      this.newEnvironment().then(next.resolve, next.reject);
    } else {
      // Lambda may initialize a replacement for an environment that ended
      this.startSpare();
    }
  }

  /** An environment for an invocation: the spare when there is a living one, else one started now. */
  private newEnvironment(): Promise<ExecutionEnvironment> {
    this.environmentCount += 1;
    this.coldStarts += 1;
    let spare = this.spare;
    this.spare = undefined;
    const spareStarted = spare?.started();
    if (spareStarted !== undefined && (!spareStarted.alive || this.codeOf.get(spareStarted) !== this.code)) {
      // its runtime died while it waited (Lambda would not route an invocation to it), or it loaded replaced code: an
      // environment on demand instead
      this.codeOf.delete(spareStarted);
      void spareStarted.dispose();
      spare = undefined;
    }
    let environment: Promise<ExecutionEnvironment>;
    if (spare !== undefined) {
      this.preInitialized += 1;
      spare.adopt();
      environment = spare.environment;
    } else {
      environment = this.startEnvironment(false).environment;
    }
    return environment.then(
      (started) => {
        this.environments.add(started);
        return started;
      },
      (error: unknown) => {
        this.environmentCount -= 1;
        throw error;
      },
    );
  }

  /** Starts a spare, if the runner keeps one and has none. */
  private startSpare(): void {
    if (this.options.preInitialize !== true || this.spare !== undefined || this.stopped) return;
    const spare = this.startEnvironment(true);
    // a spare that cannot start is no spare: the next invocation starts one on demand and meets the error itself
    spare.environment.catch(() => {
      if (this.spare === spare) this.spare = undefined;
    });
    this.spare = spare;
  }

  /**
   * Starts an environment: for an invocation now, or a spare whose init output is kept until `adopt` (see
   * {@link FunctionRunnerOptions.preInitialize}).
   */
  private startEnvironment(spare: boolean): StartingEnvironment {
    this.created += 1;
    const environmentNumber = this.created;
    const { observer, scheduler } = this.options;
    // the function as it is now: its code may have been replaced since the run began (see useCode)
    const code = this.code;
    const fn = code === this.options.fn.assetDirectory ? this.options.fn : { ...this.options.fn, assetDirectory: code };
    const scheduling = scheduler === undefined ? undefined : { environment: scheduler.environment(`${fn.key}#${environmentNumber}`), seed: scheduler.workerSeed(fn.key, environmentNumber), pid: scheduler.workerPid(fn.key) };
    // started for an invocation: its init's requests go on at once (a spare's when an invocation takes it)
    if (!spare) scheduling?.environment.startingInvocation();
    // assigned once started; the worker writes nothing before its first event-loop turn, which comes after that
    let started: ExecutionEnvironment | undefined;
    const deliver = (line: string, stream: 'stdout' | 'stderr'): void => {
      observer?.onFunctionOutput?.(fn.key, line, stream);
      if (started !== undefined) this.outputListeners.get(started)?.(line, stream);
    };
    let kept: [string, 'stdout' | 'stderr'][] | undefined = spare ? [] : undefined;
    const adopt = (): void => {
      scheduling?.environment.startingInvocation();
      // once the invocation that took it has its listener (see `invoke`): the lines kept so far, in their order; the
      // lines that come after go straight on
      const flush = (): void => {
        for (const [line, stream] of kept ?? []) deliver(line, stream);
        kept = undefined;
      };
      // registered before `newEnvironment` hands the environment on, so before `invoke` looks for it
      void environment.then((created) => void this.adoptions.set(created, flush), () => undefined);
    };
    const environment = (async () => {
      if (this.stopped) throw new Error(`function ${fn.key} was stopped; no environment is started`);
      const blocked = await this.blocked();
      const sender = this.options.sqsSenders?.register(fn.key, shownName(fn), scheduling?.environment);
      const created = await ExecutionEnvironment.start({
        fn,
        identity: this.identity,
        functionVariables: this.options.environment,
        clock: this.options.clock,
        dynamoDbEndpoint: this.options.dynamoDbEndpoint,
        sqsEndpoint: `${this.options.sqsEndpoint}${sender?.path ?? ''}`,
        ...(this.options.snsEndpoint === undefined ? {} : { snsEndpoint: `${this.options.snsEndpoint}${sender?.path ?? ''}` }),
        ...(this.options.s3Endpoint === undefined ? {} : { s3Endpoint: `${this.options.s3Endpoint}${sender?.path ?? ''}` }),
        blockedEndpoint: blocked.endpoint,
        onOutput: (line, stream) => {
          if (kept !== undefined) kept.push([line, stream]);
          else deliver(line, stream);
        },
        ...(this.options.preInitialize === true ? { initClockMs: this.options.clock.now() } : {}),
        ...(this.options.authorizeDynamoDb === undefined ? {} : { authorizeDynamoDb: this.options.authorizeDynamoDb }),
        ...(this.options.transactionConflicts === undefined ? {} : { transactionConflicts: this.options.transactionConflicts }),
        ...(this.options.accessKeyId === undefined ? {} : { accessKeyId: this.options.accessKeyId }),
        ...(scheduling === undefined ? {} : { scheduling }),
      });
      started = created;
      this.codeOf.set(created, code);
      if (this.stopped) {
        await created.dispose();
        throw new Error(`function ${fn.key} was stopped while an environment started`);
      }
      if (sender !== undefined) this.senders.set(created, sender);
      return created;
    })();
    return { environment, adopt, started: () => started };
  }

  private blocked(): Promise<BlockedEndpoint> {
    this.blockedEndpoint ??= startBlockedEndpoint((call) => {
      const { fn, observer, scheduler } = this.options;
      const line = `[simulator] blocked a call to AWS service '${call.service}' (${call.method} ${call.path}): only DynamoDB and SQS are simulated`;
      const report = (): void => observer?.onFunctionOutput?.(fn.key, line, 'stderr');
      // under a scheduler the workers of a turn run at once: their calls are reported in a fixed order after the turn
      if (scheduler === undefined) report();
      else scheduler.deliverUnattributed(`${fn.key}\n${line}`, report);
    });
    return this.blockedEndpoint;
  }
}
