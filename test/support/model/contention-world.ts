/**
 * The world of the contention model (issue 40): real consumers of one processing mode over DynamoDB Local, behind a
 * fault proxy that answers as real DynamoDB does when a request meets a transaction in progress on its item
 * (`transactionConflicts: true`), every event on ONE hot item (an account, an aggregate), delivered by several
 * invocations at once, with AWS's contention faults (`TransactionConflict`, throttling) injected on top. Not a test file.
 *
 * Each invocation has a deadline: `getRemainingTimeInMillis()` counts down by virtual time, the same on a loaded
 * machine: the back-off waits the contention retry takes (its `sleep`, which also really waits), a round trip per
 * DynamoDB request ({@link ROUND_TRIP_MILLISECONDS}) and a run of the user's code per handler, `apply` or step
 * ({@link USER_CODE_MILLISECONDS}). Virtual time runs as Lambda's wall clock does when records run at once: each
 * record's turn has a clock of its own (the consumer's `recordScope`), started where its worker's previous turn ended
 * (the earliest freed of the batch's `maxConcurrency` slots), so turns that run side by side spend their time side by
 * side, not one after another; a transaction waits for the batch's earlier commit on the hot item (the runtime's item
 * locks), so it starts no earlier than that commit's end. The invocation's time is the latest any of its turns
 * reached. An invocation that runs past its deadline is killed by Lambda: no response, every copy of its batch stays
 * on the queue. Up to {@link ENVIRONMENTS} invocations run at once, each processing up to its consumer's
 * `maxConcurrency` records at once (a run's choice), so a batch can be larger than that.
 *
 * Between delivery rounds the queue's visibility timeout passes ({@link VISIBILITY_TIMEOUT_SECONDS}): a copy an
 * invocation failed is received again only then, and a lease its invocation left behind has expired by then (the
 * constructs refuse a `leaseDuration` that is not shorter than `visibilityTimeout`).
 *
 * The checks: no copy of a valid event reaches the DLQ (SQS moves one there itself at `maxReceiveCount` receives:
 * contention the retry can absorb must not spend them), no invocation runs past its deadline, no event is applied
 * twice; and after the contention stops, every event is applied exactly once. A copy whose every failed receive met
 * contention that outlasts an invocation ({@link OUTLASTING_REFUSALS} refusals in a row) reaches the DLQ on AWS too:
 * that is what the DLQ is for, so it is not a violation; the operator redrives it after the contention (a new
 * message, counted from its first receive), and it must then be applied exactly once like any other.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { GetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { inject } from 'vitest';
import { createAggregateConsumer } from '../../../lambda/aggregate/aggregate-consumer';
import type { ConsumerConfig, LeaseConsumerConfig } from '../../../lambda/config';
import type { RecordScope } from '../../../lambda/consumer/batch';
import type { SqsBatchHandler } from '../../../lambda/consumer/create-consumer';
import type { DeadLetter, DeadLetterPublisher } from '../../../lambda/consumer/dead-letter';
import { createTransactionalConsumer } from '../../../lambda/consumer/transactional-consumer';
import { createLeaseConsumer } from '../../../lambda/processing/lease-consumer';
import { createMultiStepConsumer } from '../../../lambda/processing/multi-step-consumer';
import type { ContentionRetryOptions } from '../../../lambda/transaction/contention-retry';
import { localClient } from '../dynamodb-client';
import { startFaultProxy, type FaultProxy, type FaultRule } from '../fault-proxy';
import { FakeClock } from '../proof/fake-clock';
import { recordingLogger } from '../proof/recorders';
import type { ModelTables } from './world';

/** The modes the contention model runs. */
export type ContentionMode = 'transactional' | 'lease' | 'multi-step' | 'aggregate';

/** Contention injected for one delivery round: `times` consecutive refusals of the mode's writes. */
export interface ContentionFault {
  readonly kind: 'none' | 'conflict' | 'throttle';
  readonly times: number;
}

