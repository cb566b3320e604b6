/**
 * The world of the model-based tests of the runtime (issue 19): real consumers of one processing mode over DynamoDB
 * Local behind the fault proxy, fed by an SQS queue modelled here as AWS runs it, and the checks of what must hold
 * after every step. Not a test file.
 *
 * What the world does as AWS does (and what the commands in commands.ts choose):
 * - SQS standard queue: a copy is received with its ApproximateReceiveCount; a batch item failure, a crashed or timed
 *   out invocation leaves it on the queue; at maxReceiveCount SQS itself moves it to the DLQ, WITHOUT our reason
 *   attributes; a redrive (StartMessageMoveTask) moves DLQ messages back with NEW message ids, attributes kept; SNS
 *   may deliver one event as two SQS messages; a copy whose visibility expires is handed to a second invocation while
 *   the first still runs.
 * - DynamoDB: lost responses, TransactionConflict, throttling (the fault proxy), nothing else faked.
 * - Lambda: an invocation may die before or after any DynamoDB request (nothing of it runs after), two execution
 *   environments whose clocks differ by a few seconds, a handler slower than its lease (the clock moves while an
 *   effect is held by fast-check's scheduler).
 * - Users' code that changes its event in place (every handler here multiplies the amount by 100 in place).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { GetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type fc from 'fast-check';
import { inject } from 'vitest';
import { createAggregateConsumer } from '../../../lambda/aggregate/aggregate-consumer';
import type { ConsumerConfig, LeaseConsumerConfig } from '../../../lambda/config';
import type { SqsBatchHandler } from '../../../lambda/consumer/create-consumer';
import { DEAD_LETTER_ATTRIBUTE, type DeadLetter, type DeadLetterPublisher } from '../../../lambda/consumer/dead-letter';
import type { SQSRecord } from '../../../lambda/consumer/sqs';
import { AdaptiveBatchRead } from '../../../lambda/consumer/batch-read-policy';
import { createTransactionalConsumer } from '../../../lambda/consumer/transactional-consumer';
import type { EventEnvelope } from '../../../lambda/envelope';
import { RetryableError } from '../../../lambda/errors';
import { BlockedMessages } from '../../../operator/blocked/blocked-messages';
import { createLeaseConsumer } from '../../../lambda/processing/lease-consumer';
import { createMultiStepConsumer } from '../../../lambda/processing/multi-step-consumer';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { localClient } from '../dynamodb-client';
import { startFaultProxy, type FaultProxy, type FaultRule } from '../fault-proxy';
import { SimulatedCrash } from '../proof/crash-injector';
import { dieAsPlanned, type CrashPlan } from './crash-plan';
import { FakeClock } from '../proof/fake-clock';
import { recordingLogger } from '../proof/recorders';
import { rawRecord } from '../proof/table-reads';

/** The processing modes the model runs. */
export type Mode = 'transactional' | 'lease' | 'multi-step' | 'aggregate';

/** The tables one mode's runs share (each run uses its own event ids and accounts). */
export interface ModelTables {
  /** transactional and aggregate: the business table (effects, accounts) */
  readonly businessTable: string;
  readonly config: ConsumerConfig | LeaseConsumerConfig;
}

/** How the first effect of an invocation fails (lease and multi-step modes), if it does. */
export type EffectFailure = 'none' | 'retryable' | 'unknown-before' | 'unknown-after';

/** Where an invocation dies: before or after its `request`-th DynamoDB request. */
export interface Crash {
  readonly request: number;
  readonly when: 'before' | 'after';
}

/** A DynamoDB fault for one invocation, in the fault proxy's vocabulary. */
export type DynamoFault = 'none' | 'lost-write' | 'conflict' | 'lost-then-conflict' | 'throttle';

/** One delivery of up to `batch` copies to execution environment `env`. */
export interface DeliverySpec {
  readonly env: number;
  readonly batch: number;
  /** Which copies: from the queue's head, or its tail (a standard queue delivers in any order). */
  readonly from: 'head' | 'tail';
  readonly crash?: Crash | undefined;
  readonly fault: DynamoFault;
  readonly effectFailure: EffectFailure;
  /** The invocation's own dead-letter sends fail. */
  readonly deadLetterFails: boolean;
}

