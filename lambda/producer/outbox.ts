/** The producer side: append events to the outbox in the same DynamoDB transaction as the business writes. */
import { randomUUID } from 'node:crypto';
import { TransactWriteCommand, type DynamoDBDocumentClient, type TransactWriteItem } from '@aws-sdk/lib-dynamodb';
import { loadProducerConfig, type ProducerConfig } from '../config';
import { parseEnvelope, type EventEnvelope } from '../envelope';
import { EventTooLargeError, InvalidEventError, TransactionCancelledError } from '../errors';
import { sameEvent } from '../fingerprint';
import { describeAction } from '../transaction/actions';
import {
  cancellationItem,
  CONDITIONAL_CHECK_FAILED,
  isTransactionCanceled,
  NO_FAILURE,
  storedString,
  toTransactionCancelledError,
  type ActionDescription,
  type TransactionCanceledLike,
} from '../transaction/cancellation';
import { toDocumentClient, type DynamoDBClientLike } from '../transaction/document-client';
import type { KeySchema } from '../transaction/item-identity';
import { validateTransactionLimits } from '../transaction/limits';
import { assertWritable, marshallOptionsOf } from '../transaction/writable-values';
import { buildEnvelope, type NewEvent } from './new-event';
import { outboxPut } from './outbox-item';
import { OutboxKeySchemaCheck } from './outbox-key-schema';
import { OUTBOX_ITEM } from '../contract/wire-format';
import { loadClaimCheckConfig } from '../claim-check/claim-check-config';
import { S3PayloadStore } from '../claim-check/payload-store';
import { encodedEnvelopeBytes, inlineThreshold, needsOffload, offloadIfLarge, type ClaimCheck } from '../claim-check/offload';

/** The result of {@link Outbox.transactWriteOnce}. */
export interface OutboxWriteResult {
  /**
   * `true`: this call committed the items and events. `false`: an earlier call committed this very transaction (every
   * event id is already in the outbox with the same payload), typically a client's retry after a response was lost;
   * nothing was written now.
   */
  readonly written: boolean;
  /** The envelopes in the outbox: the ones written now, or, when `written` is false, the ones written before. */
  readonly events: readonly EventEnvelope[];
}

/** Options of {@link Outbox}. */
export interface OutboxOptions {
  /** The client to write with; a low-level client is wrapped in a DocumentClient. */
  readonly client: DynamoDBClientLike;
  /** Where and how to write outbox items (see `loadProducerConfig`). */
  readonly config: ProducerConfig;
  /** Clock for event `time` and the TTL. @default the system clock */
  readonly now?: () => Date;
  /** Generator of event ids. @default `crypto.randomUUID` */
  readonly newId?: () => string;
  /**
   * Where event data too large to travel inline goes (claim-check, docs/LARGE-EVENTS.md): the payload bucket's settings
   * and an S3 writer. @default none: an event over the event size limit is refused (EventTooLargeError)
   */
  readonly claimCheck?: ClaimCheck;
}

/** Input of {@link Outbox.transactWrite}. */
export interface OutboxTransactWriteInput {
  /** The caller's business actions, DocumentClient style. @default no business actions */
  readonly items?: readonly TransactWriteItem[];
  /** The events to append; each becomes one conditional outbox Put. */
  readonly events: readonly NewEvent[];
}

/** An event ready to go into a transaction: its envelope and the conditional Put of its outbox item. */
export interface PreparedEvent<TData = unknown> {
  /** The envelope as it goes into the outbox (an offloaded event's without `data`, with `dataref`). */
  readonly envelope: EventEnvelope<TData>;
  readonly action: TransactWriteItem;
  /**
   * Set on an event emitted with `tx.emit` whose data is being offloaded (its S3 write started at the emit): the
   * prepared event to commit instead, once the object is written. `envelope` and `action` are then the inline ones,
   * not to be sent. @default undefined - the event is ready
   */
  readonly ready?: Promise<PreparedEvent<TData>>;
}

/** Options of {@link Outbox.fromEnvironment}. */
export interface OutboxEnvironmentOptions {
  /** Clock for event `time` and the TTL. @default the system clock */
  readonly now?: () => Date;
}

