/**
 * Reading an aggregate item and writing its next version with ONE conditional write: the condition checks the version
 * that was read, and the written item carries the new state, the next version and the processed-message list. Used by
 * `createAggregateConsumer`.
 */
import { GetCommand, PutCommand, TransactWriteCommand, type DynamoDBDocumentClient, type TransactWriteItem, type TransactWritePut } from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall, type marshallOptions, type unmarshallOptions } from '@aws-sdk/util-dynamodb';
import { derivedEventActions, emittedEventAction, existingDerivedEvents } from '../consumer/inbox';
import { PermanentError } from '../errors';
import { withRuntimeMessage } from '../redact';
import type { PreparedEvent } from '../producer/outbox';
import {
  CONDITIONAL_CHECK_FAILED,
  cancellationReasonCodes,
  isConditionalCheckFailed,
  isTransactionCanceled,
  isTransactionConflict,
  toTransactionCancelledError,
  TRANSACTION_CONFLICT,
  type ActionDescription,
} from '../transaction/cancellation';
import type { KeySchema } from '../transaction/item-identity';
import { assertItemFits, validateTransactionLimits } from '../transaction/limits';
import { assertWritable, invalidWriteErrorOf, marshallOptionsOf } from '../transaction/writable-values';
import { isNumberValue } from '../transaction/item-size';
import { AGGREGATE_ITEM } from '../contract/wire-format';
import { formatProcessedMessage, parseProcessedMessages, type ProcessedMessage } from './processed-messages';

/** Where an aggregate lives: its table and its full primary key (partition key, and sort key if the table has one). */
export interface AggregateLocation {
  readonly tableName: string;
  readonly key: Record<string, unknown>;
}

/** An aggregate as read, split into what the runtime owns and what the handler owns. */
export interface AggregateSnapshot {
  /** Whether the item exists. */
  readonly exists: boolean;
  /** The stored version; absent when the item does not exist or was never written by this runtime. */
  readonly version?: number;
  /** The messages the aggregate remembers applying, oldest first. */
  readonly processed: readonly ProcessedMessage[];
  /**
   * The newest event time (epoch seconds) among the entries the list has dropped; absent while it has dropped none with
   * a time (or on an item written before the runtime kept it). See AGGREGATE_ITEM.EVICTED_UP_TO_ATTRIBUTE.
   */
  readonly evictedUpTo?: number;
  /** The item without its key and the runtime-owned attributes; absent when the item does not exist. */
  readonly state?: Record<string, unknown>;
  /** The subscriber the item names as its own; absent when it names none (written before the runtime marked items). */
  readonly subscriber?: string;
}

/**
 * What a write attempt came to. `contended`: another writer changed the aggregate since it was read; read again.
 * `already-emitted`: the aggregate was still as read, but the transaction failed only because events with
 * runtime-derived ids are already in the outbox (see `existingDerivedEvents`): the message was applied before, and
 * its id has since left the bounded list. Nothing was written.
 */
export type WriteOutcome =
  | { readonly kind: 'written' }
  | { readonly kind: 'contended' }
  | { readonly kind: 'already-emitted'; readonly eventIds: readonly string[] };

/** The message a write applies: whose emitted events' ids the runtime derives from. */
export interface ConsumedMessage {
  readonly subscriberName: string;
  readonly eventId: string;
}

const WRITTEN: WriteOutcome = { kind: 'written' };
const CONTENDED: WriteOutcome = { kind: 'contended' };

/** The attributes a handler may not set: the runtime owns them. */
export const RUNTIME_OWNED_ATTRIBUTES: readonly string[] = [
  AGGREGATE_ITEM.VERSION_ATTRIBUTE,
  AGGREGATE_ITEM.PROCESSED_MESSAGES_ATTRIBUTE,
  AGGREGATE_ITEM.SUBSCRIBER_ATTRIBUTE,
  AGGREGATE_ITEM.EVICTED_UP_TO_ATTRIBUTE,
];

/** Cancellation reasons of the aggregate Put that mean "someone else wrote it first". */
const CONTENDED_CODES: ReadonlySet<string> = new Set([CONDITIONAL_CHECK_FAILED, TRANSACTION_CONFLICT]);

