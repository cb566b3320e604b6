/**
 * The ordered producer: appends events that each subscriber of the ordered path applies in commit order per aggregate
 * (docs/ORDERED-DELIVERY.md). Each event takes its aggregate's next sequence number in the same transaction as the
 * business writes, by a conditional write of the aggregate's head item.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, TransactWriteCommand, type DynamoDBDocumentClient, type TransactWriteItem } from '@aws-sdk/lib-dynamodb';
import { loadProducerConfig, type ProducerConfig } from '../config';
import { loadClaimCheckConfig } from '../claim-check/claim-check-config';
import { S3PayloadStore } from '../claim-check/payload-store';
import type { EventEnvelope } from '../envelope';
import { InvalidEventError, TransactionCancelledError } from '../errors';
import { buildEnvelope, type NewEvent } from '../producer/new-event';
import { assertEventIdNotReserved, outboxPut } from '../producer/outbox-item';
import { describeAction } from '../transaction/actions';
import { sameEvent } from '../fingerprint';
import { parseEnvelope } from '../envelope';
import {
  cancellationItem,
  cancellationReasonCodes,
  CONDITIONAL_CHECK_FAILED,
  isTransactionCanceled,
  NO_FAILURE,
  toTransactionCancelledError,
  TRANSACTION_CONFLICT,
  storedString,
  type ActionDescription,
  type TransactionCanceledLike,
} from '../transaction/cancellation';
import { toDocumentClient, type DynamoDBClientLike } from '../transaction/document-client';
import { validateTransactionLimits } from '../transaction/limits';
import { offloadIfLarge, type ClaimCheck } from '../claim-check/offload';
import { MAX_MESSAGE_BYTES } from '../contract/wire-format';
import { assertWritable, marshallOptionsOf } from '../transaction/writable-values';
import { OUTBOX_ITEM } from '../contract/wire-format';
import {
  FIFO_ID_CHARACTERS,
  MAX_ORDERED_ID_CHARACTERS,
  ORDERED_ENVELOPE,
  ORDERED_OUTBOX_ITEM,
  orderedGenerationKey,
  orderedHeadKey,
  sequenceText,
  standardEventIdOf,
  STANDARD_EVENT_ID_SUFFIX,
} from '../contract/ordered-wire-format';

/** An event of the ordered path: a {@link NewEvent} with the aggregate whose order it keeps. */
export interface OrderedNewEvent<TData = unknown> extends NewEvent<TData> {
  /**
   * The aggregate (entity) the event belongs to, e.g. the order id: the events of one aggregate are applied in commit
   * order by every ordered subscriber; events of different aggregates in any order. It becomes the SQS FIFO message group:
   * at most 100 characters (`MAX_ORDERED_ID_CHARACTERS`) of `a-z A-Z 0-9` and ASCII punctuation.
   */
  readonly aggregateId: string;
  /**
   * Also append this fact to the standard flow, in the same transaction: a second outbox item, a standard event with the
   * same type, subject, data, time, source and trace context, whose id is derived from this event's id
   * ({@link standardEventIdOf}), so a retried call that commits neither event twice. The standard relay of the same
   * outbox table publishes it to the standard topic, where the standard subscribers (every processing mode, filter
   * policies) take it; the ordered subscribers take the ordered event. The standard event carries no `partitionkey` or
   * `sequence`: the standard flow keeps no order. Each such event adds a third action to the transaction (head, history,
   * standard item), so at most 33 events fit DynamoDB's 100 actions with no business writes (docs/ORDERED-DELIVERY.md,
   * "One fact for both paths").
   * @default false - the ordered path only
   */
  readonly alsoToStandardFlow?: boolean;
}

export { standardEventIdOf, STANDARD_EVENT_ID_SUFFIX };

/** An ordered event as written: its envelope carries `partitionkey` (the aggregate) and `sequence`. */
export interface OrderedEnvelope<TData = unknown> extends EventEnvelope<TData> {
  readonly partitionkey: string;
  readonly sequence: string;
  /** When the runtime wrote it, epoch milliseconds (`ORDERED_ENVELOPE.WRITTEN_AT_ATTRIBUTE`); absent on envelopes of earlier runtimes. */
  readonly iefwrittenat?: number;
}

/** Input of {@link OrderedOutbox.transactWrite}. */
export interface OrderedTransactWriteInput {
  /** The caller's business actions, DocumentClient style. @default no business actions */
  readonly items?: readonly TransactWriteItem[];
  /** The events, at most one per aggregate (each takes its aggregate's head item, and a transaction writes an item once). */
  readonly events: readonly OrderedNewEvent[];
}

