/**
 * The world of the model-based tests of an event's whole life (issue 28): not one module but the system around it. A
 * real producer (the runtime's Outbox) writes events to an outbox table in DynamoDB Local; SNS's fan-out to one
 * subscriber's queue applies the subscription's filter policy (the simulator's matcher); the simulator's SQS queues
 * (retention, visibility, maxReceiveCount, behind its SQS endpoint) hold the copies; a real consumer of the run's
 * processing mode applies them; and the operator acts with the real CLI in-process (`dlq list`, `dlq redrive`,
 * `replay`, `blocked resolve`, `inbox forget`) against the same endpoint and tables, as days pass. DynamoDB's TTL is
 * emulated (an item past its `expiresAt` is deleted when time moves: the harshest timing AWS allows). Not a test file.
 *
 * The checks, after every command: no event applied twice; nothing acknowledged unless applied, a true duplicate or
 * kept (a copy on a queue, a body kept on its record, or its outbox item while the relay's give-up can be replayed);
 * an event the subscription's filter does not take is never applied; an operator command exits 0 or refuses (3) and
 * never fails. After the operator is done: each event the filter takes is applied exactly once, or named by a
 * refusal, or its last copy ran out of a queue's retention (SQS deleted it: an alarm's business, recorded).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import { DeleteItemCommand, GetItemCommand, ScanCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { createAggregateConsumer } from '../../../lambda/aggregate/aggregate-consumer';
import type { SqsBatchHandler } from '../../../lambda/consumer/create-consumer';
import type { DeadLetter, DeadLetterPublisher } from '../../../lambda/consumer/dead-letter';
import { createTransactionalConsumer } from '../../../lambda/consumer/transactional-consumer';
import { PermanentError, RetryableError } from '../../../lambda/errors';
import { createLeaseConsumer } from '../../../lambda/processing/lease-consumer';
import { createMultiStepConsumer } from '../../../lambda/processing/multi-step-consumer';
import { Outbox } from '../../../lambda/producer/outbox';
import type { ProducerConfig } from '../../../lambda/config';
import { compileFilterPolicy } from '../../../operator/patterns/filter-policy';
import { frozenClock } from '../../simulator/aws/queue-test-kit';
import { cliAt, startOperatorServices, type OperatorServices } from '../../cli/operator-services';
import { localClient, uniqueTableName, createTable } from '../dynamodb-client';
import { SimulatedCrash } from '../proof/crash-injector';
import { dieAsPlanned, type CrashPlan } from './crash-plan';
import { recordingLogger } from '../proof/recorders';
import { createInboxTable, createOutbox } from '../proof/tables';
import { OffloadedEvents, type ObjectDamage, type OffloadCase } from './offloaded-events';
import { inject } from 'vitest';
import { AGGREGATE_ITEM } from '../../../lambda/contract/wire-format';
import { MAY_BE_QUEUED_TEXT, RELAY_PUBLISH_BOUND_SECONDS } from '../../../operator/cli/queued-copy';

/** The AWS profile of the flow's account the subscriber's team replays with (`--flow-profile`). */
const FLOW_PROFILE = 'flow-outbox';
/** The flow's account, of its topic's ARN in the subscriber's output (and of `FLOW_PROFILE`'s credentials). */
const FLOW_ACCOUNT = '111111111111';
/** A profile of another environment's account (staging's operator role), whose outbox is not the subscriber's flow's. */
const OTHER_ENVIRONMENT_PROFILE = 'staging-outbox';

export type Mode = 'transactional' | 'lease' | 'multi-step' | 'aggregate';

/** One run's configuration, drawn per run: what users deploy besides the defaults. */
export interface SystemConfig {
  readonly mode: Mode;
  readonly keepBlockedMessageBody: boolean;
  /** Aggregate mode: how many processed ids the aggregate keeps. */
  readonly maxProcessedMessages: number;
  readonly deduplicationWindowDays: number;
  readonly queueRetentionDays: number;
  readonly deadLetterRetentionDays: number;
  readonly maxReceiveCount: number;
  /** The subscription's filter policy (MessageBody scope). */
  readonly filter: 'none' | 'type' | 'type-and-source';
}

/** A producer's event: what it is, and whether the relay delivered it. */
export interface EventSpec {
  readonly type: 'OrderPlaced' | 'OrderShipped';
  readonly source: 'urn:orders' | 'urn:returns';
  /** SNS delivers one publish as this many SQS messages. */
  readonly copies: number;
  /** The relay gave up on its stream batch (its dead letter holds metadata only): the event waits in the outbox for a replay. */
  readonly relayGivesUp: boolean;
  /** How far in the future its producer dates it (days). */
  readonly aheadDays: number;
  /**
   * Who wrote its outbox item (issue 38, item 10): the runtime's Outbox, or a producer in another language (or a
   * person) that writes no `iefWrittenAt`, or one that writes it later than the truth; these date the event the run's
   * deduplication window after they wrote it and set no TTL, so once its inbox record expired its time says it is
   * younger than it is (with a 30-day window: 31 days on, it says 1 day ago).
   * @default 'runtime'
   */
  readonly writtenBy?: 'runtime' | 'no-write-time' | 'future-write-time';
}

/** One invocation of the consumer and what goes wrong in it. */
export interface DeliverySpec {
  readonly batch: number;
  /** The invocation dies before or after its `request`-th DynamoDB request. */
  readonly crash?: { readonly request: number; readonly when: 'before' | 'after' } | undefined;
  /** The runtime's own dead-letter sends fail (SQS unavailable). */
  readonly deadLetterFails: boolean;
  /** Lease and multi-step: how the first effect call fails. */
  readonly effectFailure: 'none' | 'retryable' | 'unknown-before' | 'unknown-after';
}

interface Published {
  readonly id: string;
  readonly spec: EventSpec;
  /** The subscription's filter takes it: it must be applied. */
  readonly taken: boolean;
  /** Its data went to the payload bucket (claim-check), with its reference. @default inline */
  readonly dataref?: string;
  /** When its outbox item says it was written (`iefWrittenAt`): the truth, 40 days later, or nothing (`writtenBy`). */
  readonly writtenAt?: number;
}

interface InvocationState extends CrashPlan {
  effectFailure: DeliverySpec['effectFailure'];
}

const DAY_MS = 86_400_000;
const VISIBILITY_MS = 31_000;
const POLICIES: Record<SystemConfig['filter'], Record<string, unknown> | undefined> = {
  none: undefined,
  type: { type: ['OrderPlaced', 'OrderShipped'] },
  'type-and-source': { type: ['OrderPlaced', 'OrderShipped'], source: ['urn:orders'] },
};

