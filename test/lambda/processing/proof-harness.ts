/**
 * The crash and fault machinery of the lease and multi-step proof tests. Not a test file.
 *
 * Each SQS invocation runs in its own AsyncLocalStorage context with a crash plan. When the plan's point is reached the
 * invocation "crashes": from then on none of its DynamoDB requests leaves the process, its effects and dead-letter
 * sends do not happen, and the handler throws, so the at-least-once harness returns the whole batch to the queue.
 * DynamoDB faults (lost responses, throttling) come from the fault proxy in front of DynamoDB Local.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DeadLetter, DeadLetterPublisher } from '../../../lambda/consumer/dead-letter';
import type { SqsBatchHandler } from '../../../lambda/consumer/create-consumer';
import type { SQSBatchResponse, SQSEvent } from '../../../lambda/consumer/sqs';
import type { FaultProxy } from '../../support/fault-proxy';

/** Where an invocation crashes (at the `countdown`-th occasion of that kind within the invocation). */
export type CrashPoint =
  /** before the claim (PutItem) leaves the process */
  | 'before-claim'
  /** after the claim succeeded, before the effect */
  | 'after-claim'
  /** during the effect, after it applied (the effect throws) */
  | 'in-effect'
  /** after the effect returned, before the write that records it */
  | 'after-effect'
  /** after a fenced write (completion, next-step start, takeover, block, release) succeeded, before the ack */
  | 'after-write';

export const CRASH_POINTS: readonly CrashPoint[] = ['before-claim', 'after-claim', 'in-effect', 'after-effect', 'after-write'];

interface InvocationState {
  readonly point?: CrashPoint;
  countdown: number;
  crashed: boolean;
}

const invocation = new AsyncLocalStorage<InvocationState>();

function crashError(): Error {
  return Object.assign(new Error('the invocation crashed (simulated)'), { name: 'SimulatedCrash' });
}

/** Crashes and faults for one proof run. */
export class CrashInjector {
  /** How often each crash point fired. */
  public readonly fired = new Map<CrashPoint, number>();
  private enabled = true;
  private crashes = 0;

  public constructor(private readonly random: () => number, private readonly crashRate: number) {}

  /** Installs the crash middleware on `client` (every DynamoDB request of an invocation goes through it). */
  public instrument(client: DynamoDBClient): void {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const state = invocation.getStore();
        if (state?.crashed) throw crashError();
        const command = String(context.commandName);
        if (command === 'PutItemCommand') this.reach(state, 'before-claim');
        if (state?.crashed) throw crashError();
        const output = await next(args);
        if (command === 'PutItemCommand') this.reach(state, 'after-claim');
        if (command === 'UpdateItemCommand') this.reach(state, 'after-write');
        return output;
      },
      { step: 'initialize', name: 'simulatedCrash' },
    );
  }

  /** Stops injecting crashes (the operator's redrive runs clean). */
  public disable(): void {
    this.enabled = false;
  }

  /** Call at the start of an effect: a crashed invocation runs nothing more. */
  public beforeEffect(): void {
    if (invocation.getStore()?.crashed) throw crashError();
  }

  /** Call right after an effect applied: may crash there (throwing) or mark the invocation crashed (returning). */
  public afterEffect(): void {
    const state = invocation.getStore();
    if (this.reach(state, 'in-effect')) throw crashError();
    this.reach(state, 'after-effect');
  }

  /** True when the current invocation has crashed. */
  public get crashed(): boolean {
    return invocation.getStore()?.crashed ?? false;
  }

  /** Wraps a consumer into one that crashes per its plan; a crashed invocation throws. */
  public wrap(handler: SqsBatchHandler): (event: SQSEvent) => Promise<SQSBatchResponse> {
    return async (event) => {
      const crash = this.enabled && this.random() < this.crashRate;
      // the points take turns, so every one of them is exercised
      const point = crash ? (CRASH_POINTS[this.crashes++ % CRASH_POINTS.length] as CrashPoint) : undefined;
      const state: InvocationState = {
        ...(point !== undefined ? { point } : {}),
        countdown: 1 + Math.floor(this.random() * 2),
        crashed: false,
      };
      const response = await invocation.run(state, () => handler(event));
      if (state.crashed) throw crashError();
      return response;
    };
  }

  private reach(state: InvocationState | undefined, point: CrashPoint): boolean {
    if (state === undefined || state.crashed || state.point !== point) return false;
    state.countdown -= 1;
    if (state.countdown > 0) return false;
    state.crashed = true;
    this.fired.set(point, (this.fired.get(point) ?? 0) + 1);
    return true;
  }
}

/** A dead-letter queue that records what it receives; a crashed invocation can not send. */
export class CrashAwareDeadLetters implements DeadLetterPublisher {
  public readonly published: DeadLetter[] = [];
  public constructor(private readonly injector: CrashInjector) {}

  public async publish(deadLetter: DeadLetter): Promise<void> {
    if (this.injector.crashed) throw new Error('the invocation crashed (simulated)');
    this.published.push(deadLetter);
  }

  public has(eventId: string): boolean {
    return this.published.some((letter) => letter.eventId === eventId);
  }
}

/** Adds lost responses and throttles to `proxy` at seeded positions of PutItem and UpdateItem requests. */
export function injectDynamoDbFaults(proxy: FaultProxy, random: () => number, options: { lostResponses: number; throttles: number; spread: number }) {
  const counters: Array<() => number> = [];
  for (const target of ['DynamoDB_20120810.PutItem', 'DynamoDB_20120810.UpdateItem']) {
    const used = new Set<number>();
    const position = (): number => {
      let nth = 1 + Math.floor(random() * options.spread);
      while (used.has(nth)) nth += 1;
      used.add(nth);
      return nth;
    };
    for (let index = 0; index < options.lostResponses; index += 1) counters.push(proxy.inject({ target, nth: position(), fault: { kind: 'drop-response' } }));
    for (let index = 0; index < options.throttles; index += 1) counters.push(proxy.inject({ target, nth: position(), fault: { kind: 'throttle' } }));
  }
  return { fired: () => counters.reduce((total, counter) => total + counter(), 0) };
}