/** Options of {@link OrderedOutbox}. */
export interface OrderedOutboxOptions {
  readonly client: DynamoDBClientLike;
  /** The outbox table (see `loadProducerConfig`). */
  readonly config: ProducerConfig;
  /** Clock for event `time` and the history item's TTL. @default the system clock */
  readonly now?: () => Date;
  /** Generator of event ids. @default `crypto.randomUUID` */
  readonly newId?: () => string;
  /**
   * How often a transaction is tried in all while another producer takes the next sequence of one of its aggregates
   * first (the head's condition fails) or holds one of its items (`TransactionConflict`); the business writes are sent
   * again each time, unchanged. @default 5
   */
  readonly maxAttempts?: number;
  /**
   * Where event data too large to travel inline goes (claim-check, docs/LARGE-EVENTS.md), e.g.
   * `{ config: loadClaimCheckConfig()!, store: S3PayloadStore.fromEnvironment() }`. An ordered event is offloaded when
   * its envelope, with {@link ORDERED_ATTRIBUTES_MARGIN_BYTES} kept for its ordering attributes, is over the threshold.
   * @default none: an event over the event size limit is refused (EventTooLargeError)
   */
  readonly claimCheck?: ClaimCheck;
}

/** Options of {@link OrderedOutbox.fromEnvironment}: those the environment does not give. */
export interface OrderedOutboxEnvironmentOptions {
  /** Clock for event `time` and the history item's TTL. @default the system clock */
  readonly now?: () => Date;
  /** Generator of event ids. @default `crypto.randomUUID` */
  readonly newId?: () => string;
  /** See {@link OrderedOutboxOptions.maxAttempts}. @default 5 */
  readonly maxAttempts?: number;
}

/**
 * Bytes kept free of the event size limit for an ordered event's ordering attributes (aggregate, sequence, write time,
 * generation), which are added after the offload decision: 512.
 */
export const ORDERED_ATTRIBUTES_MARGIN_BYTES = 512;

/** The default of {@link OrderedOutboxOptions.maxAttempts}. */
export const DEFAULT_ORDERED_ATTEMPTS = 5;

/** Thrown when other producers took the next sequence of an aggregate on every attempt. Retry the command later. */
export class SequenceContentionError extends Error {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SequenceContentionError';
  }
}

/** What one send of the transaction came to (see `OrderedOutbox.send`). */
type SendOutcome =
  | { readonly kind: 'written' }
  | { readonly kind: 'written-before'; readonly envelopes: OrderedEnvelope[] }
  | { readonly kind: 'contention'; readonly cancellation: TransactionCancelledError };

/** The standard event of an ordered one ({@link OrderedNewEvent.alsoToStandardFlow}) and its outbox Put. */
interface StandardEvent {
  readonly envelope: EventEnvelope;
  readonly action: TransactWriteItem;
}

/** One action of an event in the transaction, and what it is (for descriptions, contention and retries). */
interface EventAction {
  readonly envelope: OrderedEnvelope;
  readonly role: 'head' | 'history' | 'standard';
  readonly action: TransactWriteItem;
  /** The standard event, on its Put. */
  readonly standard?: EventEnvelope;
}

/** Condition of the head Put of sequence 1: the aggregate has no head yet. */
const NO_HEAD = 'attribute_not_exists(#pk)';
/** Condition of the head Put of sequence n > 1: the head still holds n - 1. */
const HEAD_AT_PREVIOUS = '#sequence = :previous';

/** Throws InvalidEventError unless `value` can be a FIFO message group or deduplication id. */
function assertFifoId(value: string, what: string): void {
  if (value.length === 0 || value.length > MAX_ORDERED_ID_CHARACTERS || !FIFO_ID_CHARACTERS.test(value)) {
    throw new InvalidEventError(
      `${what} must be 1 to ${MAX_ORDERED_ID_CHARACTERS} characters of a-z A-Z 0-9 and ASCII punctuation ` +
        `(it becomes an SQS FIFO message group or deduplication id, which the Pipe takes up to ${MAX_ORDERED_ID_CHARACTERS} characters of), ` +
        `but was ${JSON.stringify(value.length > 120 ? `${value.slice(0, 120)}…` : value)} (${value.length} characters)`,
    );
  }
}