/**
 * Appends events to the transactional outbox. An event becomes an outbox item written in the same
 * TransactWriteItems call as the business writes, so either both happen or neither does; the relay then
 * publishes it from the table's stream.
 */
export class Outbox {
  /** An outbox configured from the environment set by the constructs; call it once, at cold start. */
  public static fromEnvironment(client?: DynamoDBClientLike, options: OutboxEnvironmentOptions = {}): Outbox {
    const claimCheckConfig = loadClaimCheckConfig();
    return new Outbox({
      client: toDocumentClient(client),
      config: loadProducerConfig(),
      now: options.now,
      ...(claimCheckConfig === undefined ? {} : { claimCheck: { config: claimCheckConfig, store: S3PayloadStore.fromEnvironment() } }),
    });
  }

  private readonly client: DynamoDBDocumentClient;
  private readonly config: ProducerConfig;
  private readonly now: () => Date;
  private readonly newId: () => string;
  private readonly keySchemaCheck: OutboxKeySchemaCheck;
  private readonly claimCheck?: ClaimCheck;

  public constructor(options: OutboxOptions) {
    if (options.claimCheck !== undefined) this.claimCheck = options.claimCheck;
    this.client = toDocumentClient(options.client);
    this.config = options.config;
    this.keySchemaCheck = new OutboxKeySchemaCheck(this.client, this.config);
    this.now = options.now ?? (() => new Date());
    this.newId = options.newId ?? randomUUID;
  }

  /** The name of the outbox table. */
  public get tableName(): string {
    return this.config.outboxTableName;
  }

  /** The key attribute names of the outbox table (for transaction limit checks). */
  public get keySchema(): KeySchema {
    return { partitionKey: this.config.partitionKeyName, sortKey: this.config.sortKeyName };
  }

  /**
   * Builds the outbox Put of one event, for callers who send their own `TransactWriteCommand`.
   * @throws InvalidEventError or EventTooLargeError before anything is sent
   */
  public event<TData>(event: NewEvent<TData>): TransactWriteItem {
    return this.build(event).action;
  }

  /**
   * Builds the envelope and the outbox Put of one event (what {@link Outbox.event} does, keeping the envelope too).
   * @throws InvalidEventError or EventTooLargeError before anything is sent
   */
  public prepare<TData>(event: NewEvent<TData>): PreparedEvent<TData> {
    return this.build(event);
  }

  /**
   * {@link Outbox.prepare} for an event that may be offloaded (claim-check): when its envelope does not fit inline, its
   * data is written to the payload bucket now (once: a retry writes nothing new) and the prepared envelope refers to it.
   * If the transaction then does not commit, the object is an orphan the bucket's lifecycle rule expires.
   * @throws InvalidEventError or EventTooLargeError before anything is sent; the S3 client's error when the write fails
   */
  public async prepareAsync<TData>(event: NewEvent<TData>): Promise<PreparedEvent<TData>> {
    return this.buildOffloading(event);
  }

  /**
   * What `tx.emit` uses: {@link Outbox.prepare}, except that an event to offload starts its S3 write now and is
   * returned with `ready`, the prepared event to commit once the write is done.
   */
  public prepareEmitted<TData>(event: NewEvent<TData>): PreparedEvent<TData> {
    const now = this.now();
    const envelope = buildEnvelope(event, { source: this.config.eventSource, now: () => now, newId: this.newId });
    if (this.claimCheck === undefined || !needsOffload(envelope, this.claimCheck.config, this.config.maxEventBytes)) {
      return { envelope, action: outboxPut(envelope, this.config, now) };
    }
    const ready = offloadIfLarge(envelope, this.claimCheck, this.config.maxEventBytes, now).then((offloaded) => ({ envelope: offloaded, action: outboxPut(offloaded, this.config, now) }));
    ready.catch(() => undefined); // awaited at commit; a handler that throws after the emit never awaits it
    return { envelope, action: { ConditionCheck: undefined } as unknown as TransactWriteItem, ready };
  }