/** One run of the system model. */
export class SystemWorld {
  public readonly violations: string[] = [];
  public readonly history: string[] = [];
  private readonly events = new Map<string, Published>();
  /** Lease and multi-step: how often each event's external effect ran (the truth). */
  private readonly effects = new Map<string, number>();
  /** Applications undone by an operator who restored the effect from a backup (then `inbox forget`). */
  private readonly restored = new Map<string, number>();
  /** Events whose last copy SQS deleted at a queue's retention (explained: the age alarms' business). */
  private readonly expired = new Set<string>();
  /** Events the last operator commands refused, by id, with why. */
  private readonly refusals = new Map<string, string>();
  /** Events the operator's `dlq redrive` refused (it left their dead letters on the dead-letter queue). */
  private readonly redriveRefusals = new Set<string>();
  private readonly invocation = new AsyncLocalStorage<InvocationState>();
  /** The runtime's log lines (its warnings included). */
  private readonly logs = recordingLogger();
  /** Events the operator's commands sent a copy of (a redrive, a replay). */
  private readonly operatorSent = new Set<string>();
  private readonly documents: DynamoDBDocumentClient;
  private readonly handler: SqsBatchHandler;
  private readonly outbox: Outbox;
  /** The producer of events over the inline limit: the Outbox with the flow's claim-check. */
  private readonly largeOutbox: Outbox;
  private readonly filter: ((message: { body: string; attributes: Record<string, never> }) => boolean) | undefined;
  private readonly since: string;
  private poisoned = true;
  private deadLetterFails = false;

  private constructor(
    public readonly config: SystemConfig,
    private readonly services: OperatorServices,
    private readonly direct: DynamoDBClient,
    private readonly tables: { readonly inbox: string; readonly business: string; readonly outbox: ProducerConfig },
    private readonly offloaded: OffloadedEvents,
  ) {
    this.documents = DynamoDBDocumentClient.from(direct);
    const policy = POLICIES[config.filter];
    this.filter = policy === undefined ? undefined : compileFilterPolicy(policy, 'MessageBody');
    this.outbox = new Outbox({ client: this.documents, config: tables.outbox, now: () => new Date(this.now()) });
    this.largeOutbox = this.offloadingOutbox(offloaded.store);
    // the consumer reads the flow's payload bucket from its environment when it is built, as on AWS
    offloaded.configureConsumers();
    this.handler = this.consumer();
    this.since = new Date(this.now() - 60_000).toISOString();
    this.history.push(`config ${JSON.stringify(config)}`);
  }

  public static async start(config: SystemConfig): Promise<SystemWorld> {
    const services = await startOperatorServices(`Life${randomUUID().slice(0, 8)}`, frozenClock(), undefined, {
      maxReceiveCount: config.maxReceiveCount,
      queueRetentionSeconds: config.queueRetentionDays * 86_400,
      deadLetterRetentionSeconds: config.deadLetterRetentionDays * 86_400,
    });
    const direct = localClient();
    const inbox = uniqueTableName('life-inbox');
    await createInboxTable(direct, inbox);
    const business = uniqueTableName('life-business');
    await createTable(direct, business, { partitionKey: 'pk' });
    // the outbox keeps events for 7 days (the constructs' default eventRetention)
    const outbox = await createOutbox(direct, { eventSource: 'urn:orders', eventRetentionSeconds: 7 * 86_400, timeToLiveAttributeName: 'expiresAt' });
    const offloaded = await OffloadedEvents.start();
    return new SystemWorld(config, services, direct, { inbox, business, outbox }, offloaded);
  }

  public async stop(): Promise<void> {
    await this.services.stop();
    await this.offloaded.stop();
    this.direct.destroy();
  }

  private offloadingOutbox(store: OffloadedEvents['store'] | ReturnType<OffloadedEvents['losingFirstResponse']>): Outbox {
    return new Outbox({ client: this.documents, config: this.tables.outbox, now: () => new Date(this.now()), claimCheck: { config: this.offloaded.config, store } });
  }

  private now(): number {
    return this.services.clock.now();
  }

  // ---- what AWS and the producers do ----------------------------------------------------------------------------

  /** A producer writes an event in its transaction; the relay publishes it to the topic, whose filter fans it out. */
  public async publish(spec: EventSpec): Promise<void> {
    const id = `evt-${randomUUID().slice(0, 13)}`;
    try {
      if (spec.writtenBy !== undefined && spec.writtenBy !== 'runtime') await this.writeForeign(id, spec);
      else await this.outbox.transactWrite({ events: [{ id, type: spec.type, source: spec.source, data: { amount: 1 }, time: new Date(this.now() + spec.aheadDays * DAY_MS) }] });
    } catch (error) {
      // a producer may refuse an event (a time too far ahead): then it never existed
      this.history.push(`publish ${spec.type} refused by the producer: ${(error as Error).message.slice(0, 80)}`);
      return;
    }
    this.fanOut(id, spec, (await this.outboxBody(id)) ?? '', '');
  }

  /** The relay publishes a committed event to the topic, whose filter fans it out (`note`: what the history adds). */
  private fanOut(id: string, spec: EventSpec, body: string, note: string, dataref?: string): void {
    const taken = this.filter === undefined || this.filter({ body, attributes: {} });
    const writtenAt = spec.writtenBy === 'no-write-time' ? undefined : spec.writtenBy === 'future-write-time' ? this.now() + 40 * DAY_MS : this.now();
    this.events.set(id, { id, spec, taken, ...(dataref === undefined ? {} : { dataref }), ...(writtenAt === undefined ? {} : { writtenAt }) });
    if (taken && !spec.relayGivesUp) for (let copy = 0; copy < spec.copies; copy++) this.send(body);
    this.history.push(`publish ${id} ${spec.type} from ${spec.source}${note}${spec.writtenBy !== undefined && spec.writtenBy !== 'runtime' ? ` by another producer (${spec.writtenBy}, dated +${this.config.deduplicationWindowDays}d)` : ''}${spec.aheadDays > 0 ? ` dated +${spec.aheadDays}d` : ''}${taken ? '' : ' (filtered out)'}${spec.relayGivesUp ? ', relay gives up' : ` x${spec.copies}`}`);
  }

  /**
   * A producer commits an event over the inline limit (claim-check, issue 42): its data goes to the payload bucket
   * first, the outbox item carries the reference. `offloadCase` says what befalls the object: altered or deleted right
   * after the commit, or a first PutObject whose response was lost, after which the producer retries the same event
   * (one object must be written, and the event committed once).
   */
  public async publishLarge(drawn: EventSpec, offloadCase: OffloadCase): Promise<void> {
    const spec: EventSpec = { ...drawn, writtenBy: 'runtime' };
    const id = `evt-${randomUUID().slice(0, 13)}`;
    const event = { id, type: spec.type, source: spec.source, data: { amount: 1, attachment: 'x'.repeat(2000) }, time: new Date(this.now() + spec.aheadDays * DAY_MS) };
    const producer = offloadCase === 'retried-after-lost-response' ? this.offloadingOutbox(this.offloaded.losingFirstResponse()) : this.largeOutbox;
    const first = await producer.transactWriteOnce({ events: [event] }).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    if (first !== undefined && !(offloadCase === 'retried-after-lost-response' && first.name === 'TimeoutError')) {
      // a producer may refuse an event (a time too far ahead) before it writes anything: then it never existed
      return void this.history.push(`publish (large, ${offloadCase}) ${spec.type} refused by the producer: ${first.message.slice(0, 80)}`);
    }
    if (offloadCase === 'retried-after-lost-response') {
      if (first === undefined) return this.violate(`the producer of ${id} did not see its PutObject's response lost (the model's fault was not applied)`);
      // the producer retries the same event: the object of the lost response is there already
      const retried = await producer.transactWriteOnce({ events: [event] }).then(
        (result) => result,
        (error: unknown) => error as Error,
      );
      if (retried instanceof Error) return this.violate(`the producer's retry of ${id} after a lost PutObject response failed: ${retried.name}: ${retried.message.slice(0, 120)}`);
      if (!retried.written) this.violate(`the producer's retry of ${id} after a lost PutObject response found the event already committed: the lost response had committed it`);
    }
    const body = (await this.outboxBody(id)) as string;
    const dataref = (JSON.parse(body) as { dataref?: string }).dataref;
    if (dataref === undefined) return this.violate(`event ${id}, over the inline limit, was committed inline: the producer did not offload it`);
    this.offloaded.committed(id);
    const objects = await this.offloaded.objectsOf(id);
    if (objects.length !== 1) this.violate(`offloaded event ${id} (${offloadCase}) has ${objects.length} objects in the payload bucket, not 1: ${objects.join(', ')}`);
    if (offloadCase === 'altered-after-commit' || offloadCase === 'missing-after-commit') {
      await this.offloaded.damage(id, dataref, offloadCase === 'altered-after-commit' ? 'altered' : 'missing', 0);
    }
    this.fanOut(id, spec, body, ` (offloaded${offloadCase === 'intact' ? '' : `, ${offloadCase}`})`, dataref);
  }

