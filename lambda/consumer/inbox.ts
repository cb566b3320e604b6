/** The consumer's inbox: one record per processed event id, written in the same transaction as the handler's writes. */
import {
  PutCommand,
  TransactWriteCommand,
  type DynamoDBDocumentClient,
  type TransactWriteItem,
  type TransactWritePut,
} from '@aws-sdk/lib-dynamodb';
import type { EventEnvelope } from '../envelope';
import { PayloadMismatchError, PermanentError } from '../errors';
import type { PreparedEvent } from '../producer/outbox';
import { describeAction } from '../transaction/actions';
import {
  CONDITIONAL_CHECK_FAILED,
  cancellationItem,
  cancellationReasonCodes,
  conditionalCheckItem,
  isConditionalCheckFailed,
  isTransactionCanceled,
  storedString,
  toTransactionCancelledError,
  type ActionDescription,
} from '../transaction/cancellation';
import { assertItemFits, limitErrorOf, validateTransactionLimits, type KeySchema } from '../transaction/limits';
import { INBOX_ITEM, TABLE_SCHEMA } from '../wire-format';

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

/** DynamoDB's limit on a partition key value, in bytes. */
const MAX_PARTITION_KEY_BYTES = 2048;

/** What committing an event did. */
export type CommitOutcome = 'processed' | 'duplicate';

/** The result of {@link Inbox.commit}. */
export interface CommitResult {
  readonly outcome: CommitOutcome;
  /**
   * On a duplicate whose payload could not be compared, why: the live record carries no fingerprint (it was written
   * before fingerprints existed), or DynamoDB did not return the record. It is treated as a duplicate; the caller
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
}

/**
 * Records processed event ids per subscriber, so a redelivered event is recognised and not applied again. Each record
 * keeps the payload fingerprint of the event, so a reused id with a different payload is told apart from a redelivery.
 *
 * The inbox Put asks for the live record on a failed condition (`ReturnValuesOnConditionCheckFailure: 'ALL_OLD'`), so
 * the duplicate path reads the stored fingerprint from the failed write itself: no GetItem, no extra request.
 */
export class Inbox {
  public constructor(private readonly options: InboxOptions) {}

  /** The inbox partition key value of an event: `<subscriber>#<eventId>`. */
  public key(eventId: string): string {
    return `${this.options.subscriberName}${INBOX_ITEM.KEY_SEPARATOR}${eventId}`;
  }

  /** The conditional Put of the inbox record of `envelope`, as of `now`, carrying the payload `fingerprint`. */
  public recordPut(envelope: EventEnvelope, now: Date, fingerprint: string): TransactWritePut {
    const nowEpochSeconds = Math.floor(now.getTime() / 1000);
    const expiresAtEpochSeconds = nowEpochSeconds + this.options.deduplicationWindowSeconds;
    return {
      TableName: this.options.tableName,
      Item: {
        [TABLE_SCHEMA.PARTITION_KEY]: this.key(envelope.id),
        [INBOX_ITEM.EVENT_ID_ATTRIBUTE]: envelope.id,
        [INBOX_ITEM.EVENT_TYPE_ATTRIBUTE]: envelope.type,
        [INBOX_ITEM.SUBSCRIBER_ATTRIBUTE]: this.options.subscriberName,
        [INBOX_ITEM.PROCESSED_AT_ATTRIBUTE]: now.toISOString(),
        [INBOX_ITEM.FINGERPRINT_ATTRIBUTE]: fingerprint,
        [TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE]: expiresAtEpochSeconds,
      },
      ConditionExpression: RECORD_CLAIMABLE,
      ExpressionAttributeNames: { '#pk': TABLE_SCHEMA.PARTITION_KEY, '#expiresAt': TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE },
      ExpressionAttributeValues: { ':nowEpochSeconds': nowEpochSeconds },
      // the live record comes back with the failed condition: the duplicate path compares fingerprints without a read
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    };
  }

