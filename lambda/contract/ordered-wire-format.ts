/**
 * The wire format of the ordered path (docs/ORDERED-DELIVERY.md), shared by the ordered producer, the ordered relay
 * (an EventBridge Pipe to an SQS FIFO queue) and the ordered consumer. It imports nothing, so `lib/` can share it.
 *
 * An aggregate's events go through ONE outbox item, its head (`OUTBOX#AGGREGATE#<aggregateId>`), which each event
 * overwrites with the next sequence number, so the table's stream carries that item's modifications in commit order
 * (DynamoDB Streams order the modifications of one item). Each event also gets a history item under the usual outbox
 * key (`OUTBOX#<eventId>`, with its own record type, so the unordered relay does not publish it): it keeps the event
 * for `replay` and makes an event id usable once. No event id may start with `AGGREGATE#`
 * (`OUTBOX_ITEM.RESERVED_EVENT_ID_PREFIX`), so the two kinds of keys never meet.
 */
import { OUTBOX_ITEM } from './wire-format';

/** Attributes and values of the ordered outbox items (besides {@link OUTBOX_ITEM}'s envelope, id, type and write time). */
export const ORDERED_OUTBOX_ITEM = {
  /** Prefix of an aggregate's head item key values: `OUTBOX#AGGREGATE#<aggregateId>`. */
  HEAD_KEY_PREFIX: `${OUTBOX_ITEM.KEY_PREFIX}${OUTBOX_ITEM.RESERVED_EVENT_ID_PREFIX}`,
  /** {@link OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE} of a head item: the ordered relay's filter matches it. */
  HEAD_RECORD_TYPE_VALUE: 'OrderedOutboxHead.v1',
  /** {@link OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE} of a history item (one per event, kept for replay; no relay publishes it). */
  HISTORY_RECORD_TYPE_VALUE: 'OrderedOutboxEvent.v1',
  /**
   * {@link OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE} of a head an operator carried over to a restored or new outbox table
   * (`carryOrderedHeads`, the CLI's `outbox heads`): only the sequence, no event, so the relay's filter does not match
   * it and nothing is published; the aggregate's next event overwrites it with a head of its own.
   */
  CARRIED_HEAD_RECORD_TYPE_VALUE: 'OrderedOutboxCarriedHead.v1',
  /** Where a carried head's sequence came from (`history` or `fences: <subscriber>, ...`), for the audit. */
  CARRIED_FROM_ATTRIBUTE: 'iefCarriedFrom',
  /** When the head was carried over (ISO 8601). */
  CARRIED_AT_ATTRIBUTE: 'iefCarriedAt',
  /** The head's generation (type N; absent: 0), see `ORDERED_ENVELOPE.GENERATION_ATTRIBUTE`. */
  GENERATION_ATTRIBUTE: 'iefGeneration',
  /** The sequence the head's generation started at (type N), see `ORDERED_ENVELOPE.GENERATION_BASE_ATTRIBUTE`. */
  GENERATION_BASE_ATTRIBUTE: 'iefGenerationBase',
  /**
   * Record type of the table-wide generation item (review r38, R38-2), keyed {@link orderedGenerationKey}: written by
   * a carry (`outbox heads`) with the generation it started; `OrderedOutbox` stamps it (base: the head's sequence, 0
   * for a new aggregate) on every aggregate whose head has no generation, so an aggregate no source knew does not
   * start again in generation 0 beside the old table's in-flight events. Never published.
   */
  GENERATION_RECORD_TYPE_VALUE: 'OrderedOutboxGeneration.v1',
  /** The aggregate id (type S): the FIFO message group of the event. */
  AGGREGATE_ATTRIBUTE: 'iefAggregateId',
  /** The event's position in its aggregate, 1, 2, 3, ... (type N). */
  SEQUENCE_ATTRIBUTE: 'iefSequence',
} as const;

