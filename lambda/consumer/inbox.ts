/** The consumer's inbox: one record per processed event id, written in the same transaction as the handler's writes. */
import { randomUUID } from 'node:crypto';
import {
  PutCommand,
  TransactWriteCommand,
  type DynamoDBDocumentClient,
  type TransactWriteItem,
  type TransactWritePut,
} from '@aws-sdk/lib-dynamodb';
import type { EventEnvelope } from '../envelope';
import { MessageBlockedError, PayloadMismatchError, PermanentError } from '../errors';
import { derivedEventId } from '../fingerprint';
import type { PreparedEvent } from '../producer/outbox';
import { describeAction } from '../transaction/actions';
import {
  CONDITIONAL_CHECK_FAILED,
  NO_FAILURE,
  cancellationItem,
  cancellationReasonCodes,
  conditionalCheckItem,
  isConditionalCheckFailed,
  isTransactionCanceled,
  storedString,
  toTransactionCancelledError,
  type ActionDescription,
} from '../transaction/cancellation';
import { MAX_PARTITION_KEY_BYTES, utf8Bytes } from '../transaction/item-size';
import { actionItemIdentity, keySchemasOf, type KeySchema } from '../transaction/item-identity';
import { assertItemFits, limitErrorOf, validateTransactionLimits } from '../transaction/limits';
import { assertWritable, invalidWriteErrorOf, marshallOptionsOf } from '../transaction/writable-values';
import type { ItemLocks } from './item-locks';
import { INBOX_ITEM, PROCESSING_RECORD, RECORD_STATUS, recordKey, TABLE_SCHEMA } from '../contract/wire-format';
import { withRuntimeMessage } from '../redact';

/** Condition part: no record for this subscriber and event id. */
const RECORD_ABSENT = 'attribute_not_exists(#pk)';
/**
 * Condition part: a record exists but its deduplication window is over. TTL deletes expired items in the background,
 * "typically within a few days", and until then they still appear in reads and can be written; AWS says to filter
 * them out by comparing the TTL attribute with the current time
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ttl-expired-items.html). So an expired record
 * counts as absent here, whether or not TTL has deleted it yet.
 */
const RECORD_EXPIRED = '#expiresAt < :nowEpochSeconds';
/** The inbox Put's condition: it succeeds unless a live record shows the event was already processed. */
const RECORD_CLAIMABLE = `${RECORD_ABSENT} OR ${RECORD_EXPIRED}`;

/**
 * The condition of a Put that claims a message's key as of `now`: the inbox record's, and the processing record's of
 * lease and multi-step modes, which shares its key and TTL. It succeeds unless a live record exists.
 */
export function claimCondition(now: Date): Pick<TransactWritePut, 'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'> {
  return {
    ConditionExpression: RECORD_CLAIMABLE,
    ExpressionAttributeNames: { '#pk': TABLE_SCHEMA.PARTITION_KEY, '#expiresAt': TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE },
    ExpressionAttributeValues: { ':nowEpochSeconds': Math.floor(now.getTime() / 1000) },
  };
}

/**
 * Throws {@link PermanentError} when `key`, the inbox (or processing record) key of `eventId`, is longer than DynamoDB
 * allows for a partition key value: every write of it (and the read after it) would be refused, so no retry can help.
 */
export function assertInboxKeyFits(subscriberName: string, eventId: string, key: string): void {
  const keyBytes = utf8Bytes(key);
  if (keyBytes > MAX_PARTITION_KEY_BYTES) {
    throw withRuntimeMessage(new PermanentError(
      `event id of ${eventId.length} characters is too long for the inbox: its key '${subscriberName}#<id>' is ${keyBytes} bytes, but DynamoDB allows at most ${MAX_PARTITION_KEY_BYTES} bytes for a partition key value`,
    ));
  }
}

/**
 * The emitted events of a transaction whose ids the runtime derived (the handler gave none), by action index: the
 * `position`-th event emitted for `consumedEventId` sits at action `firstActionIndex + position`, and its id was derived
 * when it is `derivedEventId(subscriberName, consumedEventId, position)` (see emittedEventPreparer).
 */