  /**
   * Commits the staged writes, the emitted events' outbox items and the inbox record in one TransactWriteItems call
   * (or, with nothing staged or emitted, one conditional PutItem). Returns `duplicate` when a live inbox record with
   * the same payload fingerprint already exists; nothing is applied then.
   *
   * @throws PayloadMismatchError when a live record holds a different payload fingerprint (the id was reused)
   * @throws TransactionLimitError before sending, when the transaction breaks a DynamoDB limit, or when DynamoDB refuses
   *   it for a limit only DynamoDB can check (two Puts of one item in a table of unknown key schema, an Update that grows
   *   an item past 400 KB)
   * @throws TransactionCancelledError when DynamoDB cancels it for another reason (business condition, conflict, throttling)
   */
  public async commit(
    envelope: EventEnvelope,
    staged: readonly TransactWriteItem[],
    fingerprint: string,
    events: readonly PreparedEvent[] = [],
  ): Promise<CommitResult> {
    this.assertKeyFits(envelope.id);
    const record = this.recordPut(envelope, this.options.now(), fingerprint);
    if (staged.length === 0 && events.length === 0) return this.putAlone(envelope, record, fingerprint);
    const actions: TransactWriteItem[] = [...staged, ...events.map((event) => event.action), { Put: record }];
    const inboxIndex = actions.length - 1;
    const describe = (index: number): ActionDescription => {
      if (index === inboxIndex) return { kind: 'inbox', eventId: envelope.id, description: `inbox record '${this.key(envelope.id)}'` };
      const event = events[index - staged.length];
      if (event !== undefined) {
        const { id, type } = event.envelope;
        return { kind: 'event', eventId: id, description: `emitted event '${id}' (${type})` };
      }
      return { kind: 'item', description: `staged ${describeAction(actions[index] as TransactWriteItem)}` };
    };
    validateTransactionLimits(actions, {
      knownKeySchemas: new Map([...(this.options.knownKeySchemas ?? []), [this.options.tableName, { partitionKey: TABLE_SCHEMA.PARTITION_KEY }]]),
      describe: (index) => describe(index).description,
      breakdown: `${staged.length} staged writes + ${events.length} emitted events + 1 inbox record`,
    });
    try {
      await this.options.client.send(new TransactWriteCommand({ TransactItems: actions }));
      return { outcome: 'processed' };
    } catch (error) {
      // a live inbox record wins over any other reason: the event's effects are already applied
      if (isTransactionCanceled(error) && cancellationReasonCodes(error)[inboxIndex] === CONDITIONAL_CHECK_FAILED) {
        return this.duplicate(envelope, cancellationItem(error, inboxIndex), fingerprint);
      }
      // a limit only DynamoDB could check fails the same way on every retry: dead-letter it now, with the reason
      const limitError = limitErrorOf(error, (index) => describe(index).description);
      if (limitError !== undefined) throw limitError;
      if (isTransactionCanceled(error)) throw toTransactionCancelledError(error, describe);
      throw error;
    }
  }

  /** An id too long for the inbox key could never be recorded: dead-letter it rather than retry it. */
  private assertKeyFits(eventId: string): void {
    const keyBytes = Buffer.byteLength(this.key(eventId), 'utf8');
    if (keyBytes > MAX_PARTITION_KEY_BYTES) {
      throw new PermanentError(
        `event id of ${eventId.length} characters is too long for the inbox: its key '${this.options.subscriberName}#<id>' is ${keyBytes} bytes, but DynamoDB allows at most ${MAX_PARTITION_KEY_BYTES} bytes for a partition key value`,
      );
    }
  }

  private async putAlone(envelope: EventEnvelope, record: TransactWritePut, fingerprint: string): Promise<CommitResult> {
    assertItemFits(record.Item ?? {}, `inbox record '${this.key(envelope.id)}'`);
    try {
      await this.options.client.send(new PutCommand(record));
      return { outcome: 'processed' };
    } catch (error) {
      if (isConditionalCheckFailed(error)) return this.duplicate(envelope, conditionalCheckItem(error), fingerprint);
      throw error;
    }
  }

  /** A live record exists: a redelivery when its fingerprint matches (or it has none), else a reused id. */
  private duplicate(envelope: EventEnvelope, stored: Readonly<Record<string, unknown>> | undefined, fingerprint: string): CommitResult {
    if (stored === undefined) return { outcome: 'duplicate', unverifiedPayload: 'DynamoDB did not return the live inbox record' };
    const storedFingerprint = storedString(stored, INBOX_ITEM.FINGERPRINT_ATTRIBUTE);
    if (storedFingerprint === undefined) return { outcome: 'duplicate', unverifiedPayload: 'the live inbox record has no payload fingerprint' };
    if (storedFingerprint !== fingerprint) {
      throw new PayloadMismatchError({ eventId: envelope.id, storedFingerprint, receivedFingerprint: fingerprint, subscriber: this.options.subscriberName });
    }
    return { outcome: 'duplicate' };
  }
}
