/**
 * One Lambda execution environment: a worker thread running the function's code (its own `process.env`, module cache
 * and global `Date`) and its own DynamoDB fault proxy. It runs one invocation at a time and stays warm until an
 * invocation crashes, times out, or kills the runtime (uncaught exception, unhandled rejection, exit); then it is
 * disposed and the runner starts a new one for the next invocation (a cold start).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Worker } from 'node:worker_threads';
import type { VirtualClock } from '../aws/clock';
import type { ConflictArbiter } from '../aws/transaction-conflicts';
import { startDynamoDbProxy, type AuthorizeDynamoDbRequest, type DynamoDbProxy, type ProxiedRequest, type RequestAnswer, type RequestFault } from '../faults/dynamodb-proxy';
import type { FunctionModel } from '../model/flow-model';
import type { InvocationOutcome } from '../observation/observer';
import { lambdaEnvironmentVariables } from './environment-variables';
import { awsRequestIdOf, lambdaContextData, newLogStreamName, type LambdaFunctionIdentity } from './lambda-context';
import type { ScheduledEnvironment } from '../schedule/scheduled-environment';
import { WORKER_STALL_LIMIT_MS, WorkerStalledError } from '../schedule/worker-stall';
import { WORKER_BOOTSTRAP_SOURCE } from './worker-bootstrap';
import type { FireTimerMessage, InvokeMessage, OutsideCall, ReportedError, WorkerData, WorkerMessage } from './worker-protocol';

/**
 * How long loading the handler may take, in real time, without a scheduler: Lambda's init phase limit
 * (https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtime-environment.html#runtimes-lifecycle-ib). Under a
 * scheduler the clock stands still while a worker starts, so a slow init is the machine's load: only
 * {@link WorkerStalledError}'s limit stops it.
 */
export const INIT_TIMEOUT_SECONDS = 10;

/** What an environment is started with. */
export interface ExecutionEnvironmentOptions {
  readonly fn: FunctionModel;
  readonly identity: LambdaFunctionIdentity;
  /** The function's variables, resolved to local names. */
  readonly functionVariables: Readonly<Record<string, string>>;
  readonly clock: VirtualClock;
  /** The real DynamoDB Local: the environment's proxy forwards to it. */
  readonly dynamoDbEndpoint: string;
  readonly sqsEndpoint: string;
  /** The simulator's SNS endpoint. @default SNS calls are blocked */
  readonly snsEndpoint?: string;
  /** The simulator's S3 endpoint (`AWS_ENDPOINT_URL_S3`), with the environment's sender path. @default S3 calls go to the blocked endpoint */
  readonly s3Endpoint?: string;
  /** Where calls to services that are not simulated go. */
  readonly blockedEndpoint: string;
  /** Each line the function writes. */
  readonly onOutput: (line: string, stream: 'stdout' | 'stderr') => void;
  /** Authorizes each DynamoDB request (IAM). @default every request is allowed */
  readonly authorizeDynamoDb?: AuthorizeDynamoDbRequest;
  /**
   * Refuses DynamoDB requests that meet an ongoing request on the same item, as DynamoDB does: one arbiter shared by
   * every environment of a run. @default no transaction conflicts (DynamoDB Local serializes the requests)
   */
  readonly transactionConflicts?: ConflictArbiter;
  /** The environment's `AWS_ACCESS_KEY_ID`: names the function to the simulator's SQS endpoint. @default a shared dummy key */
  readonly accessKeyId?: string;
  /**
   * The run's seeded scheduler decides when this environment's DynamoDB requests go and its timers fire, and `seed`
   * seeds its `Math.random` and its `node:crypto` and Web Crypto random sources (simulator/schedule/seeded-scheduler.ts).
   * @default requests go when they arrive, real timers, the worker's own randomness
   */
  readonly scheduling?: { readonly environment: ScheduledEnvironment; readonly seed: number; readonly pid: number };
  /**
   * The simulation's time (epoch ms) the init reads, whatever the clock does meanwhile: an environment initialized
   * ahead of need (FunctionRunner's `preInitialize`) initializes while the run goes on. @default the clock, as it runs
   */
  readonly initClockMs?: number;
}

type InitResult =
  | { readonly ok: true }
  | ({ readonly ok: false } & ReportedError)
  | { readonly ok: false; readonly timedOut: true }
  | { readonly ok: false; readonly stalled: WorkerStalledError };