export function derivedEventActions(
  events: readonly PreparedEvent[],
  firstActionIndex: number,
  subscriberName: string,
  consumedEventId: string,
): ReadonlyMap<number, string> {
  const derived = new Map<number, string>();
  events.forEach((event, position) => {
    if (event.envelope.id === derivedEventId(subscriberName, consumedEventId, position)) derived.set(firstActionIndex + position, event.envelope.id);
  });
  return derived;
}

/**
 * The ids of the derived events already in the outbox, when a cancelled transaction failed ONLY because outbox Puts of
 * events with runtime-derived ids found their id taken (`ConditionalCheckFailed`); otherwise undefined. A derived id is
 * unique to the subscriber, the consumed event and the event's position, so one already in the outbox proves that this
 * subscriber already processed the consumed event: the message is a duplicate, even when its own record of that (the
 * inbox record, the aggregate's bounded list) is gone. Any other failure (another action's condition, a conflict,
 * throttling, a taken id the handler chose) leaves the transaction an error, as it was.
 */
export function existingDerivedEvents(codes: readonly string[], derived: ReadonlyMap<number, string>): string[] | undefined {
  const ids: string[] = [];
  for (const [index, code] of codes.entries()) {
    if (code === NO_FAILURE) continue;
    const id = derived.get(index);
    if (code !== CONDITIONAL_CHECK_FAILED || id === undefined) return undefined;
    ids.push(id);
  }
  return ids.length > 0 ? ids : undefined;
}

/**
 * `emitted event 'a', whose id this subscriber derived from this event, is already in the outbox` (`emitted events
 * 'a', 'b', ... are`), for the messages of a redelivery recognised by {@link existingDerivedEvents}.
 */
export function derivedEventsInOutbox(ids: readonly string[]): string {
  return (
    `emitted event${ids.length === 1 ? '' : 's'} ${ids.map((id) => `'${id}'`).join(', ')}, ` +
    `whose id this subscriber derived from this event, ${ids.length === 1 ? 'is' : 'are'} already in the outbox`
  );
}

/** How an emitted event's outbox Put is named in a transaction's error messages. */
export function emittedEventAction(event: PreparedEvent): ActionDescription {
  const { id, type } = event.envelope;
  return { kind: 'event', eventId: id, description: `emitted event '${id}' (${type})` };
}

/** What committing an event did. */
export type CommitOutcome = 'processed' | 'duplicate';

/** The result of {@link Inbox.commit}. */
export interface CommitResult {
  readonly outcome: CommitOutcome;
  /**
   * On a duplicate whose payload could not be compared, why: the live record carries no fingerprint (it was written
   * before fingerprints existed), DynamoDB did not return the record, or there was no live record but an event this
   * subscriber emitted for the message (derived id) is already in the outbox. It is treated as a duplicate; the caller
   * should log a warning with this reason.
   */
  readonly unverifiedPayload?: string;
}

/** Options of {@link Inbox}. */
export interface InboxOptions {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly subscriberName: string;
  /** How long a record keeps an event id deduplicated, in seconds. */
  readonly deduplicationWindowSeconds: number;
  readonly now: () => Date;
  /** Key schemas of other tables the commits write (the outbox), for the one-action-per-item check. @default none */
  readonly knownKeySchemas?: ReadonlyMap<string, KeySchema>;
  /** A new token per commit, unique to it (see `INBOX_ITEM.LAST_WRITE_ATTRIBUTE`). @default `randomUUID` */
  readonly newWriteToken?: () => string;
}

/**
 * Records processed event ids per subscriber, so a redelivered event is recognised and not applied again. Each record
 * keeps the payload fingerprint of the event, so a reused id with a different payload is told apart from a redelivery.
 *
 * The inbox Put asks for the live record on a failed condition (`ReturnValuesOnConditionCheckFailure: 'ALL_OLD'`), so
 * the duplicate path reads the stored fingerprint from the failed write itself: no GetItem, no extra request.
 */
export class Inbox {
  /** The key schemas of the tables a commit writes (the inbox and the known others), built once. */
  private readonly keySchemas: ReadonlyMap<string, KeySchema>;
  /**
   * Key attribute names by table: the known schemas and those learnt from the `Key` of any action committed so far (a
   * table's key never changes), so a staged Put's item can be told apart for the item locks.
   */
  private readonly keyNamesByTable = new Map<string, string[]>();