/** Each invocation's time: what `getRemainingTimeInMillis()` starts from (virtual time counts it down). */
export const INVOCATION_BUDGET_MILLISECONDS = 3000;
/** The virtual time of one DynamoDB request. */
export const ROUND_TRIP_MILLISECONDS = 10;
/** The virtual time of one run of the user's code (a handler, `apply`, a step). */
export const USER_CODE_MILLISECONDS = 100;
/** How many execution environments, so how many invocations at most at once (the issue's concurrency 10). */
export const ENVIRONMENTS = 10;
/** The queue's redrive policy: SQS moves a copy to the DLQ itself once received this often. */
export const MAX_RECEIVE_COUNT = 3;
/** Refusals in a row that outlast any one invocation (at the model's costs, several times its budget). */
export const OUTLASTING_REFUSALS = 80;
/**
 * The time between delivery rounds: the queue's visibility timeout, after which a failed copy is received again. The
 * constructs require `visibilityTimeout` of at least 6 x the function's timeout and longer than `leaseDuration` (60 s
 * in the model's lease tables); the runtime also waits out its clock-skew allowance (5 s) before it takes an expired
 * lease over, so the model's queue has a timeout past both: a lease left live is over at the next receive.
 */
export const VISIBILITY_TIMEOUT_SECONDS = 66;
/** The retry the consumers run with: a smaller cap than the default, so a budget is a few seconds of real waiting. */
const RETRY: Omit<ContentionRetryOptions, 'random' | 'sleep'> = { baseDelayMilliseconds: 10, maxDelayMilliseconds: 100, safetyMarginMilliseconds: 500 };

const TARGETS = {
  TRANSACT: 'DynamoDB_20120810.TransactWriteItems',
  PUT: 'DynamoDB_20120810.PutItem',
  UPDATE: 'DynamoDB_20120810.UpdateItem',
} as const;

interface Copy {
  readonly sqsMessageId: string;
  readonly eventId: string;
  readonly body: string;
  receiveCount: number;
  /** Whether each failed receive met contention that outlasts an invocation. */
  readonly failedReceives: boolean[];
}

/** One record's turn in an invocation: its virtual time, from the invocation's start. */
interface Turn {
  elapsed: number;
}

/**
 * One invocation's virtual time: work outside any record's turn, the times the batch's worker slots were freed, the
 * end of the latest commit on the hot item, the latest time any turn reached.
 */
class InvocationClock {
  public base = 0;
  public commitFloor = 0;
  private reached = 0;
  private readonly freed: number[] = [];

  /** A turn starts where the earliest freed slot was freed (a worker picks the next record), or at the start. */
  public startTurn(): Turn {
    if (this.freed.length === 0) return { elapsed: this.base };
    const earliest = this.freed.indexOf(Math.min(...this.freed));
    return { elapsed: this.freed.splice(earliest, 1)[0] as number };
  }

  public endTurn(turn: Turn): void {
    this.freed.push(turn.elapsed);
    this.reach(turn.elapsed);
  }

  public reach(time: number): void {
    if (time > this.reached) this.reached = time;
  }

  /** The invocation's elapsed time: the latest of its turns and its own work. */
  public get elapsed(): number {
    return Math.max(this.reached, this.base);
  }
}

/** What the model's code finds in its async context: the invocation, and the record's turn when inside one. */
interface TimeContext {
  readonly invocation: InvocationClock;
  readonly turn?: Turn;
}

/** A seeded random source (mulberry32): the retry's jitter is decided by the run's seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One run of the contention model. */
export class ContentionWorld {
  public readonly violations: string[] = [];
  public readonly history: string[] = [];
  private readonly clock = new FakeClock();
  private readonly queue: Copy[] = [];
  private readonly dlq: Copy[] = [];
  private readonly events = new Map<string, number>();
  private readonly hot = `hot-${randomUUID()}`;
  private readonly effects = new Map<string, number>();
  private readonly time = new AsyncLocalStorage<TimeContext>();
  private readonly direct: DynamoDBClient = localClient();
  private readonly logs = recordingLogger();
  private readonly handlers: SqsBatchHandler[];

  private constructor(
    public readonly mode: ContentionMode,
    private readonly tables: ModelTables,
    private readonly proxy: FaultProxy,
    random: () => number,
    private readonly maxConcurrency: number,
  ) {
    this.handlers = Array.from({ length: ENVIRONMENTS }, () => this.consumer(random));
  }

  /**
   * A run on `tables` with a proxy of its own that arbitrates conflicts as DynamoDB does; `seed` decides the jitter;
   * each consumer processes up to `maxConcurrency` records of a batch at once.
   */
  public static async start(mode: ContentionMode, tables: ModelTables, seed: number, maxConcurrency = 10): Promise<ContentionWorld> {
    const proxy = await startFaultProxy(inject('dynamoDbEndpoint'), { transactionConflicts: true, delayMs: 2 });
    return new ContentionWorld(mode, tables, proxy, seededRandom(seed), maxConcurrency);
  }