interface RunningInvocation {
  readonly invocationId: number;
  /** Hears each HTTP call of the invocation outside the simulator. */
  readonly onOutsideCall?: (call: OutsideCall) => void;
  /** Ends the invocation with `outcome`; the environment is disposed first unless `keepWarm`. */
  finish(outcome: InvocationOutcome, keepWarm: boolean): void;
  /** Stops the invocation without an outcome (the run cannot go on): disposes the environment, then rejects with `error`. */
  abandon(error: Error): void;
}

/** A started environment. */
export class ExecutionEnvironment {
  /** Starts the proxy and the worker; the handler loads in the background (the first invocation waits for it). */
  public static async start(options: ExecutionEnvironmentOptions): Promise<ExecutionEnvironment> {
    const proxy = await startDynamoDbProxy(options.dynamoDbEndpoint, {
      authorize: options.authorizeDynamoDb,
      transactionConflicts: options.transactionConflicts,
      now: () => options.clock.now(),
      ...(options.scheduling === undefined ? {} : { scheduling: options.scheduling.environment }),
    });
    return new ExecutionEnvironment(options, proxy);
  }

  private readonly worker: Worker;
  private readonly initialized: Promise<InitResult>;
  private resolveInit!: (result: InitResult) => void;
  private readonly logStreamName: string;
  private current: RunningInvocation | undefined;
  private invocationCount = 0;
  private disposal: Promise<void> | undefined;
  /** The environment's own `/tmp` (its `TMPDIR`), empty at its start and removed when it is disposed, as on AWS. */
  private readonly tmpDirectory: string;

  private constructor(
    private readonly options: ExecutionEnvironmentOptions,
    private readonly proxy: DynamoDbProxy,
  ) {
    this.logStreamName = newLogStreamName(options.clock.now(), options.scheduling?.seed);
    this.initialized = new Promise<InitResult>((resolve) => {
      this.resolveInit = resolve;
    });
    this.tmpDirectory = mkdtempSync(join(tmpdir(), 'ief-lambda-tmp-'));
    const workerData: WorkerData = {
      clockBuffer: options.clock.buffer,
      tmpDirectory: this.tmpDirectory,
      taskRoot: options.fn.assetDirectory,
      handler: options.fn.handler,
      ...(options.scheduling === undefined ? {} : { replay: { seed: options.scheduling.seed, pid: options.scheduling.pid } }),
      ...(options.initClockMs === undefined ? {} : { initClockMs: options.initClockMs }),
    };
    this.worker = new Worker(WORKER_BOOTSTRAP_SOURCE, {
      eval: true,
      workerData,
      execArgv: [],
      stdout: true,
      stderr: true,
      env: lambdaEnvironmentVariables({
        functionVariables: options.functionVariables,
        functionName: options.identity.functionName,
        region: options.identity.region,
        memorySizeMb: options.identity.memorySizeMb,
        taskRoot: options.fn.assetDirectory,
        handler: options.fn.handler,
        runtime: options.fn.runtime,
        logStreamName: this.logStreamName,
        dynamoDbEndpoint: proxy.endpoint,
        sqsEndpoint: options.sqsEndpoint,
        ...(options.snsEndpoint === undefined ? {} : { snsEndpoint: options.snsEndpoint }),
        ...(options.s3Endpoint === undefined ? {} : { s3Endpoint: options.s3Endpoint }),
        blockedEndpoint: options.blockedEndpoint,
        ...(options.fn.applicationLogLevel === undefined ? {} : { applicationLogLevel: options.fn.applicationLogLevel }),
        ...(options.accessKeyId === undefined ? {} : { accessKeyId: options.accessKeyId }),
        tmpDirectory: this.tmpDirectory,
      }),
    });
    createInterface({ input: this.worker.stdout, crlfDelay: Infinity }).on('line', (line) => this.deliver(() => options.onOutput(line, 'stdout')));
    createInterface({ input: this.worker.stderr, crlfDelay: Infinity }).on('line', (line) => this.deliver(() => options.onOutput(line, 'stderr')));
    this.worker.on('message', (message: WorkerMessage) => this.onMessage(message));
    options.scheduling?.environment.attach(
      {
        fireTimer: () => this.worker.postMessage({ type: 'fire-timer' } satisfies FireTimerMessage),
        timeOut: (stuck) => this.current?.finish({ kind: 'timed-out', timeoutSeconds: options.identity.timeoutSeconds, ...(stuck === true ? { stuck } : {}) }, false),
        stalled: (limitMs) => this.current?.abandon(new WorkerStalledError(options.fn.key, 'invocation', limitMs)),
      },
      options.identity.timeoutSeconds * 1000,
    );
    this.worker.on('error', (error) => this.onRuntimeDeath({ errorName: error.name, errorMessage: error.message }));
    this.worker.on('exit', (code) => {
      if (this.disposal === undefined) this.onRuntimeDeath({ errorName: 'Runtime.ExitError', errorMessage: `Runtime exited with error: exit status ${code}` });
    });
  }