  /** The object of an offloaded event (the `index`-th, in commit order) is altered or deleted, at any time after its commit. */
  public async damageObject(index: number, damage: ObjectDamage): Promise<void> {
    const id = this.offloaded.ids[index % Math.max(1, this.offloaded.ids.length)];
    const dataref = id === undefined ? undefined : this.events.get(id)?.dataref;
    if (id === undefined || dataref === undefined) return;
    if (!(await this.offloaded.damage(id, dataref, damage, this.appliedCount(id, await this.appliedCounts())))) return;
    this.history.push(`the object of ${id} is ${damage === 'altered' ? 'altered (same size, another SHA-256)' : 'deleted'}`);
  }

  /**
   * An outbox item written by another producer (issue 38, item 10): the envelope dated the run's deduplication window after the write, no TTL,
   * and no `iefWrittenAt` or one 40 days after the write (a write time that lies).
   */
  private async writeForeign(id: string, spec: EventSpec): Promise<void> {
    const key = `OUTBOX#${id}`;
    // dated a window after the write: from a window on, until nearly two, its time says it is younger than its record's life
    const envelope = { specversion: '1.0', id, type: spec.type, source: spec.source, time: new Date(this.now() + this.config.deduplicationWindowDays * DAY_MS).toISOString(), datacontenttype: 'application/json', data: { amount: 1 } };
    await this.documents.send(
      new PutCommand({
        TableName: this.tables.outbox.outboxTableName,
        Item: {
          pk: key,
          sk: key,
          iefRecordType: 'OutboxEvent.v1',
          iefEnvelope: JSON.stringify(envelope),
          iefEventId: id,
          iefEventType: spec.type,
          ...(spec.writtenBy === 'future-write-time' ? { iefWrittenAt: this.now() + 40 * DAY_MS } : {}),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  /** One invocation with what the queue hands out (visible messages, up to `batch`). */
  public async deliver(spec: DeliverySpec): Promise<void> {
    const received = this.services.queue.receive(spec.batch);
    if (received.length === 0) return;
    const state: InvocationState = { ...(spec.crash ? { crash: spec.crash } : {}), requests: 0, dead: false, effectFailure: spec.effectFailure };
    this.deadLetterFails = spec.deadLetterFails;
    let failed: Set<string>;
    let threw = false;
    try {
      const response = await this.invocation.run(state, () =>
        this.handler({
          Records: received.map((message) => ({
            messageId: message.messageId,
            body: message.body,
            attributes: { ApproximateReceiveCount: String(message.receiveCount) },
            messageAttributes: Object.fromEntries(Object.entries(message.messageAttributes).map(([name, value]) => [name, { stringValue: value.StringValue, dataType: value.DataType }])),
          })),
        }),
      );
      failed = state.dead ? new Set(received.map((message) => message.messageId)) : new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
    } catch {
      threw = true;
      failed = new Set(received.map((message) => message.messageId));
    } finally {
      this.deadLetterFails = false;
    }
    // a consumer that lived through the invocation and could send dead letters had its chance to dead-letter a damaged one
    for (const message of received) this.offloaded.received(eventIdOf(message.body), !spec.deadLetterFails && !state.dead && !threw);
    for (const message of received) if (!failed.has(message.messageId)) this.services.queue.delete(message.receiptHandle);
    const note = [spec.crash ? `dies ${spec.crash.when} request ${spec.crash.request}` : '', spec.deadLetterFails ? 'dead-letter sends fail' : '', spec.effectFailure !== 'none' ? `effect ${spec.effectFailure}` : '']
      .filter((part) => part !== '')
      .join(', ');
    this.history.push(`deliver ${received.length}${note === '' ? '' : ` (${note})`}: ${received.length - failed.size} acknowledged${state.dead ? ', died' : ''}`);
  }

  /** Time passes: visibility timeouts, queue retentions, TTLs (deleted at once: the harshest AWS allows). */
  public async advance(milliseconds: number): Promise<void> {
    this.snapshotCopies();
    this.services.clock.advanceBy(milliseconds);
    // a queue operation lets each queue drop what outlived its retention
    this.services.queue.counts();
    this.services.deadLetterQueue.counts();
    await this.sweepExpiredItems();
    this.noteExpiredCopies();
    const [size, unit] = milliseconds >= DAY_MS ? [DAY_MS, 'days'] : milliseconds >= 3_600_000 ? [3_600_000, 'hours'] : [1000, 's'];
    this.history.push(`time +${Math.round(milliseconds / size)} ${unit}`);
  }

  /** The team fixes the handler's bug: the poison type applies from now on. */
  public fixBug(): void {
    if (this.poisoned) this.history.push('the handler bug is fixed');
    this.poisoned = false;
  }

  // ---- what the operator does, with the real CLI ------------------------------------------------------------------

  /** `dlq list`: reads, changes nothing, and counts what the dead-letter queue holds. */
  public async dlqList(): Promise<void> {
    const held = this.services.deadLetterQueue.messages().length;
    const result = await this.cli({}, 'dlq', 'list', '--dead-letter-queue', this.services.deadLetterQueue.address.url, '--json');
    if (result.code !== 0) return this.violate(`dlq list exited ${result.code}: ${result.stderr}`);
    const listed = (JSON.parse(result.stdout) as Array<{ messages: number }>)[0]?.messages;
    if (listed !== held) this.violate(`dlq list counted ${String(listed)} dead letters, the queue holds ${held}`);
    if (this.services.deadLetterQueue.messages().length !== held) this.violate('dlq list changed the dead-letter queue');
    this.history.push(`operator: dlq list (${held})`);
  }

  /**
   * `dlq show <id> --fetch` of the `index`-th dead letter of an offloaded event: read only; it shows the data its
   * producer wrote when the object is intact, and refuses (exit 3) naming why when the model altered or deleted it.
   */
  public async dlqShowFetch(index: number): Promise<void> {
    const letters = this.services.deadLetterQueue.messages().map((message) => eventIdOf(message.body)).filter((id) => this.events.get(id)?.dataref !== undefined);
    const eventId = letters[index % Math.max(1, letters.length)];
    if (eventId === undefined) return;
    const held = this.services.deadLetterQueue.messages().length;
    const result = await this.cli({ payloadReader: this.offloaded.store }, 'dlq', 'show', eventId, '--dead-letter-queue', this.services.deadLetterQueue.address.url, '--fetch', '--json');
    if (this.services.deadLetterQueue.messages().length !== held) this.violate('dlq show --fetch changed the dead-letter queue');
    const damaged = this.offloaded.isDamaged(eventId);
    if (result.code !== (damaged ? 3 : 0)) return this.violate(`dlq show --fetch of ${eventId} (object ${damaged ? 'altered or deleted' : 'intact'}) exited ${result.code}: ${result.stderr}`);
    const shown = (JSON.parse(result.stdout) as Array<{ offloadedData?: { fetched: boolean; data?: { attachment?: string }; refusal?: string } }>)[0]?.offloadedData;
    if (damaged ? shown?.refusal === undefined || shown.data !== undefined : shown?.data?.attachment !== 'x'.repeat(2000)) {
      this.violate(`dlq show --fetch of ${eventId} (object ${damaged ? 'altered or deleted' : 'intact'}) showed ${JSON.stringify(shown).slice(0, 160)}`);
    }
    this.history.push(`operator: dlq show ${eventId} --fetch (${damaged ? `refused: ${shown?.refusal?.slice(0, 60) ?? '?'}` : 'data shown'})`);
  }

  /**
   * `dlq redrive --yes` of the subscriber's dead-letter queue, named by its Operator output. With `meanwhile`, the
   * consumer polls while the command runs (after its first read): a message past maxReceiveCount lands in the
   * dead-letter queue while the command reads and decides.
   */
  public async dlqRedrive(meanwhile: boolean): Promise<void> {
    let receives = 0;
    const result = await this.cli(
      {
        afterSqsRequest: (name) => {
          // after its first read (its last, when the queue held nothing): SQS moves what passed maxReceiveCount
          if (meanwhile && name === 'ReceiveMessageCommand' && (receives += 1) === 1) this.services.queue.receive(10);
        },
      },
      'dlq', 'redrive', '--subscriber-output', this.operatorOutput(), '--yes', '--json',
    );
    if (result.code !== 0 && result.code !== 3) return this.violate(`dlq redrive exited ${result.code}: ${result.stderr}`);
    const decisions = (JSON.parse(result.stdout) as { decisions: Array<{ eventId?: string; redrive: boolean; refusal?: string }> }).decisions;
    for (const decision of decisions) {
      if (decision.eventId === undefined) continue;
      if (decision.redrive) this.operatorSent.add(decision.eventId);
      else {
        this.refusals.set(decision.eventId, decision.refusal ?? '');
        this.redriveRefusals.add(decision.eventId);
      }
    }
    this.history.push(`operator: dlq redrive${meanwhile ? ' (the consumer polls meanwhile)' : ''}: ${decisions.filter((d) => d.redrive).length} redriven, ${decisions.filter((d) => !d.redrive).length} refused`);
  }

  /**
   * `replay --yes`: of one event the producer wrote, of the range since the run began, or (`gave-up`) of the events
   * the relay gave up on, as the relay's dead letters name them (the runbook's replay, which heals nothing else).
   */
  public async replay(which: 'range' | 'gave-up' | number): Promise<void> {
    const ids = [...this.events.keys()];
    const gaveUp = [...this.events.values()].filter((event) => event.spec.relayGivesUp).flatMap((event) => ['--event-id', event.id]);
    const selection =
      which === 'range'
        ? ['--since', this.since, '--until', new Date(this.now() + 60_000).toISOString()]
        : which === 'gave-up'
          ? gaveUp.length === 0 ? undefined : gaveUp
          : ids.length === 0 ? undefined : ['--event-id', ids[which % ids.length] as string];
    if (selection === undefined) return;
    const result = await this.cli({}, 'replay', '--subscriber-output', this.operatorOutput(), ...selection, '--yes', '--json');
    if (result.code !== 0 && result.code !== 3) return this.violate(`replay exited ${result.code}: ${result.stderr}`);
    const output = JSON.parse(result.stdout) as { events: Array<{ eventId: string; send: boolean; why?: string }>; missing: string[]; pastRetention: Array<{ eventId: string; expiredAt: string }> };
    for (const event of output.events) {
      if (event.send) this.operatorSent.add(event.eventId);
      else this.refusals.set(event.eventId, event.why ?? '');
    }
    this.notePastRetention(output.pastRetention);
    this.history.push(`operator: replay ${which === 'range' ? 'the range' : which === 'gave-up' ? 'what the relay gave up on' : 'one event'}: ${output.events.filter((e) => e.send).length} sent, ${output.events.filter((e) => !e.send).length} refused, ${output.missing.length} not in the outbox`);
  }

  /**
   * `replay --yes --flow-profile` by the subscriber's team of another account (docs/CROSS-ACCOUNT.md): the outbox is a
   * table of the flow's account, which the team's own credentials do not reach (the CLI's own client is answered
   * `ResourceNotFoundException` for it), read through a profile of the flow's account (`granted`); with a profile the
   * AWS config does not have (`unknown-profile`), or without the option (`none`), the command fails naming what is
   * wrong, and sends nothing.
   */
  public async replayFromFlowAccount(which: 'range' | number, profile: 'granted' | 'unknown-profile' | 'none' | 'other-environment'): Promise<void> {
    const selection = this.replaySelection(which);
    if (selection === undefined) return;
    const option =
      profile === 'granted' ? ['--flow-profile', FLOW_PROFILE] : profile === 'unknown-profile' ? ['--flow-profile', `${FLOW_PROFILE}-typo`] : profile === 'other-environment' ? ['--flow-profile', OTHER_ENVIRONMENT_PROFILE] : [];
    const argv = ['replay', '--subscriber-output', this.operatorOutput(), ...selection, ...option, '--endpoint', inject('dynamoDbEndpoint'), '--region', 'us-east-1', '--yes', '--json'];
    const sentBefore = this.operatorCopies();
    const result = await this.withAwsFiles(() => this.cli({ tablesOfAnotherAccount: [this.tables.outbox.outboxTableName] }, ...argv));
    if (profile === 'granted') return this.recordReplay(result, `replay --flow-profile ${which === 'range' ? 'the range' : 'one event'}`);
    if (profile === 'other-environment') {
      // the profile reaches another account than the subscriber's topic's: refused before the outbox is read (RX14-3)
      const expected = `--flow-profile ${OTHER_ENVIRONMENT_PROFILE} reaches account 333333333333`;
      if (result.code !== 3 || !result.stderr.includes(expected)) this.violate(`replay with a profile of another environment exited ${result.code}, not 3 naming ${expected}: ${result.stderr}${result.stdout}`);
      if (this.operatorCopies() !== sentBefore) this.violate('replay with a profile of another environment sent copies although it was refused');
      this.history.push(`operator: replay with a profile of another environment: refused (exit ${result.code}), nothing sent`);
      return;
    }
    const expected = profile === 'none' ? this.tables.outbox.outboxTableName : `${FLOW_PROFILE}-typo`;
    if (result.code !== 1 || !result.stderr.includes(expected)) this.violate(`replay with ${profile === 'none' ? 'the team\'s own credentials only' : 'an unknown --flow-profile'} exited ${result.code}, not 1 naming ${expected}: ${result.stderr}${result.stdout}`);
    if (this.operatorCopies() !== sentBefore) this.violate(`replay with ${profile} sent copies although it failed`);
    this.history.push(`operator: replay ${profile === 'none' ? 'without --flow-profile' : 'with an unknown --flow-profile'}: failed (exit ${result.code}), nothing sent`);
  }

  /**
   * Aggregate mode: `replay --yes --aggregate-table` with the subscriber's aggregate table (`its`), which decides from
   * the ids its aggregate remembers; with a table name that does not exist (`missing`, a typo); or with an existing
   * table that is not an aggregate table of the subscriber (`wrong`: the outbox). A table given that holds no aggregate
   * of the subscriber (the wrong one, or its own before it applied an event) is refused: the command fails naming it,
   * and sends nothing.
   */
  public async replayWithAggregateTable(which: 'range' | number, table: 'its' | 'missing' | 'wrong'): Promise<void> {
    if (this.config.mode !== 'aggregate') return;
    const selection = this.replaySelection(which);
    if (selection === undefined) return;
    const name = table === 'its' ? this.tables.business : table === 'wrong' ? this.tables.outbox.outboxTableName : `${this.tables.business}-typo`;
    const holdsAggregate = table === 'its' && (await this.holdsAggregateOfSubscriber());
    const sentBefore = this.operatorCopies();
    // the subscriber's queue and its dead-letter queue (the Operator output names it): a dead-lettered copy comes back by a redrive
    const holders = [this.services.queue, this.services.deadLetterQueue];
    const queuedBefore = new Set(holders.flatMap((queue) => queue.messages().map((message) => eventIdOf(message.body))));
    const queueHeld = holders.some((queue) => queue.counts().total > 0);
    const result = await this.cli({}, 'replay', '--subscriber-output', this.operatorOutput(), ...selection, '--aggregate-table', name, '--yes', '--json');
    if (holdsAggregate) {
      this.expectQueuedCopyRule(result.stdout, queuedBefore, queueHeld);
      return this.recordReplay(result, `replay --aggregate-table ${which === 'range' ? 'the range' : 'one event'}`);
    }
    const what = table === 'missing' ? 'a missing table' : table === 'wrong' ? 'a table of the flow that is not an aggregate table' : 'its table before it applied an event';
    const expected = table === 'missing' ? name : `--aggregate-table ${name}: not an aggregate table of subscriber 'life'`;
    if (result.code !== 1 || !result.stderr.includes(expected)) this.violate(`replay --aggregate-table of ${what} exited ${result.code}, not 1 naming it (${expected}): ${result.stderr}${result.stdout}`);
    if (this.operatorCopies() !== sentBefore) this.violate(`replay --aggregate-table of ${what} sent copies although it failed`);
    this.history.push(`operator: replay --aggregate-table of ${what}: failed (exit ${result.code}), nothing sent`);
  }

  /**
   * `replay --aggregate-table`'s rule for an event no aggregate remembers (operator/cli/queued-copy.ts), as the model
   * knows the world: it is sent only when the relay's copy can no longer be on the queue (its outbox item's write time,
   * as the item says it, plus the relay's 24 hours, the queue's retention and an hour) and neither the queue nor its
   * dead-letter queue held anything (`queueHeld`: a copy an earlier replay sent, or a dead-lettered one, may be there),
   * else refused with {@link MAY_BE_QUEUED_TEXT}; and never is a copy sent of an event either held (`queuedBefore`, the
   * truth): its two copies could both be applied.
   */
  private expectQueuedCopyRule(stdout: string, queuedBefore: ReadonlySet<string>, queueHeld: boolean): void {
    let output: { events?: Array<{ eventId: string; send: boolean; applied?: boolean; why?: string }> };
    try {
      output = JSON.parse(stdout) as typeof output;
    } catch {
      return; // recordReplay names a failed command
    }
    const boundMs = (RELAY_PUBLISH_BOUND_SECONDS + this.config.queueRetentionDays * 86_400 + 3600) * 1000;
    for (const decided of output.events ?? []) {
      if (decided.send && queuedBefore.has(decided.eventId)) this.violate(`replay --aggregate-table sent a copy of ${decided.eventId} while the subscriber's queue held one`);
      // applied (remembered), or refused by another rule (an aggregate forgot ids): not this rule's
      if (decided.applied === true || (!decided.send && decided.why?.startsWith(MAY_BE_QUEUED_TEXT) !== true)) continue;
      const writtenAt = this.events.get(decided.eventId)?.writtenAt;
      const mayBeQueued = writtenAt === undefined || writtenAt > this.now() || this.now() < writtenAt + boundMs || queueHeld;
      if (decided.send === mayBeQueued) {
        this.violate(`replay --aggregate-table ${decided.send ? 'sent' : 'refused'} ${decided.eventId} (written ${writtenAt === undefined ? 'at an unknown time' : new Date(writtenAt).toISOString()}, the queue and its dead-letter queue ${queueHeld ? 'holding messages' : 'empty'}), but the model ${mayBeQueued ? 'expects its refusal: a copy may still be on the queue' : 'expects it sent: no copy can be on the queue'}`);
      }
    }
  }

  /** Whether the business table holds an aggregate the runtime wrote for the subscriber (from the truth). */
  private async holdsAggregateOfSubscriber(): Promise<boolean> {
    const item = (await this.documents.send(new GetCommand({ TableName: this.tables.business, Key: { pk: 'account' }, ConsistentRead: true }))).Item;
    return typeof item?.[AGGREGATE_ITEM.VERSION_ATTRIBUTE] === 'number' && [undefined, 'life'].includes(item[AGGREGATE_ITEM.SUBSCRIBER_ATTRIBUTE] as string | undefined);
  }

  private replaySelection(which: 'range' | number): string[] | undefined {
    const ids = [...this.events.keys()];
    if (which === 'range') return ['--since', this.since, '--until', new Date(this.now() + 60_000).toISOString()];
    return ids.length === 0 ? undefined : ['--event-id', ids[which % ids.length] as string];
  }

  /**
   * An event replay named as past the outbox's TTL (DynamoDB Local, like DynamoDB before its deletion, still returns the
   * item): not sent, and named, so the operator knows it can not be replayed; its TTL must have passed.
   */
  private notePastRetention(pastRetention: ReadonlyArray<{ eventId: string; expiredAt: string }> | undefined): void {
    if (pastRetention === undefined) return this.violate('replay --json gave no pastRetention list');
    for (const { eventId, expiredAt } of pastRetention) {
      if (Date.parse(expiredAt) > this.now()) this.violate(`replay named ${eventId} as past the outbox's retention, but its TTL (${expiredAt}) has not passed`);
      this.refusals.set(eventId, `past the outbox's retention (TTL ${expiredAt})`);
    }
  }

  /** Notes what a `replay --yes --json` sent and refused (an event the subscriber applied is neither). */
  private recordReplay(result: { code: number; stdout: string; stderr: string }, label: string): void {
    if (result.code !== 0 && result.code !== 3) return this.violate(`${label} exited ${result.code}: ${result.stderr}`);
    const output = JSON.parse(result.stdout) as { events: Array<{ eventId: string; send: boolean; applied?: boolean; why?: string }>; missing: string[]; pastRetention: Array<{ eventId: string; expiredAt: string }> };
    for (const event of output.events) {
      if (event.send) this.operatorSent.add(event.eventId);
      else if (event.applied !== true) this.refusals.set(event.eventId, event.why ?? '');
    }
    this.notePastRetention(output.pastRetention);
    this.history.push(`operator: ${label}: ${output.events.filter((e) => e.send).length} sent, ${output.events.filter((e) => !e.send && e.applied !== true).length} refused, ${output.events.filter((e) => e.applied === true).length} applied, ${output.missing.length} not in the outbox`);
  }

  /** How many copies the operator's commands have put on the subscriber's queue (SendMessage) that are still there. */
  private operatorCopies(): number {
    return this.services.queue.messages().filter((message) => message.origin.via === 'send-message').length;
  }

  /**
   * Runs `act` with the AWS config of the subscriber's team: its own credentials in the environment, and the profile
   * `FLOW_PROFILE` of the flow's account (static keys here, letters only as DynamoDB Local requires: it shares its tables between all keys, so no role is assumed).
   */
  private async withAwsFiles<T>(act: () => Promise<T>): Promise<T> {
    const directory = mkdtempSync(path.join(tmpdir(), 'ief-life-aws-'));
    writeFileSync(path.join(directory, 'config'), `[profile ${FLOW_PROFILE}]\nregion = us-east-1\n\n[profile ${OTHER_ENVIRONMENT_PROFILE}]\nregion = us-east-1\n`);
    // each says its account (aws_account_id), as a role_arn or SSO profile's credentials do
    writeFileSync(
      path.join(directory, 'credentials'),
      `[${FLOW_PROFILE}]\naws_access_key_id = flowaccount\naws_secret_access_key = local\naws_account_id = ${FLOW_ACCOUNT}\n\n` +
        `[${OTHER_ENVIRONMENT_PROFILE}]\naws_access_key_id = stagingaccount\naws_secret_access_key = local\naws_account_id = 333333333333\n`,
    );
    const variables: Record<string, string | undefined> = {
      AWS_CONFIG_FILE: path.join(directory, 'config'),
      AWS_SHARED_CREDENTIALS_FILE: path.join(directory, 'credentials'),
      AWS_ACCESS_KEY_ID: 'subscriberaccount',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_PROFILE: undefined,
    };
    const saved = Object.fromEntries(Object.keys(variables).map((name) => [name, process.env[name]]));
    const set = (values: Record<string, string | undefined>): void => {
      for (const [name, value] of Object.entries(values)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    };
    set(variables);
    try {
      return await act();
    } finally {
      set(saved);
      rmSync(directory, { recursive: true, force: true });
    }
  }

  /** `blocked resolve` of every blocked record, from the truth: SUCCESS when the effect ran, else TRY_AGAIN. */
  public async resolveBlocked(): Promise<void> {
    if (this.config.mode !== 'lease' && this.config.mode !== 'multi-step') return;
    const listed = await this.cli({}, 'blocked', 'list', '--table', this.tables.inbox, '--subscriber', 'life', '--json');
    if (listed.code !== 0) return this.violate(`blocked list exited ${listed.code}: ${listed.stderr}`);
    for (const blocked of JSON.parse(listed.stdout) as Array<{ eventId: string; step: string; version: number }>) {
      const ran = (this.effects.get(blocked.eventId) ?? 0) - (this.restored.get(blocked.eventId) ?? 0) > 0;
      const status = blocked.step === 'charge' || blocked.step === 'effect' ? (ran ? 'SUCCESS' : 'TRY_AGAIN') : 'TRY_AGAIN';
      const result = await this.cli(
        {},
        'blocked', 'resolve', '--table', this.tables.inbox, '--subscriber', 'life', '--event-id', blocked.eventId, '--step', blocked.step,
        '--status', status, '--expected-version', String(blocked.version), '--queue', this.services.queue.address.url,
      );
      if (result.code !== 0) this.violate(`blocked resolve of ${blocked.eventId} exited ${result.code}: ${result.stderr}`);
      else this.history.push(`operator: resolve ${blocked.eventId} ${status}`);
    }
  }

  /**
   * The operator restores an applied event's effect from a backup taken before it (the effect is gone), then runs
   * `inbox forget --yes`, so the event applies again when redelivered; a refused forget puts the effect back.
   */
  public async restoreAndForget(index: number): Promise<void> {
    if (this.config.mode === 'aggregate') return;
    const applied = [...this.events.values()].filter((event) => this.appliedCount(event.id, this.lastCounts) === 1);
    const event = applied[index % Math.max(1, applied.length)];
    if (event === undefined) return;
    const result = await this.cli({}, 'inbox', 'forget', 'life', event.id, '--table', this.tables.inbox, '--reason', 'restored from a backup', '--yes');
    if (result.code === 3) return void this.history.push(`operator: inbox forget ${event.id} refused`);
    if (result.code !== 0) return this.violate(`inbox forget exited ${result.code}: ${result.stderr}`);
    this.restored.set(event.id, (this.restored.get(event.id) ?? 0) + 1);
    if (this.config.mode === 'transactional') await this.documents.send(new DeleteCommand({ TableName: this.tables.business, Key: { pk: `effect#${event.id}` } }));
    // the event must come again: the operator replays it from the outbox (refused past its window; then it is named)
    this.history.push(`operator: restore ${event.id} from a backup and forget its record`);
    const replay = await this.cli({}, 'replay', '--subscriber-output', this.operatorOutput(), '--event-id', event.id, '--yes', '--json');
    const output = JSON.parse(replay.stdout || '{"events":[],"missing":[]}') as { events: Array<{ eventId: string; send: boolean; why?: string }>; missing: string[] };
    for (const each of output.events) {
      if (each.send) this.operatorSent.add(each.eventId);
      else this.refusals.set(each.eventId, each.why ?? '');
    }
    for (const missing of output.missing) this.refusals.set(missing, 'not in the outbox any more (past its retention)');
  }

  // ---- the checks -------------------------------------------------------------------------------------------------

  private lastCounts = new Map<string, number>();

  /** What must hold after every command. */
  public async check(): Promise<void> {
    const counts = await this.appliedCounts();
    this.lastCounts = counts;
    for (const violation of this.offloaded.check((eventId) => this.appliedCount(eventId, counts))) this.violate(violation);
    const onQueues = new Set([...this.services.queue.messages(), ...this.services.deadLetterQueue.messages()].map((message) => eventIdOf(message.body)));
    for (const event of this.events.values()) {
      const applied = this.appliedCount(event.id, counts);
      if (applied > 1 && !this.boundAnnounced(event.id, applied)) this.violate(`event ${event.id} applied ${applied} times`);
      if (!event.taken && (counts.get(event.id) ?? 0) > 0) this.violate(`event ${event.id}, which the subscription's filter policy does not take, was applied`);
      if (!event.taken || applied > 0) continue;
      const kept = onQueues.has(event.id) || (await this.keptOnRecord(event.id)) || (event.spec.relayGivesUp && (await this.outboxBody(event.id)) !== undefined);
      if (!kept && !this.expired.has(event.id) && !this.refusals.has(event.id)) this.violate(`event ${event.id} is lost: not applied, on no queue, kept nowhere`);
    }
  }

  /**
   * The operator is done: the bug is fixed, and they deliver, resolve, redrive and replay until nothing changes. Then
   * each event the filter takes is applied exactly once, or named by a refusal, or its copy ran out of retention.
   */
  public async drain(): Promise<void> {
    this.fixBug();
    for (let round = 0; round < 8; round++) {
      for (let turn = 0; turn < 40 && this.services.queue.counts().total > 0; turn++) {
        await this.deliver({ batch: 10, deadLetterFails: false, effectFailure: 'none' });
        await this.advance(VISIBILITY_MS);
      }
      await this.resolveBlocked();
      await this.dlqRedrive(false);
      if (round === 0) await this.replay('gave-up');
      await this.check();
      if (this.services.queue.counts().total === 0 && this.services.deadLetterQueue.counts().total === 0 && round > 0) break;
    }
    const counts = await this.appliedCounts();
    for (const event of this.events.values()) {
      if (!event.taken) continue;
      const applied = this.appliedCount(event.id, counts);
      // an offloaded event whose object was altered or deleted: applied once, or dead-lettered with the reason
      // (or, never applied, its last copy ran out of a queue's retention: SQS deleted it, an alarm's business; or,
      // never on a queue (the relay gave up on it and no operator sent a copy), an operator's refusal names it, as
      // for any event: no consumer saw it to dead-letter it; or no consumer could dead-letter it (its dead-letter
      // send failed, or it died) and SQS moved the copy at maxReceiveCount, without a reason: the operator's redrive
      // refused it and `dlq show --fetch` names the damage)
      const offloaded = this.offloaded.settled(event.id, applied, applied === 0 && this.offloaded.isDamaged(event.id) ? await this.movedAndRefused(event.id) : undefined);
      if (offloaded !== undefined) {
        const neverQueued = event.spec.relayGivesUp && !this.operatorSent.has(event.id);
        if (offloaded !== null && !(applied === 0 && (this.expired.has(event.id) || (neverQueued && this.refusals.has(event.id))))) this.violate(offloaded);
        continue;
      }
      if (applied === 1 || (applied > 1 && this.boundAnnounced(event.id, applied)) || (applied === 0 && (this.refusals.has(event.id) || this.expired.has(event.id)))) continue;
      this.violate(`after the operator is done, event ${event.id} is applied ${applied} times and no refusal names it`);
    }
  }

  /**
   * For an event never applied whose copy SQS moved to the dead-letter queue (at maxReceiveCount, so the copy carries
   * no reason of the runtime: its own dead-letter send failed, or it died) and the operator's `dlq redrive` refused: what
   * `dlq show <id> --fetch` says of its data, where the operator sees it. Undefined otherwise.
   */
  private async movedAndRefused(eventId: string): Promise<string | undefined> {
    const moved = this.services.deadLetterQueue.messages().some((message) => eventIdOf(message.body) === eventId && message.origin.via === 'redrive');
    if (!moved || !this.redriveRefusals.has(eventId)) return undefined;
    const result = await this.cli({ payloadReader: this.offloaded.store }, 'dlq', 'show', eventId, '--dead-letter-queue', this.services.deadLetterQueue.address.url, '--fetch', '--json');
    // exit 3: it refused to show the data, saying why
    if (result.code !== 3) return undefined;
    return (JSON.parse(result.stdout) as Array<{ offloadedData?: { refusal?: string } }>)[0]?.offloadedData?.refusal;
  }

  public report(): string {
    return `${this.violations.join('\n')}\nhistory:\n  ${this.history.join('\n  ')}`;
  }

  // ---- internals --------------------------------------------------------------------------------------------------

  private violate(message: string): void {
    if (!this.violations.includes(message)) this.violations.push(message);
  }

  private send(body: string): void {
    this.services.queue.send({ body, origin: { via: 'sns' } });
  }

  /**
   * Runs the CLI; afterwards notes which events it put copies of on the subscriber's queue (SendMessage through the
   * endpoint: only the operator's commands send there), whatever the command itself reports.
   */
  private async cli(terminal: Parameters<typeof cliAt>[1], ...argv: string[]) {
    const result = await cliAt(this.services, terminal, ...argv);
    for (const message of this.services.queue.messages()) if (message.origin.via === 'send-message') this.operatorSent.add(eventIdOf(message.body));
    return result;
  }

  /** The subscriber's `<subscriber>/Operator` stack output, as the constructs write it for this run's configuration. */
  private operatorOutput(): string {
    const policy = POLICIES[this.config.filter];
    const inboxModes = this.config.mode !== 'aggregate';
    return JSON.stringify({
      format: 1,
      subscriberName: 'life',
      processingMode: this.config.mode,
      ...(inboxModes ? { deduplicationWindowSeconds: this.config.deduplicationWindowDays * 86_400, inboxTable: this.tables.inbox } : {}),
      keepBlockedMessageBody: this.config.keepBlockedMessageBody,
      ...(policy === undefined ? {} : { filterPolicy: policy, filterPolicyScope: 'MessageBody' }),
      outboxTable: this.tables.outbox.outboxTableName,
      queueUrl: this.services.queue.address.url,
      deadLetterQueueUrl: this.services.deadLetterQueue.address.url,
      topicArn: `arn:aws:sns:us-east-1:${FLOW_ACCOUNT}:life-topic`,
    });
  }

  /**
   * Aggregate mode's documented bound: a redelivery by AWS (an SNS duplicate, a retry) after `maxProcessedMessages`
   * newer events changed the aggregate is applied again, and the runtime announces it (its warning and the
   * EvictedRedelivery metric). Explained only then: each application after the first with its own warning (a warning of
   * the first application, a late event's, explains no later one), and never for a copy an operator's command sent.
   */
  private boundAnnounced(eventId: string, applied: number): boolean {
    if (this.config.mode !== 'aggregate' || this.operatorSent.has(eventId)) return false;
    const warnings = this.logs.lines.filter((line) => line.eventId === eventId && line.message === 'redelivery past the processed-messages bound').length;
    return warnings >= applied - 1;
  }

  private appliedCount(eventId: string, counts: ReadonlyMap<string, number>): number {
    return (counts.get(eventId) ?? 0) - (this.restored.get(eventId) ?? 0);
  }

  /** How often each event applied, from the truth: the business table, the aggregate, or the effect ledger. */
  private async appliedCounts(): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    if (this.config.mode === 'lease' || this.config.mode === 'multi-step') {
      for (const [id, count] of this.effects) counts.set(id, count);
      return counts;
    }
    if (this.config.mode === 'aggregate') {
      const item = (await this.direct.send(new GetItemCommand({ TableName: this.tables.business, Key: { pk: { S: 'account' } }, ConsistentRead: true }))).Item;
      const state = item === undefined ? {} : (unmarshall(item) as { applied?: Record<string, number> });
      for (const [id, count] of Object.entries(state.applied ?? {})) counts.set(id, count);
      return counts;
    }
    for (const event of this.events.values()) {
      const item = (await this.documents.send(new GetCommand({ TableName: this.tables.business, Key: { pk: `effect#${event.id}` }, ConsistentRead: true }))).Item;
      // a restored effect was deleted: what applies after it counts from one again
      counts.set(event.id, ((item?.applied as number | undefined) ?? 0) + (this.restored.get(event.id) ?? 0));
    }
    return counts;
  }

  private async keptOnRecord(eventId: string): Promise<boolean> {
    const item = (await this.documents.send(new GetCommand({ TableName: this.tables.inbox, Key: { pk: `life#${eventId}` }, ConsistentRead: true }))).Item;
    return typeof item?.blockedBody === 'string';
  }

  private async outboxBody(eventId: string): Promise<string | undefined> {
    const key = `OUTBOX#${eventId}`;
    const item = (await this.documents.send(new GetCommand({ TableName: this.tables.outbox.outboxTableName, Key: { pk: key, sk: key }, ConsistentRead: true }))).Item;
    return item?.iefEnvelope as string | undefined;
  }

  /** DynamoDB's TTL: items of the inbox and the outbox past their `expiresAt` are deleted. */
  private async sweepExpiredItems(): Promise<void> {
    const nowSeconds = Math.floor(this.now() / 1000);
    for (const [table, keys] of [[this.tables.inbox, ['pk']], [this.tables.outbox.outboxTableName, ['pk', 'sk']]] as const) {
      const items = (await this.direct.send(new ScanCommand({ TableName: table, ConsistentRead: true }))).Items ?? [];
      for (const item of items) {
        const expiresAt = Number(item.expiresAt?.N);
        if (Number.isFinite(expiresAt) && expiresAt < nowSeconds) {
          await this.direct.send(new DeleteItemCommand({ TableName: table, Key: Object.fromEntries(keys.map((key) => [key, item[key] as NonNullable<(typeof item)[string]>])) }));
          // an event the relay gave up on lives only in the outbox: past its eventRetention it is gone, before any replay
          const eventId = item.iefEventId?.S;
          if (eventId !== undefined && this.events.get(eventId)?.spec.relayGivesUp === true && this.appliedCount(eventId, this.lastCounts) === 0) {
            this.expired.add(eventId);
            this.history.push(`the outbox's TTL removed ${eventId}, which the relay gave up on, before any replay`);
          }
        }
      }
    }
  }

  private copiesBefore = new Map<string, string>();

  private snapshotCopies(): void {
    this.copiesBefore = new Map([...this.services.queue.messages(), ...this.services.deadLetterQueue.messages()].map((message) => [message.messageId, eventIdOf(message.body)]));
  }

  /** Copies gone from the queues while only time passed: SQS deleted them at the queue's retention. */
  private noteExpiredCopies(): void {
    const now = new Set([...this.services.queue.messages(), ...this.services.deadLetterQueue.messages()].map((message) => message.messageId));
    const remaining = new Set([...this.services.queue.messages(), ...this.services.deadLetterQueue.messages()].map((message) => eventIdOf(message.body)));
    for (const [messageId, eventId] of this.copiesBefore) {
      if (!now.has(messageId) && !remaining.has(eventId)) {
        this.expired.add(eventId);
        this.history.push(`SQS deleted the last copy of ${eventId} at its queue's retention`);
      }
    }
  }

  /** A client on which an invocation dies where its plan says. */
  private client(): DynamoDBClient {
    return dieAsPlanned(localClient({ maxAttempts: 3 }), () => this.invocation.getStore());
  }

  /** The dead letters the runtime sends, through the SQS endpoint (failing when the delivery's plan says). */
  private deadLetters(): DeadLetterPublisher {
    return {
      publish: async (letter: DeadLetter) => {
        if (this.invocation.getStore()?.dead) throw new SimulatedCrash();
        if (this.deadLetterFails) throw new Error('SQS SendMessage: ServiceUnavailable (model)');
        await this.services.deadLetterPublisher.publish(letter);
        this.offloaded.deadLettered(letter);
      },
    };
  }

  /** The external effect of lease and multi-step modes, with the invocation's planned failure. */
  private effect(eventId: string): void {
    const state = this.invocation.getStore();
    if (state?.dead) throw new SimulatedCrash();
    const failure = state?.effectFailure ?? 'none';
    if (state !== undefined) state.effectFailure = 'none';
    if (failure === 'retryable') throw new RetryableError('the remote side refused before acting (model)');
    if (failure === 'unknown-before') throw new Error('socket timeout, nothing was sent (model)');
    this.effects.set(eventId, (this.effects.get(eventId) ?? 0) + 1);
    if (failure === 'unknown-after') throw new Error('connection reset after sending (model)');
  }

  private poison(type: string): void {
    if (this.poisoned && type === 'OrderShipped') throw new PermanentError('OrderShipped has no warehouse (a bug, fixed later)');
  }

  private consumer(): SqsBatchHandler {
    // offloaded events' data is read from the run's local S3 (the flow's bucket and prefix from the environment)
    const common = { client: this.client(), deadLetter: this.deadLetters(), logger: this.logs.logger, now: () => new Date(this.now()), metricsSink: () => undefined, payloadReader: this.offloaded.store };
    const window = this.config.deduplicationWindowDays * 86_400;
    const leaseConfig = { subscriberName: 'life', inboxTableName: this.tables.inbox, deduplicationWindowSeconds: window, leaseDurationSeconds: 30, keepBlockedMessageBody: this.config.keepBlockedMessageBody };
    switch (this.config.mode) {
      case 'transactional':
        return createTransactionalConsumer({
          ...common,
          config: { subscriberName: 'life', inboxTableName: this.tables.inbox, deduplicationWindowSeconds: window },
          handle: (envelope, tx) => {
            this.poison(envelope.type);
            tx.update({ TableName: this.tables.business, Key: { pk: `effect#${envelope.id}` }, UpdateExpression: 'ADD applied :one', ExpressionAttributeValues: { ':one': 1 } });
          },
        });
      case 'aggregate':
        return createAggregateConsumer<{ amount: number }, { applied: Record<string, number> }>({
          ...common,
          config: { subscriberName: 'life' },
          maxProcessedMessages: this.config.maxProcessedMessages,
          locate: () => ({ tableName: this.tables.business, key: { pk: 'account' } }),
          apply: (current, envelope) => {
            this.poison(envelope.type);
            return { state: { applied: { ...(current?.applied ?? {}), [envelope.id]: (current?.applied?.[envelope.id] ?? 0) + 1 } } };
          },
        });
      case 'lease':
        return createLeaseConsumer({
          ...common,
          config: leaseConfig,
          handle: async (envelope) => {
            this.poison(envelope.type);
            this.effect(envelope.id);
          },
        });
      case 'multi-step':
        return createMultiStepConsumer({
          ...common,
          config: leaseConfig,
          steps: [
            { name: 'prepare', run: (envelope) => void this.poison(envelope.type) },
            { name: 'charge', run: (envelope) => void this.effect(envelope.id) },
          ],
        });
    }
  }
}

function eventIdOf(body: string): string {
  try {
    return String((JSON.parse(body) as { id?: unknown }).id);
  } catch {
    return '(unparsed)';
  }
}
