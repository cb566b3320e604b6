/** The outbox item of one event, exactly as docs/DESIGN.md and contract/wire-format.ts define it. */
import type { TransactWriteItem } from '@aws-sdk/lib-dynamodb';
import type { ProducerConfig } from '../config';
import type { EventEnvelope } from '../envelope';
import { EventTooLargeError, InvalidEventError } from '../errors';
import { itemSize, MAX_ITEM_BYTES, MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES } from '../transaction/item-size';
import { MAX_MESSAGE_BYTES, OUTBOX_ITEM } from '../contract/wire-format';

/**
 * The envelope is the message body, so it must fit {@link MAX_MESSAGE_BYTES} (or the flow's smaller per-event limit).
 * The outbox item holds the envelope plus copies of the id and type, so it is checked against the DynamoDB item limit
 * (400 KB) as well: an event with a very long type can fit the message and still not fit the item.
 */
export { MAX_MESSAGE_BYTES };

/** At most this many characters of an event type go into an error message. */
const MAX_TYPE_CHARACTERS_IN_MESSAGES = 100;

/** Condition on the outbox Put: an event id can be written once. `#pk` is the table's partition key. */
const EVENT_ID_NOT_TAKEN = 'attribute_not_exists(#pk)';

/** The key value of an event's outbox item, on the partition key and (if any) the sort key. */
export function outboxKeyValue(eventId: string): string {
  return `${OUTBOX_ITEM.KEY_PREFIX}${eventId}`;
}

const bytes = (value: number): string => value.toLocaleString('en-US');

/** The event's id and type for an error message, with a runaway type shortened. */
function nameOf(envelope: EventEnvelope): string {
  const type = envelope.type.length <= MAX_TYPE_CHARACTERS_IN_MESSAGES ? envelope.type : `${envelope.type.slice(0, MAX_TYPE_CHARACTERS_IN_MESSAGES)}…`;
  return `event '${envelope.id}' (${type})`;
}

/**
 * Throws {@link InvalidEventError} when the event id starts with {@link OUTBOX_ITEM.RESERVED_EVENT_ID_PREFIX}: its
 * outbox key `OUTBOX#AGGREGATE#...` would be an ordered aggregate's head key (taking or overwriting its sequence).
 */
export function assertEventIdNotReserved(eventId: string, type: string): void {
  if (!eventId.startsWith(OUTBOX_ITEM.RESERVED_EVENT_ID_PREFIX)) return;
  const shownType = type.length <= MAX_TYPE_CHARACTERS_IN_MESSAGES ? type : `${type.slice(0, MAX_TYPE_CHARACTERS_IN_MESSAGES)}…`;
  throw new InvalidEventError(
    `event id '${eventId}' starts with '${OUTBOX_ITEM.RESERVED_EVENT_ID_PREFIX}' (event ${shownType}), which is reserved for the heads of ordered aggregates: ` +
      `its outbox key '${outboxKeyValue(eventId)}' is the head key of aggregate '${eventId.slice(OUTBOX_ITEM.RESERVED_EVENT_ID_PREFIX.length)}'; choose another id`,
  );
}

/** Throws {@link InvalidEventError} when the event's outbox key value is longer than DynamoDB allows for a key. */
function assertKeyFits(envelope: EventEnvelope, key: string, config: ProducerConfig): void {
  const keyBytes = Buffer.byteLength(key, 'utf8');
  const limit = config.sortKeyName === undefined ? MAX_PARTITION_KEY_BYTES : MAX_SORT_KEY_BYTES;
  if (keyBytes > limit) {
    throw new InvalidEventError(
      `${nameOf(envelope)} has an id that is too long: its outbox key is ${bytes(keyBytes)} bytes, but DynamoDB allows at most ` +
        `${bytes(limit)} bytes for a ${config.sortKeyName === undefined ? 'partition' : 'sort'} key value`,
    );
  }
}