/** An SQS message copy. */
interface Copy {
  readonly sqsMessageId: string;
  readonly eventId: string;
  readonly body: string;
  receiveCount: number;
  readonly messageAttributes?: Record<string, { stringValue: string; dataType: string }>;
}

interface PublishedEvent {
  readonly id: string;
  readonly type: 'Deposited' | 'DaysCreated' | 'DaySet';
  readonly account: string;
  readonly amount: number;
}

/** What an effect run saw (lease and multi-step). */
interface EffectRecord {
  count: number;
  values: number[];
  running: number;
}

interface InvocationState extends CrashPlan {
  readonly env: number;
  effectFailure: EffectFailure;
}

export const LEASE_SECONDS = 30;
const ENV_CLOCK_SKEW_SECONDS = [0, 3];
const TARGETS = {
  TRANSACT: 'DynamoDB_20120810.TransactWriteItems',
  PUT: 'DynamoDB_20120810.PutItem',
  UPDATE: 'DynamoDB_20120810.UpdateItem',
} as const;

/** One run of the model: its own proxy, clock, queue and events. */
export class ModelWorld {
  public readonly clock = new FakeClock();
  public readonly violations: string[] = [];
  /** What happened, for a failure's report. */
  public readonly history: string[] = [];
  private readonly queue: Copy[] = [];
  private readonly dlq: Copy[] = [];
  private readonly events = new Map<string, PublishedEvent>();
  private readonly accounts: string[] = [`acct-${randomUUID()}`, `acct-${randomUUID()}`];
  private readonly effects = new Map<string, EffectRecord>();
  private readonly invocation = new AsyncLocalStorage<InvocationState>();
  private readonly handlers: SqsBatchHandler[];
  private readonly direct: DynamoDBClient = localClient();
  private readonly logs = recordingLogger();
  /** Events whose record was BLOCKED after the last command: none may run its effect until an operator resolves it. */
  private blockedAfterLastCommand = new Set<string>();
  private appliedBefore = new Map<string, number>();
  /** Events a blocked dead letter was sent for, not resolved by an operator since: no effect of theirs may start. */
  private readonly blockedByDeadLetter = new Set<string>();
  /** While set, user code pauses at this scheduler's points, so concurrent deliveries interleave as it decides. */
  private scheduler: fc.Scheduler | undefined;

  private constructor(
    public readonly mode: Mode,
    private readonly tables: ModelTables,
    private readonly proxy: FaultProxy,
    /** The queue's redrive policy: SQS moves a message to the DLQ itself once received this often (AWS allows 1 to 1000). */
    private readonly maxReceiveCount: number,
    /** Env 1's batch read in transactional mode (env 0 decides per batch). */
    private readonly transactionalBatchRead: boolean,
  ) {
    // the two environments differ in their batch read too: env 0 has its mode's default, env 1 another choice
    this.handlers = ENV_CLOCK_SKEW_SECONDS.map((skew, env) => this.consumer(skew, env === 1));
  }

  /** A run on `tables`, with a proxy of its own; `transactionalBatchRead` is env 1's batch read in transactional mode. */
  public static async start(mode: Mode, tables: ModelTables, maxReceiveCount: number, transactionalBatchRead = false): Promise<ModelWorld> {
    return new ModelWorld(mode, tables, await startFaultProxy(inject('dynamoDbEndpoint')), maxReceiveCount, transactionalBatchRead);
  }

  public async stop(): Promise<void> {
    await this.proxy.stop();
    this.direct.destroy();
  }

  // ---- commands ------------------------------------------------------------------------------------------------