  private readonly options: InboxOptions & { readonly newWriteToken: () => string };

  public constructor(options: InboxOptions) {
    this.options = { ...options, newWriteToken: options.newWriteToken ?? randomUUID };
    this.keySchemas = new Map([...(options.knownKeySchemas ?? []), [options.tableName, { partitionKey: TABLE_SCHEMA.PARTITION_KEY }]]);
  }

  /**
   * A new write token (see `INBOX_ITEM.LAST_WRITE_ATTRIBUTE`). Pass one token to every {@link Inbox.commit} of one
   * delivery, so a commit that landed but was not seen (its response lost) is recognised by the next attempt as this
   * delivery's own.
   */
  public newWriteToken(): string {
    return this.options.newWriteToken();
  }

  /** The inbox partition key value of an event: `<subscriber>#<eventId>`. */
  public key(eventId: string): string {
    return recordKey(this.options.subscriberName, eventId);
  }

  /**
   * The conditional Put of the inbox record of `envelope`, as of `now`, carrying the payload `fingerprint` and the
   * commit's `writeToken` (see `INBOX_ITEM.LAST_WRITE_ATTRIBUTE`).
   */
  public recordPut(envelope: EventEnvelope, now: Date, fingerprint: string, writeToken: string, recordAttributes: Readonly<Record<string, string | number>> = {}): TransactWritePut {
    const expiresAtEpochSeconds = Math.floor(now.getTime() / 1000) + this.options.deduplicationWindowSeconds;
    return {
      TableName: this.options.tableName,
      Item: {
        [TABLE_SCHEMA.PARTITION_KEY]: this.key(envelope.id),
        [INBOX_ITEM.EVENT_ID_ATTRIBUTE]: envelope.id,
        [INBOX_ITEM.EVENT_TYPE_ATTRIBUTE]: envelope.type,
        [INBOX_ITEM.SUBSCRIBER_ATTRIBUTE]: this.options.subscriberName,
        [INBOX_ITEM.PROCESSED_AT_ATTRIBUTE]: now.toISOString(),
        [INBOX_ITEM.FINGERPRINT_ATTRIBUTE]: fingerprint,
        [INBOX_ITEM.LAST_WRITE_ATTRIBUTE]: writeToken,
        [TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE]: expiresAtEpochSeconds,
        ...recordAttributes,
      },
      ...claimCondition(now),
      // the live record comes back with the failed condition: the duplicate path compares fingerprints without a read
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    };
  }