/** Throws {@link EventTooLargeError} when the outbox item is larger than the DynamoDB item limit. */
function assertFitsItem(envelope: EventEnvelope, item: Readonly<Record<string, unknown>>): void {
  const size = itemSize(item);
  if (size > MAX_ITEM_BYTES) {
    throw new EventTooLargeError(
      `${nameOf(envelope)} is too large: its outbox item is ${bytes(size)} bytes, but the DynamoDB item size limit is ${bytes(MAX_ITEM_BYTES)} bytes (400 KB); ` +
        'shorten the event type or put large payloads in S3 and send a reference',
      { eventId: envelope.id, sizeBytes: size, limitBytes: MAX_ITEM_BYTES },
    );
  }
}

/**
 * Throws {@link EventTooLargeError} when the envelope does not fit an SNS/SQS message, or the flow's per-event limit
 * (`maxEventBytes`: the topic's limit over the relay's batch size, so a full batch fits one PublishBatch). The relay may
 * deliver the envelope as a JSON string (see contract/wire-format.ts), so the larger, double-encoded size is the one checked.
 */
export function assertFitsMessage(envelope: EventEnvelope, envelopeJson: string, maxEventBytes?: number): void {
  const bodyBytes = Buffer.byteLength(envelopeJson, 'utf8');
  const encodedBytes = Buffer.byteLength(JSON.stringify(envelopeJson), 'utf8');
  const limit = maxEventBytes ?? MAX_MESSAGE_BYTES;
  if (encodedBytes > limit) {
    const what =
      maxEventBytes === undefined
        ? 'the SNS/SQS message limit'
        : "the flow's event size limit (maxEventSize: the topic's MaximumMessageSize over the relay's batch size, so a full batch fits one SNS PublishBatch)";
    throw new EventTooLargeError(
      `${nameOf(envelope)} is too large: its envelope is ${bytes(bodyBytes)} bytes ` +
        `(${bytes(encodedBytes)} bytes when delivered as a JSON string), but ${what} is ${bytes(limit)} bytes; ` +
        'put large payloads in S3 and send a reference',
      { eventId: envelope.id, sizeBytes: encodedBytes, limitBytes: limit },
    );
  }
}

/**
 * Builds the conditional Put of an event's outbox item. `now` sets the TTL (epoch seconds) when the table has one.
 *
 * @throws EventTooLargeError when the envelope does not fit an SNS/SQS message or the item the DynamoDB item limit
 * @throws InvalidEventError when the id makes a key value longer than DynamoDB allows, or starts with the reserved
 *   `AGGREGATE#` ({@link assertEventIdNotReserved})
 */
export function outboxPut(envelope: EventEnvelope, config: ProducerConfig, now: Date): TransactWriteItem {
  assertEventIdNotReserved(envelope.id, envelope.type);
  const envelopeJson = JSON.stringify(envelope);
  assertFitsMessage(envelope, envelopeJson, config.maxEventBytes);
  const key = outboxKeyValue(envelope.id);
  assertKeyFits(envelope, key, config);
  const item: Record<string, unknown> = {
    [config.partitionKeyName]: key,
    [OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE]: OUTBOX_ITEM.RECORD_TYPE_VALUE,
    [OUTBOX_ITEM.ENVELOPE_ATTRIBUTE]: envelopeJson,
    [OUTBOX_ITEM.EVENT_ID_ATTRIBUTE]: envelope.id,
    [OUTBOX_ITEM.EVENT_TYPE_ATTRIBUTE]: envelope.type,
    [OUTBOX_ITEM.WRITTEN_AT_ATTRIBUTE]: now.getTime(),
  };
  if (config.sortKeyName !== undefined) item[config.sortKeyName] = key;
  if (config.timeToLiveAttributeName !== undefined) {
    const expiresAtEpochSeconds = Math.floor(now.getTime() / 1000) + config.eventRetentionSeconds;
    item[config.timeToLiveAttributeName] = expiresAtEpochSeconds;
  }
  assertFitsItem(envelope, item);
  return {
    Put: {
      TableName: config.outboxTableName,
      Item: item,
      ConditionExpression: EVENT_ID_NOT_TAKEN,
      ExpressionAttributeNames: { '#pk': config.partitionKeyName },
    },
  };
}