/**
 * Appends events to the ordered path of the transactional outbox. Each event takes the next sequence number of its
 * aggregate: the transaction writes the aggregate's head item (`OUTBOX#AGGREGATE#<aggregateId>`, conditioned on the
 * sequence read) and a history item (`OUTBOX#<eventId>`, conditioned on the id being new) with the business writes, so
 * either all happen or none. The table's stream then carries the head's writes in commit order, which the ordered relay
 * forwards to an SQS FIFO queue with the aggregate as the message group.
 */
export class OrderedOutbox {
  /**
   * An ordered outbox configured from the environment the constructs set on a producer (`flow.addProducer`, or a
   * function granted with `grantAppendEvents`; grant it `relay.grantAppendOrderedEvents` too):
   * the outbox table, and the flow's payload bucket when the flow offloads large events (`offloadLargeEvents`). Call it
   * once, at cold start.
   */
  public static fromEnvironment(client?: DynamoDBClientLike, options: OrderedOutboxEnvironmentOptions = {}): OrderedOutbox {
    const claimCheckConfig = loadClaimCheckConfig();
    return new OrderedOutbox({
      client: toDocumentClient(client),
      config: loadProducerConfig(),
      ...options,
      ...(claimCheckConfig === undefined ? {} : { claimCheck: { config: claimCheckConfig, store: S3PayloadStore.fromEnvironment() } }),
    });
  }

  private readonly client: DynamoDBDocumentClient;
  private readonly config: ProducerConfig;
  private readonly now: () => Date;
  private readonly newId: () => string;
  private readonly maxAttempts: number;
  private readonly claimCheck?: ClaimCheck;

  public constructor(options: OrderedOutboxOptions) {
    if (options.claimCheck !== undefined) this.claimCheck = options.claimCheck;
    this.client = toDocumentClient(options.client);
    this.config = options.config;
    this.now = options.now ?? (() => new Date());
    this.newId = options.newId ?? randomUUID;
    this.maxAttempts = options.maxAttempts ?? DEFAULT_ORDERED_ATTEMPTS;
    if (!Number.isInteger(this.maxAttempts) || this.maxAttempts < 1) {
      throw new RangeError(`OrderedOutbox: maxAttempts must be a whole number of at least 1, but was ${this.maxAttempts}`);
    }
  }