  public async stop(): Promise<void> {
    await this.proxy.stop();
    this.direct.destroy();
  }

  /** A producer's event on the hot item, as `copies` SQS messages (SNS may deliver one publish twice). */
  public publish(copies: number): void {
    const id = `evt-${randomUUID()}`;
    const amount = 1 + (this.events.size % 9);
    this.events.set(id, amount);
    const body = JSON.stringify({ specversion: '1.0', id, source: 'model', type: 'Deposited', time: this.clock.now().toISOString(), data: { account: this.hot, amount } });
    for (let copy = 0; copy < copies; copy++) this.queue.push({ sqsMessageId: `sqs-${randomUUID()}`, eventId: id, body, receiveCount: 0, failedReceives: [] });
    this.history.push(`publish ${id.slice(4, 12)} x${copies}`);
  }

  /** `invocations` invocations at once (different environments), each with up to `batch` copies, under `fault`. */
  public async deliverConcurrently(invocations: number, batch: number, fault: ContentionFault): Promise<void> {
    const batches = Array.from({ length: invocations }, () => this.take(batch)).filter((copies) => copies.length > 0);
    if (batches.length === 0) return;
    // a copy failed in the round before is received again once the visibility timeout has passed
    this.clock.advanceSeconds(VISIBILITY_TIMEOUT_SECONDS);
    if (fault.kind !== 'none') for (const rule of this.rules(fault)) this.proxy.inject(rule);
    const outlasting = fault.kind !== 'none' && fault.times >= OUTLASTING_REFUSALS;
    try {
      const results = await Promise.all(batches.map((copies, index) => this.invoke(index, copies, outlasting)));
      this.history.push(
        `deliver ${batches.map((copies) => copies.length).join('+')} at once${fault.kind === 'none' ? '' : `, ${fault.kind} x${fault.times}`}: ` +
          results.map((result) => result).join(', '),
      );
    } finally {
      this.proxy.clearRules();
    }
  }

  /** The checks after every command. */
  public async check(): Promise<void> {
    for (const copy of this.dlq) {
      const absorbable = copy.failedReceives.filter((outlasted) => !outlasted).length;
      if (absorbable > 0) this.violate(`event ${copy.eventId}, a valid event, reached the DLQ after ${copy.receiveCount} receives, ${absorbable} of them failed by contention the retry could absorb`);
    }
    for (const [id, count] of await this.appliedCounts()) if (count > 1) this.violate(`event ${id} applied ${count} times`);
  }

  /** The contention stops: copies are delivered until none is left; then every event must be applied exactly once. */
  public async drain(): Promise<void> {
    // the operator redrives what contention outlasting its invocations sent to the DLQ: new messages
    await this.check();
    const redriven = this.dlq.splice(0);
    for (const copy of redriven) this.queue.push({ ...copy, sqsMessageId: `sqs-${randomUUID()}`, receiveCount: 0, failedReceives: [] });
    if (redriven.length > 0) this.history.push(`redrive ${redriven.length} from the DLQ`);
    for (let round = 0; round < 20 && this.queue.length > 0; round++) await this.deliverConcurrently(2, 10, { kind: 'none', times: 0 });
    await this.check();
    const applied = await this.appliedCounts();
    for (const id of this.events.keys()) if ((applied.get(id) ?? 0) !== 1) this.violate(`after the contention, event ${id} is applied ${applied.get(id) ?? 0} times, not once`);
  }

  public report(): string {
    return `${this.violations.join('\n')}\nhistory:\n  ${this.history.join('\n  ')}`;
  }

  // ---- internals -----------------------------------------------------------------------------------------------

  private violate(message: string): void {
    if (!this.violations.includes(message)) this.violations.push(message);
  }

  private take(count: number): Copy[] {
    const taken = this.queue.splice(0, count);
    for (const copy of taken) copy.receiveCount += 1;
    return taken;
  }