/**
 * The CloudEvents extension attributes an ordered event carries in its envelope: `partitionkey` (the Partitioning
 * extension) names the aggregate, `sequence` (the Sequence extension: "a non-empty lexicographically-orderable string")
 * its position, written as {@link SEQUENCE_DIGITS} decimal digits with leading zeros so that text order is number order.
 */
export const ORDERED_ENVELOPE = {
  AGGREGATE_ATTRIBUTE: 'partitionkey',
  SEQUENCE_ATTRIBUTE: 'sequence',
  /**
   * When the ordered producer's runtime (`OrderedOutbox`) wrote the event, in epoch milliseconds by its clock (a
   * CloudEvents extension attribute, integer). Set by the runtime, never from the producer's `NewEvent` (whose `time`
   * says when the fact happened and may be any past date). The ordered consumer ages an event from it: an event at or
   * below its subscriber's fence with no inbox record, written less than a deduplication window ago, was never applied
   * (dead-lettered, `SequenceReusedError`). An envelope without it has no provable age and counts as young.
   */
  WRITTEN_AT_ATTRIBUTE: 'iefwrittenat',
  /**
   * The head's generation (integer; absent: 0): a carried head (`carryOrderedHeads`) starts a new one, numbered by the
   * carry's time in epoch milliseconds, and every event written on that head carries it. A subscriber's fence records
   * the generation it applied: an event of an older generation than its fence's is dead-lettered, never applied (an
   * event still in flight from the table the heads were carried away from), and a new generation is entered only at
   * its base (below).
   */
  GENERATION_ATTRIBUTE: 'iefgeneration',
  /** The sequence a carried head started its generation at (integer): the generation's first event is this plus one. */
  GENERATION_BASE_ATTRIBUTE: 'iefgenerationbase',
} as const;

/** Digits of the envelope's `sequence` (enough for every safe integer). */
export const SEQUENCE_DIGITS = 16;

/**
 * The longest aggregate id and ordered event id, in characters. They become an SQS FIFO message group id and
 * deduplication id, which SQS and SNS take up to 128 characters of `a-z A-Z 0-9` and punctuation; the Pipe's
 * `MessageGroupId` and `MessageDeduplicationId` parameters take at most 100 characters (Pipes API reference,
 * PipeTargetSqsQueueParameters), so the bound is the smaller one.
 */
export const MAX_ORDERED_ID_CHARACTERS = 100;

/** What an SQS FIFO message group id and deduplication id may hold: alphanumerics and ASCII punctuation. */
export const FIFO_ID_CHARACTERS = /^[A-Za-z0-9!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]+$/;

/** The key value of an aggregate's head item. */
export function orderedHeadKey(aggregateId: string): string {
  return `${ORDERED_OUTBOX_ITEM.HEAD_KEY_PREFIX}${aggregateId}`;
}

/** The envelope's `sequence` text of a position. */
export function sequenceText(sequence: number): string {
  return String(sequence).padStart(SEQUENCE_DIGITS, '0');
}

/** The record of a subscriber's sequence fence: one item per subscriber and aggregate, in the subscriber's inbox table. */
export const SEQUENCE_FENCE = {
  /**
   * Between the subscriber and the aggregate id in the fence's key: `<subscriber>@sequence#<aggregateId>`. Subscriber
   * names hold only `A-Z a-z 0-9 _ . -`, and an inbox record's key is `<subscriber>#<eventId>`, so no fence key can be
   * an inbox key of any subscriber.
   */
  KEY_SEPARATOR: '@sequence#',
  RECORD_TYPE_ATTRIBUTE: 'recordType',
  RECORD_TYPE_VALUE: 'SequenceFence.v1',
  SUBSCRIBER_ATTRIBUTE: 'subscriber',
  AGGREGATE_ATTRIBUTE: 'aggregateId',
  /** The last sequence applied (type N); the next event to apply is this plus one. */
  APPLIED_SEQUENCE_ATTRIBUTE: 'appliedSequence',
  /** The id of the event applied at {@link SEQUENCE_FENCE.APPLIED_SEQUENCE_ATTRIBUTE}. */
  APPLIED_EVENT_ID_ATTRIBUTE: 'appliedEventId',
  APPLIED_AT_ATTRIBUTE: 'appliedAt',
  /** The generation of the event applied (type N; absent: 0), see `ORDERED_ENVELOPE.GENERATION_ATTRIBUTE`. */
  APPLIED_GENERATION_ATTRIBUTE: 'appliedGeneration',
  /** Set by an operator who moved the fence past a gap by hand (`SequenceFences.skipGap`): why, for the audit. */
  SKIPPED_REASON_ATTRIBUTE: 'skippedReason',
} as const;

