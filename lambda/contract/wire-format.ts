/**
 * The wire format shared by the producer runtime, the relay (EventBridge Pipe) and the consumer runtime.
 *
 * The producer writes an outbox item; the pipe's filter lets through only INSERTs of items whose
 * {@link OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE} equals {@link OUTBOX_ITEM.RECORD_TYPE_VALUE}; the pipe's input
 * template publishes the string in {@link OUTBOX_ITEM.ENVELOPE_ATTRIBUTE} (the CloudEvents JSON) as the SNS
 * message body. This module imports no AWS SDK so `lib/` can share it.
 */

/**
 * The SNS message size limit, in bytes (256 KiB): the default `MaximumMessageSize` of a topic, and what one message of a
 * `PublishBatch` and the whole batch may each be at most (SNS API reference, PublishBatch). An event's envelope is the
 * message body, so it must fit; the relay's batch of them must fit the topic's limit together.
 */
export const MAX_MESSAGE_BYTES = 262_144;

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
  /**
   * When the producer wrote the item, in epoch milliseconds (DynamoDB type N), by the producer's clock. An event can be
   * applied no earlier than this, whatever its `time` says: `replay` measures an event's age against a subscriber's
   * deduplication window from the earlier of the two. Absent on items of runtimes before 0.1.
   */
  WRITTEN_AT_ATTRIBUTE: 'iefWrittenAt',
  /** Prefix of the outbox item's key values: `OUTBOX#<eventId>`. */
  KEY_PREFIX: 'OUTBOX#',
  /**
   * What no event id may start with (case-sensitive): the ordered path keys an aggregate's head item
   * `OUTBOX#AGGREGATE#<aggregateId>`, in the same key space as the events' `OUTBOX#<eventId>`, so an event id
   * `AGGREGATE#<a>` would land on aggregate `a`'s head key. `Outbox` and `OrderedOutbox` refuse such ids
   * (`InvalidEventError`) before sending anything.
   */
  RESERVED_EVENT_ID_PREFIX: 'AGGREGATE#',
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
  /** The payload fingerprint (`sha256:<hex>`, see fingerprint.ts) of the processed event. */
  FINGERPRINT_ATTRIBUTE: 'payloadFingerprint',
  /**
   * A random token of the commit that wrote the record. A commit whose PutItem response was lost, and whose SDK retry
   * then failed the condition on its own record, recognises the record as its own write (processed, not a duplicate).
   * The same attribute as a processing record's `lastWrite`.
   */
  LAST_WRITE_ATTRIBUTE: 'lastWrite',
} as const;

/**
 * What a subscriber name may hold: 1 to 64 of `A-Z a-z 0-9 _ . -`. It is part of the inbox table's keys
 * (`<subscriberName>#<eventId>`, and an ordered subscriber's fences, `<subscriberName>@sequence#<aggregateId>`), so no
 * `#` or `@`: no name joined with an event id can spell another record's key.
 */
export const SUBSCRIBER_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

/** The partition key value of a message's inbox record, or processing record: `<subscriberName>#<eventId>`. */
export function recordKey(subscriberName: string, eventId: string): string {
  return `${subscriberName}${INBOX_ITEM.KEY_SEPARATOR}${eventId}`;
}

/**
 * The processing record of lease and multi-step modes: one item per subscriber and message in the inbox table, under
 * the same key as an inbox record (`<subscriberName>#<eventId>`) and with the same TTL attribute. It shares
 * {@link INBOX_ITEM}'s event id, type, subscriber and fingerprint attributes.
 */
export const PROCESSING_RECORD = {
  /** Marks an item as a processing record. */
  RECORD_TYPE_ATTRIBUTE: 'recordType',
  RECORD_TYPE_VALUE: 'ProcessingRecord.v1',
  /** `IN_PROGRESS`, `COMPLETED` or `BLOCKED` (see {@link RECORD_STATUS}). */
  STATUS_ATTRIBUTE: 'status',
  /** The processing mode that wrote the record (`lease` or `multi-step`). */
  MODE_ATTRIBUTE: 'mode',
  /** The random token of the delivery that holds the lease; every write of a worker is conditioned on it. */
  OWNER_ATTRIBUTE: 'owner',
  /** When the owner's lease ends, in epoch milliseconds. */
  LEASE_EXPIRES_AT_ATTRIBUTE: 'leaseExpiresAtEpochMilliseconds',
  /** The step currently PROCESSING; absent when none is. */
  ACTIVE_STEP_ATTRIBUTE: 'activeStep',
  /** Step names in order (a list of strings). */
  STEP_ORDER_ATTRIBUTE: 'stepOrder',
  /** Map of step name to `{ status, attempts, updatedAt }`. */
  STEPS_ATTRIBUTE: 'steps',
  /** Map of what steps stored for later steps (e.g. the created invoice id). */
  CONTEXT_ATTRIBUTE: 'context',
  /** Incremented by every write; operator commands are conditioned on it. */
  VERSION_ATTRIBUTE: 'version',
  /** Why the message is blocked. */
  BLOCKED_REASON_ATTRIBUTE: 'blockedReason',
  /** The message body of a blocked message, kept for the operator (only written when blocking). */
  BLOCKED_BODY_ATTRIBUTE: 'blockedBody',
  /** Set to the subscriber name while blocked, removed when unblocked: the sparse index's partition key. */
  BLOCKED_SUBSCRIBER_ATTRIBUTE: 'blockedSubscriber',
  /** When the message was blocked (ISO-8601): the sparse index's sort key. */
  BLOCKED_AT_ATTRIBUTE: 'blockedAt',
  /**
   * The SQS message id of the delivery that blocked the message (and sent it to the dead-letter queue). Another copy
   * of the message that finds the record blocked is acknowledged without a second dead letter; this message coming
   * back (its dead letter may not have been sent) is dead-lettered again.
   */
  BLOCKED_SQS_MESSAGE_ID_ATTRIBUTE: 'blockedSqsMessageId',
  /**
   * The SQS message id of a delivery whose dead letter of the blocked message was sent AND confirmed (the send
   * succeeded), recorded after the send. Only then (or when `blockedBody` keeps the message) is another copy of the
   * message acknowledged as already-blocked: otherwise the copy is dead-lettered, since SQS may have moved the blocking
   * delivery to the DLQ itself (without our reason attributes) and a redrive gives it a new message id.
   */
  BLOCKED_DEAD_LETTER_SQS_MESSAGE_ID_ATTRIBUTE: 'blockedDeadLetterSqsMessageId',
  /** When that dead letter's send was recorded (ISO-8601). */
  BLOCKED_DEAD_LETTER_AT_ATTRIBUTE: 'blockedDeadLetterAt',
  /** The sparse global secondary index of blocked messages (`blockedSubscriber`, `blockedAt`). */
  BLOCKED_INDEX_NAME: 'BlockedMessages',
  CREATED_AT_ATTRIBUTE: 'createdAt',
  UPDATED_AT_ATTRIBUTE: 'updatedAt',
  /**
   * `<owner>:<version>` of the last write. A writer whose response was lost (and whose SDK retry then failed the
   * condition) recognises its own applied write by it.
   */
  LAST_WRITE_ATTRIBUTE: 'lastWrite',
  /** The deduplication window the record was written with, in seconds; restores `expiresAt` when a blocked record is resolved. */
  DEDUPLICATION_WINDOW_SECONDS_ATTRIBUTE: 'deduplicationWindowSeconds',
  /** The bounded audit list of operator resolutions, oldest first: `{ at, by, step, status, reason }`. */
  RESOLUTIONS_ATTRIBUTE: 'resolutions',
} as const;

