/**
 * The world of the ordered path's model-based test (test/lambda/model/ordered.model.int.test.ts): the real ordered
 * producer and consumers over DynamoDB Local, and a model of what AWS does between them. Not a test file.
 *
 * - the stream: each aggregate's head item is one item, so its writes reach the relay in commit order; different
 *   aggregates (different items, different shards) reach it in any order relative to each other;
 * - the relay (a Pipe) may send a record twice (a retry after the 5-minute FIFO deduplication window);
 * - the FIFO queue delivers a group's first message; a redrive puts dead letters at the tail, where they interleave
 *   with newer messages ("out of order" deliveries also model a standard queue or a replay);
 * - invocations die before or after any DynamoDB request; two environments run messages of one aggregate at once, every
 *   DynamoDB request of both an await point whose order fc.scheduler decides;
 * - SQS moves a message to the dead-letter queue at maxReceiveCount (a dead-letter gap for the group's later messages);
 * - the clock moves past the inbox's deduplication window (then only the fence knows what was applied);
 * - the operator redrives dead letters, as they are or in the fence's plan (`planOrderedRedrive`), or as `dlq redrive`
 *   does (only what the fences admit now: the CLI's own decisions, simulator/cli/dead-letters/ordered-sends.ts), and
 *   replays an aggregate's events from the outbox history as `replay` does (the CLI's history read and decisions);
 *   runs `fence skip` with any `--to` and `inbox forget` of any key with the real CLI in-process (issue 38): a skip is
 *   accepted only up to what the outbox committed and names each event it drops, a forget never moves a fence.
 * After every step: each aggregate's ledger is a prefix of its events in sequence order (never a later one before an
 * earlier one, never one twice), and no valid event was dead-lettered by the runtime; after an operator's `dlq redrive`
 * or `replay`: it sent exactly the events the fences admit now (each right after its fence or after one sent before it,
 * none held that could go), in sequence, and called duplicates exactly the events applied; a letter the fence's plan
 * sent is never refused as another history by a fence unchanged since the plan. After the drain: every event applied.
 */
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type fc from 'fast-check';
import type { ConsumerConfig, ProducerConfig } from '../../../lambda/config';
import type { SqsBatchHandler } from '../../../lambda/consumer/create-consumer';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { DEAD_LETTER_ATTRIBUTE, SqsDeadLetterPublisher, type DeadLetter } from '../../../lambda/consumer/dead-letter';
import { PermanentError } from '../../../lambda/errors';
import { carryOrderedHeads, type HeadCarry } from '../../../operator/ordered/outbox-heads';
import { fenceCarryKey, ORDERED_OUTBOX_ITEM, orderedHeadKey, SEQUENCE_FENCE, sequenceFenceKey } from '../../../lambda/contract/ordered-wire-format';
import { OutboxImages } from './outbox-images';
import { InboxImages } from './inbox-images';
import { orderedForQueue, type DeadLetterOrder } from './ordered-dlq-order';
import { CLOCK_BUFFER_BYTES, VirtualClock } from '../../../simulator/aws/clock';
import { SimulatedQueue } from '../../../simulator/aws/queue';
import { createLogger } from '../../../lambda/logger';
import { createOrderedConsumer } from '../../../lambda/ordered/ordered-consumer';
import { OrderedOutbox, type OrderedEnvelope } from '../../../lambda/ordered/ordered-outbox';
import { planOrderedRedrive, type OrderedRedrivePlan } from '../../../operator/ordered/redrive-plan';
import { OrderedEventRecords } from '../../../operator/ordered/ordered-event-records';
import { readWindowRecord, smallestWindowSeconds } from '../../../lambda/ordered/deduplication-window';
import { orderedPositionOf } from '../../../lambda/ordered/ordered-position';
import { SequenceFences, type SequenceFenceState } from '../../../operator/ordered/sequence-fences';
import { orderedDecisions, type OrderedDecision } from '../../../operator/cli/dead-letters/ordered-sends';
import { orderedHistoryEvents } from '../../../operator/cli/ordered-replay';
import { PAST_RETENTION_TEXT } from '../../../operator/cli/outbox-events';
import { INBOX_RESTORE_ADVICE } from '../../../operator/cli/inbox-restore-check';
import { recordKey, TABLE_SCHEMA } from '../../../lambda/contract/wire-format';
import { startSqsEndpoint, type SqsEndpoint } from '../../../simulator/aws/sqs-endpoint';
import type { SimulatedQueue as QueueOnEndpoint } from '../../../simulator/aws/queue';
import { orderedRedriveOptionRefusal } from '../../../operator/cli/ordered-dlq-redrive';
import { makeQueue, queueModel } from '../../simulator/aws/queue-test-kit';
import { cliAt } from '../../cli/operator-services';
import { inject } from 'vitest';
import { localClient } from '../dynamodb-client';
import { createInbox, createKeyedTable, createOutbox } from '../proof/tables';
import { startFaultProxy, type FaultProxy, type FaultRule } from '../fault-proxy';
import { SimulatedCrash } from '../proof/crash-injector';
import { dieAsPlanned, type CrashPlan } from './crash-plan';
import { collapseRepeats } from './history-lines';

/**
 * The tables of one run, created for it and deleted after it: a run shares no DynamoDB state with the runs before it
 * (the outbox table's generation item, the heads and fences a carry reads), so a failing run replays alone from its
 * seed and path (issue 38: seeds 13013 and 20020 did not, their runs built on the generations earlier runs carried).
 */
export interface OrderedTables {
  readonly outbox: ProducerConfig;
  /**
   * The table a point-in-time restore is made from (issue 38): before a restore takes the heads back, the world keeps
   * every head it had here, as the old table keeps them; `outbox heads --from-history --history-table` reads it.
   */
  readonly formerOutboxTable: string;
  readonly inbox: ConsumerConfig;
  /** The table an inbox restore is made from (review ro12, RO12-4): the inbox table as it stood before the restore. */
  readonly formerInboxTable: string;
  readonly ledgerTable: string;
}

/** How an invocation dies: before or after its n-th DynamoDB request. */
export interface OrderedCrash {
  readonly request: number;
  readonly when: 'before' | 'after';
}

/** An event's generation as the history shows it (`, generation G based at #B`), empty for generation 0. */
function generationOf(envelope: OrderedEnvelope): string {
  const { generation, generationBase } = orderedPositionOf(JSON.stringify(envelope));
  return generation === 0 ? '' : `, generation ${generation} based at #${generationBase}`;
}

/** A fence's position as a planned redrive saw it: its sequence and generation. */
function fenceText(fence: SequenceFenceState): string {
  return `#${fence.appliedSequence} of generation ${fence.appliedGeneration ?? 0}`;
}

/** A dead letter as the operator's tools hand it to the plan: its body and its `iefErrorName`, when it has one. */
function planned(letter: QueuedMessage): { id: string; body: string; errorName?: string } {
  return { id: letter.messageId, body: letter.body, ...(letter.errorName === undefined ? {} : { errorName: letter.errorName }) };
}

interface QueuedMessage {
  readonly messageId: string;
  readonly body: string;
  readonly envelope: OrderedEnvelope;
  receives: number;
  /** A dead letter's `iefErrorName` (the runtime's dead-letter publisher sets it; SQS moving a letter sets none). */
  readonly errorName?: string;
}

/** A DynamoDB fault for one step, in the fault proxy's vocabulary (DynamoDB Local produces none of them itself). */
export type OrderedFault = 'none' | 'lost-write' | 'conflict' | 'lost-then-conflict' | 'throttle';

const TRANSACT = 'DynamoDB_20120810.TransactWriteItems';
const FAULT_RULES: Record<OrderedFault, readonly FaultRule[]> = {
  none: [],
  'lost-write': [{ target: TRANSACT, fault: { kind: 'drop-response' } }],
  conflict: [{ target: TRANSACT, fault: { kind: 'transaction-conflict' } }],
  'lost-then-conflict': [
    { target: TRANSACT, fault: { kind: 'drop-response' } },
    { target: TRANSACT, nth: 2, fault: { kind: 'transaction-conflict' } },
  ],
  throttle: [{ target: TRANSACT, fault: { kind: 'throttle' } }],
};

/** The inbox's deduplication window in the model, in seconds. */
export const MODEL_WINDOW_SECONDS = 3600;
const AGGREGATES = 2;

export class OrderedWorld {
  public readonly violations: string[] = [];
  private readonly history: string[] = [];
  private readonly aggregates: string[];
  private readonly produced = new Map<string, OrderedEnvelope[]>();
  /** Written, not yet relayed, per aggregate, in commit order. */
  private readonly stream = new Map<string, OrderedEnvelope[]>();
  private queue: QueuedMessage[] = [];
  private deadLetters: QueuedMessage[] = [];
  private nowMs = Date.now();
  /** How many ids `newId` handed out. */
  private ids = 0;
  private scheduler: fc.Scheduler | undefined;
  private readonly plans: Array<CrashPlan | undefined> = [undefined, undefined];
  private handlers: SqsBatchHandler[];
  /** The subscriber's deployed deduplication window (a redeploy may raise it: `raiseWindow`). */
  private windowSeconds = MODEL_WINDOW_SECONDS;
  private readonly clients: DynamoDBClient[];
  private readonly producer: OrderedOutbox;
  private readonly producerClient: DynamoDBClient;
  private readonly reader: DynamoDBDocumentClient;
  private readonly fences: SequenceFences;
  private records: OrderedEventRecords;
  /** The dead letters the runtime sent during the current delivery. */
  private runtimeDeadLetters: DeadLetter[] = [];
  // ---- issue 38: FIFO dead letters, permanent failures, outbox restores and the heads carried over (h1) ----
  /** The subscriber's FIFO dead-letter queue, as SQS has it (no content-based deduplication: refuses what SQS refuses). */
  private readonly deadLetterQueue = new SimulatedQueue({
    model: { key: 'Model/OrderedDlq', stackName: 'Model', logicalId: 'OrderedDlq', queueName: 'ordered-dlq.fifo', fifo: true, visibilityTimeoutSeconds: 30, messageRetentionSeconds: 1_209_600 },
    address: { name: 'ordered-dlq.fifo', url: 'https://sqs.model.invalid/000000000000/ordered-dlq.fifo', arn: 'arn:aws:sqs:us-east-1:000000000000:ordered-dlq.fifo' },
    clock: new VirtualClock(new SharedArrayBuffer(CLOCK_BUFFER_BYTES), () => 0),
  });
  /** Why the last sends to the dead-letter queue were refused. */
  private refusedSends: string[] = [];
  /** Event ids the handler fails permanently on (PermanentError), until dead-lettered once. */
  private readonly poisoned = new Set<string>();
  /** Per aggregate: events that took a sequence already handed out (the heads went back), by sequence. */
  private readonly reused = new Map<string, OrderedEnvelope[]>();
  /** Events dead-lettered as SequenceReusedError, waiting for the operator to write them again. */
  private reusedDeadLetters: OrderedEnvelope[] = [];
  /** Event id -> the id of the event the operator wrote again in its place. */
  private readonly reEmitted = new Map<string, string>();
  /** Whether the heads went back since they were last carried over. */
  private restoredSinceCarry = false;
  /** Whether a restore ever happened in this run (the operator checks then compare positions, not ids). */
  private restored = false;
  /** Per aggregate, the sequences an operator's accepted `fence skip` dropped (never to be applied). */
  private readonly skipped = new Map<string, Set<number>>();
  /** Event ids the runtime's WARN lines said an operator's skip dropped, during the current delivery. */
  private skipWarnings: string[] = [];
  /** Reused-sequence events first delivered older than the window, answered duplicate (the documented limit). */
  private readonly lostPastWindow = new Set<string>();
  /**
   * Event ids dropped by an operator's accepted skip: acknowledged unapplied with the skip's WARN line, or named by the
   * skip's own list of what it drops (after the heads went back a sequence may hold two events; the skip names one, and
   * the redrive plan then deletes that one's dead letter as dropped by the skip: seed 308844549, path 6:0:2:16:11:4:7).
   */
  private readonly droppedBySkip = new Set<string>();
  /**
   * Events a `fence skip` passed because the subscriber's own state shows them applied (an inbox restore whose table
   * restored from is gone, review ro15b, RO15B-3): applied, never dropped; a later copy is answered with the skip's WARN.
   */
  private readonly skippedAsApplied = new Set<string>();
  /** Per aggregate, the last sequence the outbox committed as the model knows it (a restore takes it back, a carry over forward). */
  private readonly heads = new Map<string, number>();
  // ---- issue 38 (b38): the generation protocol (review F2) ----
  /** Per aggregate, the bases of the carries that moved its head (each starts a generation), in order: epoch n has base bases[n - 1]. */
  private readonly carries = new Map<string, number[]>();
  /** Per event id: the carries of its aggregate before it was written (its epoch), and the base of the last one (0: none). */
  private readonly epochs = new Map<string, { readonly epoch: number; readonly base: number }>();
  /** Aggregates whose heads were carried from the fences below what the old table handed out (its events still in flight). */
  private readonly shortCarried = new Set<string>();
  /**
   * Events of a carried generation the fence refuses because the old table's in-flight events went past its base (the
   * old history won the race): kept in the dead-letter queue for the operator, as docs/ORDERED-DELIVERY.md says
   * ("such dead letters need an operator"), never applied, never acknowledged. Written again only once a later carry
   * starts a generation the fence can enter.
   */
  private readonly twoHistories = new Set<string>();
  /** The simulated SQS the operator's `dlq redrive` runs against (started at its first run), and its queues by URL. */
  private sqs: { readonly endpoint: SqsEndpoint; readonly queues: Map<string, QueueOnEndpoint> } | undefined;
  /** How many `dlq redrive` runs had queues of their own. */
  private sqsRuns = 0;
  /** The letters a planned redrive sent, not yet delivered: the fence each was planned against (`fenceText`). */
  private readonly plannedAgainst = new Map<string, string>();
  /** The outbox table's past images, which a point-in-time restore brings back (review ro12, RO12-9). */
  private readonly images: OutboxImages;
  /** The inbox table's past images, which an inbox restore brings back (review ro12, RO12-4). */
  private readonly inboxImages: InboxImages;
  /** Whether the inbox table was restored in this run (its fences went back; the operator carried them forward). */
  private inboxRestored = false;
  /**
   * Whether the inbox table was restored and its fences are not carried yet (the runbook's step 3 still to do): only
   * then may `fence replay` refuse for an inbox restore (the inbox-restore check; docs/ORDERED-DELIVERY.md, "Restoring
   * an inbox table").
   */
  private inboxCarryPending = false;
  /**
   * When the inbox table was last restored, on the model's clock (review ro13, RO13-9): DynamoDB restores into a new
   * table, created then; the model restores in place, so the operator's DescribeTable is answered this time (the
   * inbox-restore check compares it with the fences' write times). Undefined: never restored.
   */
  private inboxCreatedAt: number | undefined;

