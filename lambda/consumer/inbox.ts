/** The consumer's inbox: one record per processed event id, written in the same transaction as the handler's writes. */
import {
  PutCommand,
  TransactWriteCommand,
  type DynamoDBDocumentClient,
  type TransactWriteItem,
  type TransactWritePut,
} from '@aws-sdk/lib-dynamodb';
import type { EventEnvelope } from '../envelope';
import { describeAction } from '../transaction/actions';
import {
  CONDITIONAL_CHECK_FAILED,
  cancellationReasonCodes,
  isConditionalCheckFailed,
  isTransactionCanceled,
  toTransactionCancelledError,
  type ActionDescription,
} from '../transaction/cancellation';
import { validateTransactionLimits } from '../transaction/limits';
import { INBOX_ITEM, TABLE_SCHEMA } from '../wire-format';

/** Condition part: no record for this subscriber and event id. */
const RECORD_ABSENT = 'attribute_not_exists(#pk)';
/** Condition part: a record exists but its deduplication window is over (TTL has not deleted it yet). */
const RECORD_EXPIRED = '#expiresAt < :nowEpochSeconds';
/** The inbox Put's condition: it succeeds unless a live record shows the event was already processed. */
const RECORD_CLAIMABLE = `${RECORD_ABSENT} OR ${RECORD_EXPIRED}`;

/** What committing an event did. */
export type CommitOutcome = 'processed' | 'duplicate';

/** Options of {@link Inbox}. */
export interface InboxOptions {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly subscriberName: string;
  /** How long a record keeps an event id deduplicated, in seconds. */
  readonly deduplicationWindowSeconds: number;
  readonly now: () => Date;
}

/** Records processed event ids per subscriber, so a redelivered event is recognised and not applied again. */
export class Inbox {
  public constructor(private readonly options: InboxOptions) {}

  /** The inbox partition key value of an event: `<subscriber>#<eventId>`. */
  public key(eventId: string): string {
    return `${this.options.subscriberName}${INBOX_ITEM.KEY_SEPARATOR}${eventId}`;
  }

  /** The conditional Put of the inbox record of `envelope`, as of `now`. */
  public recordPut(envelope: EventEnvelope, now: Date): TransactWritePut {
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
        [TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE]: expiresAtEpochSeconds,
      },
      ConditionExpression: RECORD_CLAIMABLE,
      ExpressionAttributeNames: { '#pk': TABLE_SCHEMA.PARTITION_KEY, '#expiresAt': TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE },
      ExpressionAttributeValues: { ':nowEpochSeconds': nowEpochSeconds },
    };
  }

  /**
   * Commits the staged writes and the inbox record in one TransactWriteItems call (or, with nothing staged, one
   * conditional PutItem). Returns `duplicate` when a live inbox record already exists; nothing is applied then.
   *
   * @throws TransactionLimitError before sending, when the transaction breaks a DynamoDB limit
   * @throws TransactionCancelledError when DynamoDB cancels it for another reason (business condition, conflict, throttling)
   */
  public async commit(envelope: EventEnvelope, staged: readonly TransactWriteItem[]): Promise<CommitOutcome> {
    const record = this.recordPut(envelope, this.options.now());
    if (staged.length === 0) return this.putAlone(record);
    const actions: TransactWriteItem[] = [...staged, { Put: record }];
    const inboxIndex = staged.length;
    const describe = (index: number): ActionDescription =>
      index === inboxIndex
        ? { kind: 'inbox', eventId: envelope.id, description: `inbox record '${this.key(envelope.id)}'` }
        : { kind: 'item', description: `staged ${describeAction(actions[index] as TransactWriteItem)}` };
    validateTransactionLimits(actions, {
      knownKeySchemas: new Map([[this.options.tableName, { partitionKey: TABLE_SCHEMA.PARTITION_KEY }]]),
      describe: (index) => describe(index).description,
      breakdown: `${staged.length} staged writes + 1 inbox record`,
    });
    try {
      await this.options.client.send(new TransactWriteCommand({ TransactItems: actions }));
      return 'processed';
    } catch (error) {
      if (!isTransactionCanceled(error)) throw error;
      // a live inbox record wins over any other reason: the event's effects are already applied
      if (cancellationReasonCodes(error)[inboxIndex] === CONDITIONAL_CHECK_FAILED) return 'duplicate';
      throw toTransactionCancelledError(error, describe);
    }
  }

  private async putAlone(record: TransactWritePut): Promise<CommitOutcome> {
    try {
      await this.options.client.send(new PutCommand(record));
      return 'processed';
    } catch (error) {
      if (isConditionalCheckFailed(error)) return 'duplicate';
      throw error;
    }
  }
}