  /** A producer's event, delivered as `copies` SQS messages (SNS may deliver one publish twice). */
  public publish(copies: number, kind: 'deposit' | 'days-pair' | 'days-pair-reversed' = 'deposit'): void {
    const account = this.accounts[this.events.size % this.accounts.length] as string;
    const made: PublishedEvent[] =
      kind !== 'deposit'
        ? [
            { id: `evt-${randomUUID()}`, type: 'DaysCreated' as const, account: `days-${randomUUID()}`, amount: 1 },
          ].flatMap((created): PublishedEvent[] => {
            // two producers' events on one account: a standard queue may hold them in either order
            const set: PublishedEvent = { id: `evt-${randomUUID()}`, type: 'DaySet', account: created.account, amount: 2 };
            return kind === 'days-pair' ? [created, set] : [set, created];
          })
        : [{ id: `evt-${randomUUID()}`, type: 'Deposited', account, amount: 1 + (this.events.size % 9) }];
    for (const event of made) {
      this.events.set(event.id, event);
      const body = JSON.stringify({
        specversion: '1.0',
        id: event.id,
        source: 'model',
        type: event.type,
        time: this.clock.now().toISOString(),
        datacontenttype: 'application/json',
        data: { account: event.account, amount: event.amount },
      });
      for (let copy = 0; copy < copies; copy++) this.queue.push({ sqsMessageId: `sqs-${randomUUID()}`, eventId: event.id, body, receiveCount: 0 });
    }
    if (this.history.length === 0) this.history.push(`maxReceiveCount ${this.maxReceiveCount}${this.mode === 'transactional' ? `, env 1 batch read ${this.transactionalBatchRead}` : ''}`);
    this.history.push(`publish ${made.map((event) => `${event.type} ${event.id.slice(4, 12)}`).join(', ')} x${copies}`);
  }

  /** One invocation of environment `spec.env` with up to `spec.batch` copies. */
  public async deliver(spec: DeliverySpec): Promise<void> {
    const batch = this.take(spec.batch, spec.from);
    if (batch.length === 0) return;
    const before = await this.appliedCounts();
    this.injectFault(spec.fault);
    try {
      await this.invoke(spec, batch, before, true);
    } finally {
      // the fault was meant for this delivery: one that did not fire must not fire in a later command
      this.proxy.clearRules();
    }
  }

  /**
   * The same copies handed to two environments at once (the first's visibility timeout expired while it ran), their
   * user code interleaved as `scheduler` decides; the clock may move past the lease meanwhile (a handler slower than
   * its lease).
   */
  public async deliverConcurrently(scheduler: fc.Scheduler, batch: number, clockSecondsMeanwhile: number, fresh: boolean): Promise<void> {
    // a fresh event raced from its first delivery on, or whatever waits at the queue's head
    if (fresh) this.publish(1);
    const copies = this.take(batch, fresh ? 'tail' : 'head');
    if (copies.length === 0) return;
    const before = await this.appliedCounts();
    // the second receive of each copy: the same message ids, each received once more
    const second = copies.map((copy) => ({ ...copy }));
    this.lastAcknowledged = [];
    this.scheduler = scheduler;
    try {
      const spec = (env: number): DeliverySpec => ({ env, batch, from: 'head', fault: 'none', effectFailure: 'none', deadLetterFails: false });
      const runs = Promise.all([
        this.invoke(spec(0), copies, before, false),
        scheduler.schedule(Promise.resolve(), 'clock moves').then(() => this.clock.advanceSeconds(clockSecondsMeanwhile)),
        this.invoke(spec(1), second, before, false),
      ]);
      await scheduler.waitFor(runs);
    } finally {
      this.scheduler = undefined;
    }
    // SQS deletes a message only with its most recent receipt handle (the second receive's): the first invocation's
    // acknowledgement of a copy the second one failed may not delete it, so the copy stays
    const acknowledged = new Set(this.lastAcknowledged);
    for (let index = this.queue.length - 1; index >= 0; index--) {
      if (acknowledged.has((this.queue[index] as Copy).sqsMessageId)) this.queue.splice(index, 1);
    }
    this.history.push(`deliver concurrently ${copies.length} copies, clock +${clockSecondsMeanwhile}s meanwhile`);
  }