  /** A run on tables of its own (created here, deleted by `stop`) with a fault proxy of its own in front of DynamoDB Local. */
  public static async start(maxReceiveCount: number, subscriberName = 'model-ordered'): Promise<OrderedWorld> {
    const client = localClient();
    try {
      const settings = { eventSource: 'model-orders', timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE };
      const [outbox, inbox, ledgerTable, formerOutbox, formerInbox] = await Promise.all([
        createOutbox(client, settings),
        createInbox(client, { subscriberName, deduplicationWindowSeconds: MODEL_WINDOW_SECONDS }),
        createKeyedTable(client, `${subscriberName}-ledger`),
        // the table a restore is made from (issue 38)
        createOutbox(client, settings),
        // the inbox table an inbox restore is made from (review ro12, RO12-4)
        createInbox(client, { subscriberName, deduplicationWindowSeconds: MODEL_WINDOW_SECONDS }),
      ]);
      const tables = { outbox, inbox, ledgerTable, formerOutboxTable: formerOutbox.outboxTableName, formerInboxTable: formerInbox.inboxTableName };
      return new OrderedWorld(tables, maxReceiveCount, await startFaultProxy(inject('dynamoDbEndpoint')));
    } finally {
      client.destroy();
    }
  }

  /**
   * A new id, the same at every replay of the run (event ids order history items that share a sequence, message ids
   * and receipt handles): `00000000-0000-4000-8000-<n>`, n counting from 1 in this run.
   */
  private newId(): string {
    this.ids += 1;
    return `00000000-0000-4000-8000-${String(this.ids).padStart(12, '0')}`;
  }

  private constructor(
    private readonly tables: OrderedTables,
    private readonly maxReceiveCount: number,
    private readonly proxy: FaultProxy,
  ) {
    this.aggregates = Array.from({ length: AGGREGATES }, (_, index) => `agg-${index}`);
    for (const aggregate of this.aggregates) {
      this.produced.set(aggregate, []);
      this.stream.set(aggregate, []);
    }
    this.clients = [0, 1].map((environment) => {
      const client = this.scheduled(localClient({ endpoint: proxy.endpoint, maxAttempts: 3 }), `env${environment}`);
      return dieAsPlanned(client, () => this.plans[environment]);
    });
    this.handlers = this.consumers();
    this.producerClient = this.scheduled(localClient({ endpoint: proxy.endpoint, maxAttempts: 3 }), 'producer');
    this.producer = new OrderedOutbox({ client: this.producerClient, config: tables.outbox, maxAttempts: 10, now: () => new Date(this.nowMs), newId: () => this.newId() });
    this.reader = DynamoDBDocumentClient.from(localClient());
    this.fences = new SequenceFences({ client: this.reader, tableName: tables.inbox.inboxTableName, subscriberName: tables.inbox.subscriberName });
    this.records = this.eventRecords();
    this.images = new OutboxImages(this.reader, tables.outbox, this.aggregates);
    this.inboxImages = new InboxImages(this.reader, tables.inbox.inboxTableName);
  }

  /** The ordered consumer of each environment, deployed with the subscriber's window now. */
  private consumers(): SqsBatchHandler[] {
    return this.clients.map((client) =>
      createOrderedConsumer<{ note: string }>({
        client,
        config: { ...this.tables.inbox, deduplicationWindowSeconds: this.windowSeconds },
        now: () => new Date(this.nowMs),
        // the WARN lines of events an operator's skip dropped (acknowledged unapplied): each must name one it dropped
        logger: createLogger({
          level: 'WARN',
          sink: (line) => {
            const parsed = JSON.parse(line) as { message?: string; eventId?: string };
            if (parsed.message === 'dropped by fence skip') this.skipWarnings.push(parsed.eventId ?? '?');
          },
        }),
        metricsSink: () => undefined,
        deadLetter: this.deadLetterPublisher(),
        handle: (event, tx) => {
          if (this.poisoned.has(event.id)) throw new PermanentError(`the model's handler cannot take event ${event.id}`);
          tx.update({
            TableName: this.tables.ledgerTable,
            Key: { pk: event.subject as string },
            UpdateExpression: 'SET applied = list_append(if_not_exists(applied, :none), :id)',
            ExpressionAttributeValues: { ':none': [], ':id': [event.id] },
          });
        },
      }),
    );
  }

  /** What the operator's plans read of the subscriber, with its deployed window (as its Operator output says). */
  private eventRecords(): OrderedEventRecords {
    return new OrderedEventRecords({ client: this.reader, tableName: this.tables.inbox.inboxTableName, subscriberName: this.tables.inbox.subscriberName, now: () => new Date(this.nowMs), deduplicationWindowSeconds: this.windowSeconds });
  }