  /** Whether the environment can take another invocation. */
  public get alive(): boolean {
    return this.disposal === undefined;
  }

  /**
   * Runs one invocation: waits for the handler to load (a cold start), sends the event, and resolves with what became of
   * it. `decide` picks the fault of each DynamoDB request the invocation makes. `began` is called once the invocation
   * was sent to the worker, or once it is known that it will not be. `onAnswered` hears whether DynamoDB applied each
   * request (see {@link DynamoDbProxy.beginInvocation}). `onOutsideCall` hears each HTTP call the invocation starts to
   * a service outside the simulator (a replayable worker's only).
   */
  public async invoke(
    event: unknown,
    decide: (request: ProxiedRequest) => RequestFault,
    began?: () => void,
    onAnswered?: (request: ProxiedRequest, answer: RequestAnswer) => void,
    onOutsideCall?: (call: OutsideCall) => void,
  ): Promise<InvocationOutcome> {
    try {
      return await this.invokeOnce(event, decide, began, onAnswered, onOutsideCall);
    } finally {
      began?.();
    }
  }

  private async invokeOnce(
    event: unknown,
    decide: (request: ProxiedRequest) => RequestFault,
    began: (() => void) | undefined,
    onAnswered: ((request: ProxiedRequest, answer: RequestAnswer) => void) | undefined,
    onOutsideCall?: (call: OutsideCall) => void,
  ): Promise<InvocationOutcome> {
    if (this.current !== undefined) throw new Error(`the execution environment of function ${this.options.fn.key} is already running an invocation`);
    // an environment that was disposed has its init decided: a runtime that died while it initialized (a spare) fails
    // the invocation with that init error, as an init on demand would; one disposed after its init, as an exit
    const init = await this.initOrTimeOut();
    if (!init.ok) {
      await this.dispose();
      if ('stalled' in init) throw init.stalled;
      if ('timedOut' in init) return { kind: 'timed-out', timeoutSeconds: INIT_TIMEOUT_SECONDS };
      return { kind: 'threw', errorName: init.errorName, errorMessage: init.errorMessage, atInit: true };
    }
    if (!this.alive) return { kind: 'threw', errorName: 'Runtime.ExitError', errorMessage: 'the runtime exited before the invocation started' };

    const invocationId = ++this.invocationCount;
    const { timeoutSeconds } = this.options.identity;
    return new Promise<InvocationOutcome>((resolve, reject) => {
      let settled = false;
      // under a scheduler the invocation times out in virtual time only (its next timer is due after the timeout, or it
      // waits for nothing: ScheduledEnvironment); real time, which a loaded machine stretches, decides no outcome, and
      // only stops a worker that never goes quiet again (ScheduledEnvironment.watchStall, as a stalled run)
      const timer = this.options.scheduling === undefined ? setTimeout(() => invocation.finish({ kind: 'timed-out', timeoutSeconds }, false), timeoutSeconds * 1000) : undefined;
      const invocation: RunningInvocation = {
        invocationId,
        ...(onOutsideCall === undefined ? {} : { onOutsideCall }),
        abandon: (error) => {
          if (settled) return;
          settled = true;
          this.current = undefined;
          void this.dispose().then(() => reject(error));
        },
        finish: (outcome, keepWarm) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          this.current = undefined;
          const scheduled = this.options.scheduling?.environment;
          scheduled?.invocationEnded();
          if (keepWarm) {
            this.proxy.endInvocation();
            this.deliver(() => resolve(outcome));
          } else {
            // the process is gone before anyone hears of the outcome: it can send nothing more. Terminating the worker
            // takes real time: the scheduler waits for it, or the outcome would land after however many steps the
            // machine's speed allowed (a seeded run would not replay)
            const hold = scheduled?.holdScheduler();
            void this.dispose().then(() => {
              this.deliver(() => resolve(outcome));
              hold?.release();
            });
          }
        },
      };
      this.current = invocation;
      this.proxy.beginInvocation(decide, (crash) => invocation.finish({ kind: 'crashed', atRequest: crash.atRequest, afterCommit: crash.afterCommit }, false), onAnswered);
      const message: InvokeMessage = { type: 'invoke', invocationId, event, context: lambdaContextData(this.options.identity, this.logStreamName, Date.now(), awsRequestIdOf(invocationId, this.options.scheduling?.seed)) };
      const scheduled = this.options.scheduling?.environment;
      const send = (): void => {
        scheduled?.invocationBegan();
        this.worker.postMessage(message);
      };
      if (scheduled === undefined) send();
      else scheduled.requestStart(send);
      began?.();
    });
  }

  /**
   * Passes on what the run may see of the worker (a line it wrote, its invocation's end): under a scheduler, when the
   * run is quiet, in the order the scheduler gives environments (see ScheduledEnvironment.deliver); at once without one.
   */
  private deliver(delivery: () => void): void {
    const scheduled = this.options.scheduling?.environment;
    if (scheduled === undefined) delivery();
    else scheduled.deliver(delivery);
  }

  /**
   * Terminates the worker, stops the proxy and removes the environment's `/tmp`; an invocation still running ends as
   * `Runtime.ExitError`.
   */
  public dispose(): Promise<void> {
    if (this.disposal === undefined) {
      this.disposal = (async () => {
        this.resolveInit({ ok: false, errorName: 'Runtime.ExitError', errorMessage: 'the execution environment was disposed' });
        this.options.scheduling?.environment.disposed();
        await this.worker.terminate();
        await this.proxy.stop();
        rmSync(this.tmpDirectory, { recursive: true, force: true });
      })();
      this.current?.finish({ kind: 'threw', errorName: 'Runtime.ExitError', errorMessage: 'the execution environment was disposed during the invocation' }, false);
    }
    return this.disposal;
  }

  private initOrTimeOut(): Promise<InitResult> {
    let timer: NodeJS.Timeout | undefined;
    // under a scheduler no simulated time passes while a worker starts (the clock stands still), so a slow init is the
    // machine's load, not the function's: real time only stops an init that never ends, as a stalled worker
    const scheduled = this.options.scheduling?.environment;
    const limitMs = scheduled === undefined ? INIT_TIMEOUT_SECONDS * 1000 : WORKER_STALL_LIMIT_MS;
    const expired: InitResult = scheduled === undefined ? { ok: false, timedOut: true } : { ok: false, stalled: new WorkerStalledError(this.options.fn.key, 'init', limitMs) };
    const timeout = new Promise<InitResult>((resolve) => {
      timer = setTimeout(() => resolve(expired), limitMs);
    });
    return Promise.race([this.initialized, timeout]).finally(() => clearTimeout(timer));
  }

  private onMessage(message: WorkerMessage): void {
    switch (message.type) {
      case 'ready':
        return this.resolveInit({ ok: true });
      case 'init-failed':
        return this.resolveInit({ ok: false, errorName: message.errorName, errorMessage: message.errorMessage });
      case 'returned':
        if (this.current?.invocationId === message.invocationId) this.current.finish({ kind: 'returned', response: message.response }, true);
        return;
      case 'threw':
        if (this.current?.invocationId === message.invocationId) this.current.finish({ kind: 'threw', errorName: message.errorName, errorMessage: message.errorMessage }, true);
        return;
      case 'fatal':
        return this.onRuntimeDeath(message);
      case 'quiet':
        return this.options.scheduling?.environment.quiet(message);
      case 'outside-call': {
        if (this.current?.invocationId !== message.invocationId) return;
        const { type: _type, invocationId: _invocationId, ...call } = message;
        return this.current.onOutsideCall?.(call);
      }
    }
  }

  /** The runtime would exit: the invocation (or the init) fails with `error` and the environment is disposed. */
  private onRuntimeDeath(error: ReportedError): void {
    if (this.disposal !== undefined) return;
    const { errorName, errorMessage } = error;
    this.resolveInit({ ok: false, errorName, errorMessage });
    if (this.current !== undefined) this.current.finish({ kind: 'threw', errorName, errorMessage }, false);
    else void this.dispose();
  }
}