  /**
   * Commits the staged writes, the emitted events' outbox items and the inbox record in one TransactWriteItems call
   * (or, with nothing staged or emitted, one conditional PutItem). Returns `duplicate` when a live inbox record with
   * the same payload fingerprint (or a COMPLETED processing record of lease or multi-step mode) already exists, or when
   * the only failures are outbox Puts of events with runtime-derived ids that are already in the outbox (the inbox
   * record expired, but those events prove the message was processed; see {@link existingDerivedEvents}); nothing is
   * applied then.
   *
   * @throws PayloadMismatchError when a live record holds a different payload fingerprint (the id was reused)
   * @throws MessageBlockedError when the live record is a processing record of lease or multi-step mode that is not
   *   COMPLETED: the subscriber's processing mode changed while the message was in flight, and an operator decides
   * @throws TransactionLimitError before sending, when the transaction breaks a DynamoDB limit, or when DynamoDB refuses
   *   it for a limit only DynamoDB can check (two Puts of one item in a table of unknown key schema, an Update that grows
   *   an item past 400 KB)
   * @throws InvalidWriteError when a staged value cannot be marshalled (before sending), or DynamoDB refuses the write
   *   as invalid whatever the items hold (`ValidationException`)
   * @throws ItemStateValidationError when DynamoDB refuses the write as invalid in an item's current state (a map it
   *   sets a path in does not exist yet): retried, as another event may change that state
   * @throws TransactionCancelledError when DynamoDB cancels it for another reason (business condition, conflict, throttling)
   *
   * `writeToken` marks the inbox record as this commit's (one token for all attempts of one delivery, see
   * {@link Inbox.newWriteToken}): a live record carrying it was written by this delivery, so the outcome is `processed`.
   *
   * With `itemLocks`, the transaction is sent only once no other commit of the batch holding one of its items is
   * under way (see item-locks.ts); a staged Put counts when its table's key is known (the outbox, the inbox, or a table
   * another action named by `Key`).
   */
  public async commit(
    envelope: EventEnvelope,
    staged: readonly TransactWriteItem[],
    fingerprint: string,
    events: readonly PreparedEvent[] = [],
    itemLocks?: ItemLocks,
    writeToken: string = this.newWriteToken(),
    /** More attributes of the inbox record (the ordered consumer's aggregate and sequence, review r38 R38-5). */
    recordAttributes: Readonly<Record<string, string | number>> = {},
  ): Promise<CommitResult> {
    // an id too long for the inbox key could never be recorded: dead-letter it rather than retry it
    assertInboxKeyFits(this.options.subscriberName, envelope.id, this.key(envelope.id));
    const record = this.recordPut(envelope, this.options.now(), fingerprint, writeToken, recordAttributes);
    if (staged.length === 0 && events.length === 0) return this.putAlone(envelope, record, fingerprint, writeToken);
    const actions: TransactWriteItem[] = [...staged, ...events.map((event) => event.action), { Put: record }];
    const inboxIndex = actions.length - 1;
    const describe = (index: number): ActionDescription => {
      if (index === inboxIndex) return { kind: 'inbox', eventId: envelope.id, description: `inbox record '${this.key(envelope.id)}'` };
      const event = events[index - staged.length];
      if (event !== undefined) return emittedEventAction(event);
      return { kind: 'item', description: `staged ${describeAction(actions[index] as TransactWriteItem)}` };
    };
    const derived = derivedEventActions(events, staged.length, this.options.subscriberName, envelope.id);
    // values must be writable before their sizes can be measured; the inbox record, last, is strings and a number
    assertWritable(actions.slice(0, inboxIndex), (index) => describe(index).description, marshallOptionsOf(this.options.client));
    validateTransactionLimits(actions, {
      knownKeySchemas: this.keySchemas,
      describe: (index) => describe(index).description,
      breakdown: `${staged.length} staged writes + ${events.length} emitted events + 1 inbox record`,
    });
    const lease = itemLocks === undefined ? undefined : await itemLocks.acquire(this.itemIdentities(actions));
    try {
      await this.options.client.send(new TransactWriteCommand({ TransactItems: actions }));
      return { outcome: 'processed' };
    } catch (error) {
      if (isTransactionCanceled(error)) {
        const codes = cancellationReasonCodes(error);
        // a live inbox record wins over any other reason: the event's effects are already applied
        if (codes[inboxIndex] === CONDITIONAL_CHECK_FAILED) {
          const stored = cancellationItem(error, inboxIndex);
          // this delivery's own earlier attempt committed (its response was lost): applied once, by this delivery
          if (stored !== undefined && storedString(stored, INBOX_ITEM.LAST_WRITE_ATTRIBUTE) === writeToken) return { outcome: 'processed' };
          return this.duplicate(envelope, stored, fingerprint);
        }
        const existing = existingDerivedEvents(codes, derived);
        if (existing !== undefined) {
          return {
            outcome: 'duplicate',
            unverifiedPayload:
              `the inbox record of this event has expired or was deleted (its deduplication window is over), but ${derivedEventsInOutbox(existing)}: ` +
              'this subscriber already processed it; its payload could not be compared',
          };
        }
      }
      // a limit only DynamoDB could check fails the same way on every retry: dead-letter it now, with the reason
      const limitError = limitErrorOf(error, (index) => describe(index).description);
      if (limitError !== undefined) throw limitError;
      // so is a write DynamoDB refuses as invalid (a low-level attribute value where a plain one belongs, ...)
      const invalidError = invalidWriteErrorOf(error, (index) => describe(index).description);
      if (invalidError !== undefined) throw invalidError;
      if (isTransactionCanceled(error)) throw toTransactionCancelledError(error, describe);
      throw error;
    } finally {
      lease?.release();
    }
  }

  /** The items `actions` write or check, where they can be told (see `actionItemIdentity`). */
  private itemIdentities(actions: readonly TransactWriteItem[]): string[] {
    keySchemasOf(actions, this.keySchemas, this.keyNamesByTable);
    return actions.flatMap((action) => actionItemIdentity(action, this.keyNamesByTable) ?? []);
  }