  public advanceClock(seconds: number): void {
    this.clock.advanceSeconds(seconds);
    this.history.push(`clock +${seconds}s`);
  }

  /** The operator redrives the DLQ (StartMessageMoveTask): every message back on the queue with a NEW message id. */
  public redrive(): void {
    const moved = this.dlq.splice(0, this.dlq.length);
    for (const copy of moved) this.queue.push({ ...copy, sqsMessageId: `sqs-redriven-${randomUUID()}`, receiveCount: 0 });
    if (moved.length > 0) this.history.push(`redrive ${moved.length} from the DLQ`);
  }

  /** The operator resolves every blocked record from the ledger's truth: SUCCESS when the effect ran, else TRY_AGAIN. */
  public async resolveBlocked(): Promise<void> {
    if (this.mode !== 'lease' && this.mode !== 'multi-step') return;
    const operator = new BlockedMessages({ client: this.direct, tableName: this.tables.config.inboxTableName });
    const config = this.tables.config;
    let resolved = 0;
    for (const eventId of this.events.keys()) {
      const record = await operator.get(config.subscriberName, eventId);
      if (record?.status !== 'BLOCKED' || record.activeStep === undefined) continue;
      const applied = this.mode === 'lease' || record.activeStep === 'charge' ? (this.effects.get(eventId)?.count ?? 0) > 0 : true;
      await operator.resolve({ subscriber: config.subscriberName, eventId, step: record.activeStep, status: applied ? 'SUCCESS' : 'TRY_AGAIN', expectedVersion: record.version, resolvedBy: 'model' });
      this.blockedAfterLastCommand.delete(eventId);
      this.blockedByDeadLetter.delete(eventId);
      resolved += 1;
    }
    if (resolved > 0) this.history.push(`operator resolves ${resolved} blocked`);
  }

  // ---- invariants ----------------------------------------------------------------------------------------------

  /** Checks what must hold after every command; records violations (the test asserts there are none). */
  public async check(): Promise<void> {
    const applied = await this.appliedCounts();
    const blocked = new Set<string>();
    for (const event of this.events.values()) {
      const count = applied.get(event.id) ?? 0;
      if (count > 1) this.violate(`event ${event.id} (${event.type}) applied ${count} times`);
      const wrongValue = this.wrongValue(event, count);
      if (wrongValue !== undefined) this.violate(`event ${event.id} applied with a wrong value: ${wrongValue}`);
      const effect = this.effects.get(event.id);
      if (effect !== undefined && effect.running > 1) this.violate(`event ${event.id}: ${effect.running} effects ran at once (two live owners)`);
      const record = await this.record(event.id);
      if (record?.status === 'BLOCKED') blocked.add(event.id);
      // only an operator unblocks: a delivery (a stale owner among them) never changes a record blocked for one
      if (this.blockedByDeadLetter.has(event.id) && record !== undefined && record.status !== 'BLOCKED') {
        this.violate(`event ${event.id} was blocked for an operator, and a delivery changed its record to ${String(record.status)}`);
      }
      if (this.blockedAfterLastCommand.has(event.id) && count > (this.appliedBefore.get(event.id) ?? 0)) {
        this.violate(`event ${event.id} was BLOCKED and its effect ran before an operator resolved it`);
      }
      // nothing lost: applied, on the queue, in the DLQ, or its body kept on its record
      const kept = this.queue.some((copy) => copy.eventId === event.id) || this.dlq.some((copy) => copy.eventId === event.id) || typeof record?.blockedBody === 'string';
      if (count === 0 && !kept) this.violate(`event ${event.id} (${event.type}) is lost: not applied, on no queue, its body nowhere`);
    }
    // a valid event is never rejected for good: only a blocked message goes to the DLQ with our reason
    for (const copy of this.dlq) {
      const name = copy.messageAttributes?.[DEAD_LETTER_ATTRIBUTE.ERROR_NAME]?.stringValue;
      if (name !== undefined && name !== 'MessageBlockedError') this.violate(`event ${copy.eventId}, a valid event, dead-lettered as ${name}: ${copy.messageAttributes?.[DEAD_LETTER_ATTRIBUTE.ERROR_MESSAGE]?.stringValue}`);
    }
    this.blockedAfterLastCommand = blocked;
    this.appliedBefore = applied;
  }

