/**
 * Simulated Lambda crashes for the proof and integration tests. Not a test file.
 *
 * A crash, as the rest of the world sees it: from the moment the process dies nothing more of its invocation leaves
 * it (no DynamoDB request, no effect, no dead letter), and SQS gets no answer, so the whole batch comes back. The
 * {@link CrashInjector} plans such crashes per invocation (at a point, e.g. just after a commit was answered);
 * {@link interruptibleClient} is the same crash, triggered by hand.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { DynamoDBClient, DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import type { DeadLetterPublisher } from '../../../lambda/consumer/dead-letter';
import type { SqsBatchHandler } from '../../../lambda/consumer/create-consumer';
import { localClient } from '../dynamodb-client';

/** Raised in place of the process dying. */
export class SimulatedCrash extends Error {
  public constructor() {
    super('the invocation crashed (simulated)');
    this.name = 'SimulatedCrash';
  }
}

/** Where the invocations of a consumer may crash. */
export interface CrashPoints<Point extends string> {
  /** Every point. */
  readonly points: readonly Point[];
  /** The point a DynamoDB request of `command` (e.g. `PutItemCommand`) reaches just before it is sent, if any. */
  readonly beforeRequest: (command: string) => Point | undefined;
  /** The point it reaches once DynamoDB answered (`succeeded`: without an error), if any. */
  readonly afterRequest: (command: string, succeeded: boolean) => Point | undefined;
  /** A crashing invocation dies the 1st to `maxOccurrence`-th time (seeded) it reaches its point. */
  readonly maxOccurrence: number;
}

const COMMIT_COMMANDS: ReadonlySet<string> = new Set(['TransactWriteItemsCommand', 'PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand']);

/**
 * The crash points of the transactional and aggregate modes, around the write that commits a message: just before it
 * is sent (`before-commit`: nothing applied), or once it was answered, whatever the answer (`after-commit`: maybe
 * applied, never acknowledged). The nth commit of an invocation, n from 1 to 3.
 */
export const COMMIT_CRASH_POINTS: CrashPoints<'before-commit' | 'after-commit'> = {
  points: ['before-commit', 'after-commit'],
  beforeRequest: (command) => (COMMIT_COMMANDS.has(command) ? 'before-commit' : undefined),
  afterRequest: (command) => (COMMIT_COMMANDS.has(command) ? 'after-commit' : undefined),
  maxOccurrence: 3,
};

/** A crash point of the lease and multi-step modes. */
export type LeaseCrashPoint =
  /** before the claim (PutItem) leaves the process */
  | 'before-claim'
  /** after the claim succeeded, before the effect */
  | 'after-claim'
  /** during the effect, after it applied (the effect throws); reached through {@link CrashInjector.reach} */
  | 'in-effect'
  /** after the effect returned, before the write that records it; reached through {@link CrashInjector.reach} */
  | 'after-effect'
  /** after a fenced write (completion, next-step start, takeover, block, release) succeeded, before the ack */
  | 'after-write';

/** The crash points of the lease and multi-step modes: around the claim, the effect and every fenced write. */
export const LEASE_CRASH_POINTS: CrashPoints<LeaseCrashPoint> = {
  points: ['before-claim', 'after-claim', 'in-effect', 'after-effect', 'after-write'],
  beforeRequest: (command) => (command === 'PutItemCommand' ? 'before-claim' : undefined),
  afterRequest: (command, succeeded) => {
    if (!succeeded) return undefined;
    if (command === 'PutItemCommand') return 'after-claim';
    return command === 'UpdateItemCommand' ? 'after-write' : undefined;
  },
  maxOccurrence: 2,
};

interface InvocationState {
  readonly point?: string;
  countdown: number;
  crashed: boolean;
}

/**
 * Crashes for one proof run. Each invocation {@link wrap}ped by it runs in its own AsyncLocalStorage context and,
 * with probability `rate` (seeded), with a crash plan: a point and at which occurrence of it the invocation dies. The
 * point is the one that has fired least so far, counting the plans of invocations still running, so concurrent
 * invocations crash at different points and every point fires, even in a run with few crashes. A point is reached by
 * a DynamoDB request of a client {@link instrument}ed by it, or by the test calling {@link reach} (e.g. from an
 * effect). A point reached after a request passes the request's answer on: the crash shows from the next request,
 * effect or dead letter on, and when the invocation ends it throws.
 */