/**
 * The key value of the table-wide generation item: the head prefix with an EMPTY aggregate id, which no aggregate can
 * have (an aggregate id is 1 to 100 characters), so a producer's head read (`dynamodb:LeadingKeys` `OUTBOX#AGGREGATE#*`)
 * covers it.
 */
export function orderedGenerationKey(): string {
  return ORDERED_OUTBOX_ITEM.HEAD_KEY_PREFIX;
}

/**
 * Attributes the ordered consumer adds to its inbox records (review r38, R38-5): the event's aggregate and sequence,
 * so `inbox forget` can tell an ordered subscriber's record (refused without --subscriber-output: below the fence a
 * forgotten record turns the next delivery into a `SequenceReusedError` letter, not a duplicate).
 */
export const ORDERED_INBOX_ITEM = {
  AGGREGATE_ATTRIBUTE: 'orderedAggregateId',
  SEQUENCE_ATTRIBUTE: 'orderedSequence',
} as const;

/**
 * The record of what an operator's accepted `fence skip` dropped (`SequenceFences.skipGap`): one item per subscriber and
 * aggregate beside its fence, in the subscriber's inbox table, keyed `<subscriber>@skipped#<aggregateId>`, never expiring.
 * The fence's own Put replaces the fence item at each applied event, so what a skip dropped is kept here: an event it
 * dropped that arrives later is acknowledged unapplied (with a WARN line naming the skip), not taken for a new event
 * under a sequence already passed.
 */
export const SKIPPED_EVENTS = {
  KEY_SEPARATOR: '@skipped#',
  RECORD_TYPE_VALUE: 'SequenceSkips.v1',
  /** A list, one map per skip: `from`, `to` (the sequences (from, to] dropped), `at` (ISO 8601), `reason`, `dropped`. */
  SKIPS_ATTRIBUTE: 'skips',
} as const;

/**
 * The record of a subscriber's deduplication window (`<subscriber>@window`, one item per subscriber in its inbox table,
 * never expiring): the window its consumer runs with, and each time it grew, the window before and when. An inbox
 * record lives for the window in effect when it was written, so after a raise the records written before it expire by
 * the old one: the ordered consumer and the redrive plan age an unrecorded event against the smallest window that
 * could have been in effect since it was written, never against the deployed one alone. Written by the consumer on its
 * first message when the stored window differs from its own (no `#` in the key: it is no inbox record's key).
 */
export const DEDUPLICATION_WINDOW_RECORD = {
  KEY_SUFFIX: '@window',
  RECORD_TYPE_VALUE: 'DeduplicationWindow.v1',
  /** The window the consumer that wrote the record runs with, in seconds (type N). */
  WINDOW_ATTRIBUTE: 'windowSeconds',
  /** A list, one map per raise still relevant: `previousWindowSeconds` (N) and `changedAt` (ISO 8601). */
  RAISES_ATTRIBUTE: 'raises',
  /** Counts the record's writes (type N): a write is conditioned on the revision it read. */
  REVISION_ATTRIBUTE: 'revision',
  /** When the record was last written (ISO 8601). */
  RECORDED_AT_ATTRIBUTE: 'recordedAt',
} as const;