  /** The mode's writes that contention refuses (a transaction's, or a single write's). */
  private rules(fault: ContentionFault): FaultRule[] {
    const faultOf = fault.kind === 'conflict' ? ({ kind: 'transaction-conflict' } as const) : ({ kind: 'throttle' } as const);
    const targets = this.mode === 'transactional' ? [TARGETS.TRANSACT] : this.mode === 'aggregate' ? [TARGETS.PUT] : [TARGETS.PUT, TARGETS.UPDATE];
    // a conflict on a single write is the proxy's arbiter's (real); injected conflicts are on transactions
    const targeted = fault.kind === 'conflict' && this.mode !== 'transactional' ? [] : targets;
    // a lease holder's writes (a step's start and end, the success write) are refused only briefly, and not in a round
    // whose claims already meet contention outlasting the invocation: a holder's write refused past its invocation
    // leaves the record PROCESSING until the lease ends, then taken over (its effect may run again) or blocked for an
    // operator (a multi-step step), which docs/PROCESSING-MODES.md ("Bounds") puts beyond what contention may cost
    const outlasting = fault.times >= OUTLASTING_REFUSALS;
    return targeted
      .filter((target) => target !== TARGETS.UPDATE || !outlasting)
      .map((target) => ({ target, times: target === TARGETS.UPDATE ? Math.min(fault.times, 10) : fault.times, fault: faultOf }));
  }

  private async invoke(env: number, batch: Copy[], outlasting: boolean): Promise<string> {
    const invocation = new InvocationClock();
    const context = { getRemainingTimeInMillis: () => Math.max(0, INVOCATION_BUDGET_MILLISECONDS - this.now()) };
    let failed: Set<string>;
    let said: string;
    try {
      const response = await this.time.run({ invocation }, () => (this.handlers[env] as SqsBatchHandler)({ Records: batch.map((copy) => ({ messageId: copy.sqsMessageId, body: copy.body, attributes: { ApproximateReceiveCount: String(copy.receiveCount) } })) }, context));
      failed = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
      said = `${batch.length - failed.size} acknowledged`;
    } catch {
      failed = new Set(batch.map((copy) => copy.sqsMessageId));
      said = 'threw';
    }
    if (invocation.elapsed > INVOCATION_BUDGET_MILLISECONDS) {
      // Lambda killed it at its deadline: no response, the whole batch stays on the queue
      this.violate(`an invocation of ${batch.length} ran past its deadline (${invocation.elapsed} ms of virtual time in a budget of ${INVOCATION_BUDGET_MILLISECONDS} ms)`);
      failed = new Set(batch.map((copy) => copy.sqsMessageId));
      said = 'timed out';
    }
    for (const copy of batch) {
      if (!failed.has(copy.sqsMessageId)) continue;
      copy.failedReceives.push(outlasting);
      if (copy.receiveCount >= MAX_RECEIVE_COUNT) this.dlq.push(copy);
      else this.queue.push(copy);
    }
    return said;
  }

  /** Our own dead letters: none is expected (every event is valid). */
  private readonly deadLetters: DeadLetterPublisher = {
    publish: async (letter: DeadLetter) => {
      this.violate(`event ${letter.eventId ?? '(unparsed)'}, a valid event, dead-lettered as ${letter.errorName}: ${letter.errorMessage.slice(0, 300)}`);
    },
  };

  /** The back-off wait: counted against the invocation's budget, and waited for real (the holder's commit must land). */
  private readonly sleep = (milliseconds: number): Promise<void> => {
    this.spend(milliseconds);
    return new Promise((resolve) => setTimeout(resolve, milliseconds));
  };

  /** Counts `milliseconds` of virtual time against the current turn (or the invocation's own work outside turns). */
  private spend(milliseconds: number): void {
    const context = this.time.getStore();
    if (context === undefined) return;
    if (context.turn === undefined) context.invocation.base += milliseconds;
    else {
      context.turn.elapsed += milliseconds;
      context.invocation.reach(context.turn.elapsed);
    }
  }

  /** The current virtual time, from the invocation's start: the turn's, or the invocation's own outside turns. */
  private now(): number {
    const context = this.time.getStore();
    return context === undefined ? 0 : (context.turn?.elapsed ?? context.invocation.base);
  }

  /** Each record's turn runs on a clock of its own, started where a worker slot was freed. */
  private readonly recordScope: RecordScope = async (_record, process) => {
    const context = this.time.getStore();
    if (context === undefined) return process();
    const turn = context.invocation.startTurn();
    try {
      return await this.time.run({ invocation: context.invocation, turn }, process);
    } finally {
      context.invocation.endTurn(turn);
    }
  };

