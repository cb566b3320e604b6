/** The outbox item of one event, exactly as docs/DESIGN.md and wire-format.ts define it. */
import type { TransactWriteItem } from '@aws-sdk/lib-dynamodb';
import type { ProducerConfig } from '../config';
import type { EventEnvelope } from '../envelope';
import { EventTooLargeError } from '../errors';
import { OUTBOX_ITEM } from '../wire-format';

/**
 * The SNS and SQS message size limit, in bytes (256 KiB). The envelope is the message body, so it must fit.
 * This also keeps the outbox item well under the DynamoDB item limit (400 KB), which therefore never binds first.
 */
export const MAX_MESSAGE_BYTES = 262_144;

/** Condition on the outbox Put: an event id can be written once. `#pk` is the table's partition key. */
const EVENT_ID_NOT_TAKEN = 'attribute_not_exists(#pk)';

/** The key value of an event's outbox item, on the partition key and (if any) the sort key. */
export function outboxKeyValue(eventId: string): string {
  return `${OUTBOX_ITEM.KEY_PREFIX}${eventId}`;
}

const bytes = (value: number): string => value.toLocaleString('en-US');

/**
 * Throws {@link EventTooLargeError} when the envelope does not fit an SNS/SQS message. The relay may deliver the
 * envelope as a JSON string (see wire-format.ts), so the larger, double-encoded size is the one checked.
 */
export function assertFitsMessage(envelope: EventEnvelope, envelopeJson: string): void {
  const bodyBytes = Buffer.byteLength(envelopeJson, 'utf8');
  const encodedBytes = Buffer.byteLength(JSON.stringify(envelopeJson), 'utf8');
  if (encodedBytes > MAX_MESSAGE_BYTES) {
    throw new EventTooLargeError(
      `event '${envelope.id}' (${envelope.type}) is too large: its envelope is ${bytes(bodyBytes)} bytes ` +
        `(${bytes(encodedBytes)} bytes when delivered as a JSON string), but the SNS/SQS message limit is ${bytes(MAX_MESSAGE_BYTES)} bytes; ` +
        'put large payloads in S3 and send a reference',
      { eventId: envelope.id, sizeBytes: encodedBytes, limitBytes: MAX_MESSAGE_BYTES },
    );
  }
}

/** Builds the conditional Put of an event's outbox item. `now` sets the TTL (epoch seconds) when the table has one. */
export function outboxPut(envelope: EventEnvelope, config: ProducerConfig, now: Date): TransactWriteItem {
  const envelopeJson = JSON.stringify(envelope);
  assertFitsMessage(envelope, envelopeJson);
  const key = outboxKeyValue(envelope.id);
  const item: Record<string, unknown> = {
    [config.partitionKeyName]: key,
    [OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE]: OUTBOX_ITEM.RECORD_TYPE_VALUE,
    [OUTBOX_ITEM.ENVELOPE_ATTRIBUTE]: envelopeJson,
    [OUTBOX_ITEM.EVENT_ID_ATTRIBUTE]: envelope.id,
    [OUTBOX_ITEM.EVENT_TYPE_ATTRIBUTE]: envelope.type,
  };
  if (config.sortKeyName !== undefined) item[config.sortKeyName] = key;
  if (config.timeToLiveAttributeName !== undefined) {
    const expiresAtEpochSeconds = Math.floor(now.getTime() / 1000) + config.eventRetentionSeconds;
    item[config.timeToLiveAttributeName] = expiresAtEpochSeconds;
  }
  return {
    Put: {
      TableName: config.outboxTableName,
      Item: item,
      ConditionExpression: EVENT_ID_NOT_TAKEN,
      ExpressionAttributeNames: { '#pk': config.partitionKeyName },
    },
  };
}
