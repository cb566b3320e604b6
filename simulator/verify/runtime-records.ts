/**
 * The consumer runtime's own records, recognised by their shape as lambda/contract defines it, whatever subscriber
 * wrote them and whatever table holds them (review r12, R12-1): an inbox record (`<subscriber>#<event id>` with its
 * `subscriber` and `eventId` attributes), a processing record of lease and multi-step modes (its record type), an
 * ordered subscriber's sequence fence (`<subscriber>@sequence#<aggregate id>`) and its record of what a `fence skip`
 * dropped (`<subscriber>@skipped#<aggregate id>`). `verify --cleanup` never deletes one: each is what turns a late
 * duplicate delivery (SNS and SQS deliver at least once) into a no-op, also for a subscriber verify did not find (an
 * `Operator` output it could not read, an inbox table shared with a subscriber of a stack not read).
 */
import { SEQUENCE_FENCE, SKIPPED_EVENTS } from '../../lambda/contract/ordered-wire-format';
import { INBOX_ITEM, PROCESSING_RECORD, recordKey, SUBSCRIBER_NAME_PATTERN } from '../../lambda/contract/wire-format';

/** A runtime record: what it is, and the subscriber it is of (from its attributes, else its key). */
export interface RuntimeRecord {
  readonly kind: 'inbox record' | 'processing record' | 'sequence fence' | 'fence skip record';
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
