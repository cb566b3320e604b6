/**
 * What blocking a message writes on its processing record: the BLOCKED status with its reason and delivery, the body
 * when kept (and small enough), and what it removes (the TTL, the owner and lease, an older dead letter's marks).
 */
import type { SQSRecord } from '../consumer/sqs';
import { PROCESSING_RECORD as A, RECORD_STATUS, TABLE_SCHEMA } from '../contract/wire-format';
import { MAX_BLOCKED_BODY_BYTES } from './processing-context';
import type { Item } from './record-writes';

/** Longest blocked reason kept on a record, in characters (it quotes error messages, which have no bound). */
export const MAX_BLOCKED_REASON_CHARACTERS = 2048;

/** `text`, cut to `length` characters (with an ellipsis) when longer. */
export function truncate(text: string, length: number): string {
  return text.length <= length ? text : `${text.slice(0, length - 1)}…`;
}

/** Whether a blocked message's body is kept on the record: when `wanted` and small enough. */
function keepsBody(body: string, wanted: boolean): boolean {
  return wanted && Buffer.byteLength(body, 'utf8') <= MAX_BLOCKED_BODY_BYTES;
}

/** The attributes a block sets, at `now` (ISO-8601), for the subscriber `subscriberName`. */
export function blockedAttributes(subscriberName: string, now: string, reason: string, delivery: SQSRecord, keepBody: boolean): Item {
  return {
    [A.STATUS_ATTRIBUTE]: RECORD_STATUS.BLOCKED,
    [A.BLOCKED_SUBSCRIBER_ATTRIBUTE]: subscriberName,
    [A.BLOCKED_AT_ATTRIBUTE]: now,
    [A.BLOCKED_REASON_ATTRIBUTE]: truncate(reason, MAX_BLOCKED_REASON_CHARACTERS),
    [A.BLOCKED_SQS_MESSAGE_ID_ATTRIBUTE]: delivery.messageId,
    [A.UPDATED_AT_ATTRIBUTE]: now,
    ...(keepsBody(delivery.body, keepBody) ? { [A.BLOCKED_BODY_ATTRIBUTE]: delivery.body } : {}),
  };
}

/** The attributes a block removes. */
export function blockedRemovals(body: string, keepBody: boolean): string[] {
  // no TTL while blocked: the record must wait for the operator however long that takes
  // a new block has no confirmed dead letter yet: that is recorded once its send succeeds
  const removals: string[] = [
    TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE,
    A.OWNER_ATTRIBUTE,
    A.LEASE_EXPIRES_AT_ATTRIBUTE,
    A.BLOCKED_DEAD_LETTER_SQS_MESSAGE_ID_ATTRIBUTE,
    A.BLOCKED_DEAD_LETTER_AT_ATTRIBUTE,
  ];
  // a body that is not kept leaves no older one behind
  if (!keepsBody(body, keepBody)) removals.push(A.BLOCKED_BODY_ATTRIBUTE);
  return removals;
}
