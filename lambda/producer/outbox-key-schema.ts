/**
 * Recognising an outbox table whose key schema is not the one the producer environment names: a table imported by name
 * or ARN, which the constructs can not inspect at synth. DynamoDB then refuses every outbox Put with a bare
 * `ValidationException` (or a `ValidationError` cancellation reason) that names neither the outbox nor the setting.
 *
 * Nothing is asked on the happy path. Only after a write was refused as invalid does the producer send one probe: a Put
 * of an outbox-keyed item to the outbox table alone, under a condition that is never true, so it can never write. If
 * DynamoDB refuses the probe as invalid too, the outbox's key attributes are the cause (keys are validated before the
 * condition); if the condition fails instead, they are fine and the original error stands (e.g. a business item's).
 */
import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type ProducerConfig } from '../config';
import { ENV } from '../contract/environment';
import { OutboxKeySchemaError } from '../errors';
import { cancellationReasonCodes, isConditionalCheckFailed, isTransactionCanceled } from '../transaction/cancellation';
import { outboxKeyValue } from './outbox-item';

/** `#pk` both exists and does not: false for every item, so the probe never writes. */
const NEVER_TRUE = 'attribute_exists(#pk) AND attribute_not_exists(#pk)';

/** DynamoDB's cancellation reason code for an action it refused as invalid (e.g. a key of the wrong name or type). */
const VALIDATION_ERROR = 'ValidationError';

/** Whether `error` is DynamoDB refusing a request as invalid, which a key-schema mismatch of the outbox would cause. */
function mayBeKeySchemaError(error: unknown): boolean {
  if (isTransactionCanceled(error)) return cancellationReasonCodes(error).includes(VALIDATION_ERROR);
  return error instanceof Error && error.name === 'ValidationException';
}

/** Explains a refused write when the outbox's key attributes are its cause; see the module comment. */
export class OutboxKeySchemaCheck {
  /** Set once a probe showed the outbox's keys fit the table: no further probe in this execution environment. */
  private keysFit = false;

  public constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly config: ProducerConfig,
  ) {}

  /**
   * Call after a write that included outbox items failed with `error`. Throws {@link OutboxKeySchemaError} (its cause
   * is DynamoDB's message about the outbox item) when the outbox's key attributes do not fit the table; otherwise
   * returns, and the caller handles `error` as before.
   */
  public async explain(error: unknown): Promise<void> {
    if (this.keysFit || !mayBeKeySchemaError(error)) return;
    const { outboxTableName, partitionKeyName, sortKeyName } = this.config;
    const key = outboxKeyValue('key-schema-probe');
    let refusal: unknown;
    try {
      await this.client.send(
        new PutCommand({
          TableName: outboxTableName,
          Item: { [partitionKeyName]: key, ...(sortKeyName !== undefined ? { [sortKeyName]: key } : {}) },
          ConditionExpression: NEVER_TRUE,
          ExpressionAttributeNames: { '#pk': partitionKeyName },
        }),
      );
    } catch (probeError) {
      refusal = probeError;
    }
    if (isConditionalCheckFailed(refusal)) {
      this.keysFit = true;
      return;
    }
    // Anything but a ValidationException (throttling, access, the network) says nothing about the keys.
    if (!(refusal instanceof Error) || refusal.name !== 'ValidationException') return;
    const sortKey = sortKeyName === undefined ? `${ENV.OUTBOX_SORT_KEY_NAME} unset` : `${ENV.OUTBOX_SORT_KEY_NAME}='${sortKeyName}'`;
    throw new OutboxKeySchemaError(
      `outbox table '${outboxTableName}' refused an outbox item keyed by ${ENV.OUTBOX_PARTITION_KEY_NAME}='${partitionKeyName}' and ${sortKey}: ` +
        `${refusal.message}. The producer environment must name the table's partition key and its sort key (if it has one), ` +
        'both of type S (string): set partitionKeyName and sortKeyName of OutboxTable.fromTableAttributes to the table\'s key schema',
      { tableName: outboxTableName },
      { cause: refusal },
    );
  }
}