  /**
   * Writes `items` and `events` in ONE TransactWriteItems call and returns the envelopes written, each with its
   * aggregate (`partitionkey`) and sequence (`sequence`).
   *
   * A call whose events (caller-chosen ids) are all in the outbox already, with the same payloads, is answered with the
   * envelopes written then (sequences included), as `Outbox.transactWriteOnce` does: a retried command, or this call's
   * own commit whose response was lost while the SDK's retry met a conflict.
   *
   * @throws InvalidEventError before anything is sent: two events of one aggregate (send them in two transactions, in
   *   the order they happened), an aggregate id or event id that can not be a FIFO id, an event id starting with the
   *   reserved `AGGREGATE#`, or any reason `Outbox` refuses an event
   * @throws TransactionCancelledError when DynamoDB cancels the transaction for a reason other than another producer
   *   taking the aggregate's next sequence (a business condition while the events are new, an event id already used
   *   with another payload); nothing was written
   * @throws SequenceContentionError when other producers took the next sequence on each of `maxAttempts` tries
   */
  public async transactWrite(input: OrderedTransactWriteInput): Promise<OrderedEnvelope[]> {
    const items = input.items ?? [];
    if (input.events.length === 0) throw new InvalidEventError('OrderedOutbox.transactWrite: no events; use Outbox (or a plain transaction) for writes without events');
    const firstIndexOf = new Map<string, number>();
    input.events.forEach((event, index) => {
      assertFifoId(event.aggregateId, `event ${index} (${event.type}): aggregateId`);
      const earlier = firstIndexOf.get(event.aggregateId);
      if (earlier !== undefined) {
        throw new InvalidEventError(
          `events ${earlier} and ${index} both belong to aggregate '${event.aggregateId}': an ordered transaction takes at most one event per aggregate, ` +
            "because each takes the aggregate's next sequence by writing its head item and DynamoDB allows one action per item in a transaction; " +
            'write them in separate transactions, in the order they happened',
        );
      }
      firstIndexOf.set(event.aggregateId, index);
    });
    const now = this.now();
    const built = input.events.map((event) => {
      const envelope = buildEnvelope(withoutOrderedOptions(event), { source: this.config.eventSource, now: () => now, newId: this.newId });
      assertFifoId(envelope.id, `event ${envelope.type}: its id`);
      assertEventIdNotReserved(envelope.id, envelope.type);
      return envelope;
    });
    // data too large to travel inline is written to S3 first (once per event: a retry rewrites nothing)
    const claimCheck = this.claimCheck;
    const offloadLimit = (this.config.maxEventBytes ?? MAX_MESSAGE_BYTES) - ORDERED_ATTRIBUTES_MARGIN_BYTES;
    const envelopes = claimCheck === undefined ? built : await Promise.all(built.map((envelope) => offloadIfLarge(envelope, claimCheck, offloadLimit, now)));
    // built once, before the attempts: every attempt (and a retried call with the same ids) writes the same pair
    const standardPuts = envelopes.map((envelope, index) => (input.events[index]!.alsoToStandardFlow === true ? this.standardPut(envelope, now) : undefined));
    let lastCancellation: TransactionCancelledError | undefined;
    for (let attempt = 1; attempt <= this.maxAttempts; attempt++) {
      const heads = await Promise.all(input.events.map((event) => this.currentHead(event.aggregateId)));
      const sequences = heads.map((head) => head.sequence);
      const ordered = envelopes.map(
        (envelope, index): OrderedEnvelope => ({
          ...envelope,
          [ORDERED_ENVELOPE.AGGREGATE_ATTRIBUTE]: input.events[index]!.aggregateId,
          [ORDERED_ENVELOPE.SEQUENCE_ATTRIBUTE]: sequenceText(sequences[index]! + 1),
          // the runtime's write time, which no caller sets: the consumer ages the event from it, never from `time`
          [ORDERED_ENVELOPE.WRITTEN_AT_ATTRIBUTE]: now.getTime(),
          // the head's generation (a carried head starts one): the fences never apply two generations' events on each other
          ...(heads[index]!.generation === 0
            ? {}
            : { [ORDERED_ENVELOPE.GENERATION_ATTRIBUTE]: heads[index]!.generation, [ORDERED_ENVELOPE.GENERATION_BASE_ATTRIBUTE]: heads[index]!.generationBase }),
        }) as OrderedEnvelope,
      );
      const eventActions = ordered.flatMap((envelope, index) => this.eventActions(envelope, sequences[index]! + 1, now, standardPuts[index]));
      const outcome = await this.send(items, ordered, eventActions);
      if (outcome.kind === 'written') return ordered;
      if (outcome.kind === 'written-before') return outcome.envelopes;
      lastCancellation = outcome.cancellation;
    }
    throw new SequenceContentionError(
      `other producers took the next sequence of an aggregate of this transaction on each of ${this.maxAttempts} attempts; nothing was written. Retry later`,
      { cause: lastCancellation },
    );
  }

  /**
   * The last sequence taken for `aggregateId` (0 when it has none) and its head's generation, by a strongly consistent
   * read of its head. A head without a generation, or with an older one than the table's, takes the table's (the
   * generation item a carry wrote, review r38 R38-2), based at the head's sequence: an aggregate the last carry did not
   * know does not go on in its old generation beside the old table's in-flight events.
   */
  private async currentHead(aggregateId: string): Promise<{ readonly sequence: number; readonly generation: number; readonly generationBase: number }> {
    // both read at once (one round trip): a head whose generation is older than the table's is one a later carry did
    // not know, e.g. a restored head of an earlier carry's generation (the ordered model, seed 777): it goes on in the
    // table's generation too, never in its old one beside that generation's events still in flight
    const [head, table] = await Promise.all([this.readGeneration(orderedHeadKey(aggregateId)), this.readGeneration(orderedGenerationKey())]);
    return table.generation > head.generation ? { sequence: head.sequence, generation: table.generation, generationBase: head.sequence } : head;
  }

  /** The sequence, generation and base of the item under `key` (0 each when absent). */
  private async readGeneration(key: string): Promise<{ readonly sequence: number; readonly generation: number; readonly generationBase: number }> {
    const response = await this.client.send(
      new GetCommand({
        TableName: this.config.outboxTableName,
        Key: { [this.config.partitionKeyName]: key, ...(this.config.sortKeyName === undefined ? {} : { [this.config.sortKeyName]: key }) },
        ConsistentRead: true,
        ProjectionExpression: '#sequence, #generation, #base',
        ExpressionAttributeNames: {
          '#sequence': ORDERED_OUTBOX_ITEM.SEQUENCE_ATTRIBUTE,
          '#generation': ORDERED_OUTBOX_ITEM.GENERATION_ATTRIBUTE,
          '#base': ORDERED_OUTBOX_ITEM.GENERATION_BASE_ATTRIBUTE,
        },
      }),
    );
    const number = (attribute: string): number => {
      const value = response.Item?.[attribute];
      return typeof value === 'number' ? value : 0;
    };
    return { sequence: number(ORDERED_OUTBOX_ITEM.SEQUENCE_ATTRIBUTE), generation: number(ORDERED_OUTBOX_ITEM.GENERATION_ATTRIBUTE), generationBase: number(ORDERED_OUTBOX_ITEM.GENERATION_BASE_ATTRIBUTE) };
  }