/** Status of a processing record. */
export const RECORD_STATUS = {
  IN_PROGRESS: 'IN_PROGRESS',
  COMPLETED: 'COMPLETED',
  BLOCKED: 'BLOCKED',
} as const;

/** Status of one step of a processing record (seed 003). */
export const STEP_STATUS = {
  /** Not started yet. */
  PENDING: 'PENDING',
  /** Running now, or its outcome is unknown (the message is then blocked). */
  PROCESSING: 'PROCESSING',
  /** Done; never run again. */
  SUCCESS: 'SUCCESS',
  /** Failed in a way known to be safe to retry. */
  TRY_AGAIN: 'TRY_AGAIN',
} as const;

/** The single step of a lease-mode processing record. */
export const LEASE_STEP_NAME = 'effect';

/** Attributes of an aggregate item (aggregate mode) that the runtime owns; the rest belongs to the handler. */
export const AGGREGATE_ITEM = {
  /** Incremented by every applied message; the conditional write checks it. */
  VERSION_ATTRIBUTE: 'aggregateVersion',
  /**
   * The bounded list of the most recent messages applied, newest last (a list of strings). Each entry is
   * `<eventId><PROCESSED_MESSAGE_SEPARATOR><fingerprint prefix>`: the event id, one space, then the first
   * {@link AGGREGATE_ITEM.FINGERPRINT_PREFIX_HEX_DIGITS} hex digits of the payload fingerprint's SHA-256 (`sha256:<hex>`,
   * see fingerprint.ts, without `sha256:`), e.g. `7d444840-9dc0-11d1-b245-5ffdce74fad2 0123456789abcdef`; when the
   * event has a `time`, followed by {@link AGGREGATE_ITEM.EVENT_TIME_SEPARATOR} and its epoch seconds in base 36
   * (`...fad2 0123456789abcdef@sd6z0g`), so a redelivery older than every remembered message can be noticed. An event id
   * may itself contain spaces, so an entry is split on its LAST separator.
   */
  PROCESSED_MESSAGES_ATTRIBUTE: 'processedMessages',
  /** Between the event id and the fingerprint prefix of a `processedMessages` entry. */
  PROCESSED_MESSAGE_SEPARATOR: ' ',
  /** How many hex digits of the SHA-256 fingerprint an entry keeps: 16, i.e. 64 bits. */
  FINGERPRINT_PREFIX_HEX_DIGITS: 16,
  /** Between the fingerprint prefix and the event time (epoch seconds, base 36) of a `processedMessages` entry. */
  EVENT_TIME_SEPARATOR: '@',
  /**
   * The name of the subscriber whose aggregate the item is (a string), written with every version. An item written
   * before the runtime wrote it has none (it gets one with its next version). A subscriber refuses an item naming
   * another subscriber (two subscribers sharing an item would take each other's ids for their own), and
   * `replay --aggregate-table` counts only the items naming the subscriber replayed to.
   */
  SUBSCRIBER_ATTRIBUTE: 'aggregateSubscriber',
  /**
   * The newest event time (whole epoch seconds, a number) among the entries `processedMessages` has dropped to keep its
   * bound, raised with every write that drops one (entries without a time do not move it). A message not in the list
   * whose time is not newer than it may be a redelivery the list has forgotten, whatever order the messages were
   * applied in: it is applied, with a warning and the `EvictedRedelivery` metric. Absent until the list first drops an
   * entry with a time (and on items written before the runtime kept it).
   */
  EVICTED_UP_TO_ATTRIBUTE: 'processedEvictedUpTo',
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
