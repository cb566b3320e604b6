/**
 * The consumer runtime's own records, recognised by their shape as lambda/contract defines it, whatever subscriber
 * wrote them and whatever table holds them (review r12, R12-1): an inbox record (`<subscriber>#<event id>` with its
 * `subscriber` and `eventId` attributes), a processing record of lease and multi-step modes (its record type), an
 * ordered subscriber's sequence fence (`<subscriber>@sequence#<aggregate id>`) and its record of what a `fence skip`
 * dropped (`<subscriber>@skipped#<aggregate id>`), and an aggregate-mode subscriber's item (review r12b, R12B-5: the
 * business item whose `aggregateSubscriber` and `processedMessages` attributes the aggregate consumer writes; its
 * processed message ids are that subscriber's only duplicate detection). `verify --cleanup` never deletes one: each is
 * what turns a late duplicate delivery (SNS and SQS deliver at least once) into a no-op, also for a subscriber verify
 * did not find (an `Operator` output it could not read, an inbox table shared with a subscriber of a stack not read).
 * {@link keptRecordsLine} says what was kept and whether and when each kind expires.
 */
import { SEQUENCE_FENCE, SKIPPED_EVENTS } from '../../lambda/contract/ordered-wire-format';
import { AGGREGATE_ITEM, INBOX_ITEM, PROCESSING_RECORD, recordKey, SUBSCRIBER_NAME_PATTERN } from '../../lambda/contract/wire-format';

/** The kinds of runtime record, in the order {@link keptRecordsLine} names them. */
export const RUNTIME_RECORD_KINDS = ['inbox record', 'processing record', 'sequence fence', 'fence skip record', 'aggregate item'] as const;

/** What a runtime record is. */
export type RuntimeRecordKind = (typeof RUNTIME_RECORD_KINDS)[number];

/**
 * Whether and when each kind expires, as the runtime writes it: inbox and processing records carry the TTL attribute
 * (`expiresAt`, the deduplication window); a sequence fence and a fence skip record have none; an aggregate item is the
 * subscriber's business item, which the runtime gives no TTL.
 */
export const KEPT_RECORD_EXPIRY: Readonly<Record<RuntimeRecordKind, string>> = {
  'inbox record': 'expire by their TTL after the deduplication window',
  'processing record': 'expire by their TTL after the deduplication window (a blocked one once resolved)',
  'sequence fence': 'never expire (no TTL: past the deduplication window a fence is the only guard against an old event of its aggregate)',
  'fence skip record': 'never expire (no TTL)',
  'aggregate item': "never expire (an aggregate-mode subscriber's item: its processed message ids are that subscriber's only duplicate detection)",
};

/**
 * The cleanup line for the runtime records kept in `table`: how many of each kind, whose, and whether and when each
 * kind expires ({@link KEPT_RECORD_EXPIRY}).
 */
export function keptRecordsLine(table: string, counts: ReadonlyMap<RuntimeRecordKind, number>, subscribers: Iterable<string>): string {
  const kinds = RUNTIME_RECORD_KINDS.filter((kind) => (counts.get(kind) ?? 0) > 0);
  const total = kinds.reduce((sum, kind) => sum + counts.get(kind)!, 0);
  return (
    `kept ${total} runtime record(s) of the run in table ${table} (${[...new Set(subscribers)].sort().join(', ')}): a late duplicate delivery of one of the run's events finds them and is not applied again; ` +
    kinds.map((kind) => `${counts.get(kind)} ${kind}(s) ${KEPT_RECORD_EXPIRY[kind]}`).join('; ')
  );
}

/** A runtime record: what it is, and the subscriber it is of (from its attributes, else its key). */
export interface RuntimeRecord {
  readonly kind: RuntimeRecordKind;
  readonly subscriber: string;
}

/** The part of `key` before `separator` when it is a subscriber name (SUBSCRIBER_NAME_PATTERN), else undefined. */
function subscriberBefore(key: string, separator: string): string | undefined {
  const at = key.indexOf(separator);
  if (at <= 0) return undefined;
  const name = key.slice(0, at);
  return SUBSCRIBER_NAME_PATTERN.test(name) ? name : undefined;
}

/**
 * The runtime record `item` is, judged by its key attributes' values (`keyNames`) and its attributes; undefined for
 * any other item (a business item such as `CUSTOMER#<id>` has no `subscriber` and `eventId` spelling its key).
 */
export function runtimeRecordOf(item: Readonly<Record<string, unknown>>, keyNames: readonly string[]): RuntimeRecord | undefined {
  const keys = keyNames.map((name) => item[name]).filter((value): value is string => typeof value === 'string');
  const recordType = item[PROCESSING_RECORD.RECORD_TYPE_ATTRIBUTE];
  const named = (attribute: string): string | undefined => (typeof item[attribute] === 'string' ? (item[attribute] as string) : undefined);
  // the aggregate consumer's attributes, whatever the handler keyed its item by (an item written before the runtime named its subscriber has only the ids)
  const aggregateOf = named(AGGREGATE_ITEM.SUBSCRIBER_ATTRIBUTE);
  if (keys.length > 0 && (aggregateOf !== undefined || Array.isArray(item[AGGREGATE_ITEM.PROCESSED_MESSAGES_ATTRIBUTE]))) return { kind: 'aggregate item', subscriber: aggregateOf ?? 'an aggregate-mode subscriber not named on its item' };
  for (const key of keys) {
    const fenced = subscriberBefore(key, SEQUENCE_FENCE.KEY_SEPARATOR);
    if (fenced !== undefined || recordType === SEQUENCE_FENCE.RECORD_TYPE_VALUE) {
      return { kind: 'sequence fence', subscriber: named(SEQUENCE_FENCE.SUBSCRIBER_ATTRIBUTE) ?? fenced ?? key };
    }
    const skipped = subscriberBefore(key, SKIPPED_EVENTS.KEY_SEPARATOR);
    if (skipped !== undefined || recordType === SKIPPED_EVENTS.RECORD_TYPE_VALUE) return { kind: 'fence skip record', subscriber: skipped ?? key };
    const subscriber = named(INBOX_ITEM.SUBSCRIBER_ATTRIBUTE);
    const eventId = named(INBOX_ITEM.EVENT_ID_ATTRIBUTE);
    if (recordType === PROCESSING_RECORD.RECORD_TYPE_VALUE) return { kind: 'processing record', subscriber: subscriber ?? subscriberBefore(key, INBOX_ITEM.KEY_SEPARATOR) ?? key };
    if (subscriber !== undefined && eventId !== undefined && key === recordKey(subscriber, eventId)) return { kind: 'inbox record', subscriber };
  }
  return undefined;
}