  /**
   * After the hostile part, the world calms down: the operator redrives the DLQ first (before resolving: the order the
   * docs advise against, which must still lose nothing), copies are delivered without faults until none is left, then
   * the operator resolves what is blocked, and again; then every event must be applied exactly once.
   */
  public async drain(): Promise<void> {
    for (let round = 0; round < 30; round++) {
      this.redrive();
      this.clock.advanceSeconds(LEASE_SECONDS + 10);
      while (this.queue.length > 0) await this.deliver({ env: round % 2, batch: 5, from: 'head', fault: 'none', effectFailure: 'none', deadLetterFails: false });
      await this.check();
      await this.resolveBlocked();
      if (this.dlq.length === 0 && this.queue.length === 0 && !(await this.anyBlocked()) && (await this.allApplied())) break;
    }
    const applied = await this.appliedCounts();
    for (const event of this.events.values()) {
      if ((applied.get(event.id) ?? 0) !== 1) this.violate(`after the operator and the redrives, event ${event.id} (${event.type}) is applied ${applied.get(event.id) ?? 0} times, not once`);
    }
  }

  /** The failure report: the violations and the run's history. */
  public report(): string {
    return `${this.violations.join('\n')}\nhistory:\n  ${this.history.join('\n  ')}`;
  }

  // ---- internals -----------------------------------------------------------------------------------------------

  private lastAcknowledged: string[] = [];

  private violate(message: string): void {
    if (!this.violations.includes(message)) this.violations.push(message);
  }

  private take(count: number, from: 'head' | 'tail'): Copy[] {
    const taken = from === 'head' ? this.queue.splice(0, count) : this.queue.splice(Math.max(0, this.queue.length - count), count);
    for (const copy of taken) copy.receiveCount += 1;
    return taken;
  }

  private injectFault(fault: DynamoFault): void {
    const rules: readonly FaultRule[] = ({
      none: [],
      'lost-write': [{ target: this.mode === 'transactional' ? TARGETS.TRANSACT : TARGETS.UPDATE, fault: { kind: 'drop-response' } }],
      conflict: [{ target: TARGETS.TRANSACT, fault: { kind: 'transaction-conflict' } }],
      'lost-then-conflict': [
        { target: TARGETS.TRANSACT, fault: { kind: 'drop-response' } },
        { target: TARGETS.TRANSACT, nth: 2, fault: { kind: 'transaction-conflict' } },
      ],
      throttle: [{ target: this.mode === 'transactional' ? TARGETS.TRANSACT : TARGETS.PUT, fault: { kind: 'throttle' } }],
    } satisfies Record<DynamoFault, readonly FaultRule[]>)[fault];
    for (const rule of rules) this.proxy.inject(rule);
  }