/**
 * The record an operator's `fence carry` leaves in a subscriber's restored or new inbox table
 * (`<subscriber>@carried`, never expiring): the table the fences, inbox records and skip records were carried from, and
 * when. Fences older than their inbox table (written before it was created: a restore or a copy) are trusted by `fence
 * replay` only with it: without it, the subscriber may have applied events past such a fence in the table restored from.
 */
export const FENCE_CARRY_RECORD = {
  KEY_SUFFIX: '@carried',
  RECORD_TYPE_VALUE: 'FencesCarried.v1',
  /** The inbox table carried from (type S). */
  FROM_TABLE_ATTRIBUTE: 'fromTable',
  /**
   * The inbox table carried into, the one the record was written in (type S): a restore or copy of that table holds the
   * record too, and is trusted only once carried itself.
   */
  TABLE_ATTRIBUTE: 'table',
  /** When (ISO 8601). */
  CARRIED_AT_ATTRIBUTE: 'carriedAt',
  /** Who (type S). */
  CARRIED_BY_ATTRIBUTE: 'carriedBy',
} as const;

/** The key value of a subscriber's fence carry record. */
export function fenceCarryKey(subscriberName: string): string {
  return `${subscriberName}${FENCE_CARRY_RECORD.KEY_SUFFIX}`;
}

/** The key value of a subscriber's deduplication window record. */
export function deduplicationWindowKey(subscriberName: string): string {
  return `${subscriberName}${DEDUPLICATION_WINDOW_RECORD.KEY_SUFFIX}`;
}

/** The key value of a subscriber's skip record for an aggregate. */
export function skippedEventsKey(subscriberName: string, aggregateId: string): string {
  return `${subscriberName}${SKIPPED_EVENTS.KEY_SEPARATOR}${aggregateId}`;
}

/** The key value of a subscriber's fence for an aggregate. */
export function sequenceFenceKey(subscriberName: string, aggregateId: string): string {
  return `${subscriberName}${SEQUENCE_FENCE.KEY_SEPARATOR}${aggregateId}`;
}

/** The EventBridge Pipes filter pattern of the ordered relay: every write of a head item (INSERT for sequence 1, then MODIFY). */
export function orderedFilterPattern(): Record<string, unknown> {
  return {
    eventName: ['INSERT', 'MODIFY'],
    dynamodb: { NewImage: { [OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE]: { S: [ORDERED_OUTBOX_ITEM.HEAD_RECORD_TYPE_VALUE] } } },
  };
}

/** The Pipe's SQS FIFO `MessageGroupId`: the head item's aggregate id, a plain attribute (a path can not reach into a JSON string). */
export function orderedMessageGroupIdPath(): string {
  return `$.dynamodb.NewImage.${ORDERED_OUTBOX_ITEM.AGGREGATE_ATTRIBUTE}.S`;
}

/** The Pipe's SQS FIFO `MessageDeduplicationId`: the event id, so a relay retry within 5 minutes is dropped by SQS. */
export function orderedDeduplicationIdPath(): string {
  return `$.dynamodb.NewImage.${OUTBOX_ITEM.EVENT_ID_ATTRIBUTE}.S`;
}


/** What {@link standardEventIdOf} appends to the ordered event's id. */
export const STANDARD_EVENT_ID_SUFFIX = '.standard';

/**
 * The id of the standard event that `OrderedOutbox` appends beside the ordered event `orderedEventId` when the event
 * asks for both paths (`alsoToStandardFlow`): `<orderedEventId>.standard`. Deterministic, so a retried producer names
 * the same pair, and distinct from the ordered id, because both items share the outbox table's `OUTBOX#<eventId>` keys.
 */
export function standardEventIdOf(orderedEventId: string): string {
  return `${orderedEventId}${STANDARD_EVENT_ID_SUFFIX}`;
}