  /** Every request of `client` waits for the scheduler while one runs (an interleaving it decides). */
  private scheduled(client: DynamoDBClient, label: string): DynamoDBClient {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (this.scheduler !== undefined) await this.scheduler.schedule(Promise.resolve(), `${label} ${String(context.commandName)}`);
        return next(args);
      },
      { step: 'initialize', name: 'orderedModelSchedule', priority: 'high' },
    );
    return client;
  }

  private aggregate(index: number): string {
    return this.aggregates[index % AGGREGATES]!;
  }

  /** `count` producers append one event each to the aggregate at once (the scheduler interleaves their requests). */
  public async produce(scheduler: fc.Scheduler, aggregateIndex: number, count: number, fault: OrderedFault = 'none'): Promise<void> {
    const aggregate = this.aggregate(aggregateIndex);
    this.scheduler = scheduler;
    this.injectFault(fault);
    try {
      const writes = Promise.all(
        Array.from({ length: count }, () => this.producer.transactWrite({ events: [{ type: 'Step', aggregateId: aggregate, subject: aggregate, data: { note: 'x' } }] })),
      );
      const written = (await scheduler.waitFor(writes)).map((envelopes) => envelopes[0]!);
      for (const envelope of written.sort((a, b) => Number(a.sequence) - Number(b.sequence))) this.written(aggregate, envelope, fault === 'none' ? '' : `, ${fault}`);
    } finally {
      this.scheduler = undefined;
      this.proxy.clearRules();
    }
    // a time a point-in-time restore can go back to (a command may produce more than once before it restores)
    await this.images.record();
  }

  /** The relay forwards the aggregate's next stream record to the FIFO queue, `copies` times. */
  public relay(aggregateIndex: number, copies: number): void {
    const envelope = this.stream.get(this.aggregate(aggregateIndex))!.shift();
    if (envelope === undefined) return;
    for (let copy = 0; copy < copies; copy++) this.enqueue(envelope);
    this.history.push(`relayed ${envelope.partitionkey} #${Number(envelope.sequence)} x${copies}`);
  }

  /** How many records of the aggregate the relay has yet to forward. */
  public pendingRelay(aggregateIndex: number): number {
    return this.stream.get(this.aggregate(aggregateIndex))!.length;
  }

  private enqueue(envelope: OrderedEnvelope): void {
    this.queue.push({ messageId: this.newId(), body: JSON.stringify(envelope), envelope, receives: 0 });
  }

  /** The group's first message (FIFO), or its `offset`-th one (out of order: a standard queue, a replay). */
  private pick(aggregate: string, offset: number): QueuedMessage | undefined {
    const group = this.queue.filter((message) => message.envelope.partitionkey === aggregate);
    return group.length === 0 ? undefined : group.at(offset % group.length);
  }

  /** One environment receives one message of the aggregate and runs it, maybe dying at a request. */
  public async deliver(aggregateIndex: number, offset: number, crash?: OrderedCrash, fault: OrderedFault = 'none'): Promise<void> {
    const message = this.pick(this.aggregate(aggregateIndex), offset);
    if (message === undefined) return;
    this.plans[0] = { crash, requests: 0, dead: false };
    this.injectFault(fault);
    try {
      await this.run(0, message, `${crash === undefined ? '' : ` (dies ${crash.when} request ${crash.request})`}${fault === 'none' ? '' : ` (${fault})`}`);
    } finally {
      this.plans[0] = undefined;
      this.proxy.clearRules();
    }
  }

  /**
   * The handler fails on one message of the aggregate (it dies before its first request) at every receive, until SQS
   * moves it to the dead-letter queue: a dead letter, and a gap for the group's later messages.
   */
  public async exhaust(aggregateIndex: number, offset: number): Promise<void> {
    const message = this.pick(this.aggregate(aggregateIndex), offset);
    if (message === undefined) return;
    try {
      while (this.queue.includes(message)) {
        this.plans[0] = { crash: { request: 1, when: 'before' }, requests: 0, dead: false };
        await this.run(0, message, ' (the handler fails)');
      }
    } finally {
      this.plans[0] = undefined;
    }
  }

  /** Two environments run two messages of the aggregate at once (a redrive or a visibility expiry put both in flight). */
  public async deliverConcurrently(scheduler: fc.Scheduler, aggregateIndex: number, offsets: readonly [number, number]): Promise<void> {
    const aggregate = this.aggregate(aggregateIndex);
    const first = this.pick(aggregate, offsets[0]);
    const second = this.pick(aggregate, offsets[1]);
    if (first === undefined || second === undefined) return;
    this.scheduler = scheduler;
    try {
      await scheduler.waitFor(Promise.all([this.run(0, first, ' (env0, concurrent)'), this.run(1, second, ' (env1, concurrent)')]));
    } finally {
      this.scheduler = undefined;
    }
  }

  private injectFault(fault: OrderedFault): void {
    for (const rule of FAULT_RULES[fault]) this.proxy.inject(rule);
  }

  private async run(environment: number, message: QueuedMessage, note: string): Promise<void> {
    message.receives += 1;
    const before = this.runtimeDeadLetters.length;
    let outcome: string;
    try {
      const response = await this.handlers[environment]!({
        Records: [
          { messageId: message.messageId, receiptHandle: this.newId(), body: message.body, attributes: { ApproximateReceiveCount: String(message.receives), MessageGroupId: message.envelope.partitionkey } },
        ],
      });
      // an invocation that died answers nothing: whatever its code made of the crash, SQS keeps the message
      outcome = this.plans[environment]?.dead === true ? 'crashed' : response.batchItemFailures.length === 0 ? 'acknowledged' : 'failed';
    } catch (error) {
      if (!(error instanceof SimulatedCrash)) throw error;
      outcome = 'crashed';
    }
    // Lambda deletes a message its invocation did not report failed (also one the runtime dead-lettered itself, or
    // acknowledged as a duplicate): whatever the notes below add to the outcome, it leaves the queue
    const acknowledged = outcome === 'acknowledged';
    const what = `${message.envelope.partitionkey} #${Number(message.envelope.sequence)}`;
    // a letter the fence's plan sent back, refused as another history with the fence where the plan saw it: the plan
    // took it for one the fence admits, and redriven it only comes back (the ordered model, seed 777); the plan leaves
    // such a letter for the operator to write again
    const planned = this.plannedAgainst.get(message.envelope.id);
    this.plannedAgainst.delete(message.envelope.id);
    const fenceNow = planned === undefined ? undefined : fenceText(await this.fences.get(message.envelope.partitionkey));
    for (const letter of this.runtimeDeadLetters.slice(before)) {
      if (letter.errorName === 'SequenceReusedError' && planned !== undefined && planned === fenceNow) {
        this.violations.push(`the redrive plan sent ${message.envelope.partitionkey} #${Number(message.envelope.sequence)} (${message.envelope.id}), which the fence (${planned}, unchanged since the plan) refuses as another history: redriven, it only comes back`);
      }
      const expected = this.expectedDeadLetter(message.envelope, letter);
      if (expected !== undefined) outcome += `, dead-lettered (${expected})`;
      else this.violations.push(`valid event ${what} dead-lettered by the runtime: ${letter.errorName}: ${letter.errorMessage}`);
    }
    for (const refusal of this.refusedSends.splice(0)) this.violations.push(`${what}: the dead-letter send was refused by the FIFO dead-letter queue: ${refusal}`);
    // an event an operator's accepted skip dropped, younger than the window (so no inbox record says it is old):
    // acknowledged unapplied with a WARN line naming the skip; a WARN names only an event a skip dropped
    const { envelope } = message;
    const sharedSequence = (this.reused.get(envelope.partitionkey) ?? []).some((other) => other.sequence === envelope.sequence);
    const dropped = this.skippedIds(envelope.partitionkey).includes(envelope.id) && !sharedSequence;
    // against the smallest window its record could have been written under (a raise lengthens no older record), as
    // the consumer recorded its raises
    const windowRecord = await readWindowRecord(this.reader, this.tables.inbox.inboxTableName, this.tables.inbox.subscriberName, 'get');
    const young = this.nowMs - Date.parse(envelope.time ?? '') < smallestWindowSeconds(this.windowSeconds, windowRecord, orderedPositionOf(message.body).writtenAt) * 1000;
    const warned = this.skipWarnings.splice(0);
    // a sequence taken again, first seen when already older than the window: the consumer can not tell it from an old
    // copy and answers duplicate, the documented limit (docs/ORDERED-DELIVERY.md: carry the heads over before writing).
    // Either event of the shared sequence: the new one, or the old table's one in flight that the new one passed
    // (seed 308844549, path 6:0:10:11:15:16:8:4:5:7:7)
    const sequenceTakenTwice = (this.reused.get(envelope.partitionkey) ?? []).some((other) => other.id === envelope.id || Number(other.sequence) === Number(envelope.sequence));
    if (!young && outcome === 'acknowledged' && sequenceTakenTwice) {
      this.lostPastWindow.add(envelope.id);
      outcome += ' (a sequence taken again, older than the window: taken for a duplicate, the documented limit)';
    }
    if (dropped && young && outcome === 'acknowledged' && !warned.includes(envelope.id)) this.violations.push(`${what} (${envelope.id}), dropped by an operator's skip, acknowledged without a WARN line naming the skip`);
    for (const id of warned) {
      if (id === envelope.id && this.skippedAsApplied.has(id)) continue;
      if (id === envelope.id && (dropped || (this.restored && (this.skipped.get(envelope.partitionkey) ?? new Set()).has(Number(envelope.sequence))))) this.droppedBySkip.add(id);
      else this.violations.push(`a WARN line says a skip dropped ${id}, delivering ${what} (${envelope.id}), which no accepted skip dropped`);
    }
    if (acknowledged) this.queue = this.queue.filter((queued) => queued !== message);
    else if (message.receives >= this.maxReceiveCount && this.queue.includes(message)) {
      this.queue = this.queue.filter((queued) => queued !== message);
      this.deadLetters.push(message);
      outcome += ', moved to the DLQ by SQS';
    }
    this.history.push(`delivered ${what} (${message.envelope.id.replace(/^[0-]+/, "")})${note}: ${outcome}`);
  }

  /** The operator redrives every dead letter: as they are (SQS redrive order) or by the fence's plan. */
  public async redrive(how: 'as-is' | 'reversed' | 'planned'): Promise<void> {
    let letters = this.deadLetters;
    this.deadLetters = [];
    if (how === 'reversed') letters = [...letters].reverse();
    if (how === 'planned') {
      const plan = await planOrderedRedrive(letters.map(planned), this.fences, this.records);
      const byId = new Map(letters.map((letter) => [letter.messageId, letter]));
      letters = plan.redrive.map((entry) => byId.get(entry.id)!);
      // what each letter sent was planned against (checked when it is delivered)
      for (const letter of letters) this.plannedAgainst.set(letter.envelope.id, fenceText(await this.fences.get(letter.envelope.partitionkey)));
      const appliedNow = await this.appliedEverywhere();
      this.checkNeverApplied('planned redrive', plan, appliedNow);
      // unproven (no inbox record, too old to tell): the runbook's step 5 has the operator decide from the subscriber's
      // own state (here its ledger): written again only when not applied, else deleted (review r8b, R8b-10)
      for (const entry of plan.unproven) {
        const { envelope } = byId.get(entry.id)!;
        if (appliedNow.has(envelope.id)) continue;
        if (!this.reusedDeadLetters.some((other) => other.id === envelope.id) && !this.reEmitted.has(envelope.id)) this.reusedDeadLetters.push(envelope);
      }
      // never applied, another event holds the sequence (the heads went back): the operator writes it again (step 5)
      for (const entry of plan.reused) {
        const { envelope } = byId.get(entry.id)!;
        if (!this.reusedDeadLetters.some((other) => other.id === envelope.id) && !this.reEmitted.has(envelope.id)) this.reusedDeadLetters.push(envelope);
      }
      // the plan leaves out what the fence shows applied: those dead letters are deleted, not redriven
      this.history.push(`plan: ${plan.alreadyApplied.length} already applied, gaps ${JSON.stringify(plan.gaps)}`);
    }
    for (const letter of letters) this.queue.push({ ...letter, messageId: this.newId(), receives: 0 });
    this.history.push(`redrive (${how}): ${letters.map((letter) => `${letter.envelope.partitionkey.slice(-5)} #${Number(letter.envelope.sequence)}`).join(', ') || 'nothing'}`);
  }

  /**
   * The operator runs `dlq redrive` on the ordered subscriber: the CLI's decisions over the fence's plan send what the
   * fences admit now (to the queue's tail, in sequence) and leave the rest in the dead-letter queue. Checked against
   * the ledgers: every letter sent is right after its aggregate's applied events or after a letter sent before it, and
   * every letter left is applied already, a copy of one sent, or behind a sequence no dead letter holds.
   */
  public async redriveReady(): Promise<void> {
    const letters = this.deadLetters;
    const plan = await planOrderedRedrive(letters.map(planned), this.fences, this.records);
    const decisions = orderedDecisions(plan, { held: 'dead letter', left: 'left in the dead-letter queue' });
    this.checkNeverApplied('dlq redrive', plan, await this.appliedEverywhere());
    const sending = new Set(decisions.filter((item) => item.decision === 'send').map((item) => item.id));
    const sent = letters.filter((letter) => sending.has(letter.messageId));
    const order = decisions.filter((item) => item.decision === 'send').map((item) => item.id);
    sent.sort((a, b) => order.indexOf(a.messageId) - order.indexOf(b.messageId));
    this.deadLetters = letters.filter((letter) => !sending.has(letter.messageId));
    await this.checkOperatorSends('dlq redrive', sent.map((letter) => letter.envelope), letters.map((letter) => letter.envelope), decisions);
    for (const letter of sent) this.queue.push({ ...letter, messageId: this.newId(), receives: 0 });
    this.history.push(`dlq redrive: sent ${this.describe(sent.map((letter) => letter.envelope))}; left ${this.describe(this.deadLetters.map((letter) => letter.envelope))}`);
  }

  /**
   * The operator runs `replay` to the ordered subscriber for the aggregate's events from `fromSequence` on: the CLI reads
   * them from the outbox's history items and its decisions send what the fence admits now to the queue's tail. Checked
   * against the ledger as `dlq redrive` is, and the events it calls duplicates must be exactly those applied.
   */
  public async replay(aggregateIndex: number, fromSequence: number): Promise<void> {
    const aggregate = this.aggregate(aggregateIndex);
    const selected = this.produced.get(aggregate)!.filter((envelope) => Number(envelope.sequence) >= fromSequence);
    const { events, missing } = await orderedHistoryEvents({
      location: { client: this.reader, tableName: this.tables.outbox.outboxTableName, sortKeyName: TABLE_SCHEMA.SORT_KEY },
      eventIds: selected.map((envelope) => envelope.id),
    });
    if (missing.length > 0) this.violations.push(`replay: the outbox history misses events the producer wrote: ${missing.join(', ')}`);
    const plan = await planOrderedRedrive(events.map((event) => ({ id: event.envelope.id, body: event.body })), this.fences, this.records);
    const decisions = orderedDecisions(plan, { held: 'replayed event', left: 'not sent' });
    const byId = new Map(selected.map((envelope) => [envelope.id, envelope]));
    const sent = decisions.filter((item) => item.decision === 'send').map((item) => byId.get(item.id)!);
    const applied = new Set([...(await this.ledger(aggregate)), ...this.skippedIds(aggregate)]);
    // an applied event whose inbox record expired (older than the window) is unproven: counted with the duplicates
    // when applied; what the plan calls never applied must never be applied (review r8b, R8b-10)
    this.checkNeverApplied(`replay of ${aggregate} from #${fromSequence}`, plan, new Set(await this.ledger(aggregate)));
    const unprovenApplied = decisions.filter((item) => item.decision === 'unproven' && applied.has(item.id)).map((item) => item.id);
    const duplicates = [...decisions.filter((item) => item.decision === 'applied').map((item) => item.id), ...unprovenApplied];
    const expectedDuplicates = selected.filter((envelope) => applied.has(envelope.id)).map((envelope) => envelope.id);
    if (!this.restored && JSON.stringify([...duplicates].sort()) !== JSON.stringify([...expectedDuplicates].sort())) {
      this.violations.push(`replay of ${aggregate} from #${fromSequence}: called ${JSON.stringify(duplicates)} duplicates, but the applied ones of those replayed are ${JSON.stringify(expectedDuplicates)}`);
    }
    await this.checkOperatorSends(`replay from #${fromSequence}`, sent, selected, decisions);
    for (const envelope of sent) this.enqueue(envelope);
    this.history.push(`replay ${aggregate.slice(-5)} from #${fromSequence}: sent ${this.describe(sent)}`);
  }

  /**
   * Review r8b, R8b-10: what an operator command's plan calls never applied (`reused`: write it again as a new event)
   * must not be applied, whatever its age: the outbox's history outlives the inbox's records, so an event applied
   * longer ago than the window has no record and must be `unproven`, never `reused` (a second application).
   */
  private checkNeverApplied(what: string, plan: OrderedRedrivePlan, applied: ReadonlySet<string>): void {
    const wrong = plan.reused.filter((letter) => letter.eventId !== undefined && applied.has(letter.eventId) && !this.twoHistories.has(letter.eventId));
    if (wrong.length > 0) this.violations.push(`${what}: called applied events never applied (write them again: a second application): ${wrong.map((letter) => `${letter.aggregateId} #${letter.sequence} ${letter.eventId}`).join(', ')}`);
  }

  /**
   * Every event id applied in any aggregate, from the ledgers (only what the handler applied: `skippedIds` goes by
   * sequence, which after a restore names events the skip did not drop).
   */
  private async appliedEverywhere(): Promise<Set<string>> {
    const applied = new Set<string>();
    for (const aggregate of this.aggregates) for (const id of await this.ledger(aggregate)) applied.add(id);
    return applied;
  }

  private describe(envelopes: readonly OrderedEnvelope[]): string {
    return envelopes.map((envelope) => `${envelope.partitionkey.slice(-5)} #${Number(envelope.sequence)}`).join(', ') || 'nothing';
  }

  /**
   * What an operator command sent (`sent`, in its order) out of what it had (`had`), against the ledgers: per aggregate,
   * the sent sequences are the run right after the applied ones, in order, and nothing it had is held that could have
   * been part of that run (each held one is applied, a copy of one sent, or after a sequence nothing it had holds).
   */
  private async checkOperatorSends(what: string, sent: readonly OrderedEnvelope[], had: readonly OrderedEnvelope[], decisions: readonly OrderedDecision[]): Promise<void> {
    // after the heads went back two events may share a sequence: the fences' plan can not be checked by sequence alone
    if (this.restored) return;
    for (const aggregate of this.aggregates) {
      const appliedCount = await this.position(aggregate);
      const sequences = (list: readonly OrderedEnvelope[]) => list.filter((envelope) => envelope.partitionkey === aggregate).map((envelope) => Number(envelope.sequence));
      const sentHere = sequences(sent);
      const held = new Set(sequences(had));
      let runEnd = appliedCount;
      while (held.has(runEnd + 1)) runEnd += 1;
      const expected = Array.from({ length: runEnd - appliedCount }, (_, index) => appliedCount + 1 + index);
      if (JSON.stringify(sentHere) !== JSON.stringify(expected)) {
        this.violations.push(
          `${what}: sent ${aggregate} ${JSON.stringify(sentHere)} with ${appliedCount} applied and ${JSON.stringify([...held].sort((a, b) => a - b))} at hand: ` +
            `the fence admits exactly ${JSON.stringify(expected)}, in this order (decisions: ${decisions.map((item) => `#${item.sequence ?? '?'} ${item.decision}`).join(', ')})`,
        );
      }
    }
  }

  // ---- issue 38, items 3 and 4: `fence skip` with any --to, `inbox forget` of any key (the real CLI, in-process) ----

  /** The events the model expects applied, in sequence order: those produced, less those a skip dropped. */
  private expectedEvents(aggregate: string): OrderedEnvelope[] {
    const skipped = this.skipped.get(aggregate) ?? new Set<number>();
    return this.produced.get(aggregate)!.filter((envelope) => !skipped.has(Number(envelope.sequence)));
  }

  private expectedOrder(aggregate: string): string[] {
    return this.expectedEvents(aggregate).map((envelope) => envelope.id);
  }

  private skippedIds(aggregate: string): string[] {
    const skipped = this.skipped.get(aggregate) ?? new Set<number>();
    return this.produced.get(aggregate)!.filter((envelope) => skipped.has(Number(envelope.sequence))).map((envelope) => envelope.id);
  }

  /** Where the fence must stand, from the model's truth: the longest run 1..n of sequences applied (the ledger) or skipped. */
  private async position(aggregate: string): Promise<number> {
    const bySequence = new Map([...this.produced.get(aggregate)!, ...(this.reused.get(aggregate) ?? [])].map((envelope) => [envelope.id, Number(envelope.sequence)]));
    const done = new Set([...(await this.ledger(aggregate)).map((id) => bySequence.get(id)!), ...(this.skipped.get(aggregate) ?? [])]);
    let position = 0;
    while (done.has(position + 1)) position += 1;
    return position;
  }

  /** The operator's CLI, in-process, against DynamoDB Local (these commands send nothing to SQS), at the model's time. */
  private async operator(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return this.operatorDying(undefined, ...argv);
  }

  /** {@link operator}, whose run dies (throws) where `afterSqsRequest` throws, after an SQS request. */
  private async operatorDying(afterSqsRequest: ((commandName: string) => void) | undefined, ...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const services = { clock: { now: () => this.nowMs } as unknown as VirtualClock, endpoint: this.sqs?.endpoint ?? ({ endpoint: 'http://127.0.0.1:9' } as unknown as SqsEndpoint) };
    const inboxTable = this.tables.inbox.inboxTableName;
    return cliAt(
      services,
      { tableCreatedAt: (table) => (table === inboxTable && this.inboxCreatedAt !== undefined ? new Date(this.inboxCreatedAt) : undefined), ...(afterSqsRequest === undefined ? {} : { afterSqsRequest }) },
      ...argv,
    );
  }

  /** The subscriber's `<subscriber>/Operator` stack output, as the operator passes it (`--subscriber-output`). */
  private operatorOutput(queueUrl = 'http://127.0.0.1:9/000000000000/Model.fifo', deadLetterQueueUrl = 'http://127.0.0.1:9/000000000000/ModelDlq.fifo'): string {
    return JSON.stringify({
      format: 1, subscriberName: this.tables.inbox.subscriberName, processingMode: 'transactional', ordered: true, deduplicationWindowSeconds: this.windowSeconds,
      inboxTable: this.tables.inbox.inboxTableName, outboxTable: this.tables.outbox.outboxTableName, queueUrl, deadLetterQueueUrl,
    });
  }

  /**
   * The operator runs `fence skip` on the aggregate from where `fence show` says the fence stands to `ahead` sequences
   * further, which may be past what the outbox committed; the model's dead letters in the subscriber's FIFO dead-letter
   * queue (its Operator output names it), with or without `--drop-dead-letters`. Checked: a skip is accepted only up to
   * the head (the events the producer committed), and it names every event it drops by id; what it drops is never
   * applied, the rest is. A skip that passes a sequence whose event sits in the dead-letter queue is accepted only with
   * `--drop-dead-letters`, naming exactly those letters (which stay there); refused while letters were not read only
   * when one receive could miss one (more than 10 letters).
   */
  public async fenceSkip(aggregateIndex: number, ahead: number, dropDeadLetters = false): Promise<void> {
    const aggregate = this.aggregate(aggregateIndex);
    const inbox = ['--table', this.tables.inbox.inboxTableName];
    const shown = await this.operator('fence', 'show', this.tables.inbox.subscriberName, aggregate, ...inbox, '--json');
    const from = (JSON.parse(shown.stdout) as { appliedSequence: number }).appliedSequence;
    const to = from + ahead;
    const committed = this.heads.get(aggregate) ?? 0;
    const { queue, deadLetterQueue } = await this.deadLetterQueues(1, 'model');
    const letters = deadLetterQueue.messages().length;
    // the letters of the skipped sequences (one per body: the model may hold two letters of one message)
    const inRange = [...new Map(this.deadLetters.map((letter) => [letter.body, letter] as const)).values()]
      .filter((letter) => letter.envelope.partitionkey === aggregate && Number(letter.envelope.sequence) > from && Number(letter.envelope.sequence) <= to)
      .map((letter) => ({ sequence: Number(letter.envelope.sequence), eventId: letter.envelope.id }))
      .sort((a, b) => a.sequence - b.sequence || (a.eventId < b.eventId ? -1 : 1));
    // with the subscriber's Operator output: what proves the outbox table its own once nothing of it is in the history
    // (a replaced or restored table; review ro12, RO12-2), and names the dead-letter queue the skip reads
    const result = await this.operator(
      'fence', 'skip', this.tables.inbox.subscriberName, aggregate, '--subscriber-output', this.operatorOutput(queue.address.url, deadLetterQueue.address.url),
      '--from', String(from), '--to', String(to), '--reason', 'model: lost for good', ...(dropDeadLetters ? ['--drop-dead-letters'] : []), '--yes', '--json',
    );
    const left = deadLetterQueue.messages().length;
    this.sqs!.queues.delete(queue.address.url);
    this.sqs!.queues.delete(deadLetterQueue.address.url);
    const what = `fence skip ${aggregate} ${from}..${to}${dropDeadLetters ? ' --drop-dead-letters' : ''}`;
    if (left !== letters || queue.messages().length > 0) this.violations.push(`${what} changed the queues: the dead-letter queue held ${letters} letter(s), now ${left}; ${queue.messages().length} sent to the queue`);
    if (result.code === 3) {
      // R38-6's check (the history item at --from must be the fence's event) cannot tell another flow's outbox from a
      // sequence taken twice after the heads went back: refused, nothing changed (the ordered model, seed 3, run 15)
      const takenTwice = (this.reused.get(aggregate) ?? []).some((envelope) => Number(envelope.sequence) === from) && result.stderr.includes('not the outbox this subscriber applies');
      // the event of a skipped sequence is in the dead-letter queue: not lost, refused unless passed on purpose
      const deadLettered = !dropDeadLetters && inRange.length > 0 && result.stderr.includes('refused: the dead-letter queue holds ');
      // one receive returns 10 letters: only past that can a read miss one
      const unread = letters > 10 && result.stderr.includes("of the dead-letter queue not read");
      if (to <= committed && !takenTwice && !deadLettered && !unread) this.violations.push(`${what} refused with ${committed} committed and ${inRange.length} of ${letters} letter(s) at a skipped sequence: ${result.stderr.trim()}`);
      this.history.push(`fence skip ${aggregate.slice(-5)} ${from} -> ${to}${dropDeadLetters ? ' (drop dead letters)' : ''}: refused (${committed} committed, ${inRange.length} dead-lettered in range)`);
      return;
    }
    if (result.code !== 0) return void this.violations.push(`fence skip exited ${result.code}: ${result.stderr}`);
    const { drops, deadLettersDropped } = JSON.parse(result.stdout) as { drops: Array<{ sequence: number; eventId?: string }>; deadLettersDropped?: Array<{ sequence?: number; eventId?: string }> };
    // review o38 (fence skip and the dead-letter queue): a skipped sequence whose event is a dead letter is passed only on purpose, named
    const passed = (deadLettersDropped ?? []).map((letter) => ({ sequence: letter.sequence, eventId: letter.eventId }));
    if (!dropDeadLetters && inRange.length > 0) this.violations.push(`${what} accepted while the dead-letter queue holds ${JSON.stringify(inRange)} at skipped sequences: the letters can then only be dropped or applied out of sequence`);
    if (dropDeadLetters && JSON.stringify(passed) !== JSON.stringify(inRange)) this.violations.push(`${what} named ${JSON.stringify(passed)} as the dead letters it passes; the dead-letter queue holds ${JSON.stringify(inRange)} at skipped sequences`);
    if (to > committed) this.violations.push(`fence skip ${aggregate} accepted --to ${to} past the head (${committed} committed): events ${committed + 1}..${to} will be answered as duplicates when written`);
    const expected = this.produced.get(aggregate)!.filter((envelope) => Number(envelope.sequence) > from && Number(envelope.sequence) <= to).map((envelope) => ({ sequence: Number(envelope.sequence), eventId: envelope.id }));
    const named = drops.map((drop) => ({ sequence: drop.sequence, eventId: drop.eventId }));
    // after the heads went back a sequence may have two history items (two events): which one a skip names is not checked
    if (!this.restored && JSON.stringify(named) !== JSON.stringify(expected)) this.violations.push(`fence skip ${aggregate} ${from}..${to} named ${JSON.stringify(named)} as dropped; it drops ${JSON.stringify(expected)}`);
    const skipped = this.skipped.get(aggregate) ?? new Set<number>();
    for (let sequence = from + 1; sequence <= to; sequence++) skipped.add(sequence);
    // what the operator accepted to drop, by id: never applied, on purpose (the drain's loss check spares them)
    for (const drop of drops) if (drop.eventId !== undefined) this.droppedBySkip.add(drop.eventId);
    this.skipped.set(aggregate, skipped);
    this.history.push(`fence skip ${aggregate.slice(-5)} ${from} -> ${to}: dropped ${drops.map((drop) => `#${drop.sequence}${drop.eventId === undefined ? '' : ` (${drop.eventId})`}`).join(', ')}${passed.length === 0 ? '' : `; dead letters passed on purpose: ${passed.map((letter) => `#${letter.sequence}`).join(', ')}`}`);
  }

  /**
   * The operator runs `inbox forget --yes` on a key: an applied event's (with or without the subscriber's Operator
   * output, which says it is ordered), the aggregate's fence spelt as `<name>@sequence <aggregate>`, or an event the
   * subscriber never saw. Checked: the fence never moves back, an ordered subscriber's record is refused with the
   * output and never promised to apply again without it; then a copy of the event is delivered, as the operator
   * meant (the ledger check: it is not applied twice).
   */
  public async inboxForget(aggregateIndex: number, key: 'applied' | 'fence' | 'unknown', withOutput: boolean): Promise<void> {
    const aggregate = this.aggregate(aggregateIndex);
    const name = this.tables.inbox.subscriberName;
    const applied = await this.ledger(aggregate);
    const envelope = this.produced.get(aggregate)!.find((each) => each.id === applied[applied.length - 1]);
    if (key === 'applied' && envelope === undefined) return;
    const [subscriber, eventId] = key === 'fence' ? [`${name}@sequence`, aggregate] : [name, key === 'applied' ? envelope!.id : `never-${this.newId().slice(-8)}`];
    const output = this.operatorOutput();
    const before = await this.fences.get(aggregate);
    const result = await this.operator('inbox', 'forget', subscriber, eventId, '--table', this.tables.inbox.inboxTableName, '--reason', 'model', ...(withOutput ? ['--subscriber-output', output] : []), '--yes', '--json');
    const after = await this.fences.get(aggregate);
    if (after.appliedSequence !== before.appliedSequence) this.violations.push(`inbox forget ${subscriber} ${eventId} moved the fence of ${aggregate} from ${before.appliedSequence} to ${after.appliedSequence}`);
    if (key === 'fence' && result.code === 0) this.violations.push(`inbox forget accepted the fence's key (${subscriber} ${eventId})`);
    if (key === 'unknown' && result.code !== 3) this.violations.push(`inbox forget of an event never seen exited ${result.code}, not 3`);
    if (key === 'applied' && withOutput && result.code === 0) this.violations.push(`inbox forget of ordered subscriber ${name}'s record of ${eventId} was accepted with its ordered output: the fence answers the next delivery as a duplicate`);
    if (result.code === 0) {
      const said = (JSON.parse(result.stdout) as { nextDelivery?: string }).nextDelivery ?? '';
      if (!said.includes('an ordered subscriber does not apply it again')) this.violations.push(`inbox forget of ordered subscriber ${name}'s record of ${eventId} says "${said}"`);
    }
    if (result.code !== 0 && result.code !== 2 && result.code !== 3) this.violations.push(`inbox forget exited ${result.code}: ${result.stderr}`);
    this.history.push(`inbox forget ${subscriber} ${key === 'fence' ? aggregate.slice(-5) : eventId.slice(0, 8)}${withOutput ? ' (with the ordered output)' : ''}: exit ${result.code}`);
    // what the operator meant: the event comes again (and must not apply twice)
    if (key === 'applied' && result.code === 0) this.enqueue(envelope!);
  }

  /**
   * The operator runs `dlq redrive --allow-expired --yes` on the ordered subscriber, with the real CLI against the
   * simulated SQS: the model's dead letters in a FIFO dead-letter queue (each with its aggregate as the group and its
   * `iefErrorName`), the subscriber's FIFO queue naming it in its RedrivePolicy. The model's decision on redriving a
   * letter past the deduplication window: the ordered redrive sends every letter the fences admit whatever its age, and
   * the fence answers a letter at or below it however it is sent (an unproven one, never applied, would be acknowledged
   * unapplied and its dead letter deleted: lost), so the option has nothing to allow. Checked: refused as a usage error
   * (exit code 2) with `orderedRedriveOptionRefusal`'s reason, nothing sent to the queue, every dead letter still in the
   * dead-letter queue, no fence moved. What a wrongly accepted run moved goes to the model's queue, so the run goes on.
   */
  public async dlqRedriveAllowExpired(): Promise<void> {
    const { sqs, deadLetterQueue, queue } = await this.orderedQueuePair();
    for (const letter of this.deadLetters) {
      deadLetterQueue.send({
        body: letter.body,
        messageAttributes: letter.errorName === undefined ? {} : { [DEAD_LETTER_ATTRIBUTE.ERROR_NAME]: { DataType: 'String', StringValue: letter.errorName } },
        messageGroupId: letter.envelope.partitionkey,
        messageDeduplicationId: letter.messageId,
        origin: { via: 'send-message' },
      });
    }
    const name = this.tables.inbox.subscriberName;
    const output = JSON.stringify({
      format: 1, subscriberName: name, processingMode: 'transactional', ordered: true, deduplicationWindowSeconds: this.windowSeconds,
      inboxTable: this.tables.inbox.inboxTableName, outboxTable: this.tables.outbox.outboxTableName, queueUrl: queue.address.url, deadLetterQueueUrl: deadLetterQueue.address.url,
    });
    const before = await Promise.all(this.aggregates.map(async (aggregate) => fenceText(await this.fences.get(aggregate))));
    const result = await this.operator('dlq', 'redrive', '--subscriber-output', output, '--allow-expired', '--yes', '--json');
    const after = await Promise.all(this.aggregates.map(async (aggregate) => fenceText(await this.fences.get(aggregate))));
    const sent = queue.messages().map((message) => message.body);
    const kept = new Set(deadLetterQueue.messages().map((message) => message.body));
    const refusal = orderedRedriveOptionRefusal('allow-expired', name);
    if (result.code !== 2 || !result.stderr.includes(refusal)) {
      this.violations.push(`dlq redrive --allow-expired of the ordered subscriber exited ${result.code}, not refused with the reason (${refusal}): ${result.stderr.trim() || result.stdout.trim()}`);
    }
    if (sent.length > 0) this.violations.push(`dlq redrive --allow-expired of the ordered subscriber sent ${sent.length} dead letter(s) to its queue`);
    const gone = this.deadLetters.filter((letter) => !kept.has(letter.body));
    if (gone.length > sent.length) this.violations.push(`dlq redrive --allow-expired of the ordered subscriber deleted ${gone.length - sent.length} dead letter(s) it did not send`);
    if (JSON.stringify(after) !== JSON.stringify(before)) this.violations.push(`dlq redrive --allow-expired moved a fence: ${JSON.stringify(before)} -> ${JSON.stringify(after)}`);
    // what a wrongly accepted run moved is in the subscriber's queue now: the model's queue takes it, in the order sent
    const moved = gone.filter((letter) => sent.includes(letter.body)).sort((a, b) => sent.indexOf(a.body) - sent.indexOf(b.body));
    this.deadLetters = this.deadLetters.filter((letter) => !gone.includes(letter));
    for (const letter of moved) this.queue.push({ ...letter, messageId: this.newId(), receives: 0 });
    for (const each of [queue, deadLetterQueue]) sqs.queues.delete(each.address.url);
    this.history.push(`dlq redrive --allow-expired: exit ${result.code}, sent ${this.describe(moved.map((letter) => letter.envelope))}`);
  }

  /** The model's simulated SQS (started at its first use), a new run's number for queue names, and a clock on the model's time. */
  private async nextSqsRun(): Promise<{ readonly sqs: NonNullable<OrderedWorld['sqs']>; readonly clock: VirtualClock }> {
    const sqs = (this.sqs ??= await (async () => {
      const queues = new Map<string, QueueOnEndpoint>();
      return { endpoint: await startSqsEndpoint({ resolveQueue: (url) => queues.get(url) }), queues };
    })());
    this.sqsRuns += 1;
    return { sqs, clock: new VirtualClock(new SharedArrayBuffer(CLOCK_BUFFER_BYTES), () => this.nowMs) };
  }

  /**
   * A new run's ordered subscriber queues on the model's simulated SQS: a FIFO dead-letter queue (14 days) and the
   * subscriber's FIFO queue naming it in its RedrivePolicy at the model's maxReceiveCount, both resolvable by URL.
   */
  private async orderedQueuePair(): Promise<{ readonly sqs: NonNullable<OrderedWorld['sqs']>; readonly deadLetterQueue: QueueOnEndpoint; readonly queue: QueueOnEndpoint }> {
    const { sqs, clock } = await this.nextSqsRun();
    const baseUrl = sqs.endpoint.endpoint;
    const deadLetterQueue = makeQueue(queueModel(`OrderedDlq${this.sqsRuns}`, { fifo: true, queueName: `model-ordered-dlq-${this.sqsRuns}.fifo`, messageRetentionSeconds: 1_209_600 }), { clock, baseUrl });
    const queue = makeQueue(
      queueModel(`OrderedQueue${this.sqsRuns}`, { fifo: true, queueName: `model-ordered-${this.sqsRuns}.fifo`, redrive: { deadLetterQueue: `Stack/OrderedDlq${this.sqsRuns}`, maxReceiveCount: this.maxReceiveCount } }),
      { clock, baseUrl, deadLetterQueue },
    );
    for (const each of [queue, deadLetterQueue]) sqs.queues.set(each.address.url, each);
    return { sqs, deadLetterQueue, queue };
  }

  /** A FIFO queue of the model's simulated SQS (started at its first use), on its endpoint, for an operator command to send to. */
  private async operatorQueue(name: string): Promise<QueueOnEndpoint> {
    const { sqs, clock } = await this.nextSqsRun();
    const queue = makeQueue(queueModel(`${name}${this.sqsRuns}`, { fifo: true, queueName: `${name.toLowerCase()}-${this.sqsRuns}.fifo` }), { clock, baseUrl: sqs.endpoint.endpoint });
    sqs.queues.set(queue.address.url, queue);
    return queue;
  }

  /**
   * The operator runs `fence replay <aggregate> --subscriber-output --yes` (review ro12, RO12-2 and RO12-3), with the real
   * CLI against the simulated SQS: what it sends goes to the model's queue, in the order sent. First with another
   * deployment's queue as `--queue`: refused, naming both queues, nothing sent (review ro15, RO15-4). Checked: what it sends is
   * the run of sequences right after the applied ones, in order (while no restore took a head back); it refuses only
   * where the history or the inbox table gives it a reason (a restore); nothing applies twice (the ledger check).
   */
  public async fenceReplay(aggregateIndex: number): Promise<void> {
    const aggregate = this.aggregate(aggregateIndex);
    const queue = await this.operatorQueue('FenceReplay');
    // another deployment's FIFO queue typed as --queue: refused (usage, exit 2) naming both queues, nothing sent (review ro15, RO15-4)
    const other = await this.operatorQueue('OtherDeployment');
    const typed = await this.operator('fence', 'replay', this.tables.inbox.subscriberName, aggregate, '--subscriber-output', this.operatorOutput(queue.address.url), '--queue', other.address.url, '--yes');
    if (typed.code !== 2 || !typed.stderr.includes(other.address.url) || !typed.stderr.includes(queue.address.url) || other.messages().length + queue.messages().length > 0) {
      this.violations.push(`fence replay ${aggregate} --queue of another deployment: exit ${typed.code}, sent ${other.messages().length + queue.messages().length}, not refused naming both queues: ${typed.stderr.trim()}`);
    }
    this.sqs!.queues.delete(other.address.url);
    const result = await this.operator('fence', 'replay', this.tables.inbox.subscriberName, aggregate, '--subscriber-output', this.operatorOutput(queue.address.url), '--yes', '--json');
    this.sqs!.queues.delete(queue.address.url);
    const known = new Map([...this.produced.get(aggregate)!, ...(this.reused.get(aggregate) ?? [])].map((envelope) => [envelope.id, envelope]));
    const sent = queue.messages().map((message) => {
      const body = JSON.parse(message.body) as OrderedEnvelope;
      return known.get(body.id) ?? body;
    });
    if (result.code !== 0 && result.code !== 3) return void this.violations.push(`fence replay ${aggregate} exited ${result.code}: ${result.stderr.trim()}`);
    // review rx15 (RX15-1): an event past its outbox TTL (written + the outbox's eventRetention) is never sent; a
    // refusal for it names only such events
    const pastTtl = (envelope: OrderedEnvelope): boolean => Math.floor(Date.parse(envelope.time as string) / 1000) + this.tables.outbox.eventRetentionSeconds <= this.nowMs / 1000;
    const expiredRefusal = result.code === 3 && result.stderr.includes(PAST_RETENTION_TEXT);
    if (expiredRefusal) {
      const named = [...result.stderr.matchAll(/sequence \d+ \(([^)]+)\)/g)].map((match) => match[1]!);
      const wrong = named.filter((id) => known.get(id) === undefined || !pastTtl(known.get(id)!));
      if (named.length === 0 || wrong.length > 0) this.violations.push(`fence replay ${aggregate} refused as past the outbox's retention naming ${named.length === 0 ? 'nothing' : wrong.join(', ')}, not past its TTL: ${result.stderr.trim()}`);
    }
    for (const envelope of sent) if (pastTtl(envelope)) this.violations.push(`fence replay ${aggregate} sent ${envelope.id}, past its outbox TTL`);
    if (result.code === 3) {
      // while no outbox head went back, the one refusal due is the inbox-restore check's, until the fences are carried
      const inboxRefusal = result.stderr.includes(INBOX_RESTORE_ADVICE);
      if (!this.restored && !(this.inboxCarryPending && inboxRefusal) && !expiredRefusal) {
        this.violations.push(`fence replay ${aggregate} refused with no outbox restore in the run and no inbox restore waiting for its carry: ${result.stderr.trim()}`);
      }
      if (this.inboxRestored && !this.inboxCarryPending && inboxRefusal) this.violations.push(`fence replay ${aggregate} refused for an inbox restore whose fences were carried: ${result.stderr.trim()}`);
      if (sent.length > 0) this.violations.push(`fence replay ${aggregate} refused, yet sent ${this.describe(sent)}`);
    } else {
      // a refusal sends nothing by design (the subscriber may have applied what the fence admits in the table restored
      // from): what the fence admits is checked on a run that sends, not on one that refuses (seed 610415521)
      await this.checkOperatorSends(`fence replay ${aggregate}`, sent, this.produced.get(aggregate)!, []);
    }
    for (const envelope of sent) this.enqueue(envelope);
    this.history.push(`fence replay ${aggregate.slice(-5)}: exit ${result.code}, sent ${this.describe(sent)}`);
  }

  /**
   * The subscriber's inbox table is restored to its image `back` changes ago (a point-in-time restore into a new table
   * the subscriber is pointed at: its fences, inbox records and skip records go back, the ledger keeps what was
   * applied), then the operator follows the runbook: `fence carry --from-table <the table restored from> --yes` (review
   * ro12, RO12-4). Checked: the carry brings every fence back to where it stood (never further), and nothing applies
   * twice afterwards (the ledger check: a copy of an event applied since the restore point is a duplicate again).
   */
  public async restoreInbox(back: number, proof: 'outputs' | 'records' = 'outputs'): Promise<void> {
    const before = await Promise.all(this.aggregates.map(async (aggregate) => (await this.fences.get(aggregate)).appliedSequence));
    await this.restoreInboxTable(back);
    const restored = await Promise.all(this.aggregates.map(async (aggregate) => (await this.fences.get(aggregate)).appliedSequence));
    await this.carryFences(before, `inbox restored ${back} back: fences ${JSON.stringify(before)} -> ${JSON.stringify(restored)}`, proof);
  }

  /**
   * The inbox table restored to its image `back` changes ago, as a restore into a new table created now: its fences,
   * inbox records and skip records go back; a carry record it held names the table it was carried into, not the new
   * one (review ro13, RO13-3), so the model, restoring in place, removes it.
   */
  private async restoreInboxTable(back: number): Promise<void> {
    await this.inboxImages.restore(back, this.tables.formerInboxTable);
    await this.reader.send(new DeleteCommand({ TableName: this.tables.inbox.inboxTableName, Key: { [TABLE_SCHEMA.PARTITION_KEY]: fenceCarryKey(this.tables.inbox.subscriberName) } }));
    // the restored table is created after every fence and event so far (a millisecond on, as an operator's restore is)
    this.nowMs += 1;
    this.inboxCreatedAt = this.nowMs;
    this.inboxRestored = true;
    this.inboxCarryPending = true;
  }

  /** The runbook's `fence carry --from-table <the table restored from> --yes`: every fence back where it stood (`before`). */
  private async carryFences(before: readonly number[], restoredLine: string, proof: 'outputs' | 'records' = 'outputs'): Promise<void> {
    const carry = (...more: string[]) => this.operator('fence', 'carry', this.tables.inbox.subscriberName, '--from-table', this.tables.formerInboxTable, '--table', this.tables.inbox.inboxTableName, ...more, '--yes', '--json');
    // first (proof 'records'), the operator gives only the outbox table: the restored table's live records and the
    // outbox history must prove the table carried from; refused (nothing written) when they can not, then as below
    if (proof === 'records') {
      const byRecords = await carry('--outbox-table', this.tables.outbox.outboxTableName);
      const carried = await Promise.all(this.aggregates.map(async (aggregate) => (await this.fences.get(aggregate)).appliedSequence));
      if (byRecords.code === 0) {
        if (JSON.stringify(carried) !== JSON.stringify(before)) this.violations.push(`fence carry by records after the inbox restore left the fences at ${JSON.stringify(carried)}; they stood at ${JSON.stringify(before)}`);
        this.history.push(`${restoredLine}; fence carry (records and the outbox history): ${JSON.stringify(carried)}`);
        return;
      }
      if (byRecords.code !== 3) this.violations.push(`fence carry by records exited ${byRecords.code}: ${byRecords.stderr.trim()}`);
      restoredLine = `${restoredLine}; fence carry by records refused`;
    }
    // the output of the deployment that used the table restored from proves it when the image holds nothing of the subscriber
    // (review ro13, RO13-5), beside the output of the deployment that uses the restored table: the same flow (review ro14, RO14-2)
    const formerOutput = JSON.stringify({ ...(JSON.parse(this.operatorOutput()) as object), inboxTable: this.tables.formerInboxTable });
    const result = await carry('--from-subscriber-output', formerOutput, '--subscriber-output', this.operatorOutput());
    const after = await Promise.all(this.aggregates.map(async (aggregate) => (await this.fences.get(aggregate)).appliedSequence));
    if (result.code !== 0) this.violations.push(`fence carry exited ${result.code}: ${result.stderr.trim()}`);
    else this.inboxCarryPending = false;
    if (JSON.stringify(after) !== JSON.stringify(before)) this.violations.push(`fence carry after the inbox restore left the fences at ${JSON.stringify(after)}; they stood at ${JSON.stringify(before)}`);
    this.history.push(`${restoredLine}; fence carry: ${JSON.stringify(after)}`);
  }

  /**
   * Review ro15b (RO15B-3): the inbox table restored `back` changes ago, and the table restored from is gone. The
   * runbook's way: the operator moves each fence with `fence skip` (with the subscriber's Operator output and
   * `--drop-dead-letters`: a letter there is a copy of an applied event) to what the subscriber's own state shows
   * applied (where the fence stood: its ledger and the skips it was told of), then accepts the fences with
   * `fence carry --accept-fences-as-applied --reason ... --yes`. Checked: every fence back where it stood, the acceptance
   * accepted, and afterwards the ledger check: nothing of it applies twice or is lost (a later `fence replay` sends the
   * rest, and must not be refused for the restore). Where the skip can not take that way (an outbox restore in the run:
   * a fence's generation is the carry's to copy; a skip refused), the model carries from the table as the runbook's
   * step 3 does.
   */
  public async restoreInboxSourceGone(back: number): Promise<void> {
    const subscriber = this.tables.inbox.subscriberName;
    const before = await Promise.all(this.aggregates.map(async (aggregate) => (await this.fences.get(aggregate)).appliedSequence));
    await this.restoreInboxTable(back);
    const restored = await Promise.all(this.aggregates.map(async (aggregate) => (await this.fences.get(aggregate)).appliedSequence));
    const line = `inbox restored ${back} back, the table restored from gone: fences ${JSON.stringify(before)} -> ${JSON.stringify(restored)}`;
    if (this.restored) return this.carryFences(before, `${line} (an outbox restore in the run: carried from the table instead)`);
    const { queue, deadLetterQueue } = await this.deadLetterQueues(1, 'model');
    const skips: string[] = [];
    for (const [index, aggregate] of this.aggregates.entries()) {
      if (before[index]! <= restored[index]!) continue;
      const result = await this.operator(
        'fence', 'skip', subscriber, aggregate, '--subscriber-output', this.operatorOutput(queue.address.url, deadLetterQueue.address.url),
        '--from', String(restored[index]), '--to', String(before[index]), '--reason', 'model: the subscriber state shows these applied', '--drop-dead-letters', '--yes', '--json',
      );
      if (result.code !== 0) {
        skips.push(`skip ${aggregate.slice(-5)} refused (${result.code})`);
        continue;
      }
      const { drops } = JSON.parse(result.stdout) as { drops: Array<{ eventId?: string }> };
      for (const drop of drops) if (drop.eventId !== undefined) this.skippedAsApplied.add(drop.eventId);
      skips.push(`skip ${aggregate.slice(-5)} ${restored[index]} -> ${before[index]}`);
    }
    this.sqs!.queues.delete(queue.address.url);
    this.sqs!.queues.delete(deadLetterQueue.address.url);
    const moved = await Promise.all(this.aggregates.map(async (aggregate) => (await this.fences.get(aggregate)).appliedSequence));
    if (JSON.stringify(moved) !== JSON.stringify(before)) return this.carryFences(before, `${line}; ${skips.join(', ')}: fences ${JSON.stringify(moved)} (carried from the table instead)`);
    const accepted = await this.operator('fence', 'carry', subscriber, '--table', this.tables.inbox.inboxTableName, '--accept-fences-as-applied', '--reason', 'model: table restored from gone, fences moved to the ledger', '--yes', '--json');
    const after = await Promise.all(this.aggregates.map(async (aggregate) => (await this.fences.get(aggregate)).appliedSequence));
    if (accepted.code !== 0) this.violations.push(`fence carry --accept-fences-as-applied exited ${accepted.code}: ${accepted.stderr.trim()}`);
    else this.inboxCarryPending = false;
    if (JSON.stringify(after) !== JSON.stringify(before)) this.violations.push(`after an inbox restore whose table is gone, the skips and the acceptance left the fences at ${JSON.stringify(after)}; the subscriber applied up to ${JSON.stringify(before)}`);
    this.history.push(`${line}; ${skips.length === 0 ? 'no skip' : skips.join(', ')}; fence carry --accept-fences-as-applied: ${JSON.stringify(after)}`);
  }

  /**
   * Review ro13, RO13-9: the inbox table restored `back` changes ago and, before the operator's `fence carry` (the
   * subscriber's event source mapping disabled, as the runbook has it: no delivery between), an operator command that
   * would send the aggregate's events: `fence replay` or `dlq redrive --yes`. Its fences stand behind what the
   * subscriber applied, so a command that sends must refuse (the inbox-restore check); checked: it sends no event the
   * subscriber applied (delivered before the carry, behind the restored fence, it would apply twice). Then the carry,
   * and every fence back where it stood.
   */
  public async restoreInboxThen(back: number, step: 'fence replay' | 'dlq redrive', aggregateIndex: number): Promise<void> {
    const before = await Promise.all(this.aggregates.map(async (aggregate) => (await this.fences.get(aggregate)).appliedSequence));
    await this.restoreInboxTable(back);
    const restored = await Promise.all(this.aggregates.map(async (aggregate) => (await this.fences.get(aggregate)).appliedSequence));
    const applied = await this.appliedEverywhere();
    const queued = this.queue.length;
    if (step === 'fence replay') await this.fenceReplay(aggregateIndex);
    else await this.dlqRedriveWhole(1);
    const sentApplied = this.queue.slice(queued).filter((message) => applied.has(message.envelope.id));
    if (sentApplied.length > 0) {
      this.violations.push(`${step} after an inbox restore, before 'fence carry', sent ${this.describe(sentApplied.map((message) => message.envelope))}, applied already (fences ${JSON.stringify(before)} restored to ${JSON.stringify(restored)}): delivered, applied twice`);
    }
    // what it sent is the operator's mistake the check just named: the model takes it back, so the run goes on from the runbook
    this.queue = this.queue.slice(0, queued).concat(this.queue.slice(queued).filter((message) => !applied.has(message.envelope.id)));
    await this.carryFences(before, `inbox restored ${back} back (no carry yet): fences ${JSON.stringify(before)} -> ${JSON.stringify(restored)}; ${step}`);
  }

  /**
   * The subscriber's FIFO queue and FIFO dead-letter queue on the model's simulated SQS (started at its first use),
   * the queue's RedrivePolicy naming the dead-letter queue, which holds each of the model's dead letters `copies` times
   * (each with its aggregate as the group and its `iefErrorName`), in `order`.
   */
  private async deadLetterQueues(copies: number, order: DeadLetterOrder): Promise<{ queue: QueueOnEndpoint; deadLetterQueue: QueueOnEndpoint }> {
    const { deadLetterQueue, queue } = await this.orderedQueuePair();
    for (const letter of orderedForQueue(this.deadLetters, order)) {
      for (let copy = 0; copy < copies; copy++) {
        deadLetterQueue.send({
          body: letter.body,
          messageAttributes: letter.errorName === undefined ? {} : { [DEAD_LETTER_ATTRIBUTE.ERROR_NAME]: { DataType: 'String', StringValue: letter.errorName } },
          messageGroupId: letter.envelope.partitionkey,
          messageDeduplicationId: `${letter.messageId}-${copy}`,
          origin: { via: 'send-message' },
        });
      }
    }
    return { queue, deadLetterQueue };
  }

  /**
   * The operator runs `dlq redrive --yes --json` on the ordered subscriber with the real CLI against the simulated SQS
   * (review ro12, RO12-8; ro12b, RO12B-2), each of the model's dead letters in the FIFO dead-letter queue `copies` times
   * (an invocation dying after each dead-letter send), so an aggregate's group can hold more than one receive (10) of
   * letters. Checked: no event loses its last letter unless it is applied (or an operator's skip dropped it) or a letter
   * of it was sent; the letters it sent are what the fences admit, in sequence (`checkOperatorSends`); the letters it
   * says it did not read are the letters still in the queue less those it says it left. What it sent goes to the
   * model's queue, in the order sent; one letter of each event left stays the model's dead letter.
   */
  public async dlqRedriveWhole(copies: number, order: DeadLetterOrder = 'model'): Promise<void> {
    const letters = this.deadLetters;
    const { queue, deadLetterQueue } = await this.deadLetterQueues(copies, order);
    const name = this.tables.inbox.subscriberName;
    const output = JSON.stringify({
      format: 1, subscriberName: name, processingMode: 'transactional', ordered: true, deduplicationWindowSeconds: this.windowSeconds,
      inboxTable: this.tables.inbox.inboxTableName, outboxTable: this.tables.outbox.outboxTableName, queueUrl: queue.address.url, deadLetterQueueUrl: deadLetterQueue.address.url,
    });
    const result = await this.operator('dlq', 'redrive', '--subscriber-output', output, '--yes', '--json');
    if (result.code !== 0 && result.code !== 3) {
      this.violations.push(`dlq redrive --yes of the ordered subscriber exited ${result.code}: ${result.stderr.trim()}`);
      return;
    }
    const json = JSON.parse(result.stdout) as { unread: number; moved: string[]; deleted: string[]; decisions: Array<{ messageId: string; decision: string }>; refused?: Record<string, { letters: string[] }> };
    const sentBodies = queue.messages().map((message) => message.body);
    const keptBodies = new Set(deadLetterQueue.messages().map((message) => message.body));
    const moved = new Set(json.moved);
    const deleted = new Set(json.deleted);
    // the letters the inbox-restore check held (`refused`, by aggregate) are left too (review ro13, RO13-10)
    const refusedLetters = Object.values(json.refused ?? {}).reduce((sum, each) => sum + each.letters.length, 0);
    const leftByDecisions = json.decisions.filter((item) => !moved.has(item.messageId) && !deleted.has(item.messageId)).length + refusedLetters;
    const stillThere = deadLetterQueue.messages().length;
    if (json.unread !== stillThere - leftByDecisions) this.violations.push(`dlq redrive --yes said ${json.unread} letter(s) not read; the queue holds ${stillThere}, of which it left ${leftByDecisions}`);
    // review ro13 (RO13-8): --yes reads the queue whole, past letters it keeps in front of a group (far below its read limit)
    if (json.unread > 0) this.violations.push(`dlq redrive --yes left ${json.unread} letter(s) of ${letters.length * copies} unread (dead letters in ${order} order)`);
    const applied = await this.appliedEverywhere();
    const gone = letters.filter((letter) => !keptBodies.has(letter.body) && !sentBodies.includes(letter.body));
    // a letter an operator's skip dropped is no duplicate: the command never deletes it, the operator decides (review
    // ro13, RO13-9: the model excused such deletions)
    for (const letter of gone) {
      if (!applied.has(letter.envelope.id)) this.violations.push(`dlq redrive --yes deleted every letter of ${letter.envelope.partitionkey} #${Number(letter.envelope.sequence)} (${letter.envelope.id}), neither applied nor sent`);
    }
    // one model letter per body (the model may hold two letters of one message: relay copies dead-lettered apart)
    const once = [...new Map(letters.map((letter) => [letter.body, letter] as const)).values()];
    const sent = once.filter((letter) => sentBodies.includes(letter.body)).sort((a, b) => sentBodies.indexOf(a.body) - sentBodies.indexOf(b.body));
    if (sentBodies.length !== sent.length) this.violations.push(`dlq redrive --yes sent ${sentBodies.length} message(s) for ${sent.length} event(s): an event sent twice`);
    await this.checkOperatorSends(`dlq redrive --yes (${copies} copies of each letter)`, sent.map((letter) => letter.envelope), once.map((letter) => letter.envelope), []);
    this.deadLetters = once.filter((letter) => keptBodies.has(letter.body) && !sentBodies.includes(letter.body));
    for (const letter of sent) this.queue.push({ ...letter, messageId: this.newId(), receives: 0 });
    this.sqs!.queues.delete(queue.address.url);
    this.sqs!.queues.delete(deadLetterQueue.address.url);
    this.history.push(`dlq redrive --yes (${copies} copies each): sent ${this.describe(sent.map((letter) => letter.envelope))}; deleted ${json.deleted.length}; unread ${json.unread}`);
  }

  /**
   * The operator's `dlq redrive --yes` of the ordered subscriber dies right after its first SendMessage (Ctrl-C, or the
   * DeleteMessage after it failing), before deleting what it sent; the consumer still rejects what reached the
   * subscriber's queue and dead-letters it again (a new letter); 2 minutes later (run 1's receipts ran out, inside SQS's
   * 5-minute deduplication interval) the operator runs it again (review ro15, RO15-1). Checked: no event loses its last
   * letter unless it is applied or on its way in the subscriber's queue; nothing is sent twice by the rerun; the rerun
   * sends what the fences admit, in sequence. What is in the subscriber's queue goes to the model's queue; one letter of
   * each event left stays the model's dead letter.
   */
  public async dlqRedriveDiesAfterSend(): Promise<void> {
    const { sqs, deadLetterQueue, queue } = await this.orderedQueuePair();
    const letterOf = (body: string, errorName: string | undefined, deduplicationId: string) =>
      deadLetterQueue.send({
        body,
        messageAttributes: errorName === undefined ? {} : { [DEAD_LETTER_ATTRIBUTE.ERROR_NAME]: { DataType: 'String', StringValue: errorName } },
        messageGroupId: (JSON.parse(body) as OrderedEnvelope).partitionkey,
        messageDeduplicationId: deduplicationId,
        origin: { via: 'send-message' },
      });
    const letters = this.deadLetters;
    for (const letter of letters) letterOf(letter.body, letter.errorName, letter.messageId);
    const name = this.tables.inbox.subscriberName;
    const output = JSON.stringify({
      format: 1, subscriberName: name, processingMode: 'transactional', ordered: true, deduplicationWindowSeconds: this.windowSeconds,
      inboxTable: this.tables.inbox.inboxTableName, outboxTable: this.tables.outbox.outboxTableName, queueUrl: queue.address.url, deadLetterQueueUrl: deadLetterQueue.address.url,
    });
    let sends = 0;
    const dies = (command: string): void => {
      if (command === 'SendMessageCommand' && ++sends === 1) throw new Error('the operator pressed Ctrl-C');
    };
    const first = await this.operatorDying(dies, 'dlq', 'redrive', '--subscriber-output', output, '--yes', '--json').catch((error: unknown) => ({ code: -1, stdout: '', stderr: String(error) }));
    // the consumer still rejects what run 1 sent: dead-lettered again, a new letter (its deduplication id is per receive)
    const errorOf = new Map(letters.map((letter) => [letter.body, letter.errorName] as const));
    for (const message of queue.receive(10)) {
      letterOf(message.body, errorOf.get(message.body), `again-${this.newId()}`);
      queue.delete(message.receiptHandle);
    }
    this.nowMs += 121_000;
    const result = await this.operator('dlq', 'redrive', '--subscriber-output', output, '--yes', '--json');
    const what = `dlq redrive --yes rerun 2 minutes after one that died after its first send (exit ${first.code})`;
    if (result.code !== 0 && result.code !== 3) this.violations.push(`${what} exited ${result.code}: ${result.stderr.trim()}`);
    const sentBodies = queue.messages().map((message) => message.body);
    const keptBodies = new Set(deadLetterQueue.messages().map((message) => message.body));
    const applied = await this.appliedEverywhere();
    for (const letter of letters) {
      if (!keptBodies.has(letter.body) && !sentBodies.includes(letter.body) && !applied.has(letter.envelope.id)) {
        this.violations.push(`${what} deleted every letter of ${letter.envelope.partitionkey} #${Number(letter.envelope.sequence)} (${letter.envelope.id}), neither applied nor sent`);
      }
    }
    const once = [...new Map(letters.map((letter) => [letter.body, letter] as const)).values()];
    const sent = once.filter((letter) => sentBodies.includes(letter.body)).sort((a, b) => sentBodies.indexOf(a.body) - sentBodies.indexOf(b.body));
    if (sentBodies.length !== sent.length) this.violations.push(`${what} sent ${sentBodies.length} message(s) for ${sent.length} event(s): an event sent twice`);
    if (result.code === 0 || result.code === 3) await this.checkOperatorSends(what, sent.map((letter) => letter.envelope), once.map((letter) => letter.envelope), []);
    this.deadLetters = once.filter((letter) => keptBodies.has(letter.body) && !sentBodies.includes(letter.body));
    for (const letter of sent) this.queue.push({ ...letter, messageId: this.newId(), receives: 0 });
    for (const each of [queue, deadLetterQueue]) sqs.queues.delete(each.address.url);
    this.history.push(`dlq redrive --yes dies after its first send (exit ${first.code}), the consumer dead-letters what it sent again, rerun 2 minutes later: exit ${result.code}, sent ${this.describe(sent.map((letter) => letter.envelope))}`);
  }

  /**
   * The subscriber is redeployed with a window three times as long: both environments run consumers with it, and the
   * operator's plans read with it (its Operator output). The inbox records written before keep the old window: an
   * applied event aged between the two has none, and must still not be called never applied (review ro12, RO12-7).
   */
  public raiseWindow(): void {
    this.windowSeconds *= 3;
    this.handlers = this.consumers();
    this.records = this.eventRecords();
    this.history.push(`redeploy: deduplication window ${this.windowSeconds / 3} s -> ${this.windowSeconds} s`);
  }

  /**
   * The operator runs `fence carry --from-table <another flow's inbox> --yes` (review ro13, RO13-5): a table of another
   * flow with a subscriber of this name, where the same aggregate ids stand `ahead` further, with inbox records of
   * that flow's events. Checked: refused (exit code 3), no fence moved, no record carried.
   */
  public async carryFromAnotherFlow(ahead: number): Promise<void> {
    const name = this.tables.inbox.subscriberName;
    const admin = localClient();
    const other = await createInbox(admin, { subscriberName: name, deduplicationWindowSeconds: this.windowSeconds });
    try {
      const writer = DynamoDBDocumentClient.from(admin);
      for (const aggregate of this.aggregates) {
        const appliedSequence = (await this.fences.get(aggregate)).appliedSequence + ahead;
        const eventId = `other-flow-${this.newId()}`;
        await writer.send(new PutCommand({ TableName: other.inboxTableName, Item: { [TABLE_SCHEMA.PARTITION_KEY]: sequenceFenceKey(name, aggregate), [SEQUENCE_FENCE.RECORD_TYPE_ATTRIBUTE]: SEQUENCE_FENCE.RECORD_TYPE_VALUE, [SEQUENCE_FENCE.SUBSCRIBER_ATTRIBUTE]: name, [SEQUENCE_FENCE.AGGREGATE_ATTRIBUTE]: aggregate, [SEQUENCE_FENCE.APPLIED_SEQUENCE_ATTRIBUTE]: appliedSequence, [SEQUENCE_FENCE.APPLIED_EVENT_ID_ATTRIBUTE]: eventId } }));
        await writer.send(new PutCommand({ TableName: other.inboxTableName, Item: { [TABLE_SCHEMA.PARTITION_KEY]: recordKey(name, eventId) } }));
      }
      const before = await Promise.all(this.aggregates.map(async (aggregate) => (await this.fences.get(aggregate)).appliedSequence));
      const result = await this.operator('fence', 'carry', name, '--from-table', other.inboxTableName, '--table', this.tables.inbox.inboxTableName, '--yes', '--json');
      const after = await Promise.all(this.aggregates.map(async (aggregate) => (await this.fences.get(aggregate)).appliedSequence));
      if (result.code !== 3) this.violations.push(`fence carry from another flow's inbox exited ${result.code}, not refused: ${result.stdout.trim()}`);
      if (JSON.stringify(after) !== JSON.stringify(before)) this.violations.push(`fence carry from another flow's inbox moved the fences ${JSON.stringify(before)} -> ${JSON.stringify(after)}`);
      this.history.push(`fence carry from another flow's inbox (each aggregate ${ahead} ahead): exit ${result.code}, fences ${JSON.stringify(after)}`);
    } finally {
      await admin.send(new DeleteTableCommand({ TableName: other.inboxTableName }));
      admin.destroy();
    }
  }

  /** The clock moves past the inbox's deduplication window (the model's first one). */
  public age(): void {
    this.nowMs += (MODEL_WINDOW_SECONDS + 60) * 1000;
    this.history.push('clock +1 window');
  }

  private async ledger(aggregate: string): Promise<string[]> {
    const item = (await this.reader.send(new GetCommand({ TableName: this.tables.ledgerTable, Key: { pk: aggregate }, ConsistentRead: true }))).Item;
    return (item?.applied as string[] | undefined) ?? [];
  }

  /**
   * Each ledger is a prefix of its aggregate's events in sequence order (less those an operator's skip dropped), never
   * one twice. After the heads went back, a sequence may have two events (the one handed out first, and the one that
   * took it again): either may hold it.
   */
  public async check(): Promise<void> {
    // every command ends with a check: the table as it stands after it is a time a point-in-time restore can go back to
    await this.images.record();
    await this.inboxImages.record();
    for (const aggregate of this.aggregates) {
      const applied = await this.ledger(aggregate);
      const expected = this.expectedEvents(aggregate);
      this.checkHistories(aggregate, applied);
      const reused = this.reused.get(aggregate) ?? [];
      const holds = (id: string, index: number): boolean =>
        id === expected[index]!.id || reused.some((envelope) => envelope.id === id && envelope.sequence === expected[index]!.sequence);
      if (applied.length > expected.length || new Set(applied).size !== applied.length || applied.some((id, index) => !holds(id, index))) {
        this.violations.push(
          `${aggregate}: applied ${JSON.stringify(applied)}, but its events in sequence order are ${JSON.stringify(expected.map((envelope) => envelope.id))}` +
            `${reused.length === 0 ? '' : ` (sequences taken again: ${reused.map((envelope) => `#${Number(envelope.sequence)} ${envelope.id}`).join(', ')})`}`,
        );
      }
    }
  }

  /**
   * The world calms down: the relay forwards the rest, the queue delivers each group's first message until it is
   * empty (SQS moving messages that keep failing to the DLQ), and the operator redrives by the fence's plan. Then
   * every event must be applied.
   */
  public async drain(): Promise<void> {
    // the restore runbook: carry the heads over before the producers go on
    if (this.restoredSinceCarry) await this.carryHeads();
    const relayAll = (): void => {
      for (let index = 0; index < AGGREGATES; index++) while (this.stream.get(this.aggregate(index))!.length > 0) this.relay(index, 1);
    };
    relayAll();
    // once, for dead letters of two histories: the operator carries from the old table's history (it knows every
    // sequence handed out), which starts a generation the fence can enter when the new table's heads are behind it
    let triedHistory = false;
    const carryDue = (): boolean => this.writableAgain() > 0 || (!triedHistory && this.reusedDeadLetters.length > 0);
    for (let round = 0; round < 200 && (this.queue.length > 0 || this.deadLetters.length > 0 || carryDue()); round++) {
      if (this.queue.length === 0 && carryDue()) {
        triedHistory ||= this.writableAgain() === 0;
        await this.carryHeads();
        relayAll();
      } else if (this.queue.length === 0) await this.redrive('planned');
      for (let index = 0; index < AGGREGATES; index++) await this.deliver(index, 0);
    }
    await this.check();
    for (const aggregate of this.aggregates) {
      const applied = await this.ledger(aggregate);
      const expected = this.expectedOrder(aggregate);
      if (applied.length !== expected.length && !this.shortCarried.has(aggregate)) this.violations.push(`${aggregate}: after the drain ${applied.length} of ${expected.length} events applied`);
      // no event lost: each is applied, or was dead-lettered (SequenceReusedError) and written again, and that applied
      const appliedIds = new Set(applied);
      for (const envelope of [...this.expectedEvents(aggregate), ...(this.reused.get(aggregate) ?? [])]) {
        // written again, and that copy dead-lettered and written again in turn (a later carry): the whole chain of copies
        // (the ordered model, seed 777: an event written again at #2, refused as reused, written again at #7 and applied)
        const again = this.writtenAgain(envelope.id);
        // after the heads went back a skip may name either event of a shared sequence: the one it named is dropped
        // or the copy written again in its place was dropped by an accepted skip that named it (seed 1001, run 31)
        const namedBySkip = (this.droppedBySkip.has(envelope.id) && (this.skipped.get(aggregate) ?? new Set()).has(Number(envelope.sequence))) || again.some((id) => this.droppedBySkip.has(id));
        const heldForOperator = [envelope.id, ...again].some((id) => this.twoHistories.has(id));
        // the documented limit, for the event or the copy written again in its place: a copy that waited in the queue
        // past the inbox window, then first delivered at a sequence taken twice, is taken for a duplicate (the ordered
        // model, seeds 13013 and 20020: the copy was excused, the event it replaced called lost)
        const pastWindow = [envelope.id, ...again].some((id) => this.lostPastWindow.has(id));
        if (!appliedIds.has(envelope.id) && !again.some((id) => appliedIds.has(id)) && !namedBySkip && !pastWindow && !heldForOperator) {
          this.violations.push(`${aggregate}: event ${envelope.id} (#${Number(envelope.sequence)}) lost: never applied, and not dead-lettered to be written again`);
        }
      }
    }
    if (this.queue.length + this.deadLetters.length + this.writableAgain() > 0) {
      this.violations.push(`after the drain ${this.queue.length} messages queued and ${this.deadLetters.length + this.writableAgain()} dead letters left`);
    }
    const held = this.reusedDeadLetters.filter((envelope) => this.twoHistories.has(envelope.id));
    // a history carry that takes the aggregate from the fence sets a head past it back (review r8b, R8b-3): after one was
    // tried, a letter left for the operator (written again it would be refused again) is an aggregate stuck for good
    if (held.length > 0) {
      this.violations.push(`left for the operator after a history carry was tried (two histories, the fence's generation past the carried base): ${this.describe(held)}: the aggregate waits for good`);
    }
  }

  // ---- issue 38 (h1): FIFO dead letters, permanent failures, outbox restores, the heads carried over ----

  /** The runtime's own dead-letter publisher, sending to the simulated FIFO dead-letter queue (as SQS, it refuses a send it must). */
  private deadLetterPublisher(): { publish(letter: DeadLetter): Promise<void> } {
    const queue = this.deadLetterQueue;
    const client = {
      send: async (command: { input: { MessageBody?: string; MessageGroupId?: string; MessageDeduplicationId?: string; MessageAttributes?: Record<string, { DataType?: string; StringValue?: string }> } }) => {
        const { input } = command;
        try {
          const attributes = Object.fromEntries(Object.entries(input.MessageAttributes ?? {}).map(([name, value]) => [name, { DataType: value.DataType ?? '', StringValue: value.StringValue ?? '' }]));
          const result = queue.send({
            body: input.MessageBody ?? '',
            messageAttributes: attributes,
            ...(input.MessageGroupId === undefined ? {} : { messageGroupId: input.MessageGroupId }),
            ...(input.MessageDeduplicationId === undefined ? {} : { messageDeduplicationId: input.MessageDeduplicationId }),
            origin: { via: 'send-message' },
          });
          return { MessageId: result.messageId };
        } catch (error) {
          this.refusedSends.push((error as Error).message);
          throw error;
        }
      },
    } as unknown as SQSClient;
    const publisher = new SqsDeadLetterPublisher({ queueUrl: queue.address.url, client });
    return {
      publish: async (letter) => {
        await publisher.publish(letter);
        this.runtimeDeadLetters.push(letter);
        // what the dead-letter queue holds now: each letter with its reason and its aggregate's group, none dropped
        const held = [];
        for (let batch = queue.receive(10); batch.length > 0; batch = queue.receive(10)) {
          for (const message of batch) {
            queue.delete(message.receiptHandle);
            held.push(message);
          }
        }
        if (held.length !== 1) this.violations.push(`the FIFO dead-letter queue holds ${held.length} new messages after a dead letter of ${letter.eventId ?? '?'} was sent (accepted, but dropped as a duplicate?)`);
        for (const message of held) {
          const reason = message.messageAttributes[DEAD_LETTER_ATTRIBUTE.ERROR_NAME]?.StringValue;
          const group = message.attributes.MessageGroupId;
          const aggregate = (JSON.parse(message.body) as { partitionkey?: string }).partitionkey;
          if (reason !== letter.errorName || (aggregate !== undefined && group !== aggregate)) {
            this.violations.push(`dead letter of ${letter.eventId ?? '?'}: reason ${reason ?? 'none'} (expected ${letter.errorName}), group ${group ?? 'none'} (expected the aggregate ${aggregate ?? '?'})`);
          }
        }
      },
    };
  }

  /** Whether the runtime dead-lettering `envelope` with `letter` is what the model expects, and why; undefined: a violation. */
  private expectedDeadLetter(envelope: OrderedEnvelope, letter: DeadLetter): string | undefined {
    if (letter.errorName === 'PermanentError' && this.poisoned.has(envelope.id)) {
      // the operator fixes the cause; the dead letter waits in the queue for a redrive
      this.poisoned.delete(envelope.id);
      this.deadLetters.push({ messageId: this.newId(), body: JSON.stringify(envelope), envelope, receives: 0, errorName: letter.errorName });
      return 'PermanentError, in the FIFO dead-letter queue with its reason';
    }
    const sequence = Number(envelope.sequence);
    const sharesSequence = (this.reused.get(envelope.partitionkey) ?? []).some((other) => Number(other.sequence) === sequence);
    if (letter.errorName === 'SequenceReusedError' && sharesSequence) {
      if (!this.reusedDeadLetters.some((other) => other.id === envelope.id) && !this.reEmitted.has(envelope.id)) this.reusedDeadLetters.push(envelope);
      return 'SequenceReusedError: its sequence was taken twice';
    }
    // the heads carried from the fences while the old table's events were in flight (review F2): the fence never applies
    // one history's event on the other's; the loser is dead-lettered, for the operator to write again
    const epoch = this.epochs.get(envelope.id);
    if (letter.errorName === 'SequenceReusedError' && epoch !== undefined && this.shortCarried.has(envelope.partitionkey)) {
      const later = (this.carries.get(envelope.partitionkey) ?? []).slice(epoch.epoch);
      const oldInFlight = later.some((base) => base < sequence);
      const newRefused = epoch.epoch > 0 && sequence > epoch.base;
      if (oldInFlight || newRefused) {
        if (!this.reusedDeadLetters.some((other) => other.id === envelope.id) && !this.reEmitted.has(envelope.id)) this.reusedDeadLetters.push(envelope);
        return oldInFlight ? 'SequenceReusedError: in flight from before the heads were carried, past the new generation\'s base' : 'SequenceReusedError: its generation\'s base was passed by the old table\'s events';
      }
    }
    return undefined;
  }

  /** A produced event: the aggregate's next sequence, or (the heads went back) one already handed out. */
  private written(aggregate: string, envelope: OrderedEnvelope, note: string): void {
    const live = this.produced.get(aggregate)!;
    const sequence = Number(envelope.sequence);
    this.heads.set(aggregate, Math.max(this.heads.get(aggregate) ?? 0, sequence));
    const carries = this.carries.get(aggregate) ?? [];
    this.epochs.set(envelope.id, { epoch: carries.length, base: carries[carries.length - 1] ?? 0 });
    if (sequence === live.length + 1) live.push(envelope);
    else if (sequence <= live.length) {
      if (!this.restoredSinceCarry && !this.shortCarried.has(aggregate)) this.violations.push(`${aggregate}: event ${envelope.id} took sequence ${sequence}, already handed out, though the heads never went back or were carried over`);
      this.reused.set(aggregate, [...(this.reused.get(aggregate) ?? []), envelope]);
      note += ', a sequence taken again';
    } else this.violations.push(`${aggregate}: event ${envelope.id} took sequence ${sequence}, but the next is ${live.length + 1}: a head ran ahead (a gap no event fills)`);
    this.stream.get(aggregate)!.push(envelope);
    this.history.push(`produced ${aggregate} #${sequence} (${envelope.id}${generationOf(envelope)})${note}`);
  }

  /** The handler fails permanently (PermanentError) on one message of the aggregate: it must reach the FIFO DLQ at once. */
  public async permanent(aggregateIndex: number, offset: number): Promise<void> {
    const message = this.pick(this.aggregate(aggregateIndex), offset);
    if (message === undefined) return;
    this.poisoned.add(message.envelope.id);
    await this.run(0, message, ' (the handler fails permanently)');
    if (this.poisoned.delete(message.envelope.id) && (this.queue.includes(message) || this.deadLetters.includes(message))) {
      this.violations.push(`${message.envelope.partitionkey} #${Number(message.envelope.sequence)}: a PermanentError was not dead-lettered at once with its reason`);
    }
  }

  /**
   * The outbox table is restored to an earlier point in time (the latest at which each head stood at least `back`
   * sequences below where it stands now: every head and the table's generation item as they were then, as DynamoDB
   * restores them) or replaced (every head gone), as a restore into a new table does. The table restored from keeps
   * every head it had (formerOutboxTable).
   */
  public async restore(kind: 'replace' | 'point-in-time', back: number): Promise<void> {
    const { outbox, formerOutboxTable } = this.tables;
    for (const aggregate of this.aggregates) {
      const headKey = orderedHeadKey(aggregate);
      const key = { [outbox.partitionKeyName]: headKey, ...(outbox.sortKeyName === undefined ? {} : { [outbox.sortKeyName]: headKey }) };
      const head = (await this.reader.send(new GetCommand({ TableName: outbox.outboxTableName, Key: key, ConsistentRead: true }))).Item;
      if (head === undefined) continue;
      const sequence = head[ORDERED_OUTBOX_ITEM.SEQUENCE_ATTRIBUTE] as number;
      await this.reader
        .send(
          new PutCommand({
            TableName: formerOutboxTable,
            Item: head,
            ConditionExpression: 'attribute_not_exists(#sequence) OR #sequence < :sequence',
            ExpressionAttributeNames: { '#sequence': ORDERED_OUTBOX_ITEM.SEQUENCE_ATTRIBUTE },
            ExpressionAttributeValues: { ':sequence': sequence },
          }),
        )
        .catch((error: Error) => {
          if (error.name !== 'ConditionalCheckFailedException') throw error;
        });
      if (kind === 'point-in-time') continue;
      this.heads.set(aggregate, 0);
      await this.reader.send(new DeleteCommand({ TableName: outbox.outboxTableName, Key: key }));
      this.history.push(`outbox replaced: ${aggregate.slice(-5)} head ${sequence} -> 0`);
    }
    if (kind === 'point-in-time') {
      for (const [aggregate, { from, to }] of await this.images.restore(back)) {
        this.heads.set(aggregate, to);
        if (from !== 0 || to !== 0) this.history.push(`outbox restored: ${aggregate.slice(-5)} head ${from} -> ${to}`);
      }
    }
    this.restoredSinceCarry = true;
    this.restored = true;
  }

  /**
   * The operator carries the heads over, then writes again, as new events, those dead-lettered as SequenceReusedError
   * (the runbook of docs/ORDERED-DELIVERY.md). `former`: `outbox heads --from-history --history-table <table restored
   * from> --yes` (it knows every sequence the old table handed out); `fences`: `outbox heads --from-fences --yes` (only
   * what the subscriber applied: the old table's events still in flight race the new generation's). Each head moved
   * starts a generation based at its target (review F2).
   */
  public async carryHeads(source: 'former' | 'fences' = 'former', allowUndrained = true): Promise<void> {
    const { inbox } = this.tables;
    // an operator's carry comes at least a millisecond after the last: the carry's generation is above the table's and
    // the source's, and else the clock's; after a point-in-time restore to before the last carry (its generation item
    // gone) the clock alone orders them, and the model's clock, which only `Age` moves, gave two carries one generation
    // (review ro12, RO12-9: a new #1 took the generation and base of the lost #1 and #2 still in flight)
    this.nowMs += 1;
    const heads =
      source === 'fences'
        ? await this.carryFromFences(allowUndrained)
        : (
            await carryOrderedHeads({
              client: this.reader,
              outbox: this.tables.outbox,
              // the history carry checks the subscriber's fences (`--subscriber-output` beside `--from-history`): `former` keeps
              // the highest head of every table before (the first table's, after two replacements), older than what the fence
              // followed; an aggregate the fence applied in a newer generation is carried from the fence (seed 308844549)
              source: { kind: 'history', table: this.tables.formerOutboxTable, subscribers: [{ subscriberName: inbox.subscriberName, inboxTable: inbox.inboxTableName }] },
              apply: true,
              now: () => new Date(this.nowMs),
            })
          ).heads;
    // refused: not drained (nothing carried, nothing written again)
    if (heads === undefined) return;
    const mine = heads.filter((head) => this.aggregates.includes(head.aggregateId));
    for (const head of mine) {
      // a head left `ahead` is not written, but the carry's generation item is: its next event takes that generation
      // based at the head's own sequence (OrderedOutbox: the head's generation is older than the table's), as for an
      // aggregate the source did not know (the ordered model, seed 2002, run 35: the model based it at an older carry)
      if (head.decision === 'ahead') this.carries.set(head.aggregateId, [...(this.carries.get(head.aggregateId) ?? []), head.current]);
      // an `unchanged` head is written again too, starting a generation at its target (review r38, R38-2)
      // a head set back to the fence (review r8b, R8b-3) starts a generation at its target as well
      if (head.decision !== 'set' && head.decision !== 'unchanged' && head.decision !== 'back') continue;
      this.carries.set(head.aggregateId, [...(this.carries.get(head.aggregateId) ?? []), head.target]);
      if (source === 'fences' || head.fromFences === true || head.decision === 'back') this.heads.set(head.aggregateId, head.target);
    }
    // the carry writes the table's generation item (review r38, R38-2): an aggregate the source did not know takes that
    // generation at its own head's sequence, so its next events are not in generation 0 beside the old table's in flight
    for (const aggregate of this.aggregates) {
      if (mine.some((head) => head.aggregateId === aggregate)) continue;
      this.carries.set(aggregate, [...(this.carries.get(aggregate) ?? []), this.heads.get(aggregate) ?? 0]);
    }
    // the table restored from kept every head it had: the highest sequence handed out before the restore (but an
    // aggregate carried from the fence, the history being older than the fence's generation, is where the fence stands)
    const fromFence = new Set(mine.filter((head) => head.fromFences === true || head.decision === 'back').map((head) => head.aggregateId));
    if (source === 'former') for (const aggregate of this.aggregates) if (!fromFence.has(aggregate)) this.heads.set(aggregate, Math.max(this.heads.get(aggregate) ?? 0, this.produced.get(aggregate)!.length));
    // the fences know only what was applied: a head left below what the old table handed out hands its sequences out
    // again (in a new generation where a carry moved it)
    for (const aggregate of this.aggregates) {
      if ((this.heads.get(aggregate) ?? 0) >= this.produced.get(aggregate)!.length) continue;
      // the drain check of `outbox heads --from-fences`: without --allow-undrained it never hands out again a sequence an
      // event of the outbox's history holds that no fence applied (still in flight)
      if (source === 'fences' && !allowUndrained && !this.shortCarried.has(aggregate)) {
        this.violations.push(`outbox heads --from-fences (no --allow-undrained) carried ${aggregate} to #${this.heads.get(aggregate) ?? 0} with #${this.produced.get(aggregate)!.length} committed and not applied: its sequences are handed out again`);
      }
      this.shortCarried.add(aggregate);
    }
    this.restoredSinceCarry = false;
    this.restored = true;
    this.history.push(`outbox heads (from ${source === 'former' ? 'the old table\'s history' : 'the fences'}): ${mine.map((head) => `${head.aggregateId.slice(-5)} ${head.current} -> ${head.target} ${head.decision}${head.fromFences === true ? ' (from the fence)' : ''}`).join(', ') || 'nothing'}`);
    const again = this.reusedDeadLetters;
    this.reusedDeadLetters = [];
    for (const envelope of again) {
      if (await this.historiesSplit(envelope.partitionkey)) {
        // written again it would be refused again: the operator needs a generation the fence can enter (a later carry)
        this.twoHistories.add(envelope.id);
        this.reusedDeadLetters.push(envelope);
        continue;
      }
      const [written] = await this.producer.transactWrite({ events: [{ type: 'Step', aggregateId: envelope.partitionkey, subject: envelope.partitionkey, data: { note: 'written again' } }] });
      this.reEmitted.set(envelope.id, written!.id);
      this.twoHistories.delete(envelope.id);
      this.written(envelope.partitionkey, written!, `, written again for ${envelope.id}`);
    }
  }

  /**
   * The operator's `outbox heads --from-fences --yes` with the real CLI (`--allow-undrained`: carry with events in
   * flight, as review F2's race needs). Without it, the command refuses while the outbox's history holds an event past
   * the head the carry leaves its aggregate at: checked that it then names only events no fence applied, each one the
   * producer wrote, and changes nothing; `undefined` then. Else the carry's heads, as `carryOrderedHeads` returns them.
   */
  private async carryFromFences(allowUndrained: boolean): Promise<readonly HeadCarry[] | undefined> {
    const { inbox, outbox } = this.tables;
    const result = await this.operator(
      'outbox', 'heads', '--outbox-table', outbox.outboxTableName, '--from-fences', '--subscriber', inbox.subscriberName, '--table', inbox.inboxTableName,
      // the model's restore keeps the history in the outbox table itself (formerOutboxTable holds only the heads), so
      // the events in flight are all in the table the check reads: the old table is said gone
      '--previous-outbox-gone',
      ...(allowUndrained ? ['--allow-undrained'] : []), '--yes', '--json',
    );
    if (result.code === 3 && !allowUndrained && result.stderr.includes('refused: not drained')) {
      const applied = await this.appliedEverywhere();
      const known = new Set(this.aggregates.flatMap((aggregate) => [...this.produced.get(aggregate)!, ...(this.reused.get(aggregate) ?? [])].map((envelope) => envelope.id)));
      const named = [...result.stderr.matchAll(/ #\d+ \(([0-9a-f-]+)\) in /g)].map((match) => match[1]!);
      if (named.length === 0 || named.some((id) => applied.has(id) || !known.has(id))) {
        this.violations.push(`outbox heads --from-fences refused as not drained naming ${JSON.stringify(named)}, applied ${JSON.stringify(named.filter((id) => applied.has(id)))}, unknown ${JSON.stringify(named.filter((id) => !known.has(id)))}`);
      }
      this.history.push(`outbox heads (from the fences): refused, not drained (${named.length} in flight)`);
      return undefined;
    }
    if (result.code !== 0) {
      this.violations.push(`outbox heads --from-fences${allowUndrained ? ' --allow-undrained' : ''} exited ${result.code}: ${result.stderr.trim()}`);
      return undefined;
    }
    return (JSON.parse(result.stdout) as { heads: HeadCarry[] }).heads;
  }

  /** The events written again in place of `eventId`, in turn (each copy that was itself written again), oldest first. */
  private writtenAgain(eventId: string): string[] {
    const chain: string[] = [];
    for (let next = this.reEmitted.get(eventId); next !== undefined && !chain.includes(next); next = this.reEmitted.get(next)) chain.push(next);
    return chain;
  }

  /** How many dead letters the operator can write again now (not those held by two histories). */
  private writableAgain(): number {
    return this.reusedDeadLetters.filter((envelope) => !this.twoHistories.has(envelope.id)).length;
  }

  /**
   * Whether the aggregate's fence stands in an older generation than its head's, past the head's base: the old table's
   * events went past the carried sequence, so no event of the head's generation can ever apply (each is refused as
   * SequenceReusedError) until a later carry starts a generation based where the fence stands.
   */
  private async historiesSplit(aggregate: string): Promise<boolean> {
    const { outbox, inbox } = this.tables;
    const headKey = orderedHeadKey(aggregate);
    const key = { [outbox.partitionKeyName]: headKey, ...(outbox.sortKeyName === undefined ? {} : { [outbox.sortKeyName]: headKey }) };
    const head = (await this.reader.send(new GetCommand({ TableName: outbox.outboxTableName, Key: key, ConsistentRead: true }))).Item;
    const fence = (await this.reader.send(new GetCommand({ TableName: inbox.inboxTableName, Key: { [TABLE_SCHEMA.PARTITION_KEY]: sequenceFenceKey(inbox.subscriberName, aggregate) }, ConsistentRead: true }))).Item;
    const headGeneration = (head?.[ORDERED_OUTBOX_ITEM.GENERATION_ATTRIBUTE] as number | undefined) ?? 0;
    const base = (head?.[ORDERED_OUTBOX_ITEM.GENERATION_BASE_ATTRIBUTE] as number | undefined) ?? 0;
    const fenceGeneration = (fence?.[SEQUENCE_FENCE.APPLIED_GENERATION_ATTRIBUTE] as number | undefined) ?? 0;
    const applied = (fence?.[SEQUENCE_FENCE.APPLIED_SEQUENCE_ATTRIBUTE] as number | undefined) ?? 0;
    return fenceGeneration < headGeneration && applied > base;
  }

  /**
   * The ledger never mixes two histories (review F2): along an aggregate's applied events an event written before a
   * carry never follows one written after it, and the first applied event written after a carry follows the event at
   * the carry's base (or a skipped sequence below it).
   */
  private checkHistories(aggregate: string, applied: readonly string[]): void {
    const all = new Map([...this.produced.get(aggregate)!, ...(this.reused.get(aggregate) ?? [])].map((envelope) => [envelope.id, envelope]));
    const skipped = this.skipped.get(aggregate) ?? new Set<number>();
    for (let index = 1; index < applied.length; index++) {
      const [before, after] = [applied[index - 1]!, applied[index]!];
      const [was, is] = [this.epochs.get(before), this.epochs.get(after)];
      if (was === undefined || is === undefined) continue;
      const sequence = Number(all.get(before)?.sequence);
      if (is.epoch < was.epoch) {
        this.violations.push(`${aggregate}: ${after} (#${Number(all.get(after)?.sequence)}, written before carry ${was.epoch}) applied after ${before} (#${sequence}, written after it): two histories mixed`);
      } else if (is.epoch > was.epoch) {
        let reached = sequence;
        while (reached < is.base && skipped.has(reached + 1)) reached += 1;
        if (reached !== is.base) this.violations.push(`${aggregate}: ${after} (#${Number(all.get(after)?.sequence)}, of a generation based at #${is.base}) applied right after ${before} (#${sequence}): a generation entered off its base`);
      }
    }
  }

  public report(): string {
    return `violations:\n  ${this.violations.join('\n  ')}\nhistory:\n  ${collapseRepeats(this.history).join('\n  ')}`;
  }

  public async stop(): Promise<void> {
    for (const client of [...this.clients, this.producerClient]) client.destroy();
    const { outbox, inbox, ledgerTable, formerOutboxTable, formerInboxTable } = this.tables;
    const admin = localClient();
    try {
      await Promise.all([outbox.outboxTableName, inbox.inboxTableName, ledgerTable, formerOutboxTable, formerInboxTable].map((TableName) => admin.send(new DeleteTableCommand({ TableName }))));
    } finally {
      admin.destroy();
      this.reader.destroy();
      await this.proxy.stop();
      await this.sqs?.endpoint.stop();
    }
  }
}