  private async invoke(spec: DeliverySpec, batch: Copy[], before: ReadonlyMap<string, number>, returnCopies: boolean): Promise<void> {
    const state: InvocationState = { env: spec.env, ...(spec.crash ? { crash: spec.crash } : {}), requests: 0, dead: false, effectFailure: spec.effectFailure };
    this.deadLetterFails = spec.deadLetterFails;
    const records: SQSRecord[] = batch.map((copy) => ({
      messageId: copy.sqsMessageId,
      body: copy.body,
      attributes: { ApproximateReceiveCount: String(copy.receiveCount) },
      ...(copy.messageAttributes ? { messageAttributes: copy.messageAttributes } : {}),
    }));
    const firstLine = this.logs.lines.length;
    let failed: Set<string>;
    try {
      const response = await this.invocation.run(state, () => (this.handlers[spec.env] as SqsBatchHandler)({ Records: records }));
      failed = state.dead ? new Set(batch.map((copy) => copy.sqsMessageId)) : new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
    } catch {
      failed = new Set(batch.map((copy) => copy.sqsMessageId));
    }
    const acknowledged = batch.filter((copy) => !failed.has(copy.sqsMessageId));
    if (returnCopies) {
      for (const copy of batch) {
        if (!failed.has(copy.sqsMessageId)) continue;
        // SQS itself moves a message to the DLQ once it was received maxReceiveCount times: no reason attributes
        if (copy.receiveCount >= this.maxReceiveCount) this.dlq.push(copy);
        else this.queue.push(copy);
      }
    } else {
      for (const copy of batch) if (failed.has(copy.sqsMessageId) && !this.queue.some((queued) => queued.sqsMessageId === copy.sqsMessageId)) this.queue.push(copy);
      if (spec.env === 1) this.lastAcknowledged = [...this.lastAcknowledged, ...acknowledged.map((copy) => copy.sqsMessageId)];
    }
    // a delivery that completed (not died) and said `duplicate` must have found the event applied BEFORE it started
    // (or that another copy in its batch applied first)
    if (!state.dead && returnCopies) {
      const processedHere = new Set<string>();
      for (const line of this.logs.lines.slice(firstLine)) {
        if (typeof line.eventId !== 'string') continue;
        if (line.outcome === 'processed') {
          // and one that said `processed` must not have found it applied already (that is a duplicate, miscounted)
          if ((before.get(line.eventId) ?? 0) > 0) this.violate(`event ${line.eventId} was applied before this delivery, but it said 'processed'`);
          processedHere.add(line.eventId);
        }
        if (line.outcome !== 'duplicate' || processedHere.has(line.eventId)) continue;
        if ((before.get(line.eventId) ?? 0) === 0) this.violate(`event ${line.eventId} was applied by this very delivery, but it said 'duplicate'`);
      }
    }
    this.history.push(
      `deliver ${batch.length} to env ${spec.env}${spec.crash ? `, dies ${spec.crash.when} request ${spec.crash.request}` : ''}` +
        `${spec.fault !== 'none' ? `, fault ${spec.fault}` : ''}${spec.effectFailure !== 'none' ? `, effect ${spec.effectFailure}` : ''}` +
        `${spec.deadLetterFails ? ', dead-letter sends fail' : ''}` +
        `${this.logs.lines.slice(firstLine).some((line) => line.message === 'batch' && line.batchRead === true) ? ', batch read' : ''}` +
        `: ${acknowledged.length} acknowledged${state.dead ? ' (died)' : ''}`,
    );
  }

  private deadLetterFails = false;

  /** Our dead letters land in the DLQ with their reason attributes; a dead invocation sends none. */
  private readonly deadLetters: DeadLetterPublisher = {
    publish: async (letter: DeadLetter) => {
      const state = this.invocation.getStore();
      if (state?.dead) throw new SimulatedCrash();
      if (this.deadLetterFails) throw new Error('SQS SendMessage failed (model)');
      if (letter.errorName === 'MessageBlockedError' && letter.eventId !== undefined) this.blockedByDeadLetter.add(letter.eventId);
      this.dlq.push({
        sqsMessageId: `sqs-dlq-${randomUUID()}`,
        eventId: letter.eventId ?? '(unparsed)',
        body: letter.body,
        receiveCount: 0,
        messageAttributes: {
          [DEAD_LETTER_ATTRIBUTE.ERROR_NAME]: { stringValue: letter.errorName, dataType: 'String' },
          [DEAD_LETTER_ATTRIBUTE.ERROR_MESSAGE]: { stringValue: letter.errorMessage.slice(0, 300), dataType: 'String' },
        },
      });
    },
  };

  /** A client through the proxy on which an invocation dies where its plan says. */
  private client(): DynamoDBClient {
    const client = localClient({ endpoint: this.proxy.endpoint, maxAttempts: 3 });
    // every request is an await point whose order the scheduler decides, when one runs the command
    return dieAsPlanned(client, () => this.invocation.getStore(), (state, commandName) => this.pause(`env ${state.env} ${commandName}`));
  }