/** Condition of the first write of an aggregate: nobody created it meanwhile. */
const ITEM_ABSENT = 'attribute_not_exists(#key)';
/** Condition on an item that exists but was never versioned (created outside this runtime): still unversioned. */
const ITEM_UNVERSIONED = 'attribute_exists(#key) AND attribute_not_exists(#version)';
/** Condition on a versioned item: still at the version that was read. */
const VERSION_UNCHANGED = '#version = :expectedVersion';

/**
 * A value DynamoDB accepts as a key attribute (a non-empty string, a finite number, a bigint, a `NumberValue`, or
 * non-empty binary). Anything else (undefined, null, NaN, '', an object) fails the same way on every retry.
 */
function isKeyValue(value: unknown): boolean {
  if (typeof value === 'string') return value !== '';
  if (typeof value === 'number') return Number.isFinite(value);
  if (typeof value === 'bigint') return true;
  if (typeof value !== 'object' || value === null) return false;
  if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) return value.byteLength > 0;
  return isNumberValue(value);
}

/** JSON for messages that never throws: bigints, NumberValues, binary, undefined and NaN are shown, not lost. */
function describeValue(value: unknown): string {
  try {
    return JSON.stringify(value, (_name, item: unknown) => {
      if (item === undefined || typeof item === 'bigint' || (typeof item === 'number' && !Number.isFinite(item))) return String(item);
      if (typeof item === 'object' && item !== null) {
        if (item instanceof ArrayBuffer || ArrayBuffer.isView(item)) return `<${item.byteLength} bytes>`;
        if (isNumberValue(item)) return item.value;
      }
      return item;
    }) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * The stored version as a number. A caller's DocumentClient with `wrapNumbers` reads it as a `NumberValue`; anything
 * that is not a whole number is returned as it is, for the caller to reject.
 */
function versionOf(stored: unknown): unknown {
  if (typeof stored === 'object' && stored !== null && isNumberValue(stored)) {
    const value = Number(stored.value);
    return Number.isSafeInteger(value) ? value : stored;
  }
  return stored;
}

/** Plain objects and arrays are copied without their `undefined` members (what `removeUndefinedValues` does). */
function withoutUndefined<T>(value: T): T {
  if (Array.isArray(value)) return value.filter((element) => element !== undefined).map((element) => withoutUndefined(element)) as T;
  if (typeof value !== 'object' || value === null) return value;
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return value; // a Set, binary, NumberValue or class instance
  const copy: Record<string, unknown> = {};
  for (const [name, element] of Object.entries(value)) if (element !== undefined) copy[name] = withoutUndefined(element);
  return copy as T;
}

/** Throws PermanentError when `locate` returned something that cannot name an item. */
export function assertLocation(location: AggregateLocation, eventId: string): void {
  const valid =
    typeof location === 'object' &&
    location !== null &&
    typeof location.tableName === 'string' &&
    location.tableName !== '' &&
    typeof location.key === 'object' &&
    location.key !== null &&
    Object.keys(location.key).length > 0 &&
    Object.values(location.key).every(isKeyValue);
  if (!valid) {
    throw new PermanentError(
      `locate returned no usable aggregate location for event '${eventId}': it needs a tableName and a non-empty key whose values are non-empty strings, ` +
        `numbers or binary, but returned ${describeValue(location)}`,
    );
  }
}

/** Options of {@link AggregateStore}. */
export interface AggregateStoreOptions {
  readonly client: DynamoDBDocumentClient;
  /** Key schemas of other tables a write touches (the outbox), for the one-action-per-item check. @default none */
  readonly knownKeySchemas?: ReadonlyMap<string, KeySchema>;
}

/** Reads aggregates and writes their next version conditionally. */
export class AggregateStore {
  public constructor(private readonly options: AggregateStoreOptions) {}

  /** A strongly consistent read of the aggregate: the version the write will be conditioned on must be the latest. */
  public async read(location: AggregateLocation): Promise<AggregateSnapshot> {
    const { Item: item } = await this.options.client.send(new GetCommand({ TableName: location.tableName, Key: location.key, ConsistentRead: true }));
    return this.snapshotOf(location, item);
  }

  /**
   * The aggregate as a read right after `put` succeeded would return it, without the read: the written item taken
   * through the client's own marshalling and unmarshalling (so `apply` sees the same types and a copy of its own, as
   * from a read). The next message of the batch to the same aggregate starts from it; its write's version condition
   * still decides, so if another writer changed the aggregate meanwhile, that write fails and the aggregate is read.
   */
  public snapshotAfter(location: AggregateLocation, put: TransactWritePut): AggregateSnapshot {
    const translateConfig = (this.options.client.config as { translateConfig?: { marshallOptions?: marshallOptions; unmarshallOptions?: unmarshallOptions } }).translateConfig;
    // the DocumentClient's options are for its commands' top-level containers; here the item is the top level
    const item = marshall(put.Item ?? {}, { ...translateConfig?.marshallOptions, convertTopLevelContainer: false });
    const stored = unmarshall(item, { ...translateConfig?.unmarshallOptions, convertWithoutMapWrapper: false });
    return this.snapshotOf(location, stored);
  }

  private snapshotOf(location: AggregateLocation, item: Record<string, unknown> | undefined): AggregateSnapshot {
    if (item === undefined) return { exists: false, processed: [] };
    const storedVersion = versionOf(item[AGGREGATE_ITEM.VERSION_ATTRIBUTE]);
    if (storedVersion !== undefined && (typeof storedVersion !== 'number' || !Number.isSafeInteger(storedVersion))) {
      throw new PermanentError(
        `aggregate ${describeLocation(location)} has a ${AGGREGATE_ITEM.VERSION_ATTRIBUTE} that is not a whole number (${describeValue(storedVersion)}); the runtime owns that attribute`,
      );
    }
    const state: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(item)) {
      if (Object.hasOwn(location.key, name) || RUNTIME_OWNED_ATTRIBUTES.includes(name)) continue;
      state[name] = value;
    }
    const subscriber = item[AGGREGATE_ITEM.SUBSCRIBER_ATTRIBUTE];
    // a value that is not a whole number (a hand-edited item) is taken as absent: the oldest remembered entry decides then
    const evictedUpTo = versionOf(item[AGGREGATE_ITEM.EVICTED_UP_TO_ATTRIBUTE]);
    return {
      exists: true,
      ...(storedVersion === undefined ? {} : { version: storedVersion }),
      processed: parseProcessedMessages(item[AGGREGATE_ITEM.PROCESSED_MESSAGES_ATTRIBUTE]),
      ...(typeof evictedUpTo === 'number' && Number.isSafeInteger(evictedUpTo) ? { evictedUpTo } : {}),
      state,
      ...(subscriber === undefined ? {} : { subscriber: typeof subscriber === 'string' ? subscriber : describeValue(subscriber) }),
    };
  }

  /**
   * The conditional Put of the aggregate's next version: `state` plus the key, the version after `read.version`, the
   * processed list, the newest event time the list has dropped (`evictedUpTo`, when known) and `subscriberName` (the
   * item's owner). Its condition holds only if the item is still as it was read.
   */
  public nextVersionPut(
    location: AggregateLocation,
    read: AggregateSnapshot,
    state: Readonly<Record<string, unknown>>,
    processed: readonly ProcessedMessage[],
    evictedUpTo: number | undefined,
    subscriberName: string,
  ): TransactWritePut {
    const keyName = Object.keys(location.key)[0] as string;
    const nextVersion = (read.version ?? 0) + 1;
    // undefined attributes are dropped here, not by the client: a caller's client may not be set to remove them
    const item = withoutUndefined({
      ...state,
      ...location.key,
      [AGGREGATE_ITEM.VERSION_ATTRIBUTE]: nextVersion,
      [AGGREGATE_ITEM.PROCESSED_MESSAGES_ATTRIBUTE]: processed.map(formatProcessedMessage),
      [AGGREGATE_ITEM.SUBSCRIBER_ATTRIBUTE]: subscriberName,
      [AGGREGATE_ITEM.EVICTED_UP_TO_ATTRIBUTE]: evictedUpTo,
    });
    if (!read.exists) {
      return { TableName: location.tableName, Item: item, ConditionExpression: ITEM_ABSENT, ExpressionAttributeNames: { '#key': keyName } };
    }
    if (read.version === undefined) {
      return {
        TableName: location.tableName,
        Item: item,
        ConditionExpression: ITEM_UNVERSIONED,
        ExpressionAttributeNames: { '#key': keyName, '#version': AGGREGATE_ITEM.VERSION_ATTRIBUTE },
      };
    }
    return {
      TableName: location.tableName,
      Item: item,
      ConditionExpression: VERSION_UNCHANGED,
      ExpressionAttributeNames: { '#version': AGGREGATE_ITEM.VERSION_ATTRIBUTE },
      ExpressionAttributeValues: { ':expectedVersion': read.version },
    };
  }

  /**
   * Sends the aggregate Put alone (one PutItem) or, with events, in one TransactWriteItems with their outbox Puts.
   *
   * @throws TransactionLimitError before sending, when the item or the transaction breaks a DynamoDB limit
   * @throws TransactionCancelledError when the transaction is cancelled for another reason than contention on the
   *   aggregate or derived events already in the outbox (a handler-chosen event id already taken, throttling, ...)
   */
  public async write(location: AggregateLocation, put: TransactWritePut, events: readonly PreparedEvent[], consumed: ConsumedMessage): Promise<WriteOutcome> {
    const description = `aggregate ${describeLocation(location)}`;
    const marshallOptions = marshallOptionsOf(this.options.client);
    if (events.length === 0) {
      assertWritable([{ Put: put }], () => description, marshallOptions);
      assertItemFits(put.Item ?? {}, description);
      try {
        await this.options.client.send(new PutCommand(put));
        return WRITTEN;
      } catch (error) {
        if (isConditionalCheckFailed(error) || isTransactionConflict(error)) return CONTENDED;
        throw invalidWriteErrorOf(error, () => description) ?? error;
      }
    }
    const actions: TransactWriteItem[] = [{ Put: put }, ...events.map((event) => event.action)];
    const describe = (index: number): ActionDescription => {
      const event = events[index - 1];
      if (index === 0 || event === undefined) return { kind: 'item', description };
      return emittedEventAction(event);
    };
    // values must be writable before their sizes can be measured
    assertWritable(actions, (index) => describe(index).description, marshallOptions);
    validateTransactionLimits(actions, {
      knownKeySchemas: this.options.knownKeySchemas,
      describe: (index) => describe(index).description,
      breakdown: `1 aggregate write + ${events.length} emitted events`,
    });
    try {
      await this.options.client.send(new TransactWriteCommand({ TransactItems: actions }));
      return WRITTEN;
    } catch (error) {
      if (!isTransactionCanceled(error)) throw invalidWriteErrorOf(error, (index) => describe(index).description) ?? error;
      const codes = cancellationReasonCodes(error);
      if (CONTENDED_CODES.has(codes[0] ?? '')) return CONTENDED;
      const existing = existingDerivedEvents(codes, derivedEventActions(events, 1, consumed.subscriberName, consumed.eventId));
      if (existing !== undefined) return { kind: 'already-emitted', eventIds: existing };
      throw invalidWriteErrorOf(error, (index) => describe(index).description) ?? toTransactionCancelledError(error, describe);
    }
  }
}

/**
 * Throws PermanentError when the aggregate names another subscriber as its owner: its list holds that subscriber's
 * ids, so this one would drop an event the other applied as a duplicate (a lost event), and each would count the
 * other's applications. An item naming none (written before the runtime marked items) is taken.
 */
export function assertOwnAggregate(location: AggregateLocation, read: AggregateSnapshot, subscriberName: string, eventId: string): void {
  if (read.subscriber === undefined || read.subscriber === subscriberName) return;
  throw withRuntimeMessage(new PermanentError(
    // no key values (they may come from the payload): the table, the subscribers and the event id
    `the aggregate item locate names for event '${eventId}' in table '${location.tableName}' is subscriber '${read.subscriber}'s (its ${AGGREGATE_ITEM.SUBSCRIBER_ATTRIBUTE}), not '${subscriberName}'s: ` +
      "two subscribers cannot share an aggregate item (each would take the other's applied ids for its own); the event is not applied. " +
      "Give each subscriber's locate its own keys (e.g. a prefix naming the subscriber)",
  ));
}

/** `'<table>' <key JSON>`, for messages. */
export function describeLocation(location: AggregateLocation): string {
  return `'${location.tableName}' ${describeValue(location.key)}`;
}
