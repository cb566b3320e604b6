/**
 * The wire format shared by the producer runtime, the relay (EventBridge Pipe) and the consumer runtime.
 *
 * The producer writes an outbox item; the pipe's filter lets through only INSERTs of items whose
 * {@link OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE} equals {@link OUTBOX_ITEM.RECORD_TYPE_VALUE}; the pipe's input
 * template publishes the string in {@link OUTBOX_ITEM.ENVELOPE_ATTRIBUTE} (the CloudEvents JSON) as the SNS
 * message body. This module imports no AWS SDK so `lib/` can share it.
 */

/** Attribute names and values of an outbox item. Prefixed so they do not collide with a single-table design's own attributes. */
export const OUTBOX_ITEM = {
  /** Marks an item as an outbox event; the pipe filter matches on it. */
  RECORD_TYPE_ATTRIBUTE: 'iefRecordType',
  /** The value of {@link OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE} on outbox events (version 1 of this format). */
  RECORD_TYPE_VALUE: 'OutboxEvent.v1',
  /** The complete CloudEvents envelope, serialized as a JSON string (DynamoDB type S). */
  ENVELOPE_ATTRIBUTE: 'iefEnvelope',
  /** The event id, duplicated from the envelope for queries and the key condition. */
  EVENT_ID_ATTRIBUTE: 'iefEventId',
  /** The event type, duplicated from the envelope for queries. */
  EVENT_TYPE_ATTRIBUTE: 'iefEventType',
  /** Prefix of the outbox item's key values: `OUTBOX#<eventId>`. */
  KEY_PREFIX: 'OUTBOX#',
} as const;

/** Key attribute names and the TTL attribute of the tables the constructs create. */
export const TABLE_SCHEMA = {
  /** Partition key of the outbox table and the inbox table (type S). */
  PARTITION_KEY: 'pk',
  /** Sort key of the outbox table (type S). The inbox table has none. */
  SORT_KEY: 'sk',
  /** TTL attribute of the outbox table and the inbox table, in epoch seconds. */
  TIME_TO_LIVE_ATTRIBUTE: 'expiresAt',
} as const;

/** Attribute names of an inbox record (one per processed message and subscriber). */
export const INBOX_ITEM = {
  /** Partition key value: `<subscriberName>#<eventId>`, so subscribers may share one inbox table without hot keys. */
  KEY_SEPARATOR: '#',
  EVENT_ID_ATTRIBUTE: 'eventId',
  EVENT_TYPE_ATTRIBUTE: 'eventType',
  SUBSCRIBER_ATTRIBUTE: 'subscriber',
  PROCESSED_AT_ATTRIBUTE: 'processedAt',
} as const;

/** The EventBridge Pipes filter pattern that passes only INSERTs of outbox events. */
export function outboxFilterPattern(): Record<string, unknown> {
  return {
    eventName: ['INSERT'],
    dynamodb: {
      NewImage: {
        [OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE]: { S: [OUTBOX_ITEM.RECORD_TYPE_VALUE] },
      },
    },
  };
}

/**
 * The EventBridge Pipes input template that turns an outbox stream record into the message body.
 *
 * It is not a JSON document, so Pipes treats it as a string template and substitutes the raw string
 * value: the body is the envelope JSON itself. The consumer also accepts the envelope as a JSON string
 * (one extra level of quoting), so either reading of the template is delivered correctly.
 */
export function outboxInputTemplate(): string {
  return `<$.dynamodb.NewImage.${OUTBOX_ITEM.ENVELOPE_ATTRIBUTE}.S>`;
}