  /** A point where the scheduler (when one runs the command) decides who goes on. */
  private async pause(label: string): Promise<void> {
    if (this.scheduler !== undefined) await this.scheduler.schedule(Promise.resolve(), label);
  }

  /** The external effect of lease and multi-step modes, with the invocation's planned failure. */
  private async effect(eventId: string, value: number): Promise<void> {
    const state = this.invocation.getStore();
    if (state?.dead) throw new SimulatedCrash();
    const effect = this.effects.get(eventId) ?? { count: 0, values: [], running: 0 };
    this.effects.set(eventId, effect);
    const failure = state?.effectFailure ?? 'none';
    if (state !== undefined) state.effectFailure = 'none';
    // the runtime handed control to the effect: it must not while the message is blocked for an operator
    if (this.blockedByDeadLetter.has(eventId)) this.violate(`event ${eventId}: its effect started while it was blocked for an operator`);
    if (failure === 'retryable') throw new RetryableError('the remote side refused before acting (model)');
    if (failure === 'unknown-before') throw new Error('socket timeout, nothing was sent (model)');
    effect.running += 1;
    if (effect.running > 1) this.violate(`event ${eventId}: two effects ran at once (two live owners)`);
    try {
      // a slow effect: the scheduler may move the clock past the lease and let another delivery in meanwhile
      await this.pause(`effect ${eventId.slice(4, 12)}`);
      effect.count += 1;
      effect.values.push(value);
    } finally {
      effect.running -= 1;
    }
    if (failure === 'unknown-after') throw new Error('connection reset after sending (model)');
  }

  private consumer(skewSeconds: number, otherBatchRead: boolean): SqsBatchHandler {
    const now = (): Date => new Date(this.clock.now().getTime() + skewSeconds * 1000);
    const common = { client: this.client(), deadLetter: this.deadLetters, logger: this.logs.logger, now, metricsSink: () => undefined };
    // lease and multi-step do not read by default
    const batchRead = otherBatchRead;
    // env 0 decides per batch, with a weight that makes it switch within the few batches of a run (the default's 2 % per
    // record would hardly leave its start, no read, in 18 commands)
    const transactionalBatchRead = otherBatchRead ? this.transactionalBatchRead : new AdaptiveBatchRead({ recordWeight: 0.5 });
    const table = this.tables.businessTable;
    switch (this.mode) {
      case 'transactional':
        return createTransactionalConsumer<{ account: string; amount: number }>({
          ...common,
          config: this.tables.config as ConsumerConfig,
          batchRead: transactionalBatchRead,
          handle: async (envelope, tx) => {
            envelope.data.amount *= 100; // normalized in place, as users do
            await this.pause(`handler ${envelope.id.slice(4, 12)}`);
            if (envelope.type === 'DaysCreated') {
              tx.update({ TableName: table, Key: { pk: envelope.data.account }, UpdateExpression: 'SET days = if_not_exists(days, :empty)', ExpressionAttributeValues: { ':empty': {} } });
            }
            if (envelope.type === 'DaySet') {
              tx.update({ TableName: table, Key: { pk: envelope.data.account }, UpdateExpression: 'SET days.#day = :v', ExpressionAttributeNames: { '#day': 'mon' }, ExpressionAttributeValues: { ':v': envelope.data.amount } });
            }
            tx.update({ TableName: table, Key: { pk: `effect#${envelope.id}` }, UpdateExpression: 'ADD applications :one, #total :amount', ExpressionAttributeNames: { '#total': 'total' }, ExpressionAttributeValues: { ':one': 1, ':amount': envelope.data.amount } });
          },
        });
      case 'aggregate':
        return createAggregateConsumer<{ account: string; amount: number }, { total: number; applied: Record<string, number> }>({
          ...common,
          config: { subscriberName: this.tables.config.subscriberName },
          locate: (envelope) => ({ tableName: table, key: { pk: envelope.data.account } }),
          apply: async (current, envelope) => {
            envelope.data.amount *= 100;
            await this.pause(`apply ${envelope.id.slice(4, 12)}`);
            const applied = { ...(current?.applied ?? {}) };
            applied[envelope.id] = (applied[envelope.id] ?? 0) + 1;
            return { state: { total: (current?.total ?? 0) + envelope.data.amount, applied } };
          },
        });
      case 'lease':
        return createLeaseConsumer<{ account: string; amount: number }>({
          ...common,
          config: this.tables.config as LeaseConsumerConfig,
          batchRead,
          handle: async (envelope) => {
            envelope.data.amount *= 100;
            await this.effect(envelope.id, envelope.data.amount);
          },
        });
      case 'multi-step':
        return createMultiStepConsumer<{ account: string; amount: number }>({
          ...common,
          config: this.tables.config as LeaseConsumerConfig,
          batchRead,
          steps: [
            {
              name: 'normalize',
              run: async (envelope) => {
                envelope.data.amount *= 100;
                await this.pause(`normalize ${envelope.id.slice(4, 12)}`);
              },
            },
            { name: 'charge', run: (envelope) => this.effect(envelope.id, envelope.data.amount) },
          ],
        });
    }
  }

