/** The producer side: append events to the outbox in the same DynamoDB transaction as the business writes. */
import { randomUUID } from 'node:crypto';
import { TransactWriteCommand, type DynamoDBDocumentClient, type TransactWriteItem } from '@aws-sdk/lib-dynamodb';
import { loadProducerConfig, type ProducerConfig } from '../config';
import type { EventEnvelope } from '../envelope';
import { describeAction } from '../transaction/actions';
import { isTransactionCanceled, toTransactionCancelledError, type ActionDescription } from '../transaction/cancellation';
import { toDocumentClient, type DynamoDBClientLike } from '../transaction/document-client';
import { validateTransactionLimits, type KeySchema } from '../transaction/limits';
import { assertWritable, marshallOptionsOf } from '../transaction/writable-values';
import { buildEnvelope, type NewEvent } from './new-event';
import { outboxPut } from './outbox-item';
import { OutboxKeySchemaCheck } from './outbox-key-schema';

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
  readonly envelope: EventEnvelope<TData>;
  readonly action: TransactWriteItem;
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
    return new Outbox({ client: toDocumentClient(client), config: loadProducerConfig(), now: options.now });
  }

  private readonly client: DynamoDBDocumentClient;
  private readonly config: ProducerConfig;
  private readonly now: () => Date;
  private readonly newId: () => string;
  private readonly keySchemaCheck: OutboxKeySchemaCheck;

  public constructor(options: OutboxOptions) {
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
    const items = input.items ?? [];
    const built = input.events.map((event) => this.build(event));
    const actions = [...items, ...built.map((event) => event.action)];
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
    return built.map((event) => event.envelope);
  }

  private build<TData>(event: NewEvent<TData>): PreparedEvent<TData> {
    const now = this.now();
    const envelope = buildEnvelope(event, { source: this.config.eventSource, now: () => now, newId: this.newId });
    return { envelope, action: outboxPut(envelope, this.config, now) };
  }
}