  /** A client whose every request costs the invocation a round trip of virtual time. */
  private client(): DynamoDBClient {
    const client = localClient({ endpoint: this.proxy.endpoint, maxAttempts: 1 });
    client.middlewareStack.add(
      (next, handlerContext) => async (args) => {
        const context = this.time.getStore();
        // a transaction on the hot item waited for the batch's earlier one (item locks): it starts after that one's end
        const commit = handlerContext.commandName === 'TransactWriteItemsCommand' && context?.turn !== undefined ? context : undefined;
        if (commit?.turn !== undefined) commit.turn.elapsed = Math.max(commit.turn.elapsed, commit.invocation.commitFloor);
        this.spend(ROUND_TRIP_MILLISECONDS);
        try {
          return await next(args);
        } finally {
          if (commit?.turn !== undefined) commit.invocation.commitFloor = Math.max(commit.invocation.commitFloor, commit.turn.elapsed);
        }
      },
      { step: 'initialize', name: 'contentionModelRoundTrip' },
    );
    return client;
  }

  private consumer(random: () => number): SqsBatchHandler {
    const common = {
      client: this.client(),
      maxConcurrency: this.maxConcurrency,
      deadLetter: this.deadLetters,
      logger: this.logs.logger,
      now: () => this.clock.now(),
      metricsSink: () => undefined,
      contentionRetry: { ...RETRY, random, sleep: this.sleep },
      recordScope: this.recordScope,
    };
    const table = this.tables.businessTable;
    const effect = (id: string): void => {
      this.spend(USER_CODE_MILLISECONDS);
      this.effects.set(id, (this.effects.get(id) ?? 0) + 1);
    };
    switch (this.mode) {
      case 'transactional':
        return createTransactionalConsumer<{ account: string; amount: number }>({
          ...common,
          config: this.tables.config as ConsumerConfig,
          handle: (envelope, tx) => {
            this.spend(USER_CODE_MILLISECONDS);
            tx.update({ TableName: table, Key: { pk: envelope.data.account }, UpdateExpression: 'ADD #total :amount', ExpressionAttributeNames: { '#total': 'total' }, ExpressionAttributeValues: { ':amount': envelope.data.amount } });
            tx.update({ TableName: table, Key: { pk: `effect#${envelope.id}` }, UpdateExpression: 'ADD applications :one', ExpressionAttributeValues: { ':one': 1 } });
          },
        });
      case 'aggregate':
        return createAggregateConsumer<{ account: string; amount: number }, { total: number; applied: Record<string, number> }>({
          ...common,
          config: { subscriberName: this.tables.config.subscriberName },
          locate: (envelope) => ({ tableName: table, key: { pk: envelope.data.account } }),
          apply: (current, envelope) => {
            this.spend(USER_CODE_MILLISECONDS);
            const applied = { ...(current?.applied ?? {}) };
            applied[envelope.id] = (applied[envelope.id] ?? 0) + 1;
            return { state: { total: (current?.total ?? 0) + envelope.data.amount, applied } };
          },
        });
      case 'lease':
        return createLeaseConsumer<{ account: string; amount: number }>({
          ...common,
          config: this.tables.config as LeaseConsumerConfig,
          handle: (envelope) => effect(envelope.id),
        });
      case 'multi-step':
        return createMultiStepConsumer<{ account: string; amount: number }>({
          ...common,
          config: this.tables.config as LeaseConsumerConfig,
          steps: [
            { name: 'reserve', run: () => this.spend(USER_CODE_MILLISECONDS) },
            { name: 'charge', run: (envelope) => effect(envelope.id) },
          ],
        });
    }
  }

  /** How often each event applied, from the truth: the business table, the aggregate, or the effect ledger. */
  private async appliedCounts(): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    if (this.mode === 'lease' || this.mode === 'multi-step') return new Map(this.effects);
    if (this.mode === 'transactional') {
      for (const id of this.events.keys()) {
        const item = (await this.direct.send(new GetItemCommand({ TableName: this.tables.businessTable, Key: { pk: { S: `effect#${id}` } }, ConsistentRead: true }))).Item;
        if (item !== undefined) counts.set(id, (unmarshall(item) as { applications: number }).applications);
      }
      return counts;
    }
    const item = (await this.direct.send(new GetItemCommand({ TableName: this.tables.businessTable, Key: { pk: { S: this.hot } }, ConsistentRead: true }))).Item;
    const state = item === undefined ? {} : (unmarshall(item) as { applied?: Record<string, number> });
    for (const [id, count] of Object.entries(state.applied ?? {})) counts.set(id, count);
    return counts;
  }
}