  /** The value an applied event must show, or undefined when it does. */
  private wrongValue(event: PublishedEvent, count: number): string | undefined {
    if (count === 0) return undefined;
    // multi-step: the charge step sees the event as delivered (the normalize step's change in place is its own)
    const expected = this.mode === 'multi-step' ? event.amount : event.amount * 100;
    if (this.mode === 'lease' || this.mode === 'multi-step') {
      const values = this.effects.get(event.id)?.values ?? [];
      return values.every((value) => value === expected) ? undefined : `${values.join(', ')} instead of ${expected}`;
    }
    const total = this.businessTotals.get(event.id);
    return total === undefined || total === expected * count ? undefined : `${total} instead of ${expected * count}`;
  }

  private businessTotals = new Map<string, number>();

  /** How often each event's effect applied, from the truth: the business table or the effect ledger. */
  private async appliedCounts(): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    if (this.mode === 'lease' || this.mode === 'multi-step') {
      for (const [id, effect] of this.effects) counts.set(id, effect.count);
      return counts;
    }
    if (this.mode === 'transactional') {
      for (const event of this.events.values()) {
        const item = (await this.direct.send(new GetItemCommand({ TableName: this.tables.businessTable, Key: { pk: { S: `effect#${event.id}` } }, ConsistentRead: true }))).Item;
        if (item === undefined) continue;
        const effect = unmarshall(item) as { applications: number; total: number };
        counts.set(event.id, effect.applications);
        this.businessTotals.set(event.id, effect.total);
      }
      return counts;
    }
    for (const account of this.accounts) {
      const item = (await this.direct.send(new GetItemCommand({ TableName: this.tables.businessTable, Key: { pk: { S: account } }, ConsistentRead: true }))).Item;
      if (item === undefined) continue;
      const state = unmarshall(item) as { total?: number; applied?: Record<string, number> };
      for (const [id, count] of Object.entries(state.applied ?? {})) counts.set(id, count);
      const expected = Object.entries(state.applied ?? {}).reduce((sum, [id, count]) => sum + count * (this.events.get(id)?.amount ?? 0) * 100, 0);
      if (state.total !== expected) this.violate(`aggregate ${account} total ${state.total} but its applied events sum to ${expected}`);
    }
    return counts;
  }

  private async record(eventId: string): Promise<Record<string, unknown> | undefined> {
    if (this.mode !== 'lease' && this.mode !== 'multi-step') return undefined;
    const item = await rawRecord(this.direct, this.tables.config.inboxTableName, this.tables.config.subscriberName, eventId);
    return item === undefined ? undefined : unmarshall(item);
  }

  private async allApplied(): Promise<boolean> {
    const applied = await this.appliedCounts();
    return [...this.events.keys()].every((id) => (applied.get(id) ?? 0) > 0);
  }

  private async anyBlocked(): Promise<boolean> {
    for (const eventId of this.events.keys()) if ((await this.record(eventId))?.status === 'BLOCKED') return true;
    return false;
  }
}

export type { EventEnvelope };