  /**
   * The record alone, in one PutItem. PutItem has no idempotency token (TransactWriteItems has, and the SDK reuses it
   * on retries): when the first attempt's response is lost and the SDK retries, the retry fails the condition on the
   * record the first attempt wrote. The write token tells that record apart from an earlier delivery's.
   */
  private async putAlone(envelope: EventEnvelope, record: TransactWritePut, fingerprint: string, writeToken: string): Promise<CommitResult> {
    assertItemFits(record.Item ?? {}, `inbox record '${this.key(envelope.id)}'`);
    try {
      await this.options.client.send(new PutCommand(record));
      return { outcome: 'processed' };
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      const stored = conditionalCheckItem(error);
      if (stored !== undefined && storedString(stored, INBOX_ITEM.LAST_WRITE_ATTRIBUTE) === writeToken) return { outcome: 'processed' };
      return this.duplicate(envelope, stored, fingerprint);
    }
  }

  /**
   * A live record exists: a redelivery when its fingerprint matches (or it has none), else a reused id. A processing
   * record of lease or multi-step mode under the same key counts only when it is COMPLETED.
   */
  private duplicate(envelope: EventEnvelope, stored: Readonly<Record<string, unknown>> | undefined, fingerprint: string): CommitResult {
    if (stored === undefined) return { outcome: 'duplicate', unverifiedPayload: 'DynamoDB did not return the live inbox record' };
    const storedFingerprint = storedString(stored, INBOX_ITEM.FINGERPRINT_ATTRIBUTE);
    if (storedFingerprint !== undefined && storedFingerprint !== fingerprint) {
      throw new PayloadMismatchError({ eventId: envelope.id, storedFingerprint, receivedFingerprint: fingerprint, subscriber: this.options.subscriberName });
    }
    this.assertNotInFlight(envelope, stored);
    if (storedFingerprint === undefined) return { outcome: 'duplicate', unverifiedPayload: 'the live inbox record has no payload fingerprint' };
    return { outcome: 'duplicate' };
  }

  /**
   * The subscriber ran in lease or multi-step mode when the message was first delivered, and was switched to this mode
   * while the message was in flight: the live item is that mode's processing record, IN_PROGRESS (a worker may still be
   * running it, or it waits for a retry) or BLOCKED (a step's outcome is unknown). Its effects may be partly applied,
   * so it is neither a duplicate nor safe to process here: the message is blocked for an operator.
   */
  private assertNotInFlight(envelope: EventEnvelope, stored: Readonly<Record<string, unknown>>): void {
    if (storedString(stored, PROCESSING_RECORD.RECORD_TYPE_ATTRIBUTE) !== PROCESSING_RECORD.RECORD_TYPE_VALUE) return;
    const status = storedString(stored, PROCESSING_RECORD.STATUS_ATTRIBUTE);
    if (status === RECORD_STATUS.COMPLETED) return;
    const mode = storedString(stored, PROCESSING_RECORD.MODE_ATTRIBUTE) ?? 'lease or multi-step';
    const step = storedString(stored, PROCESSING_RECORD.ACTIVE_STEP_ATTRIBUTE);
    const { tableName, subscriberName } = this.options;
    throw new MessageBlockedError(
      `event '${envelope.id}' is ${status ?? 'in an unknown state'} under ${mode} processing (its processing record '${this.key(envelope.id)}' in table '${tableName}'` +
        `${step === undefined ? '' : `, step '${step}'`}): subscriber '${subscriberName}' is now transactional, its processing mode changed while it was in flight, ` +
        'so its effects may be partly applied and it is not acknowledged as a duplicate. An operator must resolve it ' +
        `(\`npx idempotent-event-flow blocked show --table ${tableName} --subscriber ${subscriberName} --event-id ${envelope.id}\` shows the record, ` +
        '`blocked resolve` settles a BLOCKED step) ' +
        'before redriving it from the dead-letter queue; once its record is COMPLETED, a redelivery is acknowledged as a duplicate',
      { eventId: envelope.id, step: step ?? '(none)' },
    );
  }
}