  /**
   * The standard event of {@link OrderedNewEvent.alsoToStandardFlow}: the fact with the derived id, as `Outbox` writes
   * it (record type `OutboxEvent.v1`, which the standard relay publishes), with `ALL_OLD` on a taken id as the history's.
   */
  private standardPut(envelope: EventEnvelope, now: Date): StandardEvent {
    const { id, ...fact } = envelope;
    const standard: EventEnvelope = { ...fact, id: standardEventIdOf(id) };
    const put = outboxPut(standard, this.config, now).Put!;
    return { envelope: standard, action: { Put: { ...put, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } } };
  }

  /**
   * The head Put (conditioned on the sequence read), the history Put (conditioned on the id being new) of one event,
   * and its standard event's Put when it has one, each with what it is.
   */
  private eventActions(envelope: OrderedEnvelope, sequence: number, now: Date, standard: StandardEvent | undefined): EventAction[] {
    const history = outboxPut(envelope, this.config, now).Put!;
    const generation = (envelope as unknown as Record<string, unknown>)[ORDERED_ENVELOPE.GENERATION_ATTRIBUTE];
    const generationBase = (envelope as unknown as Record<string, unknown>)[ORDERED_ENVELOPE.GENERATION_BASE_ATTRIBUTE];
    const ordering = {
      [ORDERED_OUTBOX_ITEM.AGGREGATE_ATTRIBUTE]: envelope.partitionkey,
      [ORDERED_OUTBOX_ITEM.SEQUENCE_ATTRIBUTE]: sequence,
      ...(typeof generation === 'number' ? { [ORDERED_OUTBOX_ITEM.GENERATION_ATTRIBUTE]: generation, [ORDERED_OUTBOX_ITEM.GENERATION_BASE_ATTRIBUTE]: generationBase } : {}),
    };
    const headKey = orderedHeadKey(envelope.partitionkey);
    const headItem: Record<string, unknown> = {
      ...history.Item,
      [this.config.partitionKeyName]: headKey,
      ...(this.config.sortKeyName === undefined ? {} : { [this.config.sortKeyName]: headKey }),
      [OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE]: ORDERED_OUTBOX_ITEM.HEAD_RECORD_TYPE_VALUE,
      ...ordering,
    };
    // the head never expires: its sequence must never start again at 1
    if (this.config.timeToLiveAttributeName !== undefined) delete headItem[this.config.timeToLiveAttributeName];
    const head: TransactWriteItem = {
      Put: {
        TableName: this.config.outboxTableName,
        Item: headItem,
        ...(sequence === 1
          ? { ConditionExpression: NO_HEAD, ExpressionAttributeNames: { '#pk': this.config.partitionKeyName } }
          : {
              ConditionExpression: HEAD_AT_PREVIOUS,
              ExpressionAttributeNames: { '#sequence': ORDERED_OUTBOX_ITEM.SEQUENCE_ATTRIBUTE },
              ExpressionAttributeValues: { ':previous': sequence - 1 },
            }),
      },
    };
    const historyPut: TransactWriteItem = {
      Put: {
        ...history,
        Item: { ...history.Item, [OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE]: ORDERED_OUTBOX_ITEM.HISTORY_RECORD_TYPE_VALUE, ...ordering },
        // a taken id comes back with the cancellation: the same event written before is told from a reused id without a read
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    };
    return [
      { envelope, role: 'head', action: head },
      { envelope, role: 'history', action: historyPut },
      ...(standard === undefined ? [] : [{ envelope, role: 'standard' as const, action: standard.action, standard: standard.envelope }]),
    ];
  }

  /**
   * Sends the transaction: `written`; `contention` when only the heads' conditions or conflicts failed it (another
   * producer took a sequence first: read again and retry); `written-before` when every event is already in the outbox
   * with the same payload (see transactWrite); throws otherwise.
   */
  private async send(items: readonly TransactWriteItem[], envelopes: readonly OrderedEnvelope[], eventActions: readonly EventAction[]): Promise<SendOutcome> {
    const actions = [...items, ...eventActions.map((event) => event.action)];
    const describe = (index: number): ActionDescription => {
      if (index < items.length) return { kind: 'item', description: `item ${describeAction(actions[index] as TransactWriteItem)}` };
      const { envelope, role, standard } = eventActions[index - items.length]!;
      if (role === 'standard') {
        return { kind: 'event', eventId: standard!.id, description: `event '${standard!.id}' (${envelope.type}): the standard flow's copy of '${envelope.id}' on table '${this.config.outboxTableName}'` };
      }
      const what = role === 'head' ? `head of aggregate '${envelope.partitionkey}' (sequence ${Number(envelope.sequence)})` : 'history item';
      return { kind: 'event', eventId: envelope.id, description: `event '${envelope.id}' (${envelope.type}): ${what} on table '${this.config.outboxTableName}'` };
    };
    const standardCount = eventActions.filter((event) => event.role === 'standard').length;
    assertWritable(actions, (index) => describe(index).description, marshallOptionsOf(this.client));
    validateTransactionLimits(actions, {
      knownKeySchemas: new Map([[this.config.outboxTableName, { partitionKey: this.config.partitionKeyName, sortKey: this.config.sortKeyName }]]),
      describe: (index) => describe(index).description,
      breakdown:
        `${items.length} items + ${envelopes.length} events (a head and a history item each)` +
        (standardCount === 0 ? '' : ` + ${standardCount} standard event(s) (alsoToStandardFlow: an outbox item each)`),
    });
    try {
      await this.client.send(new TransactWriteCommand({ TransactItems: actions }));
      return { kind: 'written' };
    } catch (error) {
      if (!isTransactionCanceled(error)) throw error;
      const cancellation = toTransactionCancelledError(error, describe);
      const stored = this.writtenBefore(error, items.length, eventActions);
      if (stored !== undefined) return { kind: 'written-before', envelopes: stored };
      const codes = cancellationReasonCodes(error);
      const onlyContention = codes.every((code, index) => {
        if (code === NO_FAILURE || code === TRANSACTION_CONFLICT) return true;
        return index >= items.length && eventActions[index - items.length]?.role === 'head' && code === CONDITIONAL_CHECK_FAILED;
      });
      if (onlyContention) return { kind: 'contention', cancellation };
      throw cancellation;
    }
  }

  /**
   * The stored envelopes when every history Put (and every standard event's Put) failed its condition and returned an
   * item holding an envelope, and no other action failed but on its condition (an earlier call committed this very
   * transaction); undefined otherwise.
   * @throws TransactionCancelledError when a stored event has another payload than this call's (an id reused)
   */
  private writtenBefore(cancelled: TransactionCanceledLike, itemCount: number, eventActions: readonly EventAction[]): OrderedEnvelope[] | undefined {
    const codes = cancellationReasonCodes(cancelled);
    if (codes.length !== itemCount + eventActions.length) return undefined;
    if (codes.some((code) => code !== NO_FAILURE && code !== CONDITIONAL_CHECK_FAILED)) return undefined;
    const stored: OrderedEnvelope[] = [];
    for (const [position, event] of eventActions.entries()) {
      if (event.role === 'head') continue;
      const index = itemCount + position;
      if (codes[index] !== CONDITIONAL_CHECK_FAILED) return undefined;
      const json = storedString(cancellationItem(cancelled, index), OUTBOX_ITEM.ENVELOPE_ATTRIBUTE);
      if (json === undefined) return undefined;
      const written = event.standard ?? event.envelope;
      const storedEnvelope = parseEnvelope(json);
      if (!sameEvent(storedEnvelope, written)) {
        throw new TransactionCancelledError(
          `event '${written.id}' (${written.type}) is already in the outbox with another payload: an event id must not be reused for another event; nothing was written`,
          { cancellationReasonCodes: codes, failedActions: [] },
          { cause: cancelled },
        );
      }
      if (event.role === 'history') stored.push(JSON.parse(json) as OrderedEnvelope);
    }
    return stored;
  }
}

/** The event as `buildEnvelope` takes it: without the ordered path's own options. */
function withoutOrderedOptions(event: OrderedNewEvent): NewEvent {
  const { aggregateId: _aggregateId, alsoToStandardFlow: _alsoToStandardFlow, ...fact } = event;
  return fact;
}