export class CrashInjector<Point extends string = string> {
  /** How often each crash point fired. */
  public readonly fired = new Map<Point, number>();
  private readonly invocation = new AsyncLocalStorage<InvocationState>();
  private readonly running = new Map<Point, number>();
  private enabled = true;

  public constructor(
    private readonly crashPoints: CrashPoints<Point>,
    private readonly random: () => number,
    private readonly rate: number,
  ) {}

  /** Every crash point. */
  public get points(): readonly Point[] {
    return this.crashPoints.points;
  }

  /** True when the current invocation has crashed. */
  public get crashed(): boolean {
    return this.invocation.getStore()?.crashed ?? false;
  }

  /** Installs the crash on `client`: every DynamoDB request of a wrapped invocation goes through it. */
  public instrument(client: DynamoDBClient): void {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const command = String(context.commandName);
        // a crashed invocation sends nothing; otherwise the request may be where it crashes
        this.reachOptional(this.crashPoints.beforeRequest(command));
        this.throwIfCrashed();
        let output: Awaited<ReturnType<typeof next>>;
        try {
          output = await next(args);
        } catch (error) {
          this.reachOptional(this.crashPoints.afterRequest(command, false));
          throw error;
        }
        this.reachOptional(this.crashPoints.afterRequest(command, true));
        return output;
      },
      { step: 'initialize', name: 'simulatedCrash' },
    );
  }

  /** `publisher`, except that a crashed invocation can not send dead letters. */
  public guard(publisher: DeadLetterPublisher): DeadLetterPublisher {
    return {
      publish: async (deadLetter) => {
        this.throwIfCrashed();
        await publisher.publish(deadLetter);
      },
    };
  }

  /** Throws when the current invocation has crashed: call before an effect, nothing runs after a crash. */
  public throwIfCrashed(): void {
    if (this.crashed) throw new SimulatedCrash();
  }

  /** The current invocation reaches `point`; true when it crashes there (from then on it is crashed). */
  public reach(point: Point): boolean {
    const state = this.invocation.getStore();
    if (state === undefined || state.crashed || state.point !== point) return false;
    state.countdown -= 1;
    if (state.countdown > 0) return false;
    state.crashed = true;
    this.fired.set(point, (this.fired.get(point) ?? 0) + 1);
    return true;
  }

  /** Stops planning crashes (the operator's redrive runs clean). */
  public disable(): void {
    this.enabled = false;
  }

  /** `handler` with a crash plan per invocation; a crashed invocation throws, whatever the handler returned. */
  public wrap(handler: SqsBatchHandler): SqsBatchHandler {
    return async (event) => {
      const crashes = this.enabled && this.random() < this.rate;
      const point = crashes ? this.leastFiredPoint() : undefined;
      const state: InvocationState = {
        ...(point !== undefined ? { point } : {}),
        countdown: 1 + Math.floor(this.random() * this.crashPoints.maxOccurrence),
        crashed: false,
      };
      if (point !== undefined) this.running.set(point, (this.running.get(point) ?? 0) + 1);
      try {
        const response = await this.invocation.run(state, () => handler(event));
        if (state.crashed) throw new SimulatedCrash();
        return response;
      } finally {
        if (point !== undefined) this.running.set(point, (this.running.get(point) ?? 0) - 1);
      }
    };
  }

  /** The point fired least so far, counting the plans still running; the first of equals. */
  private leastFiredPoint(): Point {
    const weight = (point: Point) => (this.fired.get(point) ?? 0) + (this.running.get(point) ?? 0);
    return this.crashPoints.points.reduce((least, point) => (weight(point) < weight(least) ? point : least));
  }

  private reachOptional(point: Point | undefined): void {
    if (point !== undefined) this.reach(point);
  }
}

/** What {@link interruptibleClient} returns. */
export interface InterruptibleClient {
  readonly client: DynamoDBClient;
  /** From now on every request fails before it is sent (the process "crashed"). */
  crash(): void;
}

/**
 * A DynamoDB client for DynamoDB Local whose requests can be made to fail before they leave the process: a Lambda
 * invocation that crashed, seen from DynamoDB (nothing more arrives from it). The failure happens before the SDK's
 * retry step, so it is not retried.
 */
export function interruptibleClient(overrides: DynamoDBClientConfig = {}): InterruptibleClient {
  const client = localClient(overrides);
  let crashed = false;
  client.middlewareStack.add(
    (next) => async (args) => {
      if (crashed) throw new SimulatedCrash();
      return next(args);
    },
    { step: 'initialize', name: 'simulatedCrash' },
  );
  return {
    client,
    crash: () => {
      crashed = true;
    },
  };
}