  /**
   * Writes `items` and `events` in ONE TransactWriteItems call and returns the envelopes written.
   *
   * @throws TransactionLimitError, InvalidEventError, EventTooLargeError or InvalidWriteError (a value the DocumentClient
   *   cannot marshal) before any request is sent
   * @throws TransactionCancelledError when DynamoDB cancels the transaction (a business condition failed, or an
   *   event id was already written: see `failedActions` and `isDuplicateEvent`); nothing was written
   * @throws OutboxKeySchemaError when DynamoDB refused the write as invalid and a probe of the outbox table showed that
   *   its key schema is not the configured one (`IEF_OUTBOX_PARTITION_KEY_NAME`, `IEF_OUTBOX_SORT_KEY_NAME`); nothing
   *   was written
   */
  public async transactWrite(input: OutboxTransactWriteInput): Promise<EventEnvelope[]> {
    const built = await Promise.all(input.events.map((event) => this.buildOffloading(event)));
    await this.write(input.items ?? [], built, false);
    return built.map((event) => event.envelope);
  }

  /**
   * {@link Outbox.transactWrite} for a producer whose callers retry: every event carries an id the caller derived from
   * the request (e.g. `order-placed-${orderId}`), and when DynamoDB cancels the transaction because every one of those
   * ids is already in the outbox with the same payload (and any other failed condition is the items' own, e.g. an
   * `attribute_not_exists` on the business item), an earlier call committed it: the result says `written: false` with
   * the stored envelopes, instead of throwing. Payloads are compared by their fingerprints (type, subject, data; fingerprint.ts `sameEvent`: whatever the key order, inline or offloaded).
   *
   * An outbox item lives for the table's event retention (TTL); a retry later than that writes the events again.
   *
   * @throws InvalidEventError before anything is sent when an event has no id (a random id cannot name a retry)
   * @throws TransactionCancelledError when the cancellation is anything else: a business condition while the events
   *   are new, some ids taken and others not, or an id already in the outbox with another payload (reused)
   * @throws whatever {@link Outbox.transactWrite} throws before sending
   */
  public async transactWriteOnce(input: OutboxTransactWriteInput): Promise<OutboxWriteResult> {
    input.events.forEach((event, index) => {
      if (event.id === undefined) {
        throw new InvalidEventError(
          `transactWriteOnce: event ${index} (${event.type}) needs an id chosen by the caller, derived from the request (e.g. \`order-placed-\${orderId}\`), ` +
            'so that a retry names it the same; use transactWrite for events with random ids',
        );
      }
    });
    const items = input.items ?? [];
    const built = await Promise.all(input.events.map((event) => this.buildOffloading(event)));
    try {
      await this.write(items, built, true);
      return { written: true, events: built.map((event) => event.envelope) };
    } catch (error) {
      if (!(error instanceof TransactionCancelledError) || !isTransactionCanceled(error.cause)) throw error;
      const stored = this.committedBefore(error.cause, items.length, built.length);
      if (stored === undefined) throw error;
      const reused = built.find((event, index) => !sameEvent(event.envelope, stored[index] as EventEnvelope))?.envelope;
      if (reused !== undefined) {
        throw new TransactionCancelledError(
          `${error.message}; event '${reused.id}' (${reused.type}) is already in the outbox with another payload: an event id must not be reused for another event`,
          { cancellationReasonCodes: error.cancellationReasonCodes, failedActions: error.failedActions },
          { cause: error.cause },
        );
      }
      return { written: false, events: stored };
    }
  }

  /**
   * The stored envelopes of the events, when the cancellation means "this transaction's events are already in the
   * outbox": every event action failed its condition and returned its item, and every item action failed its own
   * condition or not at all. Undefined otherwise.
   */
  private committedBefore(cancelled: TransactionCanceledLike, itemCount: number, eventCount: number): EventEnvelope[] | undefined {
    const reasons = cancelled.CancellationReasons ?? [];
    if (eventCount === 0 || reasons.length !== itemCount + eventCount) return undefined;
    for (let index = 0; index < itemCount; index++) {
      const code = reasons[index]?.Code ?? NO_FAILURE;
      if (code !== NO_FAILURE && code !== CONDITIONAL_CHECK_FAILED) return undefined;
    }
    const stored: EventEnvelope[] = [];
    for (let index = itemCount; index < itemCount + eventCount; index++) {
      if (reasons[index]?.Code !== CONDITIONAL_CHECK_FAILED) return undefined;
      const json = storedString(cancellationItem(cancelled, index), OUTBOX_ITEM.ENVELOPE_ATTRIBUTE);
      if (json === undefined) return undefined;
      try {
        stored.push(parseEnvelope(json));
      } catch {
        return undefined; // not an outbox item this runtime wrote: not ours to call a retry
      }
    }
    return stored;
  }

  /**
   * Writes `items` and the `built` events in one TransactWriteItems call; with `returnStoredEvents`, an event Put whose
   * id is taken returns the stored item with the cancellation (`ALL_OLD`, no extra read).
   */
  private async write(items: readonly TransactWriteItem[], built: readonly PreparedEvent[], returnStoredEvents: boolean): Promise<void> {
    const eventActions = built.map((event) =>
      returnStoredEvents && event.action.Put !== undefined ? { Put: { ...event.action.Put, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } } : event.action,
    );
    const actions = [...items, ...eventActions];
    const describe = (index: number): ActionDescription => {
      const event = built[index - items.length];
      if (event === undefined) return { kind: 'item', description: `item ${describeAction(actions[index] as TransactWriteItem)}` };
      const { id, type } = event.envelope;
      return { kind: 'event', eventId: id, description: `event '${id}' (${type}) on table '${this.config.outboxTableName}'` };
    };
    // values must be writable before their sizes can be measured
    assertWritable(actions, (index) => describe(index).description, marshallOptionsOf(this.client));
    validateTransactionLimits(actions, {
      knownKeySchemas: new Map([[this.config.outboxTableName, this.keySchema]]),
      describe: (index) => describe(index).description,
      breakdown: `${items.length} items + ${built.length} events`,
    });
    try {
      await this.client.send(new TransactWriteCommand({ TransactItems: actions }));
    } catch (error) {
      // An outbox table imported by name or ARN is not checked at synth: say so if its key schema is the cause.
      if (built.length > 0) await this.keySchemaCheck.explain(error);
      if (isTransactionCanceled(error)) throw toTransactionCancelledError(error, describe);
      throw error;
    }
  }

  private build<TData>(event: NewEvent<TData>): PreparedEvent<TData> {
    const now = this.now();
    const envelope = buildEnvelope(event, { source: this.config.eventSource, now: () => now, newId: this.newId });
    if (this.claimCheck !== undefined && needsOffload(envelope, this.claimCheck.config, this.config.maxEventBytes)) {
      const limit = inlineThreshold(this.claimCheck.config, this.config.maxEventBytes);
      throw new EventTooLargeError(
        `event '${envelope.id}' (${envelope.type}) is offloaded to S3 (its envelope is ${encodedEnvelopeBytes(envelope).toLocaleString('en-US')} bytes delivered, ` +
          `over the inline threshold of ${limit.toLocaleString('en-US')} bytes), which needs an await: use transactWrite, transactWriteOnce or prepareAsync instead of event or prepare`,
        { eventId: envelope.id, sizeBytes: encodedEnvelopeBytes(envelope), limitBytes: limit },
      );
    }
    return { envelope, action: outboxPut(envelope, this.config, now) };
  }

  /** {@link Outbox.build}, with the data offloaded to S3 first when the event does not fit inline. */
  private async buildOffloading<TData>(event: NewEvent<TData>): Promise<PreparedEvent<TData>> {
    const now = this.now();
    const built = buildEnvelope(event, { source: this.config.eventSource, now: () => now, newId: this.newId });
    const envelope = this.claimCheck === undefined ? built : await offloadIfLarge(built, this.claimCheck, this.config.maxEventBytes, now);
    return { envelope, action: outboxPut(envelope, this.config, now) };
  }
}
